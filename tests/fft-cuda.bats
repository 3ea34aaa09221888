#!/usr/bin/env bats
# accel-fft on cuFFT (engine cufft:gpuN). The plugin dlopens libcuda.so.1,
# libcufft and libnvrtc: on a machine without the driver it must load,
# probe to "no engine" with the reason, and leave the job to the next
# engine named. The engine's tests (against numpy: the chain on the
# device and on the host, co-execution with fftw, retries) run on a CUDA
# GPU when there is one; else on the test double of the driver and cuFFT
# (tests/fakecuda: host memory, chain.cu's kernels run as C, FFTW for
# cuFFT), which checks the plugin's own code but not the GPU; else they
# are skipped ("no CUDA device").

bats_require_minimum_version 1.5.0

load lib/common
load fft_jobs

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	F="$ROOT/build/accel-fft"
	D="$ROOT/build/accel-detect"
	REF="/usr/bin/python3 $ROOT/tests/fixtures/fft/ref.py"
	T="$BATS_TEST_TMPDIR"
	export XDG_CACHE_HOME="$T/cache"
	[ -f "$ROOT/build/plugins/accel_cufft.so" ] || skip "the cufft plugin is not built"
	/usr/bin/python3 -c 'import numpy' 2>/dev/null || skip "python3-numpy is not installed"
	ENGINE=cufft
}

no_driver() {
	! /usr/bin/python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null
}

# A CUDA device: a real one, else the test double (exported for the test).
need_gpu() {
	if ! "$D" --routes -b cufft fft.c2c 2>/dev/null | grep -q 'cufft:gpu'; then
		[ -e "$ROOT/build/tests/fakecuda/libcuda.so.1" ] && no_driver || skip "no CUDA device"
		export LD_LIBRARY_PATH="$ROOT/build/tests/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
		FAKE=1
	fi
}

# Whether NVRTC can be loaded (the plugin's chain runs on the device).
have_nvrtc() {
	/usr/bin/python3 -c 'import ctypes, glob, sys
for n in ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"] + glob.glob("/usr/local/cuda/lib64/libnvrtc.so*"):
    try:
        ctypes.CDLL(n); sys.exit(0)
    except OSError:
        pass
sys.exit(1)'
}

@test "without the CUDA driver: the plugin loads, no engine, the reason in accel-detect -v" {
	no_driver || skip "libcuda.so.1 is installed here"
	run "$D" -v
	[ "$status" -eq 0 ]
	[[ "$output" == *"  cufft    failed "*" cuFFT on CUDA GPUs, "*": libcuda.so.1 not found"* ]]
	run "$D" --routes fft.c2c
	[[ "$output" != *"cufft:"* ]]
}

@test "without the CUDA driver: -b cufft is exit 1 with the reason under -v, no -o file; -b cufft,fftw runs on fftw" {
	no_driver || skip "libcuda.so.1 is installed here"
	$REF gen cf32 4096 1 "$T/x"
	run "$F" -v -b cufft -n 256 -o "$T/o" "$T/x"
	[ "$status" -eq 1 ]
	[[ "$output" == *"  -  cufft            left out: libcuda.so.1 not found"* ]]
	[ "${lines[-1]}" = "accel-fft: no engine can run fft.c2c (try -v for the reasons)" ]
	[ ! -e "$T/o" ]
	"$F" -b fftw -n 256 --out db -o "$T/a" "$T/x"
	"$F" -v -b cufft,fftw -n 256 --out db -o "$T/b" "$T/x" 2> "$T/log"
	grep -q '^  1\. fftw:cpu0 ' "$T/log"
	cmp "$T/a" "$T/b"
}

@test "cufft: complex sizes (primes, 1000, 2^16, 2^20), forward and inverse, within 1e-5 of numpy" {
	need_gpu
	for n in 2 97 1000 65536; do
		$REF gen cf32 $((n * 5)) $n "$T/x$n"
		add -n $n "$T/x$n"
	done
	$REF gen cf32 $((1 << 21)) 3 "$T/big"
	add -n 1048576 "$T/big"
	add -n 1000 --inverse --norm ortho "$T/x1000"
	add -n 97 --inverse --shift "$T/x97"
	verify
}

@test "cufft: the chain on the device for every type, window, output kind, averaging, decimation and shift" {
	need_gpu
	for t in cf32 ci16 ci8 cu8 f32 i16 u8 cf64 f64; do
		$REF gen $t 30000 7 "$T/$t"
		add -t $t -n 1000 -w hann --out db "$T/$t"
	done
	add -t cu8 -n 1024 -w blackman-harris --overlap 0.5 --out db --average 7 --shift "$T/cu8"
	add -t ci16 -n 1000 --decimate 3 --out mag "$T/ci16"
	add -t f32 -n 999 --full --shift --out power -w kaiser:8 "$T/f32"
	add -t i16 -n 256 --hop 300 --allow-gaps --out power --average 4 "$T/i16"
	add -t cf32 -n 1000 --out complex --text "$T/cf32"
	verify
}

