#!/bin/bash
# Checks and figures for a machine with an NVIDIA GPU (not a test: CI has
# no GPU). Run from the repository root on a built tree:
#   1. the machine: nvidia-smi, cores, the libraries' versions;
#   2. what accel-detect finds (-v, --routes, --json);
#   3. the cuFFT and VkFFT engines' bats files on the real device
#      (tests/fft-cuda.bats, tests/fft-vkfft.bats: numpy is the reference),
#      and the routing profile's (tests/bench-profile.bats);
#   4. a large stream (BIG, 1G of cf32 noise, numpy's normal) through auto,
#      fftw, each device engine (ENGINES) and FFTW directly, wall and CPU
#      seconds; auto from a pipe beside cat; the STFT chain in dB; the
#      route and -v's statistics; an empty input on each engine;
#   5. age, zstd, lz4, gzip and the hashes at all cores beside their peers
#      (--vs);
#   6. accel-bench --vs of the FFTs on fftw, ENGINES and cpu+cufft, beside
#      FFTW called directly (accel-bench-fftw);
#   7. the decoders and age from a pipe (cat FILE |) beside their peers and
#      beside cat | cat, wall and CPU seconds.
# Each step's log goes under $OUT (default build/gpu); each step has
# STEP_S seconds (default 150). A step that fails is reported, the next runs.
# STEPS picks some: machine detect bats fft-stream codecs fft-bench pipes.
# On a GPU machine without our Debian packages, pack the build here with
# tests/bench/gpu-kit.sh DIR and source DIR/setup.sh there first.
set -u
B=${ACCEL_BUILD:-build}
OUT=${OUT:-build/gpu}
PY=${PYTHON:-python3}
BIG=${BIG:-1G}
# The device engines measured: variants name hardware devices only.
ENGINES=${ENGINES:-cufft vkfft.vulkan vkfft.opencl}
mkdir -p "$OUT"

step() {
	local name=$1
	shift
	case " ${STEPS:-machine detect bats fft-stream codecs fft-bench pipes} " in
	*" $name "*) ;;
	*) return 0 ;;
	esac
	echo "== $name: $*"
	local t0=$(date +%s%N)
	timeout "${STEP_S:-150}" bash -c '"$@"' step "$@" >"$OUT/$name.log" 2>&1
	local rc=$?
	echo "   rc=$rc, $((($(date +%s%N) - t0) / 1000000)) ms"
	tail -n "${TAIL:-25}" "$OUT/$name.log"
}

machine() {
	nvidia-smi -L
	nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
	echo "cores: $(nproc)"
	uname -r
	ldd --version | head -n 1
	"$B/accel-detect" -V
	"$B/accel-fft" -V
}

detect() {
	"$B/accel-detect" -v
	"$B/accel-detect" --routes
	"$B/accel-detect" --json >"$OUT/detect.json"
}

# Seconds of wall and CPU of one command, its output to /dev/null.
timed() {
	local TIMEFORMAT="$1 %R s wall, %U s user, %S s sys"
	shift
	time "$@" >/dev/null
}

