#!/usr/bin/env bats
# accel-fft's whole chain on a device (conversion, window, FFT, magnitude,
# power or dB, averaging, shift, decimation; backends/vkfft/vkfft.h): the
# VkFFT engines on OpenCL (PoCL here) and Vulkan (lavapipe here), named
# with -b and --fallback none, checked against numpy in double precision
# for every sample type, several windows, each output mode and the options
# that change what the device kernels do. Small N and few frames: the
# software devices are slow.

load lib/common
load fft_jobs

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	F="$ROOT/build/accel-fft"
	REF="/usr/bin/python3 $ROOT/tests/fixtures/fft/ref.py"
	T="$BATS_TEST_TMPDIR"
	# Kernels compiled by the drivers are cached here for the whole file.
	export XDG_CACHE_HOME="$BATS_FILE_TMPDIR/cache"
	[ -f "$ROOT/build/plugins/accel_vkfft.so" ] || skip "the vkfft plugin is not built (libvkfft-dev)"
	/usr/bin/python3 -c 'import numpy' 2>/dev/null || skip "python3-numpy is not installed"
}

# need PREFIX: ENGINE is the full name of the first engine of that prefix
# on accel-detect's route for fft.c2c; skip when there is none.
need() {
	ENGINE=$(engine "$1")
	[ -n "$ENGINE" ] || skip "no device for $1"
}

# Every sample type of each way the kernels read them (1297 samples: a
# partial frame at the end), windows,
# each output mode, hop < N and > N, --shift, --norm, --inverse,
# --db-offset, --average, --pad, --text, --npy, a NaN.
types() {
	for t in cf32 ci16 ci8 cu8 f32 i16 u8 cf64 f64 i8 ci24 i32 cf32_be i16_be ci32_be f64_be; do
		$REF gen $t 1297 3 "$T/$t"
	done
	add -t ci16 -n 64 -w hann --out db "$T/ci16"
	add -t ci8 -n 64 -w hamming --out mag "$T/ci8"
	add -t cu8 -n 64 -w blackman --out power --hop 16 "$T/cu8"
	add -t f32 -n 64 -w blackman-harris --out db --db-offset -3.5 "$T/f32"
	add -t i16 -n 64 -w flattop --npy "$T/i16"
	add -t u8 -n 64 -w kaiser:6 --out mag --text "$T/u8"
	add -t cf64 -n 64 -w hann --shift --text "$T/cf64"
	add -t f64 -n 64 --full --shift --out power --hop 100 --allow-gaps "$T/f64"
	add -t cf32 -n 64 --inverse --norm ortho "$T/cf32"
	add -t f32 -n 64 --inverse --norm none --out mag "$T/f32"
	add -t cu8 -n 64 --pad --norm forward --out db --average 3 "$T/cu8"
	# The types read byte by byte on the device, and big-endian doubles
	# (converted on the host).
	add -t i8 -n 64 -w hann --out power "$T/i8"
	add -t ci24 -n 64 -w hann --hop 48 --out power "$T/ci24"
	add -t i32 -n 64 --out mag "$T/i32"
	add -t cf32_be -n 64 "$T/cf32_be"
	add -t i16_be -n 64 --full --out db "$T/i16_be"
	add -t ci32_be -n 64 -w hamming --out power "$T/ci32_be"
	add -t f64_be -n 64 "$T/f64_be"
	# A NaN in frame 3 (sample 200): only the rows of that frame are NaN.
	cp "$T/cf32" "$T/nan"
	printf '\000\000\300\177' | dd of="$T/nan" bs=1 seek=$((8 * 200)) conv=notrunc status=none
	add -t cf32 -n 64 --out power --average 2 "$T/nan"
	verify
}

# cu8 averaged dB (the SDR waterfall) with hop < N, --decimate and --shift
# over three units, the last one short (units hold 2048 frames of N =
# 1024 here: 16 MiB of transform buffer); -v shows the device engine ran
# all three units and fftw none.
units() {
	$REF gen cu8 $((5000 * 16 + 1008 + 333)) 4 "$T/x"
	local job=(-t cu8 -n 1024 --hop 16 -w hann --average 8 --decimate 4 --out db --shift)
	"$F" -v -b "$ENGINE" --fallback none "${job[@]}" -o "$T/o1" "$T/x" 2> "$T/log"
	echo "${job[*]} $T/x $T/o1" > "$T/list"
	jobs=1
	verify
	grep -q "^  $ENGINE *workers [12], units 3, in 162656 B, out 643072 B, .* failures 0, " "$T/log"
	grep -q '^  fftw:cpu0 *workers 0, units 0, ' "$T/log"
}

@test "vkfft.opencl chain: every sample type, windows, output modes, norms, inverse, text, npy, within 1e-5 of numpy" {
	need vkfft.opencl
	types
}

@test "vkfft.opencl chain: cu8 averaged dB, hop < N, decimate, shift, three units the last short; -v: all on the device" {
	need vkfft.opencl
	units
}

@test "vkfft.vulkan chain: every sample type, windows, output modes, norms, inverse, text, npy, within 1e-5 of numpy" {
	need vkfft.vulkan
	types
}

@test "vkfft.vulkan chain: cu8 averaged dB, hop < N, decimate, shift, three units the last short; -v: all on the device" {
	need vkfft.vulkan
	units
}

# --average K beyond a unit (--memory 1M: units of fewer frames than K):
# the device chain makes each unit's mean, the host sums them into rows;
# with hop < N, gaps, --decimate (rows skipped unread), --shift, --pad.
split() {
	$REF gen cf32 200000 5 "$T/x"
	add -n 4096 --overlap 0.5 -w hann --out db --average 30 --memory 1M "$T/x"
	add -n 4096 --out power --average 25 --decimate 3 --shift --memory 1M "$T/x"
	add -t cu8 -n 4096 --hop 5000 --allow-gaps --out mag --average 13 --decimate 2 --pad --memory 1M "$T/x"
	verify
}

@test "vkfft.opencl chain: --average K over more frames than a unit holds, against numpy" {
	need vkfft.opencl
	split
}

@test "vkfft.vulkan chain: --average K over more frames than a unit holds, against numpy" {
	need vkfft.vulkan
	split
}
