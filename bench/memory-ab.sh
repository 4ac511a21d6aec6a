#!/bin/sh
# memory-ab.sh: make bench's memory rows for two builds, in turns, in one
# run, each fill both from the empty daemon and at the margin: the 2,000
# corpus origins filled by single HTTPS checks, by HTTP batches, and over
# HTTPS again and again at --cache-max-bytes 8M (churn with evictions).
#
# usage: memory-ab.sh BUILD_A BUILD_B CORPUS_DIR [ROUNDS]
#
# Each BUILD holds an optimized robotsd (as make bench builds it);
# CORPUS_DIR the unpacked corpus. For each of ROUNDS (default 1), A then
# B, one fresh robotsd per fill. Per fill, bytes of RSS growth per
# origin: "empty" from the empty daemon to the end of the fill (the issue's
# measure), "marginal" from after the first 1,000 origins to after the
# second 1,000 (one-time costs left out), each against the raw bytes of
# its origins and with cache_bytes' share of that RSS growth, then
# cache_bytes per origin at the end. The fetch thread is let go idle (2 s) before each RSS reading
# but the first, as https_memory_rows does. The churn line gives RSS
# growth in KiB after each of 4 passes and cache_bytes at the end.
set -eu

if [ $# -lt 3 ]; then
	echo "usage: $0 BUILD_A BUILD_B CORPUS_DIR [ROUNDS]" >&2
	exit 2
fi
build_a=$1
build_b=$2
corpus=$3
rounds=${4:-1}
build=$build_a
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/robotsd-mem.XXXXXX")
chmod 755 "$tmp"
table=$tmp/table # bench-lib.sh's, unused here
pids=
daemon_pid=

# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"
trap stop_all EXIT
trap 'exit 1' INT TERM HUP

# Half $2 of the origins over $1 (http: batches, https: single checks),
# then 2 s for the fetch thread to go idle; prints warm.py's figures.
warm_half() {
	if [ "$1" = https ]; then
		warm --single "$tmp/sock" "$tmp/$1-$2.txt"
	else
		warm "$tmp/sock" "$tmp/$1-$2.txt"
	fi
	sleep 2
}

# One fill ($1: http or https) of the origins in halves; prints
# "empty marginal cache_bytes" per origin.
fill() {
	if [ "$1" = https ]; then
		start_robotsd "$tmp/sock"
	else
		start_robotsd "$tmp/sock" --max-fetches 256 # as memory_rows
	fi
	sleep 1
	r0=$(rss_kib "$daemon_pid")
	w=$(warm_half "$1" 1)
	r1=$(rss_kib "$daemon_pid")
	c1=$(field "$w" cache_bytes)
	w=$(warm_half "$1" 2)
	r2=$(rss_kib "$daemon_pid")
	c2=$(field "$w" cache_bytes)
	stop_robotsd
	rm -f "$tmp/sock"
	n=$(cat "$tmp/http-1.txt" "$tmp/http-2.txt" | wc -l)
	n2=$(wc -l <"$tmp/http-2.txt")
	e=$(((r2 - r0) * 1024 / n))
	m=$(((r2 - r1) * 1024 / n2))
	echo "$e ($(pct "$e" "$raw"), $(pct "$c2" "$((r2 * 1024 - r0 * 1024))"))" \
		"/ $m ($(pct "$m" "$raw2"), $(pct "$((c2 - c1))" "$((r2 * 1024 - r1 * 1024))"))" \
		"/ $((c2 / n))"
}

# Four passes over all origins over HTTPS at an 8 MiB cap.
churn() {
	start_robotsd "$tmp/sock" --cache-max-bytes 8388608
	cap_passes "$tmp/sock" "$tmp/https-all.txt" 1
	stop_robotsd
	rm -f "$tmp/sock"
	echo "$out; cache_bytes $(field "$w" cache_bytes)"
}

cut -d/ -f3 "$corpus/urls.txt" | sort -u >"$tmp/hosts"
half=$(($(wc -l <"$tmp/hosts") / 2))
for s in http https; do
	sed "s|.*|$s://&/|" "$tmp/hosts" >"$tmp/$s-all.txt"
	head -n "$half" "$tmp/$s-all.txt" >"$tmp/$s-1.txt"
	tail -n +"$((half + 1))" "$tmp/$s-all.txt" >"$tmp/$s-2.txt"
done
raw=$(($(cut -d/ -f3 "$tmp/http-all.txt" | sed "s|.*|$corpus/robots/&.txt|" |
	xargs cat | wc -c) / $(wc -l <"$tmp/hosts")))
raw2=$(($(cut -d/ -f3 "$tmp/http-2.txt" | sed "s|.*|$corpus/robots/&.txt|" |
	xargs cat | wc -c) / $(wc -l <"$tmp/http-2.txt")))
start_nginx

echo "raw robots.txt bytes per origin: $raw; second 1,000: $raw2"
echo "| round | build | HTTPS single: empty / marginal / cache_bytes | HTTP batches: empty / marginal / cache_bytes | churn at 8M: RSS KiB after passes 1-4 |"
echo "|---|---|---|---|---|"
r=1
while [ "$r" -le "$rounds" ]; do
	for which in A B; do
		[ "$which" = A ] && build=$build_a || build=$build_b
		hs=$(fill https)
		hb=$(fill http)
		echo "| $r | $which | $hs | $hb | $(churn) |"
	done
	r=$((r + 1))
done
