# bench-lib.sh: the parts of bench.sh, sourced by it (same variables).
# shellcheck shell=sh
# shellcheck disable=SC2154 # build, corpus, tmp, secs... are bench.sh's
# (bench/socket-ab.sh sources it too, with the same variables)

note() { echo "bench: $*" >&2; }
# Stop what the script started, remove its $tmp (an EXIT trap).
stop_all() {
	for p in $pids; do
		kill "$p" 2>/dev/null || :
	done
	wait 2>/dev/null || :
	rm -rf "$tmp"
}
row() { printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4" >>"$table"; }
# key=value field of a line of figures.
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f%%", 100 * a / b }'; }
on_client_cpu() { taskset -c 1 "$@"; }

# Wait up to 60 s for a path to appear.
wait_for() {
	i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		if [ "$i" -gt 6000 ]; then
			note "$2 did not start"
			exit 1
		fi
		sleep 0.01
	done
}

# Resident memory of a process in KiB.
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# A free TCP port on 127.0.0.1.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

loadgen() { on_client_cpu "$build/bench/loadgen" "$@"; }

# A publisher's tdmrep.json, which nginx serves for every corpus origin:
# its PDFs reserved with a policy, the rest not.
tdmrep='[{"location":"/*.pdf","tdm-reservation":1,"tdm-policy":"https://policy.bench.test/tdm.json"},{"location":"/","tdm-reservation":0}]'


# One check line per URL, agents in turn.
make_requests() {
	awk 'BEGIN { n = split("Googlebot bingbot GPTBot", a, " ") }
	{ printf "{\"op\":\"check\",\"url\":\"%s\",\"agent\":\"%s\",\"id\":%d}\n",
	    $0, a[NR % n + 1], NR }' "$1"
}

# Batch check lines of $2 URLs each.
make_batches() {
	awk -v per="$2" '{
		u = u (u == "" ? "" : ",") "\"" $0 "\""
		if (NR % per == 0) {
			printf "{\"op\":\"check\",\"urls\":[%s],\"agent\":\"Googlebot\",\"id\":%d}\n", u, NR
			u = ""
		}
	}' "$1"
}

# A self-signed (ECDSA P-256) certificate for *.bench.test, a CA and one
# certificate per corpus host (bench/corpus_certs.py); $tmp/ca.pem holds
# both CAs, for robotsd's --ca-file.
make_cert() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=bench.test" \
		-addext "subjectAltName=DNS:*.bench.test" \
		-addext "basicConstraints=critical,CA:TRUE" \
		-keyout "$tmp/key.pem" -out "$tmp/cert.pem" 2>/dev/null
	mkdir -p "$tmp/corpus-tls"
	cut -d/ -f3 "$corpus/urls.txt" | sort -u >"$tmp/corpus-hosts"
	python3 "$here/corpus_certs.py" "$tmp/corpus-tls" "$tmp/corpus-hosts"
	cat "$tmp/cert.pem" "$tmp/corpus-tls/ca.pem" >"$tmp/ca.pem"
}

# nginx on CPU 1, beside the load generator, so that the TLS work of the
# origin does not take robotsd's CPU in the fetch rows: the corpus per Host
# (over HTTPS with that host's certificate), and a 2-rule robots.txt for
# every *.bench.test host, over HTTP ($http_port) and HTTPS ($https_port).
# Every corpus origin's tdmrep.json is $tdmrep (above).
start_nginx() {
	make_cert
	http_port=$(free_port)
	https_port=$(free_port)
	mkdir -p "$tmp/nginx"
	cat >"$tmp/nginx.conf" <<EOF
daemon off;
user root;
worker_processes 1;
pid $tmp/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 8192; multi_accept on; }
http {
	access_log off;
	client_body_temp_path $tmp/nginx/body;
	proxy_temp_path $tmp/nginx/proxy;
	fastcgi_temp_path $tmp/nginx/fastcgi;
	uwsgi_temp_path $tmp/nginx/uwsgi;
	scgi_temp_path $tmp/nginx/scgi;
	keepalive_requests 100000;
	default_type text/plain;
	ssl_certificate $tmp/cert.pem;
	ssl_certificate_key $tmp/key.pem;
	ssl_session_cache shared:bench:10m;
	server {
		listen 127.0.0.1:$http_port;
		listen 127.0.0.1:$https_port ssl;
		server_name *.bench.test;
		location / { return 200 "User-agent: *\nDisallow: /p/\nAllow: /\n"; }
	}
	server {
		listen 127.0.0.1:$http_port default_server;
		listen 127.0.0.1:$https_port ssl default_server;
		ssl_certificate $tmp/corpus-tls/certs/\$ssl_server_name.pem;
		ssl_certificate_key $tmp/corpus-tls/leaf.key;
		root $corpus/robots;
		location = /robots.txt { try_files /\$host.txt =404; }
		location = /.well-known/tdmrep.json {
			default_type application/json;
			return 200 '$tdmrep';
		}
	}
}
EOF
	taskset -c 1 nginx -e "$tmp/nginx/error.log" -p "$tmp/nginx" \
		-c "$tmp/nginx.conf" &
	pids="$pids $!"
	wait_for "$tmp/nginx.pid" nginx
}

