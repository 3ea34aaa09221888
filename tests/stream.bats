#!/usr/bin/env bats
# The stream engine under faults, as accel-compress users see it: what -v
# says about dropped engines and retried units, --fallback next in a shared
# route, and --memory (units in flight lowered, output unchanged).

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-compress"
	PLUGINS="$ROOT/build/tests/plugins"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
}

# gen N FILE: N bytes that compress somewhat (text and random base64 mixed).
gen() {
	{ seq 1 "$(( $1 / 8 + 10 ))"; head -c "$(( $1 / 2 + 10 ))" /dev/urandom | base64; } | head -c "$1" > "$2"
}

@test "-v: a dropped engine, each retried unit and where it ran; the CPU takes over with all its workers" {
	gen 500000 a
	"$A" -c -B 64K a > cpu.zst
	run --separate-stderr env ACCEL_BACKEND_PATH="$PLUGINS" ACCEL_FAULT='test:*' \
		"$A" -v -T2 -B 64K -b test:other0 --fallback cpu a -o test.zst
	[ "$status" -eq 0 ]
	cmp cpu.zst test.zst
	for line in \
		"accel-compress: warning: test:other0: unit 0 failed: injected fault (ACCEL_FAULT); retrying on cpu" \
		"accel-compress: unit 0 (byte offset 0) ran on cpu after failing on test:other0" \
		"accel-compress: warning: test:other0: unit 1 failed: injected fault (ACCEL_FAULT); retrying on cpu" \
		"accel-compress: unit 1 (byte offset 65536) ran on cpu after failing on test:other0" \
		"accel-compress: warning: test:other0: unit 2 failed: injected fault (ACCEL_FAULT); retrying on cpu (engine dropped for the rest of the run)" \
		"accel-compress: test:other0 dropped: cpu takes its units with 2 workers" \
		"accel-compress: unit 2 (byte offset 131072) ran on cpu after failing on test:other0" \
		"  3 unit(s) failed on an engine and ran again"; do
		grep -qxF -- "$line" <<< "$stderr" || { echo "stderr lacks: $line"; false; }
	done
	[[ "$stderr" =~ test:other0\ +workers\ 1,\ units\ 0,.*failures\ 3,.*dropped ]]
	[[ "$stderr" =~ cpu\ +workers\ 2,\ units\ 8,.*retried\ here\ 3[[:space:]] ]]
	# no unit is reported twice
	[ "$(grep -c ' ran on cpu after failing on ' <<< "$stderr")" -eq 3 ]
}

@test "without -v one failure is one warning; with -v also where the unit ran" {
	gen 300000 a
	"$A" -c -B 64K a > cpu.zst
	run --separate-stderr env ACCEL_BACKEND_PATH="$PLUGINS" ACCEL_FAULT='test:2,4' \
		"$A" -B 64K -b test:other0 --fallback cpu a -o q.zst
	[ "$status" -eq 0 ]
	[ "$stderr" = "accel-compress: warning: test:other0: unit 2 failed: injected fault (ACCEL_FAULT); retrying on cpu" ]
	cmp cpu.zst q.zst
	run --separate-stderr env ACCEL_BACKEND_PATH="$PLUGINS" ACCEL_FAULT='test:2,4' \
		"$A" -v -B 64K -b test:other0 --fallback cpu a -o v.zst
	[ "$status" -eq 0 ]
	cmp cpu.zst v.zst
	grep -qxF "accel-compress: warning: test:other0: unit 4 failed: injected fault (ACCEL_FAULT); retrying on cpu" <<< "$stderr"
	grep -qxF "accel-compress: unit 4 (byte offset 262144) ran on cpu after failing on test:other0" <<< "$stderr"
	grep -qxF "  2 unit(s) failed on an engine and ran again" <<< "$stderr"
	# not dropped: the CPU only retried, it did not serve
	[[ "$stderr" =~ cpu\ +workers\ 0,\ units\ 2,.*retried\ here\ 2[[:space:]] ]]
}

@test "--fallback next in a shared route retries on an earlier engine" {
	gen 4000000 a
	"$A" -c -12 -B 64K a > cpu.zst
	# test is the last engine of the route: its failed units go back to
	# cpu (a slow level, so that test surely takes some)
	run --separate-stderr env ACCEL_BACKEND_PATH="$PLUGINS" ACCEL_FAULT='test:*' \
		"$A" -12 -v -T2 -B 64K -b cpu,test:other0 --fallback next a -o next.zst
	[ "$status" -eq 0 ]
	cmp cpu.zst next.zst
	[[ "$stderr" =~ test:other0\ +workers\ 1,\ units\ 0,.*failures\ [1-3], ]]
	# every engine fails the same unit: each tries it once, then exit 1
	run --separate-stderr env ACCEL_BACKEND_PATH="$PLUGINS" ACCEL_FAULT='cpu:1;test:1' \
		"$A" -B 64K -b cpu,test:other0 --fallback next a -o out
	[ "$status" -eq 1 ]
	[[ "${stderr_lines[-1]}" =~ ^accel-compress:\ a:\ (cpu|test:other0):\ unit\ 1\ \(byte\ offset\ 65536\)\ failed:\ injected\ fault\ \(ACCEL_FAULT\)\;\ no\ engine\ left\ to\ retry\ on$ ]]
	[ ! -e out ]
}

