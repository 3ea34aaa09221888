#!/usr/bin/env bats
# accel-fft on VkFFT's OpenCL engine (vkfft.opencl, on PoCL here) and
# Vulkan engine (vkfft.vulkan, on lavapipe here): software devices, named
# in full with -b (auto never picks them, -b vkfft.opencl alone does not
# take them), checked against numpy like the CPU
# engine. PoCL compiles VkFFT's kernels on first use of a size (seconds)
# and caches them.

load lib/common
load fft_jobs

bats_require_minimum_version 1.5.0

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	F="$ROOT/build/accel-fft"
	REF="/usr/bin/python3 $ROOT/tests/fixtures/fft/ref.py"
	T="$BATS_TEST_TMPDIR"
	export XDG_CACHE_HOME="$T/cache"
	[ -f "$ROOT/build/plugins/accel_vkfft.so" ] || skip "the vkfft plugin is not built (libvkfft-dev)"
	ENGINE=$(engine vkfft.opencl)
	[ -n "$ENGINE" ] || skip "no OpenCL device for VkFFT"
	/usr/bin/python3 -c 'import numpy' 2>/dev/null || skip "python3-numpy is not installed"
}

@test "vkfft.opencl: complex sizes (a prime through Bluestein, 1000, 2^16), forward and inverse, within 1e-5 of numpy" {
	for n in 97 1000 65536; do
		$REF gen cf32 $((n * 3)) $n "$T/x$n"
		add -n $n "$T/x$n"
	done
	add -n 1000 --inverse --norm ortho "$T/x1000"
	verify
}

@test "vkfft.opencl: real input (half spectrum), windows, dB, average, decimate, shift" {
	$REF gen f32 20000 5 "$T/r"
	add -t f32 -n 1000 -w hann --out db "$T/r"
	add -t f32 -n 1000 --full --shift --out power "$T/r"
	$REF gen ci16 30000 6 "$T/c"
	add -t ci16 -n 1000 -w blackman-harris --overlap 0.5 --out db --average 5 --shift "$T/c"
	add -t ci16 -n 1000 --decimate 3 --out mag "$T/c"
	verify
}

@test "auto never picks the software OpenCL device; -v says why it ranks below fftw" {
	$REF gen cf32 $((1 << 20)) 7 "$T/x"
	"$F" -v -n 1000 -o /dev/null "$T/x" 2> "$T/log"
	# fftw ranks first, or after the engines of a real GPU here.
	local cpu soft
	cpu=$(sed -n 's/^  \([0-9]*\)\. fftw:cpu0 .*/\1/p' "$T/log")
	[ -n "$cpu" ]
	# Started (a GPU may be here): ranked below fftw with the reason; not
	# started (no GPU or NPU here, or fftw ends the 8 MiB within a
	# device's start-up): left out with that reason.
	soft=$(sed -n 's/^  \([0-9]*\)\. vkfft\.opencl:[a-z0-9]* *software device: never preferred to native CPU code; name it in full with --backend to use it$/\1/p' "$T/log")
	if [ -n "$soft" ]; then
		[ "$soft" -gt "$cpu" ]
	else
		grep -qE '^  -  vkfft *left out: not probed: (no GPU or NPU on this machine|fftw:cpu0 at [0-9]+ MB/s ends a job of 8388608 bytes within)' "$T/log"
	fi
	! grep -q '^  vkfft.opencl:[a-z0-9]* *workers [1-9]' "$T/log"
}

