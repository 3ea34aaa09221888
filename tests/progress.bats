#!/usr/bin/env bats
# Progress meters (libcore/progress.c and each program's): with --progress
# and stderr not a terminal, lines of their own with no escape code and no
# carriage return; -q silences every meter, --progress or not; accel-crypt
# hash counts files of all and their bytes. (accel-transcode's line:
# tests/transcode-robust.bats; accel-infer's: tests/infer.bats.)

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	B="$ROOT/build"
	cd "$BATS_TEST_TMPDIR"
	for i in 1 2 3; do head -c 100000 /dev/urandom > f$i; done
	"$B/accel-crypt" keygen -o key.txt 2>/dev/null
	R=$("$B/accel-crypt" keygen -y key.txt)
}

# no_escapes FILE: FILE holds no ESC and no carriage return.
no_escapes() {
	! grep -q $'\x1b' "$1" && ! grep -q $'\r' "$1"
}

@test "--progress with stderr in a file: the meter's lines, no escape code, no carriage return" {
	"$B/accel-compress" --progress f1 -o f1.zst 2> compress.err
	"$B/accel-crypt" --progress -r "$R" -o f1.age f1 2> crypt.err
	"$B/accel-crypt" hash --progress f1 f2 > /dev/null 2> hash.err
	head -c 65536 f1 | "$B/accel-fft" --progress -n 256 > /dev/null 2> fft.err
	for f in compress crypt hash fft; do
		no_escapes $f.err || { cat -A $f.err; false; }
	done
	[[ "$(tail -n 1 compress.err)" =~ ^zstd\.compress:\ 97\.7\ KiB\ \(100%\)\ [0-9.]+\ [KMG]?i?B/s\ ETA\ 00:00$ ]]
	[[ "$(tail -n 1 crypt.err)" =~ ^age\.encrypt:\ 97\.7\ KiB\ \(100%\)\ [0-9.]+\ [KMG]?i?B/s\ ETA\ 00:00$ ]]
	[[ "$(tail -n 1 fft.err)" =~ ^fft\.c2c:\ 8\.2k\ samples\ [0-9.]+[kMG]?\ samples/s$ ]]
}

@test "-q silences every meter, --progress or not: stderr stays empty" {
	run -0 --separate-stderr "$B/accel-compress" -q --progress f1 -o q.zst
	[ -z "$stderr" ]
	run -0 --separate-stderr "$B/accel-crypt" -q --progress -r "$R" -o q.age f1
	[ -z "$stderr" ]
	run -0 --separate-stderr "$B/accel-crypt" hash -q --progress f1
	[ -z "$stderr" ]
	[ "$output" = "$(sha256sum f1)" ]
	run -0 --separate-stderr sh -c "head -c 65536 f1 | '$B/accel-fft' -q --progress -n 256 > /dev/null"
	[ -z "$stderr" ]
}

@test "without --progress, stderr not a terminal: no meter" {
	run -0 --separate-stderr "$B/accel-compress" f1 -o n.zst
	[ -z "$stderr" ]
	run -0 --separate-stderr "$B/accel-crypt" hash f1 f2
	[ -z "$stderr" ]
}

@test "hash --progress: files done of all and their bytes; the digests as sha256sum prints them" {
	run --separate-stderr "$B/accel-crypt" hash --progress f1 f2 f3 missing
	[ "$status" -eq 1 ]
	[ "$output" = "$(sha256sum f1 f2 f3)" ]
	[ "${stderr_lines[0]}" = "accel-crypt: missing: No such file or directory" ]
	[[ "${stderr_lines[-1]}" =~ ^sha256:\ 4/4\ files\ \(100%\)\ 293\.0\ KiB\ [0-9.]+\ [KMG]?i?B/s\ ETA\ 00:00$ ]]
	# -c counts the files of the list
	sha256sum f1 f2 > sums
	run -0 --separate-stderr "$B/accel-crypt" hash -a sha256 -c --progress sums
	[ "$output" = "f1: OK
f2: OK" ]
	[[ "$stderr" =~ ^sha256:\ 2/2\ files\ \(100%\)\ 195\.3\ KiB\  ]]
}
