#!/bin/sh
# bench.sh: every robotsd benchmark, one table (run by make bench).
#
# usage: bench.sh BUILD_DIR CORPUS_DIR [SCALE_ORIGINS [SECONDS]]
#
# BUILD_DIR holds an optimized robotsd, robotsctl and bench/ programs;
# CORPUS_DIR the unpacked corpus (robots/HOST.txt, urls.txt). Starts its
# own redis-server (the yardstick of the socket path) and nginx (the local
# origin, HTTP and HTTPS with a certificate made here with openssl), both
# on private sockets and ports, and stops them on exit. robotsd and
# redis-server run on CPU 0, loadgen and nginx on CPU 1. SCALE_ORIGINS (default 1000000) sizes the
# scale test; SECONDS (default 3) is the length of each loadgen run.
set -eu

if [ $# -lt 2 ]; then
	echo "usage: $0 BUILD_DIR CORPUS_DIR [SCALE_ORIGINS [SECONDS]]" >&2
	exit 2
fi
build=$1
corpus=$2
scale=${3:-1000000}
secs=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/robotsd-bench.XXXXXX")
chmod 755 "$tmp"
pids=
daemon_pid=
table=$tmp/table

cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null || :
	done
	wait 2>/dev/null || :
	if [ -s "$tmp/robotsd.log" ]; then
		echo "robotsd log (last lines):" >&2
		tail -5 "$tmp/robotsd.log" >&2
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"
# shellcheck source=bench/clients-lib.sh
. "$here/clients-lib.sh"
# shellcheck source=bench/scrapy-lib.sh
. "$here/scrapy-lib.sh"

# --- the library ----------------------------------------------------------
note "librobots over the corpus"
lib=$(on_client_cpu "$build/bench/bench_robots" "$corpus" 3)
parse=$(echo "$lib" | sed -n 's/^| parse throughput | \([0-9.]*\) MB.*/\1/p')
match=$(echo "$lib" | sed -n 's/^| match rate | \([0-9.]*\) million.*/\1/p')
row "parse, MB/s of corpus robots.txt" "$parse" "Google's tokenizer alone ~276 (not run here)" ">= 300"
row "hot match, M checks/s on corpus URLs" "$match" "-" ">= 15"

# --- request files ----------------------------------------------------------
sed 's|^https://|http://|' "$corpus/urls.txt" >"$tmp/urls.txt"
make_requests "$tmp/urls.txt" >"$tmp/checks.txt"
sed 's|,"id":|,"usage":true,"id":|' "$tmp/checks.txt" >"$tmp/usage.txt"
# A page's typical signals: X-Robots-Tag, Content-Usage, Content-Signal, a
# robots meta, beside a header robotsd does not read.
page='{"headers":[["Content-Type","text/html; charset=utf-8"],["X-Robots-Tag","noai, max-snippet:50"],["Content-Usage","train-ai=n"],["Content-Signal","ai-train=no, search=yes"]],"meta":[["robots","noimageindex"]]}'
sed "s|,\"id\":|,\"page\":$page,\"id\":|" "$tmp/checks.txt" >"$tmp/page.txt"
sed 's|,"id":|,"tdm":true,"id":|' "$tmp/checks.txt" >"$tmp/tdm.txt"
make_batches "$tmp/urls.txt" 100 >"$tmp/batches.txt"
echo PING >"$tmp/ping.txt"

wire=$(on_client_cpu "$build/bench/bench_wire" "$tmp/checks.txt")
row "decode a check line, ns (fast path)" "$(field "$wire" fast_ns)" \
	"$(field "$wire" jansson_ns) (jansson, proto_decode)" "-"
wire=$(on_client_cpu "$build/bench/bench_wire" "$tmp/batches.txt")
row "decode a 100-URL batch line, ns (fast path)" "$(field "$wire" fast_ns)" \
	"$(field "$wire" jansson_ns) (jansson, proto_decode)" "-"

# --- robotsctl recheck: URLs/s against the versions loaded ---------------
note "robotsctl recheck over a WARC file of the corpus"
python3 "$here/recheck_bench.py" "$corpus" "$tmp"
rc_secs() {
	t0=$(date +%s.%N)
	on_client_cpu "$build/robotsctl" recheck --agent Googlebot \
		--warc "$tmp/corpus.warc.gz" <"$1" >/dev/null 2>&1 || :
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}
rc_load=$(rc_secs /dev/null)
rc_all=$(rc_secs "$tmp/recheck-urls.txt")
rc_n=$(wc -l <"$tmp/recheck-urls.txt")
row "recheck, k URLs/s (versions loaded; one core)" \
	"$(awk -v n="$rc_n" -v a="$rc_all" -v l="$rc_load" \
		'BEGIN { printf "%.0f", n / (a - l) / 1000 }')" \
	"loading $(awk -v l="$rc_load" 'BEGIN { printf "%.1f", l }') s" ">= 100"

# --- servers ----------------------------------------------------------------
start_nginx
start_redis
start_robotsd "$tmp/sock" --max-fetches 256
rss0=$(rss_kib "$daemon_pid")
split_origins
warm "$tmp/sock" "$tmp/urls-1.txt" >/dev/null
rss_half=$(rss_kib "$daemon_pid")
warm_corpus "$tmp/sock" "$tmp/urls.txt"
memory_rows "$rss0" "$rss_half"

# --- the socket path: robotsd checks against redis PING -------------------
socket_rows

# --- the clients: each against a bare loop of its language, and Protego ----
client_rows "$tmp/sock"

# --- Scrapy: RobotsdMiddleware against Scrapy's own, the same crawl --------
scrapy_rows "${SCRAPY_ROUNDS:-3}" 200 || note "no Scrapy row: a crawl failed"

# --- fetches ----------------------------------------------------------------
fetch_rows http 10000
fetch_rows https 5000
stop_robotsd

# --- memory over HTTPS, and under the cap -----------------------------------
https_memory_rows
cap_rows

# --- scale ------------------------------------------------------------------
scale_rows "$scale"

echo
echo "Machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1);" \
	"load average before the socket runs: $load."
echo
echo "| measure | robotsd | yardstick (same run) | target |"
echo "|---|---|---|---|"
cat "$table"
