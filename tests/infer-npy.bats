#!/usr/bin/env bats
# accel-infer's .npy reader (libcore/ops/npy.c) against numpy's: every file of
# the npy fuzz corpus and a few thousand headers mutated from numpy's own,
# read array by array by both (tests/infer/npyref.py, through the fuzz
# target's replay with FUZZ_NPY_VERDICT): the same arrays (dtype, shape)
# and the same refusals, but for what accel-infer does not take (another
# dtype, Fortran order, over 16 dims, over the target's limit, text before
# the header's dict).

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	REPLAY="$ROOT/build/fuzz/replay-npy"
	/usr/bin/python3 -c 'import numpy' 2> /dev/null || skip "no numpy for /usr/bin/python3"
	[ -x "$REPLAY" ] || skip "no $REPLAY: run make tests"
}

@test "the npy fuzz corpus reads as numpy reads it" {
	run -0 /usr/bin/python3 -W ignore "$ROOT/tests/infer/npyref.py" compare "$REPLAY" "$ROOT/tests/fuzz/corpus/npy"
	[[ "${lines[-1]}" = *" 0 differ" ]]
}

@test "headers mutated from numpy's own read as numpy reads them" {
	run -0 /usr/bin/python3 -W ignore "$ROOT/tests/infer/npyref.py" mutate "$REPLAY" 3000 17
	[[ "${lines[-1]}" = "3000 files: "*" 0 differ" ]]
}
