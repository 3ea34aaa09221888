#!/usr/bin/env bats
# accel-detect knows no backend by name: which probes run for --class and
# --require, and which APIs are video engines, come from the backends'
# descriptors. The demo backend (tests/backends/demo, built only for the
# tests) finds an NPU; nothing outside its folder names it.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	D="$ROOT/build/accel-detect"
	export ACCEL_BACKEND_PATH="$ROOT/build/tests/backends"
	cd "$BATS_TEST_TMPDIR"
	# An empty sysroot: no device of this machine shows, the demo's does.
	mkdir -p empty
	export ACCEL_SYSROOT="$BATS_TEST_TMPDIR/empty"
}

# Whether the demo backend's probe ran for accel-detect with these options.
demo_probed() {
	"$D" --json "$@" | jq -e '.probes[] | select(.name == "demo") | .probed'
}

@test "--class npu shows the demo backend's NPU: its descriptor says it finds NPUs" {
	run -0 --separate-stderr "$D" --class npu
	[ "${lines[0]}" = "NPUs and other accelerators" ]
	[ "${lines[1]}" = "  npu0     accel demo NPU  [software]" ]
	[ "${lines[2]}" = "           vendor accel, driver accel_demo.so" ]
	[ "${lines[3]}" = "           apis: demo" ]
	[ -z "$stderr" ]
	"$D" --class npu --json | jq -e '[.devices[] | select(.driver == "accel_demo.so")] | length == 1 and .[0].class == "npu" and .[0].apis[0].name == "demo"'
	# Without its folder on the path, there is no demo NPU.
	run -0 env -u ACCEL_BACKEND_PATH "$D" --class npu --json
	echo "$output" | jq -e '[.devices[] | select(.driver == "accel_demo.so")] | length == 0'
}

@test "the demo backend is probed for npu and for every class, not for the classes it cannot find" {
	demo_probed --class npu
	demo_probed --class cpu,npu
	demo_probed
	run -1 demo_probed --class gpu
	run -1 demo_probed --class cpu,gpu,crypto,video,nic,other
}

@test "--require demo: the API's classes are those of the backend that reports it" {
	run -0 "$D" --require demo
	[ -z "$output" ]
	run -0 "$D" --require 'demo,cpu'
	# Its NPU is a software device: it does not count as an npu.
	run -4 "$D" --require npu
	[ "$output" = "accel-detect: requirement not met: npu: found 0 npu devices (software devices do not count)" ]
	# Without its plugin, demo (a test backend, not a bundled one) is no
	# name accel-detect knows: a usage error, as a misspelt one.
	run -2 env -u ACCEL_BACKEND_PATH "$D" --require demo
	[ "${lines[0]}" = "accel-detect: --require: 'demo': unknown name 'demo' (a class, a CPU flag as /proc/cpuinfo lists it, an API, or a field of a device in --json)" ]
}

@test "--class video does not show the demo NPU: its API is a compute API, not a video engine" {
	run -0 "$D" --class video --json
	echo "$output" | jq -e '[.devices[] | select(.driver == "accel_demo.so")] | length == 0'
	run -4 "$D" --require video
	[[ "$output" == "accel-detect: requirement not met: video: found 0 video devices"* ]]
}

@test "no program source names a backend: accel-detect, the reports and --require read the registry" {
	# Backend names appear in cmd/ and libcore's reports only in comments
	# and examples, never in a string the code compares with; require.c
	# lists the bundled ones' names once, as words a requirement may name
	# (known_apis[]: an absent API is not met, a misspelt name a usage
	# error), and decides nothing else by them.
	for b in cuda vulkan opencl pci qat openssl nic ffmpeg nvenc nvdec vaapi nvml demo; do
		run -1 grep -n "\"$b\"" "$ROOT/cmd/accel-detect.c" "$ROOT/libcore/report.c"
		run -1 bash -c 'sed "/^static const char \*const known_apis\[\] = {/,/^};/d" "$1" | grep -n "\"$2\""' _ \
			"$ROOT/libcore/require.c" "$b"
	done
	run -0 grep -c '^static const char \*const known_apis\[\] = {' "$ROOT/libcore/require.c"
}
