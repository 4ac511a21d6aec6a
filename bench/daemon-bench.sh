#!/bin/sh
# daemon-bench.sh: robotsd end to end on the benchmark corpus.
#
# usage: daemon-bench.sh ROBOTSD BENCH_DAEMON CORPUS_DIR [CONNECTIONS [SECONDS [DEPTH]]]
#
# Starts a local origin server on the corpus (bench/origin_corpus.py), then
# robotsd -f on a private socket with an empty config, every origin sent to
# that server with --connect-to; warms the cache with "wait":false batches
# over every origin of urls.txt and waits until all fetches are done; runs
# bench_daemon; prints the daemon's RSS and cache size; stops everything.
# The corpus URLs are https; the benchmark asks for their http:// twins so
# that the origin server needs no TLS (a check costs the same either way).
set -eu

if [ $# -lt 3 ]; then
	echo "usage: $0 ROBOTSD BENCH_DAEMON CORPUS_DIR [CONNECTIONS [SECONDS [DEPTH]]]" >&2
	exit 2
fi
robotsd=$1
bench=$2
corpus=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/daemon-bench.XXXXXX")
origin_pid=
daemon_pid=

cleanup() {
	[ -z "$daemon_pid" ] || kill "$daemon_pid" 2>/dev/null || :
	[ -z "$origin_pid" ] || kill "$origin_pid" 2>/dev/null || :
	wait 2>/dev/null || :
	if [ -s "$tmp/robotsd.log" ]; then
		echo "robotsd log:" >&2
		cat "$tmp/robotsd.log" >&2
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# Wait up to 10 s for a file (or socket) to appear.
wait_for() {
	i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		if [ "$i" -gt 100 ]; then
			echo "daemon-bench: $2 did not start" >&2
			exit 1
		fi
		sleep 0.1
	done
}

# The daemon's resident memory, from /proc.
rss() {
	awk '/^VmRSS:/ { print $2 " " $3 }' "/proc/$daemon_pid/status"
}

sed 's|^https://|http://|' "$corpus/urls.txt" >"$tmp/urls.txt"

python3 "$here/origin_corpus.py" "$corpus" "$tmp/port" &
origin_pid=$!
wait_for "$tmp/port" "the origin server"
port=$(cat "$tmp/port")

: >"$tmp/empty.conf"
"$robotsd" -f -c "$tmp/empty.conf" -s "$tmp/sock" --log-level warn \
	--connect-to "::127.0.0.1:$port" --max-fetches 64 2>"$tmp/robotsd.log" &
daemon_pid=$!
wait_for "$tmp/sock" "robotsd"
rss_empty=$(rss)

# Warm: one "wait":false check per origin, 100 a batch, then poll stats
# until no fetch runs or waits and every origin is cached.
echo "Warm-up: $(python3 "$here/warm.py" "$tmp/sock" "$tmp/urls.txt")"
echo

echo "Machine: $(getconf _NPROCESSORS_ONLN) CPUs; load average before the" \
	"run: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
ROBOTSD_PID=$daemon_pid "$bench" "$tmp/sock" "$tmp/urls.txt" "$@"

"${ROBOTSCTL:-$(dirname "$robotsd")/robotsctl}" -s "$tmp/sock" --json stats >"$tmp/stats"
entries=$(sed 's/.*"cache_entries":\([0-9]*\).*/\1/' "$tmp/stats")
bytes=$(sed 's/.*"cache_bytes":\([0-9]*\).*/\1/' "$tmp/stats")
echo
echo "robotsd RSS: $rss_empty at start, $(rss) after the run;" \
	"cache: $entries entries, $bytes cache_bytes."