# redis-server on CPU 0, on a Unix socket only, persisting nothing.
start_redis() {
	taskset -c 0 redis-server --port 0 --unixsocket "$tmp/redis.sock" \
		--save '' --appendonly no --logfile "$tmp/redis.log" &
	pids="$pids $!"
	wait_for "$tmp/redis.sock" redis-server
}

# robotsd -f on CPU 0 at socket $1, every origin sent to nginx; more args
# are robotsd options.
start_robotsd() {
	sock=$1
	shift
	: >"$tmp/empty.conf"
	taskset -c 0 "$build/robotsd" -f -c "$tmp/empty.conf" -s "$sock" \
		--log-level warn --ca-file "$tmp/ca.pem" \
		--connect-to ":80:127.0.0.1:$http_port" \
		--connect-to ":443:127.0.0.1:$https_port" "$@" \
		2>>"$tmp/robotsd.log" &
	daemon_pid=$!
	pids="$pids $daemon_pid"
	wait_for "$sock" robotsd
}

# Stop robotsd; sets stop_s to the seconds it took to exit (it saves its
# state then).
stop_robotsd() {
	t0=$(date +%s.%N)
	kill "$daemon_pid"
	wait "$daemon_pid" 2>/dev/null || :
	stop_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" \
		'BEGIN { printf "%.2f", b - a }')
}

warm() { on_client_cpu python3 "$here/warm.py" "$@"; }

# The URLs of urls.txt split by origin: urls-1.txt those of the first
# half of its origins (sorted by host), urls-2.txt the others.
split_origins() {
	cut -d/ -f3 "$tmp/urls.txt" | sort -u >"$tmp/hosts"
	head -n "$(($(wc -l <"$tmp/hosts") / 2))" "$tmp/hosts" >"$tmp/hosts-1"
	awk -F/ -v out="$tmp/urls-" 'NR == FNR { h[$0] = 1; next }
		{ print >(out (($3 in h) ? 1 : 2) ".txt") }' \
		"$tmp/hosts-1" "$tmp/urls.txt"
}

# Warm the 2,000 corpus origins of urls.txt.
warm_corpus() {
	w=$(warm "$1" "$2")
	note "corpus warm-up: $w"
	[ "$(field "$w" fetch_errors)" = 0 ] || note "fetch errors in warm-up"
	cache_bytes=$(field "$w" cache_bytes)
}

# RSS growth per origin against the raw robots.txt bytes of those origins.
# $1: RSS (KiB) of the empty daemon, $2 once the first half of the
# origins (urls-1.txt) was warmed.
memory_rows() {
	rss1=$(rss_kib "$daemon_pid")
	n=$(cut -d/ -f3 "$tmp/urls.txt" | sort -u | wc -l)
	raw=$(raw_bytes "$tmp/urls.txt")
	per=$(((rss1 - $1) * 1024 / n))
	row "RSS growth per corpus origin, HTTP batches, bytes ($n origins)" "$per" \
		"$((raw / n)) raw robots.txt bytes ($(pct "$per" "$((raw / n))"))" \
		"<= 1.3x raw"
	n2=$(cut -d/ -f3 "$tmp/urls-2.txt" | sort -u | wc -l)
	raw2=$(($(raw_bytes "$tmp/urls-2.txt") / n2))
	per2=$(((rss1 - $2) * 1024 / n2))
	row "the same from $((n - n2)) to $n origins (the second half's growth)" \
		"$per2" "$raw2 raw ($(pct "$per2" "$raw2"))" "<= 1.3x raw"
	row "cache_bytes per corpus origin" "$((cache_bytes / n))" \
		"$((raw / n)) raw" "-"
}

# Raw robots.txt bytes of the origins of URL file $1.
raw_bytes() {
	cut -d/ -f3 "$1" | sort -u | sed "s|.*|$corpus/robots/&.txt|" |
		xargs cat 2>/dev/null | wc -c
}