stream() {
	local f=${BIGFILE:-/tmp/accel-big.cf32}
	[ -s "$f" ] || "$PY" -c "import numpy as np, sys
n = $(numfmt --from=iec "$BIG") // 4
np.random.default_rng(1).standard_normal(n, dtype=np.float32).tofile(sys.argv[1])" "$f" || return 1
	local e
	for n in 1024 65536; do
		for r in 1 2; do
			timed "N=$n auto (run $r):" "$B/accel-fft" -n "$n" "$f"
			timed "N=$n fftw -T0 (run $r):" "$B/accel-fft" -b fftw -T 0 -n "$n" "$f"
			timed "N=$n peer FFTW direct -T$(nproc) (run $r):" "$B/libexec/accel-bench-fftw" -T "$(nproc)" c2c "$n" "$f"
			for e in $ENGINES; do
				timed "N=$n $e (run $r):" "$B/accel-fft" -b "$e" --fallback none -n "$n" "$f"
			done
			timed "N=$n fftw+cufft (run $r):" "$B/accel-fft" -b fftw+cufft -T 0 -n "$n" "$f"
		done
	done
	# A pipe, a job of unknown size: auto starts the GPU drivers only
	# where a device could lead (accel(7), ROUTING); beside cat.
	for r in 1 2; do
		timed "N=1024 auto from a pipe (run $r):" bash -c "cat '$f' | '$B/accel-fft' -n 1024"
		timed "cat | cat (run $r):" bash -c "cat '$f' | cat"
	done
	# The device's best case: a chain that sends little back (STFT power
	# in dB, 64 spectra averaged a row).
	for e in fftw $ENGINES; do
		timed "N=4096 hann db average 64, $e:" "$B/accel-fft" -b "$e" --fallback none -T 0 -n 4096 -w hann --out db --average 64 "$f"
	done
	"$B/accel-fft" -v -n 1024 "$f" 2>&1 >/dev/null | sed -n '/^route/,/^  (/p' | head -n 8
	for e in $ENGINES fftw+cufft; do
		echo "-- -v, $e"
		"$B/accel-fft" -v -b "$e" -T 0 -n 1024 "$f" 2>&1 >/dev/null | grep -E 'workers|units|MB/s of input'
	done
	# An empty input: fewer than one frame (no row to write), exit 2 and
	# no output on every engine, as on fftw.
	: >/tmp/accel-empty.cf32
	for e in fftw $ENGINES; do
		"$B/accel-fft" -v -b "$e" --fallback none -T 0 -n 1024 /tmp/accel-empty.cf32 >/tmp/accel-empty.out 2>/tmp/accel-empty.err
		echo "empty input, $e: exit $?, $(wc -c </tmp/accel-empty.out) bytes out"
		grep -vE '^  |^route|^accel-fft: .*(units|samples)[ ,]' /tmp/accel-empty.err | head -n 5
	done
}

# From a pipe, a job of unknown size on every core: zstd -d, gzip -d and
# age -d beside their peers (those on PATH) and cat | cat, on the BIG
# file (stream's) compressed or encrypted first.
pipes() {
	local f=${BIGFILE:-/tmp/accel-big.cf32} t=/tmp/accel-pipes r
	[ -s "$f" ] || return 1
	rm -rf $t && mkdir -p $t
	"$B/accel-compress" -q -f -T 0 -F zstd -o $t/big.zst "$f" || return 1
	"$B/accel-compress" -q -f -T 0 -F gzip -o $t/big.gz "$f" || return 1
	"$B/accel-crypt" keygen -o $t/id.txt 2>/dev/null || rm -f $t/id.txt
	if [ -s $t/id.txt ]; then
		"$B/accel-crypt" -e -r "$(grep -o 'age1[0-9a-z]*' $t/id.txt | head -n 1)" -o $t/big.age "$f" || return 1
	fi
	for r in 1 2; do
		timed "cat | cat (run $r):" bash -c "cat '$f' | cat"
		timed "zstd -d from a pipe, ours (run $r):" bash -c "cat $t/big.zst | '$B/accel-compress' -d -q -c -T 0"
		command -v zstd >/dev/null && timed "zstd -d from a pipe, zstd (run $r):" bash -c "cat $t/big.zst | zstd -d -q -c"
		timed "gzip -d from a pipe, ours (run $r):" bash -c "cat $t/big.gz | '$B/accel-compress' -d -q -c -T 0"
		command -v igzip >/dev/null && timed "gzip -d from a pipe, igzip (run $r):" bash -c "cat $t/big.gz | igzip -d -c"
		if [ -s $t/big.age ]; then
			timed "age -d from a pipe, ours (run $r):" bash -c "cat $t/big.age | '$B/accel-crypt' -d -T 0 -i $t/id.txt"
			command -v age >/dev/null && timed "age -d from a pipe, age (run $r):" bash -c "cat $t/big.age | age -d -i $t/id.txt"
		fi
	done
	ls -l $t
}

cd "$(dirname "$0")/../.." || exit 1
export B OUT PY BIG ENGINES
export -f machine detect timed stream pipes
step machine machine
step detect detect
STEP_S=${BATS_S:-240} step bats bats --tap tests/fft-cuda.bats tests/fft-vkfft.bats tests/bench-profile.bats
step fft-stream stream
step codecs "$B/accel-bench" --vs -T 0 --size 256M --repeat 5 --peer igzip \
	age.encrypt age.decrypt zstd.compress zstd.decompress lz4.decompress gzip.decompress \
	sha256 sha512 blake2b512 md5
step fft-bench "$B/accel-bench" --vs -T 0 --size 1024,65536 --repeat 5 -b "fftw,$(echo $ENGINES | tr ' ' ,),cpu+cufft" \
	fft.c2c fft.r2c
step pipes pipes
