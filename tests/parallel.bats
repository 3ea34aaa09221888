#!/usr/bin/env bats
# examples/parallel.sh under GNU parallel: --pipepart over the byte ranges of
# one file, each range compressed (zstd frames concatenate) or hashed, the
# output byte for byte that of a serial run. --sshlogin is ":" (this
# machine; parallel's name for it): a real ssh to localhost would need an
# sshd, which the tests do not start.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	command -v parallel > /dev/null || skip "GNU parallel is not installed (make deps: tests/deps.d/parallel.list)"
	cd "$BATS_TEST_TMPDIR"
	export PATH=/usr/sbin:/usr/bin:/sbin:/bin
	head -c 3000000 /dev/urandom > big
	seq 1 400000 >> big
}

@test "examples/parallel.sh compress: the ranges' frames are the serial accel-compress -B stream, zstd and accel-compress -d read it back" {
	run -0 sh "$ROOT/examples/parallel.sh" compress big out.zst 512K
	"$ROOT/build/accel-compress" -q -B 512K -c big > serial.zst
	cmp out.zst serial.zst
	[ "$("$ROOT/build/accel-compress" -l out.zst | grep -c .)" -gt 1 ]
	zstd -dq < out.zst | cmp - big
	"$ROOT/build/accel-compress" -d -c -q out.zst | cmp - big
	# an existing output stays as it was
	run -1 sh "$ROOT/examples/parallel.sh" compress big out.zst 512K
	cmp out.zst serial.zst
}

@test "examples/parallel.sh compress: an empty file is one valid empty stream" {
	: > empty
	run -0 sh "$ROOT/examples/parallel.sh" compress empty e.zst
	[ -s e.zst ]
	[ -z "$(zstd -dq < e.zst)" ]
}

@test "examples/parallel.sh hash: one SHA-256 a range, in order, as split --filter=sha256sum" {
	run -0 sh "$ROOT/examples/parallel.sh" hash big 256K
	[ "$output" = "$(split -b 256K --filter=sha256sum big)" ]
	[ "${#lines[@]}" -gt 10 ]
}

@test "examples/parallel.sh with ACCEL_SSHLOGIN=2/: (this machine, 2 jobs) as with the default" {
	ACCEL_SSHLOGIN=2/: run -0 sh "$ROOT/examples/parallel.sh" hash big 1M
	[ "$output" = "$(split -b 1M --filter=sha256sum big)" ]
}

@test "examples/parallel.sh: usage errors exit 2" {
	run -2 sh "$ROOT/examples/parallel.sh"
	run -2 sh "$ROOT/examples/parallel.sh" compress big
}