# The corpus origins filled over HTTPS, one single waiting check each, as
# a crawler asks, by a robotsd of their own: RSS growth per origin from
# the empty daemon and from after its first HTTPS fetch (TLS libraries
# paged in), against the raw bytes and cache_bytes; then robotsd stopped.
https_memory_rows() {
	sed 's|^http://|https://|' "$tmp/urls.txt" >"$tmp/urls-https.txt"
	echo "https://first.bench.test/" >"$tmp/first.txt"
	start_robotsd "$tmp/sock3"
	sleep 1
	r0=$(rss_kib "$daemon_pid")
	warm --single "$tmp/sock3" "$tmp/first.txt" >/dev/null
	sleep 2 # the fetch thread idle: curl let go, heaps trimmed
	r1=$(rss_kib "$daemon_pid")
	w=$(warm --single "$tmp/sock3" "$tmp/urls-https.txt")
	note "corpus over HTTPS: $w"
	sleep 2
	r2=$(rss_kib "$daemon_pid")
	stop_robotsd
	n=$(field "$w" origins)
	raw=$(($(raw_bytes "$tmp/urls-https.txt") / n))
	per=$(((r2 - r0) * 1024 / n))
	per1=$(((r2 - r1) * 1024 / n))
	cb=$(($(field "$w" cache_bytes) / n))
	row "RSS growth per corpus origin, single HTTPS checks, bytes ($n origins)" \
		"$per" "$raw raw ($(pct "$per" "$raw")); cache_bytes $cb ($(pct "$cb" "$per") of RSS)" \
		"<= 1.3x raw"
	row "the same from after robotsd's first HTTPS fetch" "$per1" \
		"$raw raw ($(pct "$per1" "$raw")); cache_bytes $(pct "$cb" "$per1") of RSS" \
		"<= 1.3x raw"
}

# Four passes of single checks of URL file $2 over the robotsd just
# started at socket $1: out gets its RSS growth after each (KiB divided by
# $3), " / " between, w the last pass's figures.
cap_passes() {
	sleep 1
	r0=$(rss_kib "$daemon_pid")
	out=
	for _ in 1 2 3 4; do
		w=$(warm --single "$1" "$2")
		sleep 2
		out="$out${out:+ / }$((($(rss_kib "$daemon_pid") - r0) / $3))"
	done
}

# --cache-max-bytes holds RSS: the corpus origins over HTTPS at a cap of
# a quarter of what they take, filled again and again (every pass
# refetches what the cap evicted); RSS growth after each pass.
cap_rows() {
	cap=8388608
	start_robotsd "$tmp/sock4" --cache-max-bytes "$cap"
	cap_passes "$tmp/sock4" "$tmp/urls-https.txt" 1024
	cb=$(field "$w" cache_bytes)
	stop_robotsd
	row "RSS growth, MiB, after passes 1-4 over the corpus, cap 8 MiB" \
		"$out" "cache_bytes $cb at the end ($(field "$w" evictions) evictions in the last pass)" \
		"flat"
}

# One loadgen run; prints its figures line.
run_load() {
	loadgen -t "$secs" -w 0.5 "$@"
}

# robotsd checks against redis PING, same connections x depth.
socket_rows() {
	note "checks over the socket against redis PING"
	# shellcheck disable=SC2034 # printed by bench.sh
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	for d in 1 16; do
		r=$(run_load -c 16 -d "$d" -e PONG "$tmp/redis.sock" "$tmp/ping.txt")
		c=$(run_load -c 16 -d "$d" -e '"ok":true' "$tmp/sock" "$tmp/checks.txt")
		rr=$(field "$r" rps)
		cr=$(field "$c" rps)
		row "cached checks/s, 16 conns x depth $d" "$cr" \
			"$rr PING/s ($(pct "$cr" "$rr"))" \
			"$([ "$d" = 1 ] && echo ">= 70%" || echo ">= 50%") of PING"
		[ "$d" = 16 ] && peak=$cr
		if [ "$d" = 16 ]; then
			# the same checks with "usage":true (issue 18)
			u=$(run_load -c 16 -d 16 -e '"usage":' "$tmp/sock" "$tmp/usage.txt")
			row "cached checks/s with \"usage\":true, 16 x 16" \
				"$(field "$u" rps)" "$cr plain ($(pct "$(field "$u" rps)" "$cr"))" \
				">= 80% of plain"
			page_rows "$cr"
			tdm_rows "$cr"
		fi
		row "p50 / p99 / p99.9 us at 16 x $d" \
			"$(field "$c" p50_us) / $(field "$c" p99_us) / $(field "$c" p999_us)" \
			"$(field "$r" p50_us) / $(field "$r" p99_us) / $(field "$r" p999_us)" "-"
	done
	half=$((peak / 2))
	r=$(run_load -c 16 -d 64 -r "$half" -e PONG "$tmp/redis.sock" "$tmp/ping.txt")
	c=$(run_load -c 16 -d 64 -r "$half" -e '"ok":true' "$tmp/sock" "$tmp/checks.txt")
	row "p99 us at half the peak ($half checks/s)" "$(field "$c" p99_us)" \
		"$(field "$r" p99_us) (PING at that rate)" "< 1000"
	c=$(run_load -c 16 -d 4 -e '"ok":true' "$tmp/sock" "$tmp/batches.txt")
	row "batch checks (100 URLs), URL verdicts/s, 16 x 4" \
		"$(($(field "$c" rps) * 100))" \
		"$(field "$c" rps) batches/s" ">= 2000000"
}