@test "cufft: the host chain (ACCEL_CUFFT_CHAIN=host) gives the same spectra; auto's -v says where the chain runs" {
	need_gpu
	$REF gen cu8 $((1 << 22)) 11 "$T/x"
	# auto from a pipe (a job of unknown size): ranked by its prior, with
	# fftw measured below it (else a CPU of 6 cores or more is ahead of it
	# and it is not started).
	export ACCEL_PROFILE="$T/profile.json"
	printf '{"schema_version": 1, "entries": [{"operation": "fft.c2c", "engine": "fftw:cpu0", "size_class": "large", "mb_per_s": 1000}]}\n' > "$ACCEL_PROFILE"
	cat "$T/x" | "$F" -v -t cu8 -n 4096 --out db --average 8 -o /dev/null 2> "$T/log"
	if have_nvrtc; then
		grep -q '^  [0-9]\. cufft:gpu[0-9]* *prior 6000 MB/s (cuFFT, the chain on the device (NVRTC))$' "$T/log"
	else
		grep -q '^  [0-9]\. cufft:gpu[0-9]* *prior 2000 MB/s (cuFFT, the chain on the host: libnvrtc not found)$' "$T/log"
	fi
	cat "$T/x" | ACCEL_CUFFT_CHAIN=host "$F" -v -t cu8 -n 4096 --out db --average 8 -o /dev/null 2> "$T/log"
	grep -q '^  [0-9]\. cufft:gpu[0-9]* *prior 2000 MB/s (cuFFT, the chain on the host: ACCEL_CUFFT_CHAIN=host)$' "$T/log"
	"$F" -b cufft -t cu8 -n 4096 --out db --average 8 -o "$T/a" "$T/x"
	ACCEL_CUFFT_CHAIN=host "$F" -b cufft -v -t cu8 -n 4096 --out db --average 8 -o "$T/b" "$T/x" 2> "$T/log"
	grep -q '^  cufft:gpu[0-9]* *workers [1-9].*, units [1-9]' "$T/log"
	printf '%s\n' "-t cu8 -n 4096 --out db --average 8 $T/x $T/a" "-t cu8 -n 4096 --out db --average 8 $T/x $T/b" > "$T/list"
	run $REF checks "$T/list"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(stat -c %s "$T/a")" -eq "$(stat -c %s "$T/b")" ]
}

@test "auto, a job of unknown size: fftw ahead of cuFFT's best prior leaves the driver unstarted, unless a profile measured cufft" {
	need_gpu
	$REF gen cf32 65536 3 "$T/x"
	export ACCEL_PROFILE="$T/profile.json"
	local fftw='{"operation": "fft.c2c", "engine": "fftw:cpu0", "size_class": "large", "mb_per_s": 20000}'
	printf '{"schema_version": 1, "entries": [%s]}\n' "$fftw" > "$ACCEL_PROFILE"
	cat "$T/x" | "$F" -v -o "$T/a" 2> "$T/log"
	grep -qxE '  1\. fftw:cpu0 +measured 20000 MB/s \(profile, large jobs\)' "$T/log"
	grep -qxE '  -  cufft +left out: not probed: fftw:cpu0 at 20000 MB/s is ahead of its best prior, 6000 MB/s, unmeasured \(name it with --backend to use it\)' "$T/log"
	! grep -q 'cufft:gpu' "$T/log"
	# A file of known size too (64 KiB: ended within the start-up anyway).
	"$F" -v -o "$T/b" "$T/x" 2> "$T/log"
	grep -q '  -  cufft *left out: not probed: ' "$T/log"
	cmp "$T/a" "$T/b"
	# The profile measured cufft: its driver starts, the figures rank.
	local gpu
	gpu=$("$D" --routes -b cufft fft.c2c | sed -n 's/^  [0-9]*\. \(cufft:gpu[0-9]*\) .*/\1/p' | head -n 1)
	[ -n "$gpu" ]
	printf '{"schema_version": 1, "entries": [%s, {"operation": "fft.c2c", "engine": "%s", "size_class": "large", "mb_per_s": 30000}]}\n' \
		"$fftw" "$gpu" > "$ACCEL_PROFILE"
	cat "$T/x" | "$F" -v -o "$T/c" 2> "$T/log"
	grep -qxE "  1\. $gpu +measured 30000 MB/s \(profile, large jobs\)" "$T/log"
	grep -qxE '  2\. fftw:cpu0 +measured 20000 MB/s \(profile, large jobs\)' "$T/log"
}

@test "cufft: the host chain (ACCEL_CUFFT_CHAIN=host): real input's half spectrum, decimation, shift, inverse, within 1e-5 of numpy" {
	need_gpu
	export ACCEL_CUFFT_CHAIN=host
	$REF gen f32 30000 5 "$T/r"
	add -t f32 -n 1000 -w hann --out db "$T/r"
	add -t f32 -n 999 --out power --average 3 --decimate 2 "$T/r"
	$REF gen ci8 30000 6 "$T/c"
	add -t ci8 -n 512 --overlap 0.5 --out mag --shift "$T/c"
	add -t ci8 -n 97 --inverse --norm ortho "$T/c"
	verify
}

