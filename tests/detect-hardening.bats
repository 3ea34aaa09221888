#!/usr/bin/env bats
# accel-detect under hostile conditions: probes abandoned by a tiny
# ACCEL_PROBE_TIMEOUT never crash the exit, the variable's range, text from
# a recorded tree full of escape sequences and invalid UTF-8 never reaching
# the output raw, and the messages for bad --class and --require.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	D="$ROOT/build/accel-detect"
	FX="$ROOT/tests/fixtures"
	cd "$BATS_TEST_TMPDIR"
}

# Control characters a terminal acts on: C0 but tab and newline, DEL, and
# C1 (U+0080..U+009F as UTF-8).
controls() {
	LC_ALL=C grep -naP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$@"
}

@test "probes abandoned by ACCEL_PROBE_TIMEOUT=0.01 never crash the exit (30 runs each)" {
	# lavapipe and PoCL are still starting when the probes give up on them.
	for i in $(seq 30); do
		run -4 env ACCEL_PROBE_TIMEOUT=0.01 "$D" --require vulkan
		[ "$output" = "accel-detect: requirement not met: vulkan: the Vulkan driver did not answer in time (ACCEL_PROBE_TIMEOUT)" ]
	done
	for i in $(seq 30); do
		ACCEL_PROBE_TIMEOUT=0.01 "$D" --json -f -o out.json
		jq -e '[.probes[] | select(.reason != null and (.reason | test("in time")))] | length >= 1' out.json
	done
}

@test "a full stdout after an abandoned probe is exit 1 with one line" {
	[ -w /dev/full ] || skip "no /dev/full"
	run --separate-stderr sh -c 'ACCEL_PROBE_TIMEOUT=0.01 "$0" --class gpu --json > /dev/full' "$D"
	[ "$status" -eq 1 ]
	[ "$stderr" = "accel-detect: cannot write stdout: No space left on device" ]
}

@test "ACCEL_PROBE_TIMEOUT outside 0.001-3600 s is a usage error naming it" {
	for v in inf 1e300 -1 0 nan abc '' 5s 0.0001 3601; do
		run -2 --separate-stderr env ACCEL_PROBE_TIMEOUT="$v" "$D" --class cpu
		[ "$stderr" = "accel-detect: ACCEL_PROBE_TIMEOUT: '$v' is not a number of seconds from 0.001 to 3600" ]
		[ -z "$output" ]
	done
	for v in 0.001 2.5 3600; do
		run -0 env ACCEL_PROBE_TIMEOUT="$v" "$D" --require cpu
	done
}

@test "hostile sysfs text: valid UTF-8 JSON, no control characters, numa_node abc is null" {
	sh "$FX/sysroot-hostile.sh" root
	export ACCEL_SYSROOT="$PWD/root"
	run -0 --separate-stderr "$D" --json
	[ -z "$stderr" ]
	printf '%s\n' "$output" > d.json
	iconv -f UTF-8 -t UTF-8 d.json > /dev/null
	jq -e . d.json > /dev/null
	run -1 controls d.json
	# cJSON would escape a control character as \u00XX: none may be there.
	run -1 grep -q '\\u00' d.json
	jq -r '.. | strings' d.json > strings.txt
	run -1 controls strings.txt
	# What became of each hostile text, byte for byte.
	[ "$(jq -r '.host.hostname' d.json)" = 'evil?]0;owned???host' ]
	[ "$(jq -r '.host.kernel' d.json)" = '6.1??[2Jcleared' ]
	[ "$(jq -r '.devices[] | select(.id=="gpu0") | .model' d.json)" = 'H100 ?[31mRED?[0m ?C1 ?DEL ???sur ?RLO x? ??' ]
	[ "$(jq -r '.devices[] | select(.id=="gpu0") | .driver' d.json)" = 'nv?[1midia?' ]
	[ "$(jq -r '.devices[] | select(.id=="gpu0") | .properties.local_cpulist' d.json)" = '0-3?[31m' ]
	[ "$(jq -r '.devices[] | select(.class=="nic") | .properties.interface' d.json)" = 'eth?[31m0' ]
	[ "$(jq -r '.devices[] | select(.class=="nic") | .properties.mac_address' d.json)" = 'aa:bb?[2J?' ]
	[ "$(jq -r '.devices[] | select(.class=="crypto") | .properties.services' d.json)" = 'sym;dc?[0m?' ]
	# Not a number: unknown, never 0; a good value stays.
	[ "$(jq -c '[.devices[] | select(.class=="gpu") | .numa_node]' d.json)" = '[null,1]' ]
	jq -e '.devices[] | select(.class=="nic") | .properties | has("mtu") | not' d.json
	jq -e '.devices[] | select(.class=="crypto") | .properties | has("sriov_numvfs") | not' d.json
}

