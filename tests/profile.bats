#!/usr/bin/env bats
# The routing profile as a program sees it: a profile that is invalid or
# was measured on another machine is ignored, and -v says why in one line.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-compress"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
	seq 1 300000 > in
}

# ignored_lines: the lines of stderr that say a profile was ignored.
ignored_lines() {
	grep -c 'ignored' err || true
}

@test "a profile from another machine is ignored with one line under -v" {
	cat > p.json <<'J'
{"schema_version": 2,
 "machine": {"cpu_model": "Not This CPU 9000", "devices": []},
 "entries": [{"operation": "zstd.compress", "engine": "cpu", "engine_key": "cpu@cpu:Not This CPU 9000",
              "size_class": "large", "mb_per_s": 1}]}
J
	model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
	[ -n "$model" ] || skip "no model name in /proc/cpuinfo"
	ACCEL_PROFILE=$PWD/p.json "$A" -v -c in > out.zst 2> err
	[ "$(ignored_lines)" -eq 1 ]
	grep -qxF "  profile $PWD/p.json ignored: measured on another machine (CPU 'Not This CPU 9000', this one '$model')" err
	# the output is still right, and without -v nothing is said
	zstd -q -d -c out.zst | cmp - in
	ACCEL_PROFILE=$PWD/p.json "$A" -c in > out2.zst 2> err
	[ ! -s err ]
	cmp out.zst out2.zst
}

@test "an invalid profile is ignored with one line under -v naming why" {
	echo '{"schema_version": 3, "entries": []}' > p.json
	ACCEL_PROFILE=$PWD/p.json "$A" -v -c in > out.zst 2> err
	[ "$(ignored_lines)" -eq 1 ]
	grep -qxF "  profile $PWD/p.json ignored: schema_version 3 is not supported (this build reads 1 and 2)" err
	echo '{"schema_version": 2, "entries": [' > p.json
	ACCEL_PROFILE=$PWD/p.json "$A" -v -c in > out.zst 2> err
	[ "$(ignored_lines)" -eq 1 ]
	grep -qxF "  profile $PWD/p.json ignored: not valid JSON" err
	# decompression routes too
	ACCEL_PROFILE=$PWD/p.json "$A" -v -d -c out.zst > back 2> err
	[ "$(ignored_lines)" -eq 1 ]
	grep -qxF "  profile $PWD/p.json ignored: not valid JSON" err
	cmp back in
}

@test "a valid schema 1 profile or none: nothing said" {
	echo '{"schema_version": 1, "entries": [{"operation": "zstd.compress", "engine": "cpu", "size_class": "large", "mb_per_s": 123}]}' > p.json
	ACCEL_PROFILE=$PWD/p.json "$A" -v -c in > out.zst 2> err
	[ "$(ignored_lines)" -eq 0 ]
	grep -q '^  1\. cpu *measured 123 MB/s (profile, large jobs)$' err
	ACCEL_PROFILE=$PWD/absent.json "$A" -v -c in > out.zst 2> err
	[ "$(ignored_lines)" -eq 0 ]
}

@test "the default profile is read from XDG_CACHE_HOME" {
	mkdir -p cache/accel
	echo 'not json' > cache/accel/profile.json
	XDG_CACHE_HOME=$PWD/cache "$A" -v -c in > out.zst 2> err
	grep -qxF "  profile $PWD/cache/accel/profile.json ignored: not valid JSON" err
}
