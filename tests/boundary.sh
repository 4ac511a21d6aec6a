#!/bin/sh
# librobots stays pure: no event loop, JSON, stdio or unistd in src/robots/,
# and libcurl only for its URL API in url.c.
set -eu
dir=${top_srcdir:-.}/src/robots
bad=$(grep -nE '#include <(event2/|jansson\.h|stdio\.h|unistd\.h)' "$dir"/*.c "$dir"/*.h || true)
curl=$(grep -lE '#include <curl/' "$dir"/*.c "$dir"/*.h | grep -v '/url\.c$' || true)
if [ -n "$bad$curl" ]; then
	echo "librobots must stay pure:" >&2
	echo "$bad$curl" >&2
	exit 1
fi
echo "boundary: librobots is pure"
