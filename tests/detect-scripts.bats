#!/usr/bin/env bats
# accel-detect for scripts: --require takes every CPU flag the kernel lists
# (met, or not met: 4) and calls any other unknown name a usage error (2);
# --routes refuses an unknown operation and lists only the backends that
# offer one unless -v; -o refuses to replace a file without -f; every NFD
# label is a valid Kubernetes label.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	D="$ROOT/build/accel-detect"
	cd "$BATS_TEST_TMPDIR"
}

# cpuinfo ROOT FLAGS...: a recorded tree whose CPU lists FLAGS.
cpuinfo() {
	mkdir -p "$1/proc"
	local root=$1
	shift
	printf 'processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Test CPU\nflags\t\t: %s\n\n' "$*" > "$root/proc/cpuinfo"
}

@test "--require: every flag of /proc/cpuinfo is met, a real flag the CPU lacks is not (4)" {
	cpuinfo root fpu sse4_1 popcnt fma movbe avx2 new_flag_2030
	export ACCEL_SYSROOT="$PWD/root"
	run -0 --separate-stderr "$D" --require 'fma,sse4_1,popcnt,movbe,avx2'
	[ -z "$stderr" ]
	# A word the kernel lists that our list lacks counts where the CPU has it.
	run -0 "$D" --require new_flag_2030
	run -0 "$D" --require 'cpu.fma,cpu.popcnt==1,avx512f==0'
	run -4 --separate-stderr "$D" --require 'fma,avx512f'
	[ "$stderr" = "accel-detect: requirement not met: avx512f: the CPU lacks avx512f" ]
	run -4 --separate-stderr "$D" --require 'fma==0'
	[ "$stderr" = "accel-detect: requirement not met: fma==0: the CPU has fma" ]
	# Arm's "Features" names are flags too.
	run -4 --separate-stderr "$D" --require asimd
	[ "$stderr" = "accel-detect: requirement not met: asimd: the CPU lacks asimd" ]
	"$D" --class cpu --json | jq -e '.devices[0].cpu.flags == ["fpu","sse4_1","popcnt","fma","movbe","avx2","new_flag_2030"]'
}

@test "--require given twice: both hold; with an output option a usage error; a topology hwloc cannot read is null and no term on it holds" {
	cpuinfo root fpu avx2
	export ACCEL_SYSROOT="$PWD/root"
	run -4 --separate-stderr "$D" -r avx512f -r fpu
	[ "$stderr" = "accel-detect: requirement not met: avx512f: the CPU lacks avx512f" ]
	run -4 "$D" -r fpu -r avx512f
	run -0 "$D" -r fpu -r avx2
	for o in --json "-F nfd" --routes "-o out"; do
		run -2 --separate-stderr "$D" -r fpu $o
		[ "${stderr_lines[0]}" = "accel-detect: --require prints nothing but its reason: not with --json, --format, --routes or -o" ]
	done
	[ ! -e out ]
	run -2 --separate-stderr "$D" --routes -F gres
	[ "${stderr_lines[0]}" = "accel-detect: --routes prints a table or JSON: not with --format gres" ]
	# several --class options add up
	[ "$("$D" -c cpu -c gpu --json | jq -c '[.devices[].class] | unique - ["cpu", "gpu"]')" = "[]" ]
	[ "$("$D" -c cpu -c gpu --json | jq -c '[.devices[].class] | index("cpu") != null')" = "true" ]
	# the recorded tree has no topology for hwloc: null, not 0
	"$D" -c cpu --json | jq -e '.devices[0].cpu | [.packages, .cores, .threads, .numa_nodes, .cache.l4_bytes] == [null, null, null, null, null]'
	run -4 --separate-stderr "$D" -r 'cpu.cores<1'
	[ "$stderr" = "accel-detect: requirement not met: cpu.cores<1: no cpu device reports cores" ]
	# a backend no device lists as an API: its engines (fftw:cpu0)
	unset ACCEL_SYSROOT
	if "$D" --routes fft.c2c | grep -q 'fftw:cpu0'; then
		run -0 "$D" -r fftw
		run -0 "$D" -r 'fftw>=1'
		run -4 "$D" -r 'fftw>=99'
	fi
}

@test "--require: on this machine, each flag of /proc/cpuinfo's flags line is met" {
	flags=$(sed -n 's/^\(flags\|Features\)[[:space:]]*: //p' /proc/cpuinfo | head -1)
	[ -n "$flags" ] || skip "no flags line in /proc/cpuinfo"
	run -0 --separate-stderr "$D" --require "$(echo $flags | tr ' ' '\n' | head -32 | paste -sd, -)"
	[ -z "$stderr" ]
}

