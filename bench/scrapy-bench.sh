#!/bin/sh
# scrapy-bench.sh: make bench's Scrapy row: the same crawl with Scrapy's
# own RobotsTxtMiddleware (Protego) and with robotsd.scrapy.
# RobotsdMiddleware, in turns, on the same local site.
#
# usage: scrapy-bench.sh BUILD_DIR CORPUS_DIR [ROUNDS [ORIGINS]]
#
# BUILD_DIR holds robotsd; CORPUS_DIR the unpacked corpus. A local nginx
# (CPU 0) serves ORIGINS (default 200) corpus hosts as an HTTP proxy: the
# first ORIGINS hosts of urls.txt whose robots.txt has no Crawl-delay line
# and is at most 500 KiB, each with its corpus robots.txt, and on every
# other path one page linking to 12 paths of its host (/admin/ and /login
# among them, often disallowed). Each round runs bench/scrapy_crawl.py
# (CPU 1) once stock, once with a robotsd started cold for it (CPU 0),
# ROUNDS (default 3) rounds. It checks that each crawl asked nginx for
# every robots.txt exactly once and that both got the same pages, and
# prints the table row: the medians of the pages/s and of the per-round
# ratios.
set -eu

if [ $# -lt 2 ]; then
	echo "usage: $0 BUILD_DIR CORPUS_DIR [ROUNDS [ORIGINS]]" >&2
	exit 2
fi
build=$1
corpus=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/robotsd-scrapy.XXXXXX")
chmod 755 "$tmp"
table=$tmp/table
pids=
: >"$table"

# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"
# shellcheck source=bench/clients-lib.sh
. "$here/clients-lib.sh"
# shellcheck source=bench/scrapy-lib.sh
. "$here/scrapy-lib.sh"
trap stop_all EXIT
trap 'exit 1' INT TERM HUP

scrapy_rows "${3:-3}" "${4:-200}"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| measure | robotsd | yardstick (same run) | target |"
echo "|---|---|---|---|"
cat "$table"

