#!/bin/sh
# clients-bench.sh: make bench's client rows alone: the Python, Node and Go
# clients' check against a bare loop of each language over the same
# socket, and Python's asyncio client against Protego.
#
# usage: clients-bench.sh BUILD_DIR CORPUS_DIR [ROUNDS [SECONDS]]
#
# BUILD_DIR holds an optimized robotsd (as make bench builds it);
# CORPUS_DIR the unpacked corpus. A local nginx serves the corpus, a
# robotsd on CPU 0 is warmed with its origins, then each pair of rows runs
# ROUNDS (default 3) times, A then B, SECONDS (default 2) each, on CPU 1.
# Prints the rows of the table of bench.sh.
set -eu

if [ $# -lt 2 ]; then
	echo "usage: $0 BUILD_DIR CORPUS_DIR [ROUNDS [SECONDS]]" >&2
	exit 2
fi
build=$1
corpus=$2
CLIENT_ROUNDS=${3:-3}
CLIENT_SECONDS=${4:-2}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/robotsd-clients.XXXXXX")
chmod 755 "$tmp"
table=$tmp/table
pids=
daemon_pid=

# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"
# shellcheck source=bench/clients-lib.sh
. "$here/clients-lib.sh"
trap stop_all EXIT
trap 'exit 1' INT TERM HUP

sed 's|^https://|http://|' "$corpus/urls.txt" >"$tmp/urls.txt"
start_nginx
start_robotsd "$tmp/sock" --max-fetches 256
warm_corpus "$tmp/sock" "$tmp/urls.txt"
client_rows "$tmp/sock"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| measure | client | yardstick (same run) | target |"
echo "|---|---|---|---|"
cat "$table"
