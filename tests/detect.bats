#!/usr/bin/env bats
# accel-detect: recorded /sys and /proc trees (ACCEL_SYSROOT) against the
# expected devices, the live inventory of this machine, --require exit
# statuses, the JSON keys the man page documents, and the script formats.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	D="$ROOT/build/accel-detect"
	FX="$ROOT/tests/fixtures"
	cd "$BATS_TEST_TMPDIR"
}

# fixture NAME: the devices found in sysroot-NAME equal detect-NAME.json.
fixture() {
	ACCEL_SYSROOT="$FX/sysroot-$1" "$D" --class gpu,crypto,nic,npu,other --json 2>/dev/null | jq '.devices' > got.json
	if ! jq -e --slurpfile want "$FX/detect-$1.json" '. == $want[0]' got.json > /dev/null; then
		diff <(jq -S . "$FX/detect-$1.json") <(jq -S . got.json)
		return 1
	fi
}

@test "fixture: multi-NUMA GPU host (PCI, NUMA, /dev/nvidiaN, BMC display apart)" {
	fixture gpu
}

@test "fixture: QAT host (state up and down, VF counted on its PF)" {
	fixture qat
}

@test "fixture: NICs (driver, speed, queues, NUMA, SR-IOV; loopback and down virtual left out)" {
	fixture nic
}

@test "fixture: gres.conf lines for the GPUs in PCI order" {
	run --separate-stderr env ACCEL_SYSROOT="$FX/sysroot-gpu" "$D" -F gres
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "Name=gpu Type=h100 File=/dev/nvidia0" ]
	[ "${lines[2]}" = "Name=gpu Type=h100 File=/dev/nvidia1" ]
	[ "${#lines[@]}" -eq 3 ]
	[ -z "$stderr" ]
	# a model word of gres.conf's own syntax ('#' a comment, '=', '('):
	# only letters, digits, '_' and '-' reach Type
	cp -r "$FX/sysroot-gpu" "$BATS_TEST_TMPDIR/sr"
	for f in "$BATS_TEST_TMPDIR"/sr/proc/driver/nvidia/gpus/*/information; do
		sed -i '1s/.*/Model: \t\t NVIDIA X1#c=(2) File=\/dev\/null/' "$f"
	done
	run -0 env ACCEL_SYSROOT="$BATS_TEST_TMPDIR/sr" "$D" -F gres
	[ "${lines[1]}" = "Name=gpu Type=x1_c__2_ File=/dev/nvidia0" ]
}

@test "fixture: gres Cores are hwloc's core indexes of the CPUs closest to each GPU" {
	cp -r "$FX/sysroot-gpu" root
	# 2 packages x 8 cores x 2 threads: node 0 holds CPUs 0-7 and 16-23.
	sh "$FX/cpu-topology.sh" root 2 8 2
	run --separate-stderr env ACCEL_SYSROOT="$PWD/root" "$D" -F gres
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "Name=gpu Type=h100 File=/dev/nvidia0 Cores=0-7" ]
	[ "${lines[2]}" = "Name=gpu Type=h100 File=/dev/nvidia1 Cores=8-15" ]
	run --separate-stderr env ACCEL_SYSROOT="$PWD/root" "$D" --class cpu --json
	[ "$(echo "$output" | jq -c '.devices[0].cpu | [.packages, .cores, .threads, .numa_nodes]')" = "[2,16,32,2]" ]
}

@test "fixture: --require counts hardware GPUs and compares memory and NUMA" {
	export ACCEL_SYSROOT="$FX/sysroot-gpu"
	run "$D" --require 'gpu>=2'
	[ "$status" -eq 0 ]
	run "$D" --require 'gpu>=3'
	[ "$status" -eq 4 ]
	[ "$output" = "accel-detect: requirement not met: gpu>=3: found 2 gpu devices" ]
	run "$D" --require 'gpu.numa_node==1'
	[ "$status" -eq 0 ]
	run "$D" -q --require 'crypto'
	[ "$status" -eq 4 ]
	[ -z "$output" ]
}

