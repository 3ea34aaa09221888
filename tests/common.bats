#!/usr/bin/env bats
# tests/lib/common.bash, the setup every bats file shares: no test inherits
# a developer's ACCEL_* settings, NO_COLOR or ~/.cache.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	# A setting of each variable that breaks a test that inherits it.
	HOSTILE=(ACCEL_BACKEND=nonexistent ACCEL_FALLBACK=sometimes ACCEL_THREADS=many
		"ACCEL_FAULT=cpu:*;openssl:*" ACCEL_PROBE_TIMEOUT=never ACCEL_MEMORY=lots
		ACCEL_BACKEND_PATH=/nonexistent ACCEL_SYSROOT=/nonexistent ACCEL_PROFILE=/nonexistent/profile.json
		ACCEL_CUFFT_CHAIN=nowhere ACCEL_ONNXRUNTIME_LIB=/nonexistent/libonnxruntime.so
		ACCEL_BENCH_FFTW=/nonexistent ACCEL_BENCH_INFER_DIRECT=/nonexistent ACCEL_BENCH_MODELS=/nonexistent NO_COLOR=1)
	cd "$BATS_TEST_TMPDIR"
}

@test "every bats file loads lib/common first, before its setup and tests" {
	for f in "$ROOT"/tests/*.bats; do
		first=$(grep -nE '^(load |setup|@test|[a-z_]+\(\))' "$f" | head -n 1)
		[ "${first#*:}" = "load lib/common" ] ||
			{ echo "${f#"$ROOT"/}: its first load, setup or test is '${first#*:}', not 'load lib/common'"; false; }
	done
}

@test "common.bash unsets every ACCEL_* variable the programs read, NO_COLOR too, and keeps caches in the file's folder" {
	read_vars=$(grep -rhoE 'getenv\("ACCEL_[A-Z_]+"\)' "$ROOT/libcore" "$ROOT/cmd" "$ROOT/backends" |
		sed -E 's/getenv\("(.*)"\)/\1/' | sort -u)
	[ "$(wc -l <<< "$read_vars")" -ge 10 ]
	# each one the programs read is in HOSTILE
	for v in $read_vars; do
		[[ " ${HOSTILE[*]} " == *" $v="* ]] || { echo "HOSTILE does not set $v"; false; }
	done
	run -0 env "${HOSTILE[@]}" ACCEL_NEW_SETTING=1 BATS_FILE_TMPDIR=/tmp/f \
		bash -c 'source "$1"; env' _ "$ROOT/tests/lib/common.bash"
	left=$(grep -E '^(ACCEL_|NO_COLOR=)' <<< "$output" || true)
	[ -z "$left" ] || { echo "left set: $left"; false; }
	grep -qx 'XDG_CACHE_HOME=/tmp/f/cache' <<< "$output"
}

@test "a bats file that set nothing of its own passes with a hostile environment exported" {
	# crypt-ssh.bats failed so before it loaded lib/common: 5 tests of 6.
	run env "${HOSTILE[@]}" bats --tap "$ROOT/tests/crypt-ssh.bats"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^ok ' <<< "$output")" -eq "$(bats --count "$ROOT/tests/crypt-ssh.bats")" ]
}
