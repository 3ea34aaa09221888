#!/usr/bin/env bats
# Drivers that abort the process: with /sys masked (a tmpfs over it, in a
# user and mount namespace), PoCL calls abort() when OpenCL starts. The
# OpenCL probes run in a child process, so accel-detect lists the other
# devices with a reason for opencl, and accel-infer and accel-fft run on
# the CPU; a job forced onto the CPU starts no GPU driver at all.

bats_require_minimum_version 1.5.0

load lib/common

setup_file() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	if [ -f "$ROOT/build/plugins/accel_onnxruntime.so" ] && /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
		/usr/bin/python3 "$ROOT/tests/infer/models.py" "$BATS_FILE_TMPDIR" >&2
	fi
}

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	B="$ROOT/build"
	cd "$BATS_TEST_TMPDIR"
}

# masked CMD...: run CMD with an empty tmpfs over /sys.
masked() {
	unshare -rm sh -c 'mount -t tmpfs none /sys && exec "$@"' sh "$@"
}

need_unshare() {
	unshare -rm sh -c 'mount -t tmpfs none /sys' 2>/dev/null ||
		skip "unshare -rm with a mount on /sys is not permitted here"
}

# pocl: whether the OpenCL ICD here is PoCL, the one that aborts.
pocl() {
	grep -qs pocl /etc/OpenCL/vendors/*.icd && [ -f "$B/plugins/accel_opencl.so" ]
}

@test "/sys masked: accel-detect lists the other devices, opencl's abort is its reason, exit 0" {
	need_unshare
	run -0 --separate-stderr masked "$B/accel-detect" --json
	printf '%s\n' "$output" > d.json
	jq -e '[.devices[].id] | index("cpu0") != null' d.json
	[[ "$stderr" != *"Not enough memory"* && "$stderr" != *Abort* ]]
	pocl || skip "the OpenCL ICD here is not PoCL"
	[ "$(jq -r '.probes[] | select(.name == "opencl") | .reason' d.json)" = \
	  "the OpenCL probe aborted (SIGABRT) in a child process; left out" ]
	[ "$(jq -r '.probes[] | select(.name == "opencl") | .notes[0]' d.json)" = \
	  "the child process said: Not enough memory to run on this device." ]
	# The Vulkan device (lavapipe) is still there when Vulkan is.
	if "$B/accel-detect" --require vulkan -q; then
		jq -e '[.devices[] | select(.apis[]?.name == "vulkan")] | length >= 1' d.json
	fi
	run -0 masked "$B/accel-detect" -v
	[[ "$output" == *"): the OpenCL probe aborted (SIGABRT) in a child process; left out"* ]]
	run -0 masked "$B/accel-detect" --routes fft.c2c
	run -4 --separate-stderr masked "$B/accel-detect" --require opencl
	[ "$stderr" = "accel-detect: requirement not met: opencl: the OpenCL probe aborted (SIGABRT) in a child process; left out" ]
}

@test "/sys masked: accel-fft on 1.5 MB gives the bytes it gives unmasked" {
	need_unshare
	head -c 1500000 /dev/urandom > in.bin
	"$B/accel-fft" -n 1024 in.bin > want.f32
	run -0 --separate-stderr masked "$B/accel-fft" -n 1024 -o got.f32 in.bin
	cmp want.f32 got.f32
	[[ "$stderr" != *"Not enough memory"* ]]
}

@test "/sys masked: accel-infer runs a model ONNX Runtime can run" {
	need_unshare
	[ -f "$BATS_FILE_TMPDIR/lin.onnx" ] || skip "no onnxruntime backend or python3-onnx (make deps)"
	/usr/bin/python3 -c "import numpy as np; np.save('x.npy', np.ones((2, 4), 'f4'))"
	"$B/accel-infer" -m "$BATS_FILE_TMPDIR/lin.onnx" x.npy > want.npy
	run -0 --separate-stderr masked "$B/accel-infer" -m "$BATS_FILE_TMPDIR/lin.onnx" -o got.arrays x.npy
	cmp want.npy got.arrays
	[[ "$stderr" != *"Not enough memory"* ]]
}

@test "--backend cpu starts no OpenCL or Vulkan driver, whatever the job's size" {
	command -v strace >/dev/null || skip "no strace (make deps installs it)"
	head -c 1500000 /dev/urandom > in.bin
	strace -f -e trace=openat -o trace.log "$B/accel-fft" -b cpu -n 1024 in.bin > cpu.f32
	# The ICD loaders come with the vkfft plugin; the drivers they load must not.
	run -1 grep -E 'OpenCL/vendors|vulkan/icd\.d|libpocl|libvulkan_[a-z]+\.so' trace.log
	"$B/accel-fft" -n 1024 in.bin | cmp - cpu.f32
}
