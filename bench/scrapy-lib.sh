# scrapy-lib.sh: make bench's Scrapy row, sourced by bench.sh and
# bench/scrapy-bench.sh after bench-lib.sh and clients-lib.sh (same
# variables: build, corpus, here, tmp, table, pids).
# shellcheck shell=sh
# shellcheck disable=SC2154 # corpus, here, tmp... are the sourcing script's

# The site: nginx as the proxy of ORIGINS corpus hosts ($1), at $sc_port.
scrapy_site() {
	sc_port=$(free_port)
	# not the hosts with a Crawl-delay (robotsd's middleware obeys it,
	# Scrapy's own does not: the crawl would time the delay), nor those
	# whose robots.txt is over RFC 9309's 500 KiB (what of it a parser
	# reads differs)
	cut -d/ -f3 "$corpus/urls.txt" | uniq | while read -r h; do
		f=$corpus/robots/$h.txt
		if [ ! -f "$f" ] || { [ "$(wc -c <"$f")" -le 512000 ] &&
			! grep -qi '^[[:space:]]*crawl-delay' "$f"; }; then
			echo "http://$h/"
		fi
	done | head -n "$1" >"$tmp/scrapy-starts"
	links=
	for p in / /bench/1 /bench/2 /bench/3 /bench/4 /bench/5 /bench/6 \
		/bench/7 /bench/8 /bench/9 /admin/ /login; do
		links="$links<a href='$p'>$p</a> "
	done
	mkdir -p "$tmp/sc-nginx"
	cat >"$tmp/sc-nginx.conf" <<EOF
daemon off;
user root;
worker_processes 1;
pid $tmp/sc-nginx.pid;
error_log $tmp/sc-nginx/error.log warn;
events { worker_connections 4096; }
http {
	log_format hostpath '\$host \$request_uri \$status';
	access_log $tmp/sc-access.log hostpath;
	client_body_temp_path $tmp/sc-nginx/body;
	proxy_temp_path $tmp/sc-nginx/proxy;
	fastcgi_temp_path $tmp/sc-nginx/fastcgi;
	uwsgi_temp_path $tmp/sc-nginx/uwsgi;
	scgi_temp_path $tmp/sc-nginx/scgi;
	keepalive_requests 100000;
	server {
		listen 127.0.0.1:$sc_port default_server;
		root $corpus/robots;
		location = /robots.txt {
			default_type text/plain;
			try_files /\$host.txt =404;
		}
		location / {
			default_type text/html;
			return 200 "<html><head><title>bench</title></head><body>$links</body></html>\n";
		}
	}
}
EOF
	taskset -c 0 nginx -e "$tmp/sc-nginx/error.log" -p "$tmp/sc-nginx" \
		-c "$tmp/sc-nginx.conf" &
	sc_nginx=$!
	pids="$pids $sc_nginx"
	wait_for "$tmp/sc-nginx.pid" nginx
}

# One crawl, $1 stock or robotsd, round $2: "rate" on stdout; fails when
# the crawl did not ask for each robots.txt once.
scrapy_crawl() {
	before=$(wc -l <"$tmp/sc-access.log")
	if [ "$1" = robotsd ]; then
		: >"$tmp/empty.conf"
		taskset -c 0 "$build/robotsd" -f -c "$tmp/empty.conf" \
			-s "$tmp/sc.sock" --log-level warn \
			--connect-to "::127.0.0.1:$sc_port" 2>>"$tmp/robotsd.log" &
		rd=$!
		pids="$pids $rd"
		wait_for "$tmp/sc.sock" robotsd
	fi
	# shellcheck disable=SC2154 # scrapy_py is scrapy_rows'
	r=$(on_client_cpu "$scrapy_py" "$here/scrapy_crawl.py" "$1" \
		"$tmp/scrapy-starts" "http://127.0.0.1:$sc_port" "$tmp/sc.sock" \
		"$tmp/pages-$1-$2" 2>"$tmp/scrapy-$1-$2.log") || {
		note "scrapy $1 round $2 failed:"
		tail -5 "$tmp/scrapy-$1-$2.log" >&2
		return 1
	}
	if [ "$1" = robotsd ]; then
		kill "$rd"
		wait "$rd" 2>/dev/null || :
		rm -f "$tmp/sc.sock"
	fi
	tail -n +"$((before + 1))" "$tmp/sc-access.log" |
		awk '$2 == "/robots.txt" { print $1 }' | sort | uniq -c |
		awk '$1 != 1 { bad++ } END { print NR, bad + 0 }' >"$tmp/sc-robots"
	read -r hosts twice <"$tmp/sc-robots"
	note "scrapy $1 round $2: $r; robots.txt of $hosts hosts fetched, $twice more than once"
	if [ "$hosts" != "$(wc -l <"$tmp/scrapy-starts")" ] || [ "$twice" != 0 ]; then
		note "scrapy $1: not every robots.txt fetched once"
		return 1
	fi
	field "$r" rate
}

# The Scrapy row: $1 rounds over $2 origins, stock then robotsd each
# round (Debian's python3, with Scrapy and Protego; no row without them).
scrapy_rows() {
	scrapy_py=/usr/bin/python3
	if ! "$scrapy_py" -c 'import scrapy, protego' 2>/dev/null; then
		note "no Scrapy in $scrapy_py: no Scrapy row"
		return 0
	fi
	scrapy_site "$2"
	: >"$tmp/scrapy-pairs"
	i=0
	while [ "$i" -lt "$1" ]; do
		a=$(scrapy_crawl stock "$i") || return 1
		b=$(scrapy_crawl robotsd "$i") || return 1
		if ! cmp -s "$tmp/pages-stock-$i" "$tmp/pages-robotsd-$i"; then
			note "scrapy round $i: not the same pages:"
			diff "$tmp/pages-stock-$i" "$tmp/pages-robotsd-$i" |
				sed -n 's|^\([<>]\) http://\([^/]*\)/.*|\1 \2|p' |
				uniq -c >&2
			return 1
		fi
		awk -v a="$a" -v b="$b" 'BEGIN {
			printf "%s %s %.3f\n", a, b, b / a }' >>"$tmp/scrapy-pairs"
		i=$((i + 1))
	done
	kill "$sc_nginx"
	n=$(wc -l <"$tmp/pages-stock-0")
	note "scrapy per round (stock robotsd ratio): $(tr '\n' ';' <"$tmp/scrapy-pairs")"
	ra=$(cut -d' ' -f1 <"$tmp/scrapy-pairs" | median)
	rb=$(cut -d' ' -f2 <"$tmp/scrapy-pairs" | median)
	q=$(cut -d' ' -f3 <"$tmp/scrapy-pairs" | median)
	row "Scrapy crawl with RobotsdMiddleware, pages/s ($n pages, $2 origins)" \
		"$(printf %.0f "$rb")" \
		"$(printf %.0f "$ra") stock RobotsTxtMiddleware/Protego (ratio ${q}x, median of $1)" \
		">= 0.95x"
}