@test "hostile sysfs text: table, -v, gres and nfd hold no control characters" {
	sh "$FX/sysroot-hostile.sh" root
	export ACCEL_SYSROOT="$PWD/root"
	"$D" > table.txt
	"$D" -v > verbose.txt
	"$D" -F gres > gres.conf
	"$D" -F nfd > nfd.txt
	grep -q 'H100 ?\[31mRED' table.txt
	run -1 controls table.txt verbose.txt gres.conf nfd.txt
	[ "$(sed -n 2,3p gres.conf)" = "Name=gpu Type=h100 File=/dev/nvidia0
Name=gpu Type=h100 File=/dev/nvidia1" ]
	run -4 "$D" --require 'gpu.numa_node>=0,gpu.numa_node<1'
	[ "$output" = "accel-detect: requirement not met: gpu.numa_node<1: the best gpu device has numa_node 1" ]
}

@test "--class: empty, empty element and unknown names are usage errors naming them" {
	run -2 --separate-stderr "$D" --class ''
	[ "${stderr_lines[0]}" = "accel-detect: --class: '' is not a class; classes are cpu, gpu, crypto, video, nic, npu, other" ]
	[ "${stderr_lines[1]}" = "Try 'accel-detect --help' for more information." ]
	[ -z "$output" ]
	run -2 --separate-stderr "$D" --class 'gpu,,cpu'
	[ "${stderr_lines[0]}" = "accel-detect: --class: '' is not a class; classes are cpu, gpu, crypto, video, nic, npu, other" ]
	run -2 --separate-stderr "$D" --class 'cpu,gpus'
	[ "${stderr_lines[0]}" = "accel-detect: --class: 'gpus' is not a class; classes are cpu, gpu, crypto, video, nic, npu, other" ]
	run -0 "$D" --class 'cpu,nic' --json
}

@test "--require: too many terms, empty terms and bad terms say what is wrong" {
	run -2 --separate-stderr "$D" --require "$(printf 'cpu,%.0s' $(seq 32))cpu"
	[ "${stderr_lines[0]}" = "accel-detect: --require: 33 terms; at most 32 are supported" ]
	run -0 "$D" --require "$(printf 'cpu,%.0s' $(seq 31))cpu"
	run -2 --separate-stderr "$D" --require 'cpu,,avx2'
	[ "${stderr_lines[0]}" = "accel-detect: --require: empty term in 'cpu,,avx2'" ]
	run -2 --separate-stderr "$D" --require ''
	[ "${stderr_lines[0]}" = "accel-detect: --require: empty expression" ]
	run -2 --separate-stderr "$D" --require 'gpu!2'
	[ "${stderr_lines[0]}" = "accel-detect: --require: 'gpu!2': OP is one of >= <= > < == = != (NAME[.FIELD][OP VALUE], as gpu>=2, gpu.memory>=40G)" ]
	run -2 --separate-stderr "$D" --require 'gpu.vendor>NVIDIA'
	[[ "${stderr_lines[0]}" == "accel-detect: --require: 'gpu.vendor>NVIDIA': VALUE is a number "* ]]
	run -2 "$D" --require 'cpu.cores>=inf'
	run -2 "$D" --require '>=2'
	run -2 "$D" --require "$(printf 'x%.0s' $(seq 48))"
}

@test "--require: a FIELD no device can have is a usage error naming it and the closest key" {
	run -2 --separate-stderr "$D" --require 'gpu.memroy>=40G'
	[ "${stderr_lines[0]}" = "accel-detect: --require: 'gpu.memroy>=40G': unknown field 'memroy'; did you mean 'memory'?" ]
	[ "${stderr_lines[1]}" = "Try 'accel-detect --help' for more information." ]
	[ -z "$output" ]
	run -2 --separate-stderr "$D" --require 'cpu.cors>=2'
	[ "${stderr_lines[0]}" = "accel-detect: --require: 'cpu.cors>=2': unknown field 'cors'; did you mean 'cores'?" ]
	# Checked before any term is decided: an unmet one first is no excuse.
	run -2 --separate-stderr "$D" --require 'gpu>=99,nic.properties.sped_mbps>1'
	[ "${stderr_lines[0]}" = "accel-detect: --require: 'nic.properties.sped_mbps>1': unknown field 'properties.sped_mbps'; did you mean 'speed_mbps'?" ]
	run -2 --separate-stderr "$D" --require 'gpu.zzz'
	[ "${stderr_lines[0]}" = "accel-detect: --require: 'gpu.zzz': unknown field 'zzz' (fields: id, class, vendor, model, driver, pci_address, software, numa_node, memory, count, the keys of cpu and properties in --json, API names, CPU flags)" ]
	# Keys of devices this machine lacks are known: unmet, not misspelt.
	mkdir empty
	export ACCEL_SYSROOT="$PWD/empty"
	run -4 "$D" --require 'gpu.compute_capability>=8.0'
	run -4 "$D" --require 'gpu.mig_mode,gpu.nvenc_encoders==h264_nvenc,npu.apis.cuda,cpu.avx512f,nic.speed_mbps>=1'
}

@test "control characters the user typed are escaped in messages (\\x1b) and the report (?)" {
	run -2 --separate-stderr "$D" --require $'gpu\e[31m'
	[ "${stderr_lines[0]}" = "accel-detect: --require: 'gpu\\x1b[31m': NAME holds letters, digits, '_' and '-' only (NAME[.FIELD][OP VALUE], as gpu>=2, gpu.memory>=40G)" ]
	run -2 --separate-stderr "$D" --class $'x\e\xc2\x9b\xff\tcafé'
	[ "${stderr_lines[0]}" = "accel-detect: --class: 'x\\x1b\\xc2\\x9b\\xff\\x09café' is not a class; classes are cpu, gpu, crypto, video, nic, npu, other" ]
	run -2 --separate-stderr "$D" -b $'cp\eu' --routes zstd.compress
	[[ "${stderr_lines[0]}" == "accel-detect: --backend: unknown backend 'cp\\x1bu'; backends here: "* ]]
	run -4 --separate-stderr "$D" --require $'gpu.vendor==a\e[2Jb'
	[[ "$stderr" == *"gpu.vendor==a\\x1b[2Jb"* ]]
	run -2 --separate-stderr "$D" --routes $'zz\e[2J'
	[ "${stderr_lines[0]}" = "accel-detect: --routes: unknown operation 'zz\\x1b[2J' (accel-detect --routes lists them)" ]
}

@test "under ulimit -v, a driver that cannot start says why, not that it is missing" {
	seen=0
	for kb in 150000 250000 400000; do
		run -0 --separate-stderr sh -c 'ulimit -v "$1" && exec "$0" --json' "$D" "$kb"
		printf '%s\n' "$output" > d.json
		jq -r '.probes[] | select(.reason != null) | "\(.name): \(.reason)"' d.json > reasons.txt
		for lib in libOpenCL.so.1 libvulkan.so.1 libavutil.so.57 libavcodec.so.59 libcuda.so.1; do
			if ldconfig -p | grep -q " $lib "; then
				run -1 grep -F "$lib not found" reasons.txt
			fi
		done
		if ls /etc/OpenCL/vendors/*.icd > /dev/null 2>&1; then
			run -1 grep -F 'no ICD installed' reasons.txt
		fi
		run -1 grep -F 'needs a writable' reasons.txt
		run -1 grep -E 'VkResult -?[0-9]|failed \(-?[0-9]+\)' reasons.txt
		grep -q 'the address space is limited to [0-9.]* MiB (ulimit -v)' reasons.txt && seen=1
	done
	[ "$seen" = 1 ]
}

@test "--require reaches every key of a device in the JSON" {
	export ACCEL_SYSROOT="$FX/sysroot-gpu"
	"$D" --class gpu --json > d.json
	# Each top-level key and property of gpu1, as the JSON shows it, holds.
	terms=$(jq -r '.devices[] | select(.id=="gpu1") |
		(to_entries[] | select(.value != null and (.value | type) != "array" and (.value | type) != "object")),
		(.properties | to_entries[]) |
		select(.value | tostring | contains(",") | not) |
		"gpu.\(.key)==\(.value)"' d.json | paste -sd, -)
	[[ "$terms" == *gpu.vendor==NVIDIA* && "$terms" == *gpu.pci_id==10de:2330* && "$terms" == *gpu.numa_node==1* ]]
	run -0 "$D" --require "$terms"
	run -0 "$D" --require 'gpu.software==false,gpu.apis.pci,gpu.pci,gpu.properties.device_file==/dev/nvidia1'
	run -0 "$D" --require 'vendor==aspeed,gpu.model==nvidia h100 80gb hbm3'
	run -4 "$D" --require 'gpu.vendor==AMD'
	[ "$output" = "accel-detect: requirement not met: gpu.vendor==AMD: no gpu device has vendor==AMD (gpu0 has NVIDIA)" ]
	run -4 "$D" --require 'gpu.vendor!=NVIDIA'
	run -4 "$D" --require 'gpu.memory>=1G'
	[ "$output" = "accel-detect: requirement not met: gpu.memory>=1G: no gpu device reports memory" ]
	unset ACCEL_SYSROOT
	# The CPU's own keys: cpu and cpu.cache, and its flags as fields.
	"$D" --class cpu --json > c.json
	cores=$(jq '.devices[0].cpu.cores' c.json)
	run -0 "$D" --require "cpu.cores==$cores,cpu.cpu.cores>=1,cpu.threads>=$cores,cpu.packages>=1,cpu.numa_nodes>=1"
	l2=$(jq '.devices[0].cpu.cache.l2_bytes // empty' c.json)
	if [ -n "$l2" ]; then
		run -0 "$D" --require "cpu.cache.l2_bytes==$l2,cpu.l2_bytes>=$l2"
		run -4 "$D" --require "cpu.l2_bytes>$l2"
	fi
	flag=$(jq -r '.devices[0].cpu.flags[0] // empty' c.json)
	[ -z "$flag" ] || run -0 "$D" --require "cpu.$flag,cpu.$flag==1"
}

@test "--require compares versions part by part" {
	"$D" --class gpu --json > d.json
	v=$(jq -r 'first(.devices[] | .properties.vulkan_api_version // empty)' d.json)
	[ -n "$v" ] || skip "no Vulkan device"
	major=${v%%.*}
	run -0 "$D" --require "vulkan_api_version>=$major.0,vulkan_api_version==$v,vulkan_api_version<$((major + 1))"
	run -4 "$D" --require "vulkan_api_version>=$((major + 1)).0.1"
	[[ "$output" == "accel-detect: requirement not met: vulkan_api_version>=$((major + 1)).0.1: no device meets it (gpu"*" has $v)" ]]
}