@test "auto on a machine with no GPU or NPU: VkFFT's drivers are not started; -b still starts them" {
	local n
	for n in /dev/dri /dev/kfd /dev/accel /dev/dxg /dev/nvidiactl; do
		[ ! -e "$n" ] || skip "$n: a GPU or NPU may be here"
	done
	! grep -qE '^0x(03|12)' /sys/bus/pci/devices/*/class 2>/dev/null || skip "a display or accelerator PCI function is here"
	$REF gen cf32 $((1 << 20)) 7 "$T/x"
	strace -f -e trace=openat -o "$T/trace" "$F" -v -n 1000 -o "$T/a" "$T/x" 2> "$T/log"
	grep -q '^  1\. fftw:cpu0 ' "$T/log"
	grep -q '^  -  vkfft *left out: not probed: no GPU or NPU on this machine, only software devices could be found (name it with --backend to use it)$' "$T/log"
	! grep -q 'vkfft\.opencl:' "$T/log"
	# Neither the OpenCL loader nor the Vulkan one was opened.
	! grep -E 'libOpenCL|libvulkan|/OpenCL/vendors' "$T/trace"
	"$F" -b "$ENGINE" -n 1000 -o "$T/b" "$T/x"
	[ "$(stat -c %s "$T/a")" = "$(stat -c %s "$T/b")" ]
}

@test "-b vkfft.opencl takes no software device: one line names the engines in full, exit 1; the full name runs" {
	local ids
	ids=$("$ROOT/build/accel-detect" --json --routes fft.c2c | jq -r '[.routes[0].engines[].name | select(startswith("vkfft.opencl:"))] | join(", ")')
	"$ROOT/build/accel-detect" --json | jq -e --arg id "${ENGINE#*:}" '.devices[] | select(.id == $id) | .software' > /dev/null ||
		skip "$ENGINE is no software device"
	[[ "$ids" != *,* ]] || skip "more than one OpenCL device for VkFFT"
	$REF gen cf32 300 11 "$T/x"
	run --separate-stderr "$F" -b vkfft.opencl -n 100 -o "$T/o" "$T/x"
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-fft: --backend vkfft.opencl: only a software device ($ENGINE); name it in full to use it" ]
	[ ! -e "$T/o" ]
	ACCEL_BACKEND=vkfft run --separate-stderr "$F" -n 100 -o "$T/o" "$T/x"
	[ "$status" -eq 1 ]
	[[ "$stderr" = "accel-fft: --backend vkfft: only software devices ("*"$ENGINE"*"); name one in full to use it" ]]
	# In full, or by its device, it runs: the id is the one accel-detect
	# gave, though this job probes only vkfft.
	local k=0
	for b in "$ENGINE" "vkfft:${ENGINE#*:}" "vkfft.opencl,$ENGINE"; do
		run --separate-stderr "$F" -v -b "$b" -n 100 -o "$T/o$((++k))" "$T/x"
		[ "$status" -eq 0 ]
		[ "${stderr_lines[1]}" = "  1. $ENGINE named by --backend (software device)" ]
		cmp "$T/o1" "$T/o$k"
	done
}

@test "a unit failed on vkfft.opencl is run again on fftw: the same spectra, exit 0" {
	$REF gen cf32 $((1000 * 1200)) 8 "$T/x"
	"$F" -b fftw --plan estimate -n 1000 --out db -o "$T/a" "$T/x"
	ACCEL_FAULT='vkfft:1' "$F" -b "$ENGINE" --fallback cpu --plan estimate -n 1000 --out db -o "$T/b" "$T/x" 2> "$T/log"
	grep -q '^accel-fft: warning: vkfft.opencl:gpu[0-9]*: unit 1 failed: injected fault (ACCEL_FAULT); retrying on fftw:cpu0$' "$T/log"
	echo "-n 1000 --out db $T/x $T/b" > "$T/list"
	run $REF checks "$T/list"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(stat -c %s "$T/a")" -eq "$(stat -c %s "$T/b")" ]
}

@test "vkfft.vulkan (lavapipe): complex and real, sizes of primes up to 13 and 2^16, inverse, dB, within 1e-5 of numpy" {
	ENGINE=$(engine vkfft.vulkan)
	[ -n "$ENGINE" ] || skip "no Vulkan device for VkFFT"
	for n in 1001 1000 65536; do
		$REF gen cf32 $((n * 3)) $n "$T/x$n"
		add -n $n "$T/x$n"
	done
	add -n 1000 --inverse --norm forward "$T/x1000"
	$REF gen f32 20000 9 "$T/r"
	add -t f32 -n 1000 -w hann --out db "$T/r"
	add -t f32 -n 1000 -w kaiser:8 --overlap 0.5 --out power --average 4 "$T/r"
	verify
}

@test "vkfft.vulkan refuses sizes with a prime factor above 13 (Bluestein is wrong there): -v says why" {
	ENGINE=$(engine vkfft.vulkan)
	[ -n "$ENGINE" ] || skip "no Vulkan device for VkFFT"
	$REF gen cf32 300 10 "$T/x"
	run "$F" -v -b "$ENGINE" -n 97 -o "$T/o" "$T/x"
	[ "$status" -eq 1 ]
	[[ "$output" == *"vkfft.vulkan:"*"left out: VkFFT's Vulkan path here takes N with prime factors up to 13 only (N = 97)"* ]]
	[ "${lines[-1]}" = "accel-fft: no engine can run fft.c2c (try -v for the reasons)" ]
	[ ! -e "$T/o" ]
	# Named with fftw after it, the job runs on fftw.
	"$F" -b "$ENGINE,fftw" -n 97 -o "$T/o" "$T/x"
	[ -s "$T/o" ]
}

@test "vkfft.opencl and vkfft.vulkan: many jobs in one process, each differing from the one before in one thing, all within 1e-5 of numpy (a context kept from a job serves only a job of its shape)" {
	[ -x "$ROOT/build/tests/fft-inprocess" ] || skip "the test driver is not built (make tests)"
	local e engines=()
	for e in vkfft.opencl vkfft.vulkan; do
		e=$(engine $e)
		[ -z "$e" ] || engines+=("$e")
	done
	[ ${#engines[@]} -gt 0 ] || skip "no OpenCL or Vulkan device for VkFFT"
	for e in "${engines[@]}"; do
		inprocess "$e"
	done
	verify
}