@test "an empty tree (a container without /sys or /proc): every probe gives a reason, quietly" {
	mkdir empty
	run --separate-stderr env ACCEL_SYSROOT="$PWD/empty" "$D" --json
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	echo "$output" | jq -e '[.devices[].class] == ["cpu"]'
	echo "$output" | jq -e 'all(.probes[]; .probed and (.ok or (.reason | length > 0)))'
	run --separate-stderr env ACCEL_SYSROOT="$PWD/empty" "$D" -F gres
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

@test "live: lavapipe (Vulkan) and PoCL (OpenCL) are software devices" {
	"$D" --json > d.json
	jq -e '[.devices[] | select(.class=="gpu" and .software and (.apis[].name=="vulkan"))] | length >= 1' d.json
	jq -e '[.devices[] | select(.class=="gpu" and .software and (.apis[].name=="opencl"))] | length >= 1' d.json
}

@test "live: the CPU's aes, vaes, sha_ni and avx2 flags and eth0" {
	"$D" --json > d.json
	for f in aes vaes sha_ni avx2; do
		grep -qw "$f" /proc/cpuinfo || continue
		jq -e --arg f "$f" '.devices[] | select(.class=="cpu") | .cpu.flags | index($f)' d.json
	done
	if [ -e /sys/class/net/eth0 ]; then
		jq -e '.devices[] | select(.class=="nic" and .properties.interface=="eth0")' d.json
	fi
}

@test "live: FFmpeg's hardware device types each get a note; nvenc unmet names why" {
	"$D" --class video --json > v.json
	jq -e '.probes[] | select(.name=="ffmpeg") | .probed' v.json
	jq -e '.probes[] | select(.name=="ffmpeg") | .notes[0] | startswith("FFmpeg ")' v.json
	# Every type compiled in has a line of its own: created, or why not.
	for t in $(jq -r '.probes[] | select(.name=="ffmpeg") | .notes[0] | sub(".*compiled in: "; "") | split(",")[]' v.json); do
		jq -e --arg t "$t" '[.probes[] | select(.name=="ffmpeg") | .notes[] | select(startswith($t + " "))] | length >= 1' v.json
	done
	# Only video engines (or GPUs holding one) are shown for --class video.
	jq -e 'all(.devices[]; .class == "video" or any(.apis[]; .name | IN("nvdec","nvenc","vaapi","vdpau","qsv","drm")))' v.json
	run "$D" --require nvenc
	if [ "$status" -eq 4 ]; then
		[[ "$output" == "accel-detect: requirement not met: nvenc: cuda "*": "?* ]]
	else
		[ "$status" -eq 0 ]
	fi
}

@test "live: OpenSSL's default provider is a software crypto device" {
	"$D" --class crypto --json > c.json
	jq -e '.devices[] | select(.properties.provider == "default") | .software and .apis[0].name == "openssl" and .apis[0].ok' c.json
	jq -e '.probes[] | select(.name=="openssl") | .notes[0] | startswith("OpenSSL 3")' c.json
	# Software providers are not accelerators: they do not meet "crypto".
	if ! jq -e '.devices[] | select(.software == false)' c.json > /dev/null; then
		run "$D" --require crypto
		[ "$status" -eq 4 ]
		[[ "$output" == *"software devices do not count"* ]]
	fi
}

@test "JSON has the documented keys on every device and probe" {
	"$D" --json > d.json
	jq -e '.schema_version == 1 and (.host | has("hostname") and has("kernel") and has("sysroot"))' d.json
	jq -e 'all(.devices[]; has("id") and has("class") and has("vendor") and has("model") and has("driver")
		and has("software") and has("pci_address") and has("numa_node") and has("memory_bytes")
		and has("apis") and has("properties"))' d.json
	jq -e 'all(.probes[]; has("name") and has("origin") and has("probed") and has("ok") and has("reason") and has("seconds")
		and (.notes | type) == "array")' d.json
	jq -e '(.seconds | type) == "number"' d.json
}

@test "--class cpu runs only the cpu probe" {
	"$D" --class cpu --json > d.json
	jq -e '[.probes[] | select(.probed) | .name] == ["cpu"]' d.json
	jq -e 'all(.devices[]; .class == "cpu")' d.json
}

@test "--require: met exits 0 silently, unmet exits 4 with one line, -q silent, bad is 2" {
	run "$D" --require cpu
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run "$D" --require 'gpu>=64'
	[ "$status" -eq 4 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "accel-detect: requirement not met: gpu>=64: "* ]]
	run "$D" -q --require 'gpu.memory>=4096G'
	[ "$status" -eq 4 ]
	[ -z "$output" ]
	run "$D" --require 'cuda'
	[ "$status" -eq 4 ] || [ "$status" -eq 0 ]
	run "$D" --require 'gpu>='
	[ "$status" -eq 2 ]
	run "$D" --class gpuu
	[ "$status" -eq 2 ]
}

@test "--routes prints the router's ranking for an operation" {
	run "$D" --routes zstd.compress
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "route for zstd.compress"* ]]
	[[ "$output" == *"1. cpu"* ]]
	"$D" --routes --json > r.json
	jq -e '[.routes[].operation] | index("gzip.decompress")' r.json
}

@test "--routes alone (only the operation's backends probed) ranks engines as --json (every backend) does" {
	"$D" --json --routes > all.json
	for op in $(jq -r '.routes[].operation' all.json); do
		"$D" -v --routes "$op" > log
		# The same engines ranked, in the same order (software devices
		# apart: they are never preferred).
		grep -v ' software device: ' log | sed -n 's/^  [0-9]*\.  *\([^ ]*\) .*/\1/p' > alone
		jq -r --arg op "$op" '.routes[] | select(.operation == $op) | .engines[] |
			select(.rank != null and (.reason | startswith("software device: ") | not)) | .name' all.json > every
		diff every alone
		# The same backends named (one left out unstarted, on a machine
		# with no GPU, where the other run found its software devices).
		sed -n 's/^  \(-\|[0-9]*\.\)  *\([^ .:]*\).*/\2/p' log | sort -u > alone
		jq -r --arg op "$op" '.routes[] | select(.operation == $op) | .engines[].name | sub("[.:].*"; "")' all.json | sort -u > every
		diff every alone
	done
}

@test "-F nfd -o writes the features file atomically, with the CPU flags" {
	"$D" -F nfd -o features
	[ -f features ]
	grep -q '^accel.example/cpu-' features
	[ "$(echo .features.*)" = '.features.*' ]
}

@test "NO_COLOR and pipes give plain text; -v lists every probe with its time" {
	run "$D" -v
	[ "$status" -eq 0 ]
	[[ "$output" != *$'\033'* ]]
	[[ "$output" == *"Probes"* && "$output" == *" ms "* ]]
}