@test "--memory 1M: one unit in flight, the same bytes out, both ways, every format" {
	gen 3000000 a
	for fmt in zstd gzip lz4; do
		"$A" -c -F "$fmt" -T2 -B 256K a > "plain.$fmt"
		# from a pipe each unit holds its input too
		run --separate-stderr sh -c 'cat a | "$1" -v -F "$2" -T2 -B 256K --memory 1M -o "capped.$2"' sh "$A" "$fmt"
		[ "$status" -eq 0 ]
		cmp "plain.$fmt" "capped.$fmt"
		[[ "$stderr" == *"  at most 1 unit(s) in flight, the largest 0.5 MiB (input + output); memory cap 1.0 MiB"* ]]
		# a regular file is mapped, and each unit's input is read into
		# its worker's buffer (pread): input and output are held too
		run --separate-stderr "$A" -v -F "$fmt" -T2 -B 256K --memory 1M -f a -o "capped.$fmt"
		[ "$status" -eq 0 ]
		cmp "plain.$fmt" "capped.$fmt"
		[[ "$stderr" == *"  at most 1 unit(s) in flight, the largest 0.5 MiB (input + output); memory cap 1.0 MiB"* ]]
		run --separate-stderr "$A" -v -d -T2 --memory 1M "capped.$fmt" -o "back.$fmt"
		[ "$status" -eq 0 ]
		cmp a "back.$fmt"
	done
	# a chunk larger than the cap still runs, one at a time
	run --separate-stderr "$A" -v -T2 -B 2M --memory 1M a -o big.zst
	[ "$status" -eq 0 ]
	[[ "$stderr" =~ at\ most\ 1\ unit\(s\)\ in\ flight,\ the\ largest\ [0-9.]+\ MiB\ \(input\ \+\ output\)\;\ memory\ cap\ 1\.0\ MiB ]]
	"$A" -c -d big.zst | cmp a -
	# ACCEL_MEMORY is the default; --memory wins
	run --separate-stderr env ACCEL_MEMORY=1M "$A" -v -T2 -B 2M a -o env.zst
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"at most 1 unit(s) in flight"*"memory cap 1.0 MiB"* ]]
	run --separate-stderr env ACCEL_MEMORY=1M "$A" -v -T2 -B 2M --memory 1G a -o opt.zst
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"memory cap 1024.0 MiB"* ]]
	# without either: a cap from the machine's memory
	run --separate-stderr "$A" -v -T2 a -o def.zst
	[ "$status" -eq 0 ]
	[[ "$stderr" =~ memory\ cap\ [0-9]+\.[0-9]\ MiB ]]
	# a FILE of one chunk runs on the calling thread, one unit: no cap
	run --separate-stderr "$A" -v a -o one.zst
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"at most 1 unit(s) in flight, the largest "*" MiB (input + output); no memory cap"* ]]
	cmp def.zst one.zst
}

@test "--memory lowers the peak memory of a run" {
	head -c 48M /dev/urandom > r
	/usr/bin/time -o plain.rss -f %M "$A" -c -T2 -B 8M r > plain.zst
	/usr/bin/time -o capped.rss -f %M "$A" -c -T2 -B 8M --memory 16M r > capped.zst
	cmp plain.zst capped.zst
	# What the program holds before any unit (libraries, plugins) is
	# not what --memory caps: measured on an input of one byte.
	head -c 1 r > one
	/usr/bin/time -o base.rss -f %M "$A" -c -T2 -B 8M --memory 16M one > one.zst
	echo "peak RSS: $(cat plain.rss) KB without, $(cat capped.rss) KB with --memory 16M, $(cat base.rss) KB on one byte"
	# 6 units of 8 MiB in + out without a cap, 1 with it
	base=$(cat base.rss)
	[ "$(( $(cat capped.rss) - base ))" -lt "$(( ($(cat plain.rss) - base) / 2 ))" ]
}

@test "--memory and ACCEL_MEMORY: a bad size is a usage error" {
	gen 1000 a
	for v in 0 512K abc 1X -1 ''; do
		run --separate-stderr "$A" --memory "$v" a -o out
		[ "$status" -eq 2 ]
		[ "${stderr_lines[0]}" = "accel-compress: --memory: '$v' is not a size of 1M or more" ]
		[ "${stderr_lines[1]}" = "Try 'accel-compress --help' for more information." ]
		[ ! -e out ]
	done
	run --separate-stderr env ACCEL_MEMORY=lots "$A" a -o out
	[ "$status" -eq 2 ]
	[ "$stderr" = "accel-compress: ACCEL_MEMORY: 'lots' is not a size of 1M or more" ]
	[ ! -e out ]
}
