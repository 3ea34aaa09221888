#!/usr/bin/env bats
# accel-compress with several FILEs: one run, one route, the same engine
# contexts for every input; the output is each input compressed in turn,
# complete or absent. -t writes nothing.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-compress"
	PLUGINS="$ROOT/build/tests/plugins"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
	seq 1 30000 > a
	: > b
	seq 5 7 90000 > c
}

@test "several FILEs: each compressed in turn, the route printed once, statistics per file" {
	for f in zstd gzip lz4; do
		run --separate-stderr "$A" -v -f -F "$f" -B 64K a b c -o "all.$f"
		[ "$status" -eq 0 ]
		# one route for the run, then one statistics line per input
		[ "$(grep -c "^route for $f.compress " <<< "$stderr")" -eq 1 ]
		[ "$(grep -c "^accel-compress: a: " <<< "$stderr")" -eq 1 ]
		[ "$(grep -c "^accel-compress: b: 1 units, 0 bytes in" <<< "$stderr")" -eq 1 ]
		[ "$(grep -c "^accel-compress: c: " <<< "$stderr")" -eq 1 ]
		"$A" -c -d "all.$f" | cmp - <(cat a b c)
	done
	case "$(command -v zstd)" in "") ;; *) zstd -dc all.zstd | cmp - <(cat a b c) ;; esac
}

@test "several FILEs: the same bytes as one run per file" {
	"$A" -c -B 16K a b c > together.zst
	{ "$A" -c -B 16K a; "$A" -c -B 16K b; "$A" -c -B 16K c; } > apart.zst
	cmp together.zst apart.zst
}

@test "several FILEs: a missing one after the first fails the run and leaves no -o file" {
	run --separate-stderr "$A" -f a missing c -o out.zst
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-compress: cannot read missing: No such file or directory" ]
	[ ! -e out.zst ]
	[ -z "$(ls -A | grep -v '^[abc]$')" ]
}

@test "several FILEs: one run, so engine failures carry over from file to file" {
	# A fault on unit 0 of each file on the test engine: three failures
	# across the files drop it once for the rest of the run.
	cp a d
	run --separate-stderr env ACCEL_BACKEND_PATH="$PLUGINS" ACCEL_FAULT='test:0' \
		"$A" -v -f -B 64K -b test:other0 --fallback cpu a b c d -o out.zst
	[ "$status" -eq 0 ]
	[ "$(grep -c 'engine dropped for the rest of the run' <<< "$stderr")" -eq 1 ]
	"$A" -c -d out.zst | cmp - <(cat a b c d)
}

@test "-t decompresses into nothing and writes nothing" {
	"$A" a -o a.zst
	run --separate-stderr "$A" -t a.zst
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
}