@test "cufft and fftw serve one stream (-b fftw,cufft): both run units, rows in order, within 1e-5 of numpy" {
	need_gpu
	$REF gen cf32 $((1 << 23)) 12 "$T/x"
	"$F" -v -b fftw,cufft -T 2 -n 1024 --out db -o "$T/o" "$T/x" 2> "$T/log"
	cat "$T/log"
	grep -q '^  fftw:cpu0 *workers [0-9]*, units [1-9]' "$T/log"
	grep -q '^  cufft:gpu[0-9]* *workers [0-9]*, units [1-9]' "$T/log"
	echo "-n 1024 --out db $T/x $T/o" > "$T/list"
	run $REF checks "$T/list"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "a unit failed on cufft is run again on fftw: the same spectra, exit 0" {
	need_gpu
	$REF gen cf32 $((1000 * 1200)) 8 "$T/x"
	ACCEL_FAULT='cufft:1' "$F" -b cufft --fallback cpu -n 1000 --out db -o "$T/b" "$T/x" 2> "$T/log"
	grep -q '^accel-fft: warning: cufft:gpu[0-9]*: unit 1 failed: injected fault (ACCEL_FAULT); retrying on fftw:cpu0$' "$T/log"
	echo "-n 1000 --out db $T/x $T/b" > "$T/list"
	run $REF checks "$T/list"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "cufft (test double): a failed cufftExecC2C is one warning naming the cuFFT error, and the unit is run again on fftw" {
	need_gpu
	[ -n "${FAKE:-}" ] || skip "needs the test double of the driver"
	$REF gen cf32 $((1000 * 1200)) 8 "$T/x"
	FAKECUDA_FAIL_EXEC=2 "$F" -b cufft -T 1 --fallback cpu -n 1000 --out power -o "$T/o" "$T/x" 2> "$T/log"
	cat "$T/log"
	grep -q '^accel-fft: warning: cufft:gpu[0-9]*: unit [0-9]* failed: cufftExecC2C failed: CUFFT_EXEC_FAILED; retrying on fftw:cpu0$' "$T/log"
	echo "-n 1000 --out power $T/x $T/o" > "$T/list"
	run $REF checks "$T/list"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "cufft (test double): cuInit failing is the probe's reason; -b cufft,fftw runs on fftw" {
	need_gpu
	[ -n "${FAKE:-}" ] || skip "needs the test double of the driver"
	export FAKECUDA_NO_INIT=1
	run "$D" -v
	[[ "$output" == *"  cufft    failed "*": cuInit failed: CUDA_ERROR_NO_DEVICE"* ]]
	$REF gen cf32 4096 1 "$T/x"
	"$F" -v -b cufft,fftw -n 256 -o "$T/o" "$T/x" 2> "$T/log"
	grep -q '^  -  cufft            left out: cuInit failed: CUDA_ERROR_NO_DEVICE$' "$T/log"
	[ -s "$T/o" ]
}

@test "cufft (test double): the engine starts the device once for all the jobs of a process, and lets it go at the end" {
	need_gpu
	[ -n "${FAKE:-}" ] || skip "needs the test double of the driver (it counts the calls)"
	A="$ROOT/build/accel-bench"
	export FAKECUDA_COUNTS="$T/counts"
	# 1 + 3 in-process runs on one context, two workers each (-T 2):
	# one primary context retained, one module loaded, both let go, and
	# every plan made destroyed
	run -0 --separate-stderr "$A" -b cufft -T 2 --repeat 3 --warmup 1 --size 1024 fft.c2c
	[[ "$(tail -n 1 "$T/counts")" =~ ^"retain 1 release 1 loads 1 unloads 1 held 0 plans "([0-9]+)" destroyed "([0-9]+)$ ]]
	[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]
	# a program: the same, once
	: > "$T/counts"
	$REF gen cf32 $((256 * 64)) 8 "$T/in.cf32"
	"$F" -b cufft --fallback none -T 2 -n 256 -o "$T/out" "$T/in.cf32"
	[[ "$(cat "$T/counts")" =~ ^"retain 1 release 1 loads 1 unloads 1 held 0 plans "([0-9]+)" destroyed "([0-9]+)$ ]]
	[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]
}

@test "cufft: many jobs in one process, each differing from the one before in one thing, all within 1e-5 of numpy; (test double) a job of an earlier job's shape takes its worker context, plan and buffers" {
	need_gpu
	[ -x "$ROOT/build/tests/fft-inprocess" ] || skip "the test driver is not built (make tests)"
	export FAKECUDA_COUNTS="$T/counts"
	inprocess cufft
	verify
	[ -n "${FAKE:-}" ] || return 0
	# Jobs 2, 6, 7, 10, 11 and 12 take the context of the job before (dB
	# offset, power for dB, shift, direction and scaling are read by each
	# run); the 13 others make one. Job 19 is of job 1's shape, whose
	# context the pool (eight) let go of after 12 were made.
	[ "$(cat "$T/counts")" = "retain 1 release 1 loads 1 unloads 1 held 0 plans 13 destroyed 13" ]
}
