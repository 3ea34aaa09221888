#!/usr/bin/env bats
# accel-bench --vs's peers (accel-bench(1) PEERS): FFTW called directly
# (accel-bench-fftw) for the FFTs, igzip and rapidgzip beside pigz for gzip
# (--peer), openssl speed as the reference of age and the hashes, and no
# ratio where a peer is not installed. Timings are never asserted; every
# run is small (--repeat 1 --warmup 0).

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-bench"
	H="$ROOT/build/libexec/accel-bench-fftw"
	export TMPDIR="$BATS_TEST_TMPDIR/tmp"
	mkdir -p "$TMPDIR"
	cd "$BATS_TEST_TMPDIR"
}

# tones N FRAMES FILE: FRAMES frames of N cf32 samples, two tones.
tones() {
	python3 - "$@" <<'EOF'
import math, struct, sys
n, frames, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with open(path, "wb") as f:
    for j in range(n * frames):
        re = 0.5 * math.cos(2 * math.pi * 0.0123 * j) + 0.25 * math.cos(2 * math.pi * 0.1789 * j)
        im = 0.5 * math.sin(2 * math.pi * 0.0123 * j) - 0.125 * math.sin(2 * math.pi * 0.3301 * j)
        f.write(struct.pack("<ff", re, im))
EOF
}

