#!/bin/sh
# Run the C unit tests (cmocka, TAP output), the fuzz corpus replay and the
# bats tests, then print one line "N passed, N failed" that CI counts.
set -u
cd "$(dirname "$0")/.."
log=build/tests/check.log
mkdir -p build/tests
: > "$log"
status=0
for t in build/tests/test_*; do
	[ -x "$t" ] || continue
	echo "# $t" | tee -a "$log"
	CMOCKA_MESSAGE_OUTPUT=TAP "$t" 2>&1 | tee -a "$log" || status=1
done
# The fuzz corpus, replayed through each target's plain driver.
echo "# fuzz corpus replay" | tee -a "$log"
for r in build/fuzz/replay-*; do
	[ -x "$r" ] || continue
	t=${r##*/replay-}
	if out=$("$r" "tests/fuzz/corpus/$t" 2>"build/tests/replay-$t.log"); then
		echo "ok - fuzz corpus $t: $out" | tee -a "$log"
	else
		echo "not ok - fuzz corpus $t: $(grep -m1 -e '^fuzz:' -e 'ERROR' "build/tests/replay-$t.log")" | tee -a "$log"
		tail -3 "build/tests/replay-$t.log"
		status=1
	fi
done
for b in tests/*.bats; do
	[ -f "$b" ] || continue
	echo "# $b" | tee -a "$log"
	bats --tap "$b" 2>&1 | tee -a "$log" || status=1
done
passed=$(grep -c '^ok ' "$log")
failed=$(grep -c '^not ok ' "$log")
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$status" -eq 0 ]
