# clients-lib.sh: make bench's client rows, sourced by bench.sh and
# bench/clients-bench.sh after bench-lib.sh (same variables: build, corpus,
# here, tmp, table).
# shellcheck shell=sh
# shellcheck disable=SC2154 # corpus, here, tmp... are the sourcing script's

# A Python 3 that imports Protego (Debian's python3-protego), else python3.
bench_python() {
	for p in python3 /usr/bin/python3; do
		if "$p" -c 'import protego' 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	echo python3
}

# The Go client's bench program, built into $tmp (empty when no Go).
build_go_bench() {
	for g in /usr/lib/go-1.19/bin/go go; do
		command -v "$g" >/dev/null 2>&1 || continue
		(cd "$here/../clients/go" && GOCACHE="$tmp/gocache" \
			GOPATH="$tmp/gopath" GOFLAGS=-mod=mod GOPROXY=off \
			GO111MODULE=on GOTOOLCHAIN=local GOTELEMETRY=off \
			"$g" build -o "$tmp/gobench" ./internal/bench) &&
			echo "$tmp/gobench"
		return
	done
}

# One client run: MODE of LANG (py, node, go) over socket $3 for $clsecs
# seconds; prints what it printed: "rate=N", or for MODE pair (a bare
# loop and the client in turns, in one process) "bare=N client=N".
client_out() {
	case $1 in
	py) PYTHONPATH="$here/../clients/python" on_client_cpu "$py" \
		"$here/clients_bench.py" "$2" "$3" "$tmp/client-urls.txt" \
		"$corpus/robots" "$clsecs" ;;
	node) on_client_cpu node "$here/clients_bench.mjs" "$2" "$3" \
		"$tmp/client-urls.txt" "$clsecs" ;;
	go) on_client_cpu "$gobench" "$3" "$tmp/client-urls.txt" "$clsecs" ;;
	esac
}
# The checks/s of a run of one mode (0 when it failed).
client_run() {
	r=$(client_out "$@" || :)
	echo "${r:-rate=0}" | sed -n 's/^rate=//p'
}

# The median of the numbers on stdin.
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) print 0
		else if (NR % 2) print v[(NR + 1) / 2]
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Pairs A,B of LANG, $clrounds rounds: "rateA rateB ratio" per round in
# $tmp/pairs-LANG-A-B. A bare loop and its client run in one process, in
# turns of 64 checks (the same load for both); other pairs A then B.
client_pairs() {
	f="$tmp/pairs-$1-$2-$3"
	: >"$f"
	i=0
	while [ "$i" -lt "$clrounds" ]; do
		if [ "$2" = bare ] && [ "$3" != json ]; then # in turns, one process
			r=$(client_out "$1" pair "$4" || :)
			a=$(field "$r" bare)
			b=$(field "$r" client)
		else
			a=$(client_run "$1" "$2" "$4")
			b=$(client_run "$1" "$3" "$4")
		fi
		awk -v a="$a" -v b="$b" 'BEGIN {
			printf "%s %s %.3f\n", a, b, (a > 0 ? b / a : 0) }' >>"$f"
		i=$((i + 1))
	done
	note "$1 $2/$3 per round (A B B/A): $(tr '\n' ';' <"$f")"
}

# One table row of client pair $2,$3 of lang $1: the median B rate, the
# median A rate and the median of the per-round ratios.
client_row() {
	f="$tmp/pairs-$1-$2-$3"
	ra=$(cut -d' ' -f1 <"$f" | median)
	rb=$(cut -d' ' -f2 <"$f" | median)
	q=$(cut -d' ' -f3 <"$f" | median)
	row "$4" "$(printf %.0f "$rb")" \
		"$(printf %.0f "$ra") $5 (ratio ${q}x, median of $clrounds)" "$6"
}

# The client rows against the warm robotsd at socket $1: each client's
# check against a bare loop of its language, Python's asyncio client at
# 64 in flight against Protego. CLIENT_ROUNDS (3) pairs of CLIENT_SECONDS
# (2) each, A and B in turn.
client_rows() {
	clrounds=${CLIENT_ROUNDS:-3}
	clsecs=${CLIENT_SECONDS:-2}
	py=$(bench_python)
	# the corpus URLs whose origin has a verdict cached, 13 per origin
	cp "$tmp/urls.txt" "$tmp/client-urls.txt"
	note "clients: $clrounds rounds of ${clsecs}s runs, A then B"
	client_pairs py bare sync "$1"
	client_row py bare sync "Python Client.check, checks/s, 1 at a time" \
		"bare sendall+readline loop" ">= 0.75x"
	client_pairs py protego async64 "$1"
	client_row py protego async64 "Python AsyncClient.check, checks/s, 64 in flight" \
		"Protego can_fetch, files parsed beforehand" ">= 1.5x"
	# the rest of what a Python crawler may do, each against its yardstick
	client_pairs py bare json "$1"
	client_row py bare json "Python bare loop with json.dumps + json.loads, checks/s" \
		"bare loop, lines made beforehand" "-"
	client_pairs py protego parse "$1"
	client_row py protego parse "Protego, each file parsed before its URLs, checks/s" \
		"Protego, files parsed beforehand" "-"
	client_pairs py sync many "$1"
	client_row py sync many "Python Client.check_many, 100 URLs a call, URL verdicts/s" \
		"Client.check, 1 at a time" "-"
	if command -v node >/dev/null 2>&1; then
		client_pairs node bare client "$1"
		client_row node bare client "Node await client.check, checks/s, 1 at a time" \
			"bare write + 'data' loop" ">= 0.75x"
	fi
	gobench=$(build_go_bench)
	if [ -n "$gobench" ]; then
		client_pairs go bare client "$1"
		client_row go bare client "Go Client.Check, checks/s, 1 at a time" \
			"bare Write+ReadSlice loop" ">= 0.75x"
	fi
}