@test "--require: a name that is no class, flag, API or field is a usage error (2) naming it" {
	cpuinfo root fpu avx2
	export ACCEL_SYSROOT="$PWD/root"
	run -2 --separate-stderr "$D" --require 'avx3'
	[ "${stderr_lines[0]}" = "accel-detect: --require: 'avx3': unknown name 'avx3'; did you mean 'avx2'?" ]
	run -2 --separate-stderr "$D" --require 'fpu,vulkn'
	[ "${stderr_lines[0]}" = "accel-detect: --require: 'vulkn': unknown name 'vulkn'; did you mean 'vulkan'?" ]
	run -2 --separate-stderr "$D" --require 'zzqqxx'
	[ "${stderr_lines[0]}" = "accel-detect: --require: 'zzqqxx': unknown name 'zzqqxx' (a class, a CPU flag as /proc/cpuinfo lists it, an API, or a field of a device in --json)" ]
	run -2 --separate-stderr "$D" --require 'cpu.popcnnt'
	[ "${stderr_lines[0]}" = "accel-detect: --require: 'cpu.popcnnt': unknown field 'popcnnt'; did you mean 'popcnt'?" ]
	# An API whose backend this machine lacks is a name, not met.
	run -4 "$D" --require 'vulkan,nvenc,qat'
}

@test "--routes: an unknown operation is a usage error; the table lists only the backends offering one unless -v" {
	run -2 --separate-stderr "$D" --routes zstd.compress compress
	[ "${stderr_lines[0]}" = "accel-detect: --routes: unknown operation 'compress' (accel-detect --routes lists them)" ]
	[ -z "$output" ]
	run -0 --separate-stderr "$D" --routes zstd.compress
	[ "${lines[0]}" = "route for zstd.compress (auto):" ]
	[[ "$output" != *"does not offer"* ]]
	[[ "${lines[-1]}" == "  ("*" without this operation left out: -v lists them)" ]]
	run -0 --separate-stderr "$D" -v --routes zstd.compress
	[[ "$output" == *"left out: does not offer this operation"* ]]
	# JSON keeps every backend, with its reason.
	"$D" --json --routes zstd.compress | jq -e '[.routes[0].engines[] | select(.reason == "does not offer this operation")] | length >= 1'
}

@test "-o over an existing file needs -f; the file is left as it was" {
	echo old > features
	run -1 --separate-stderr "$D" -F nfd -o features
	[ "$stderr" = "accel-detect: features already exists; use -f to overwrite it" ]
	[ "$(cat features)" = old ]
	run -0 "$D" -F nfd -o features -f
	grep -q '^# Node Feature Discovery' features
	run -0 "$D" --json -o new.json
	jq -e .schema_version new.json
}

# valid_labels FILE: every line a comment or PREFIX/NAME=VALUE as NFD's
# feature files and Kubernetes labels want them, each name once.
valid_labels() {
	grep -v '^#' "$1" > labels
	[ -s labels ]
	while IFS= read -r line; do
		name=${line%%=*} value=${line#*=}
		[[ "$name" == accel.example/* ]] || { echo "prefix: $line"; return 1; }
		n=${name#accel.example/}
		[[ ${#n} -le 63 && "$n" =~ ^[A-Za-z0-9]([-_.A-Za-z0-9]*[A-Za-z0-9])?$ ]] || { echo "name: $line"; return 1; }
		[[ ${#value} -le 63 && ( -z "$value" || "$value" =~ ^[A-Za-z0-9]([-_.A-Za-z0-9]*[A-Za-z0-9])?$ ) ]] || { echo "value: $line"; return 1; }
	done < labels
	[ -z "$(cut -d= -f1 labels | sort | uniq -d)" ]
}

@test "-F nfd: model strings with spaces, odd bytes and long names make valid labels, each once" {
	sh "$ROOT/tests/fixtures/sysroot-hostile.sh" root
	export ACCEL_SYSROOT="$PWD/root"
	run -0 "$D" -F nfd -o hostile.features
	valid_labels hostile.features
	grep -qx 'accel.example/gpu.model=H100-31mRED-0m-C1-DEL-sur-RLO-x' hostile.features
	# A model of 100 characters in spaces and punctuation: cut to 63.
	printf 'Model: \t  --NVIDIA (R) H100/80GB "HBM3" %s..!!  \nDevice Minor: \t 0\n' "$(printf 'x%.0s' $(seq 100))" \
		> "root/proc/driver/nvidia/gpus/0000:17:00.0/information"
	run -0 "$D" -F nfd -o long.features
	valid_labels long.features
	grep -qx 'accel.example/gpu.model=NVIDIA-R-H100-80GB-HBM3-x*' long.features
	unset ACCEL_SYSROOT
	run -0 env ACCEL_SYSROOT="$ROOT/tests/fixtures/sysroot-nic" "$D" -F nfd -o nic.features
	valid_labels nic.features
	# Two GPUs with the same API make one label.
	run -0 env ACCEL_SYSROOT="$ROOT/tests/fixtures/sysroot-gpu" "$D" -F nfd -o gpu.features
	valid_labels gpu.features
	[ "$(grep -c '^accel.example/gpu.api-pci=' gpu.features)" -eq 1 ]
	run -0 "$D" -F nfd -o here.features
	valid_labels here.features
}