# close A B: the float32 files A and B hold as many values, each within
# 1e-4 of the largest magnitude.
close() {
	python3 - "$1" "$2" <<'EOF'
import struct, sys
a, b = (open(p, "rb").read() for p in sys.argv[1:3])
assert len(a) == len(b) and len(a) % 4 == 0 and a, (len(a), len(b))
x = struct.unpack("<%df" % (len(a) // 4), a)
y = struct.unpack("<%df" % (len(b) // 4), b)
big = max(abs(v) for v in x)
assert big > 0 and max(abs(u - v) for u, v in zip(x, y)) <= 1e-4 * big, "spectra differ"
EOF
}

@test "accel-bench-fftw: the spectra accel-fft writes, c2c, r2c and c2r, one thread or several" {
	[ -x "$H" ] || skip "accel-bench-fftw is not built (no fftw3f)"
	tones 256 3 t.cf32
	"$ROOT/build/accel-fft" -n 256 -o ours.cf32 t.cf32
	run -0 "$H" c2c 256 t.cf32
	"$H" c2c 256 t.cf32 > peer.cf32
	close ours.cf32 peer.cf32
	"$H" -T 2 c2c 256 t.cf32 > peer2.cf32
	close ours.cf32 peer2.cf32
	# r2c: the real parts as f32 samples, N/2+1 bins a frame
	python3 -c 'import sys; d = open("t.cf32", "rb").read(); open("t.f32", "wb").write(b"".join(d[i:i + 4] for i in range(0, len(d), 8)))'
	"$ROOT/build/accel-fft" -t f32 -n 256 -o ours.r2c t.f32
	"$H" r2c 256 t.f32 > peer.r2c
	close ours.r2c peer.r2c
	[ "$(stat -c %s peer.r2c)" -eq $((3 * 129 * 8)) ]
	# c2r: half spectra of 129 bins back to 256 samples, scaled by 1/N
	head -c $((2 * 129 * 8)) ours.r2c > half.cf32
	"$ROOT/build/accel-fft" --inverse --real -n 256 -o ours.c2r half.cf32
	"$H" c2r 256 half.cf32 > peer.c2r
	close ours.c2r peer.c2r
}

@test "accel-bench-fftw: usage errors exit 2 with a line, an unreadable file exits 1" {
	[ -x "$H" ] || skip "accel-bench-fftw is not built (no fftw3f)"
	run -2 --separate-stderr "$H" c2d 256 x
	[ "${stderr_lines[0]}" = "accel-bench-fftw: the transform is one of c2c, r2c, c2r" ]
	run -1 --separate-stderr "$H" c2c 256 nosuch.cf32
	[ "$stderr" = "accel-bench-fftw: cannot read nosuch.cf32: No such file or directory" ]
	tones 16 2 t.cf32
	run -2 --separate-stderr bash -c '"$1" -T 2 c2c 16 t.cf32 | cat; exit "${PIPESTATUS[0]}"' - "$H"
	[[ "${stderr_lines[0]}" == "accel-bench-fftw: with -T above 1, stdout is a file or /dev/null"* ]]
}

# no_peer HEADER ROW: the CSV row has no peer, ratio or reference.
no_peer() {
	python3 - "$1" "$2" <<'EOF'
import csv, sys
h, r = (next(csv.reader([l])) for l in sys.argv[1:])
row = dict(zip(h, r))
for k in ("peer", "peer_startup_seconds", "peer_mbps_median", "peer_cpu_seconds_per_byte", "ratio", "reference", "reference_mbps"):
    assert row[k] == "", (k, row[k])
EOF
}

@test "fft.c2c --vs: FFTW called directly is the peer, with a ratio" {
	[ -x "$H" ] || skip "accel-bench-fftw is not built (no fftw3f)"
	"$A" --list fft.c2c | grep -q fftw || skip "no fftw engine here"
	run -0 "$A" --vs -T 1 --repeat 1 --warmup 0 --size 256 -b fftw fft.c2c
	[[ "${lines[1]}" =~ ^fft\.c2c\ +fftw\ +N=256\ .*\ accel-bench-fftw\ -T\ 1\ c2c\ 256\ +[0-9.]+\ +[0-9.]+x$ ]]
	# found through ACCEL_BENCH_FFTW too; not found: no ratio
	ACCEL_BENCH_FFTW="$H" run -0 "$A" --vs --csv --repeat 1 --warmup 0 --size 256 -b fftw fft.r2c
	# 64 MiB of samples with --vs, as the codecs (16 MiB without)
	[[ "${lines[1]}" == fft.r2c,fftw,256,samples,67108864,67108864,*,"accel-bench-fftw -T "[0-9]*" r2c 256",* ]]
	ACCEL_BENCH_FFTW=/nonexistent run -0 "$A" --vs --csv --repeat 1 --warmup 0 --size 256 -b fftw fft.r2c
	no_peer "${lines[0]}" "${lines[1]}"
}

@test "age.encrypt --vs --json: openssl speed's reference beside the peer" {
	command -v openssl > /dev/null || skip "openssl is not installed"
	run -0 "$A" --vs --json -T 2 --repeat 1 --warmup 0 --size 64K age.encrypt age.decrypt sha3-256
	python3 -c '
import json, sys
d = json.load(sys.stdin)
r = {c["operation"]: c["reference"] for c in d["cases"]}
assert r["age.encrypt"]["command"] == "openssl speed -evp chacha20-poly1305 -bytes 65536 -seconds 1 -multi 2 -mr", r
assert r["age.decrypt"]["command"] == "openssl speed -evp chacha20-poly1305 -decrypt -bytes 65536 -seconds 1 -multi 2 -mr", r
# a hash: one thread, and a reference where there is no peer
assert r["sha3-256"]["command"] == "openssl speed -evp sha3-256 -bytes 65536 -seconds 1 -mr", r
assert all(v["mbps"] > 0 and v["ratio"] > 0 and set(v) == {"command", "mbps", "ratio"} for v in r.values()), r
assert d["cases"][2]["operation"] == "sha3-256" and d["cases"][2]["peer"] is None' <<< "$output"
	# the table: the references under the cases
	run -0 "$A" --vs -T 1 --repeat 1 --warmup 0 --size 64K sha256
	# (bats leaves out the blank line)
	[ "${lines[2]}" = "REFERENCE: a ceiling, not a peer (in memory: no file, no age framing)" ]
	[[ "${lines[4]}" =~ ^sha256\ +openssl:cpu0\ +64K\ +openssl\ speed\ -evp\ sha256\ -bytes\ 65536\ -seconds\ 1\ -mr\ +[0-9.]+\ +[0-9.]+x$ ]]
	# without --vs, none
	run -0 "$A" --json --repeat 1 --warmup 0 --size 64K sha256
	[ "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["cases"][0]["reference"])' <<< "$output")" = None ]
}

@test "gzip --vs: igzip with --peer, pigz by default, rapidgzip where installed" {
	command -v igzip > /dev/null || skip "igzip is not installed"
	run -0 "$A" --vs --peer igzip --csv -T 2 --repeat 1 --warmup 0 --size 64K 'gzip.*'
	IFS=, read -r -a c <<< "${lines[1]}"
	IFS=, read -r -a d <<< "${lines[2]}"
	# gzip level 6 is libdeflate's: igzip's best, 3, beside it
	[ "${c[15]}" = "igzip -3 -T 2 -c" ] && [ "${d[15]}" = "igzip -d -c" ]
	python3 -c 'import sys; assert float(sys.argv[1]) > 0 and float(sys.argv[2]) > 0' "${c[19]}" "${d[19]}"
	if command -v pigz > /dev/null; then
		run -0 "$A" --vs --csv -T 2 --repeat 1 --warmup 0 --size 64K gzip.decompress
		[ "$(cut -d, -f16 <<< "${lines[1]}")" = "pigz -d -p 2 -c" ]
	fi
	# rapidgzip asked for: the first installed of the list instead
	run -0 "$A" --vs --peer rapidgzip,igzip --csv -T 2 --repeat 1 --warmup 0 --size 64K gzip.decompress
	if command -v rapidgzip > /dev/null; then
		[ "$(cut -d, -f16 <<< "${lines[1]}")" = "rapidgzip -d -c -P 2" ]
	else
		[ "$(cut -d, -f16 <<< "${lines[1]}")" = "igzip -d -c" ]
	fi
	run -2 --separate-stderr "$A" --vs --peer gzip gzip.decompress
	[ "${stderr_lines[0]}" = "accel-bench: --peer: 'gzip' is not the peer of an operation (gzip's: pigz, igzip, rapidgzip)" ]
}

@test "a peer missing from PATH: no ratio, no reference, exit 0" {
	mkdir bin
	run -0 env PATH="$PWD/bin" ACCEL_BENCH_FFTW=/nonexistent "$A" --vs --csv --repeat 1 --warmup 0 --size 64K \
		zstd.compress gzip.decompress age.encrypt sha256
	[ "${#lines[@]}" -eq 5 ]
	for i in 1 2 3 4; do
		no_peer "${lines[0]}" "${lines[$i]}"
	done
}

@test "a peer that fails on its start-up input: the warning names the input, the exit status or signal and its first line on stderr; no ratio" {
	mkdir bin
	printf '#!/bin/sh\necho "zstd: boom" >&2\nexit 3\n' > bin/zstd
	printf '#!/bin/sh\necho "fftw: about to die" >&2\nkill -SEGV $$\n' > bin/fftw-peer
	chmod +x bin/zstd bin/fftw-peer
	run -0 --separate-stderr env PATH="$PWD/bin:$PATH" "$A" --vs --csv --repeat 1 --warmup 0 --size 64K zstd.compress
	[[ "$stderr" == *"accel-bench: warning: zstd.compress: the peer 'zstd -q -3 -T"*"' failed on an empty input (exit 3: zstd: boom): no ratio"* ]]
	no_peer "${lines[0]}" "${lines[1]}"
	run -0 --separate-stderr env ACCEL_BENCH_FFTW="$PWD/bin/fftw-peer" "$A" --vs --csv --repeat 1 --warmup 0 --size 1024 -b fftw fft.c2c
	[[ "$stderr" == *"accel-bench: warning: fft.c2c: the peer 'accel-bench-fftw -T "*" c2c 1024' failed on its start-up input of 8192 bytes (killed by signal 11 (Segmentation fault): fftw: about to die): no ratio"* ]]
	no_peer "${lines[0]}" "${lines[1]}"
}
