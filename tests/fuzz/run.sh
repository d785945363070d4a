#!/bin/bash
# Runs libFuzzer targets, -j at a time: with -s each briefly over its seed corpus (a test layer),
# else each for -t seconds (0: no limit) or -r executions, whichever comes first. One line per
# target; the last line is "N passed, N failed" (targets). A target fails when libFuzzer stops
# on a crash, a sanitizer report, a broken invariant or a hang. FUZZ_SMOKE_RUNS: executions
# per target with -s (20000).
set -u

smoke=0
seconds=900
runs=0
jobs=2
smoke_runs=${FUZZ_SMOKE_RUNS:-20000}
goal=10000000		# executions each target should reach in a full run
while getopts st:r:j: opt; do
	case $opt in
	s) smoke=1 ;;
	t) seconds=$OPTARG ;;
	r) runs=$OPTARG ;;
	j) jobs=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))

out=build/fuzz
TIMEFORMAT='%3U %3S'	# the CPU seconds of a run, user and system
results=$(mktemp -d) || exit 2
trap 'rm -rf "$results"' EXIT

# stat::<name> from libFuzzer's -print_final_stats lines.
stat() {
	sed -n "s/^stat::$1: *\([0-9]*\)$/\1/p" "$2" | tail -n 1
}

# One target: its line, and "pass" or "fail" (and "short" below the goal) into $results.
run_one() {
	local bin=$1 name=${1##*/fuzz_} log work status execs rate cpu cpu_rate unit start=$SECONDS
	local seeds=tests/fuzz/corpus/$name art=$out/artifacts/$name/
	local -a args=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=$art)

	log=$out/logs/$name.log
	mkdir -p "$out/logs" "$art"
	if [ $smoke = 1 ]; then
		# A fresh output corpus and a fixed seed: the same executions every time.
		work=$out/smoke/$name
		rm -rf "$work"
		args+=(-seed=1 -runs=$smoke_runs -max_total_time=60)
	else
		# New inputs accumulate across runs; the committed seeds are only read.
		work=$out/corpus/$name
		args+=(-max_total_time=$seconds -runs=$((runs ? runs : -1)))
	fi
	mkdir -p "$work"
	[ -d "$seeds" ] || seeds=
	# CPU seconds as well as wall-clock ones: on a busy machine the first says the speed.
	cpu=$( { time "$bin" "${args[@]}" "$work" $seeds >"$log" 2>&1; } 2>&1 )
	status=$?
	execs=$(stat number_of_executed_units "$log")
	execs=${execs:-0}
	rate=$(stat average_exec_per_sec "$log")
	cpu_rate=$(echo "$cpu" | awk -v n="$execs" '{ printf "%d", $1 + $2 ? n / ($1 + $2) : 0 }')
	if [ $status = 0 ] && ! grep -q '^==[0-9]*==ERROR' "$log"; then
		if [ $smoke = 1 ]; then
			echo "$name: ok, $execs executions in $((SECONDS - start)) s"
		else
			echo "$name: ok, $execs executions in $((SECONDS - start)) s" \
			     "(${rate:-0}/s; $cpu_rate per CPU second)"
		fi
		echo pass >"$results/$name"
		if [ $smoke = 0 ] && [ "$execs" -lt $goal ]; then
			echo "    below $goal executions: raise FUZZ_SECONDS or set FUZZ_RUNS"
			echo short >>"$results/$name"
		fi
		return
	fi
	echo fail >"$results/$name"
	echo "$name: FAILED (exit status $status after $execs executions), log $log"
	grep -E 'invariant broken|ERROR: |runtime error|SUMMARY' "$log" | head -n 6 |
		sed 's/^/    /'
	unit=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
	echo "    reproduce: $bin ${unit:-$art<file>}"
}

if [ $smoke = 1 ]; then
	echo "fuzz-smoke: $# targets, $smoke_runs executions each, $jobs at a time"
else
	limit=
	[ "$seconds" = 0 ] || limit="$seconds s"
	[ "$runs" = 0 ] || limit="${limit:+$limit or }$runs executions"
	echo "fuzz: $# targets, $jobs at a time, each for ${limit:-ever (until stopped)}"
fi
running=0
for bin in "$@"; do
	if [ $running -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
	[ $smoke = 1 ] || echo "${bin##*/fuzz_}: started $(date +%T)"
	run_one "$bin" &
	running=$((running + 1))
done
wait

passed=$(grep -lx pass "$results"/* 2>/dev/null | wc -l)
failed=$(grep -lx fail "$results"/* 2>/dev/null | wc -l)
short=$(grep -lx short "$results"/* 2>/dev/null | wc -l)
[ "$short" = 0 ] || echo "$short targets below $goal executions"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ $((passed + failed)) = $# ]
