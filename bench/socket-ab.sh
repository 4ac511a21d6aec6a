#!/bin/sh
# socket-ab.sh: make bench's socket rows for two builds, in turns, in one
# run: cached checks over the socket at 16 connections x depth 1 (single)
# and x depth 16 (pipelined), and 100-URL batches at 16 x 4, so that a
# change to the check path is measured against its baseline on the same
# machine at the same time.
#
# usage: socket-ab.sh BUILD_A BUILD_B CORPUS_DIR [ROUNDS [SECONDS]]
#
# Each BUILD holds an optimized robotsd and bench/loadgen (as make bench
# builds them); CORPUS_DIR the unpacked corpus. For each of ROUNDS
# (default 3) A then B: a fresh robotsd on CPU 0 is warmed with the corpus
# origins from a local nginx, loadgen runs each row for SECONDS (default
# 3), robotsd is stopped. Prints one line of figures per build and round:
# the rates, and robotsd's own CPU per answer (ns; for a batch, per URL),
# which a loaded machine moves far less than the rates.
set -eu

if [ $# -lt 3 ]; then
	echo "usage: $0 BUILD_A BUILD_B CORPUS_DIR [ROUNDS [SECONDS]]" >&2
	exit 2
fi
build_a=$1
build_b=$2
corpus=$3
rounds=${4:-3}
secs=${5:-3}
build=$build_a
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/robotsd-ab.XXXXXX")
chmod 755 "$tmp"
table=$tmp/table
pids=
daemon_pid=

# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"
trap stop_all EXIT
trap 'exit 1' INT TERM HUP

# robotsd's user + system CPU in clock ticks.
daemon_ticks() { awk '{ print $14 + $15 }' "/proc/$daemon_pid/stat"; }
# One loadgen run ($1: URLs per answer, then its arguments): its rate and
# robotsd's CPU ns per URL answered over the run (warm-up included).
measure() {
	per=$1
	shift
	t0=$(daemon_ticks)
	f=$(run_load "$@")
	t1=$(daemon_ticks)
	awk -v rps="$(field "$f" rps)" -v per="$per" -v t="$((t1 - t0))" \
		-v hz="$(getconf CLK_TCK)" -v s="$secs" 'BEGIN {
		printf "%d (%.0f ns)", rps * per, t / hz * 1e9 / (rps * per * (s + 0.5)) }'
}

sed 's|^https://|http://|' "$corpus/urls.txt" >"$tmp/urls.txt"
make_requests "$tmp/urls.txt" >"$tmp/checks.txt"
make_batches "$tmp/urls.txt" 100 >"$tmp/batches.txt"
start_nginx

echo "| round | build | checks/s 16x1 (robotsd CPU/check) | checks/s 16x16 | batch verdicts/s 16x4 (CPU/URL) |"
echo "|---|---|---|---|---|"
r=1
while [ "$r" -le "$rounds" ]; do
	for which in A B; do
		[ "$which" = A ] && build=$build_a || build=$build_b
		start_robotsd "$tmp/sock"
		warm_corpus "$tmp/sock" "$tmp/urls.txt"
		s1=$(measure 1 -c 16 -d 1 -e '"ok":true' "$tmp/sock" "$tmp/checks.txt")
		s16=$(measure 1 -c 16 -d 16 -e '"ok":true' "$tmp/sock" "$tmp/checks.txt")
		sb=$(measure 100 -c 16 -d 4 -e '"ok":true' "$tmp/sock" "$tmp/batches.txt")
		stop_robotsd
		rm -f "$tmp/sock"
		echo "| $r | $which | $s1 | $s16 | $sb |"
	done
	r=$((r + 1))
done