# The same checks with "tdm":true against $1 plain checks/s at 16 x 16,
# every corpus origin's tdmrep.json fetched first (nginx serves each the
# same publisher's file, $tdmrep).
tdm_rows() {
	w=$(warm --tdm "$tmp/sock" "$tmp/urls.txt")
	note "tdmrep.json warm-up: $w"
	t=$(run_load -c 16 -d 16 -e '"tdm":' "$tmp/sock" "$tmp/tdm.txt")
	row "cached checks/s with \"tdm\":true, 16 x 16" \
		"$(field "$t" rps)" "$1 plain ($(awk -v a="$(field "$t" rps)" \
			-v b="$1" 'BEGIN { printf "%.2fx", a / b }'))" "-"
}

# The same checks with a typical "page" (issue 27) against $1 plain checks/s
# at 16 x 16; every answer carries "evidence".
page_rows() {
	g=$(run_load -c 16 -d 16 -e '"evidence":' "$tmp/sock" "$tmp/page.txt")
	row "cached checks/s with a \"page\" (4 headers, 1 meta), 16 x 16" \
		"$(field "$g" rps)" "$1 plain ($(awk -v a="$(field "$g" rps)" \
			-v b="$1" 'BEGIN { printf "%.2fx", a / b }'))" ">= 0.5x plain"
}

# Fetch $2 distinct *.bench.test origins over scheme $1 with 256 fetches
# at once, while cached checks run at a fixed rate beside them.
fetch_rows() {
	note "fetching $2 origins over $1"
	i=0
	while [ "$i" -lt "$2" ]; do
		echo "$1://f$i-$1.bench.test/"
		i=$((i + 1))
	done >"$tmp/fetch-$1.txt"
	taskset -c 1 "$build/bench/loadgen" -t "$secs" -w 0.2 -c 4 -d 64 \
		-r 5000 -e '"ok":true' "$tmp/sock" "$tmp/checks.txt" \
		>"$tmp/during-$1" &
	lg=$!
	w=$(warm "$tmp/sock" "$tmp/fetch-$1.txt")
	wait "$lg"
	s=$(field "$w" seconds)
	rate=$(awk -v n="$2" -v s="$s" 'BEGIN { printf "%.0f", n / s }')
	row "fetches/s over $(echo "$1" | tr "[:lower:]" "[:upper:]"), --max-fetches 256 ($2 origins)" \
		"$rate" "nginx, $(field "$w" fetch_errors) fetch errors" \
		"$([ "$1" = http ] && echo ">= 2000" || echo ">= 1000")"
	row "cached check p99 us while $1 fetches run (5,000/s)" \
		"$(field "$(cat "$tmp/during-$1")" p99_us)" "-" "< 1000"
}

# 1,000,000 (or $1) two-rule origins from a state file.
scale_rows() {
	note "building a state file of $1 origins"
	st=$(on_client_cpu "$build/bench/bench_state" "$1" "$tmp/state" \
		"$tmp/scale-checks.txt")
	started=$(date +%s.%N)
	start_robotsd "$tmp/sock2" --state-file "$tmp/state" \
		--cache-max-bytes 64G
	ready=$(date +%s.%N)
	rss=$(rss_kib "$daemon_pid")
	c=$(run_load -c 16 -d 16 -e '"ok":true' "$tmp/sock2" "$tmp/scale-checks.txt")
	stop_robotsd
	row "scale: RSS per origin, bytes ($1 two-rule origins)" \
		"$(((rss - rss0) * 1024 / $1))" \
		"$(($(field "$st" file_bytes) / $1)) state-file bytes/origin" "<= 300"
	row "scale: cached checks/s at 16 x 16" "$(field "$c" rps)" \
		"$cr at 2,000 origins" "-"
	row "scale: start-up with the state file, s" \
		"$(awk -v a="$started" -v b="$ready" 'BEGIN { printf "%.2f", b - a }')" \
		"$(field "$st" load_s) (state_load alone)" "< 2"
	row "scale: save at shutdown, s" "$stop_s" \
		"$(field "$st" save_s) (state_save alone)" "< 2"
}
