#!/bin/sh
# Runs unit test programs: each one's result and failing lines (-v: all lines), then the sum of all.
# A program that crashes, hangs (UNIT_TIMEOUT s) or ends without its summary counts one failure.
verbose=0
if [ "$1" = "-v" ]; then
	verbose=1
	shift
fi
out=$(mktemp) || exit 2
err=$(mktemp) || exit 2
trap 'rm -f "$out" "$err"' EXIT

indent() {
	awk '{ print "    " $0 }' "$@"
}

# "not ok" lines with the detail lines that follow them, indented.
failures() {
	awk '/^not ok /{show=1} /^ok |^[0-9]+ passed, /{show=0} show{print "    " $0}' "$1"
}

passed=0
failed=0
for prog in "$@"; do
	name=$(basename "$prog")
	timeout "${UNIT_TIMEOUT:-60}" "$prog" >"$out" 2>"$err"
	status=$?
	summary=$(tail -n 1 "$out" |
		  sed -n 's/^\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\1 \2/p')
	p=${summary% *}
	f=${summary#* }
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	# A clean run ends with its summary and exits 0 if nothing failed, else 1 (unit_summary()).
	want=1
	[ "$f" = 0 ] && want=0
	if [ -n "$summary" ] && [ "$status" = "$want" ]; then
		echo "$name: $p passed, $f failed"
		if [ "$verbose" = 1 ]; then
			indent "$out" "$err"
		else
			failures "$out"
		fi
		continue
	fi
	failed=$((failed + 1))
	if [ "$status" = 124 ]; then
		echo "$name: CRASHED (timed out after ${UNIT_TIMEOUT:-60} s)"
	else
		echo "$name: CRASHED (exit status $status${summary:+ after its summary})"
	fi
	if [ "$verbose" = 1 ]; then
		indent "$out"
	else
		failures "$out"
		echo "    last output:"
		tail -n 3 "$out" | indent
	fi
	tail -n 40 "$err" | indent
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
