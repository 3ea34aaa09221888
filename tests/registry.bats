#!/usr/bin/env bats
# The registry: a backend is one folder. The demo backend
# (tests/backends/demo, built only for the tests) appears in --routes, in -b
# and its check, and in the completions, with no edit outside its folder;
# engines with variants on one device and one on the CPU device.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	D="$ROOT/build/accel-detect"
	A="$ROOT/build/accel-compress"
	export ACCEL_BACKEND_PATH="$ROOT/build/tests/backends"
	cd "$BATS_TEST_TMPDIR"
	# An empty sysroot: the demo NPU is npu0 on a host with NPUs of its own.
	mkdir -p empty
	export ACCEL_SYSROOT="$BATS_TEST_TMPDIR/empty"
}

# The names of the plugins built into build/plugins, joined by $1.
plugins() {
	ls "$ROOT/build/plugins" | sed -n 's/^accel_\(.*\)\.so$/\1/p' | paste -sd, - | sed "s/,/$1/g"
}

@test "--routes: the demo backend's engines, two variants on its NPU and one on the CPU device" {
	run -0 --separate-stderr "$D" --routes demo.reverse
	[ "${lines[0]}" = "route for demo.reverse (auto):" ]
	[ "${lines[1]}" = "  1. demo:cpu0        prior 200 MB/s (demo cpu)" ]
	[ "${lines[2]}" = "  2. demo.fast:npu0   software device: never preferred to native CPU code; name it in full with --backend to use it" ]
	[ "${lines[3]}" = "  3. demo.exact:npu0  software device: never preferred to native CPU code; name it in full with --backend to use it" ]
	[[ "${lines[4]}" =~ ^\ \ \([0-9]+\ backends\ without\ this\ operation\ left\ out:\ -v\ lists\ them\)$ ]]
	run -0 --separate-stderr "$D" -v --routes demo.reverse
	[ "${lines[4]}" = "  -  cpu              left out: does not offer this operation" ]
}

@test "-b demo takes every variant but those on its software NPU, -b demo:npu0 those, -b demo.exact:npu0 one, -b cpu:cpu0 the built-in CPU engine" {
	run -0 "$D" --routes -b demo demo.reverse
	[ "$output" = "route for demo.reverse (--backend):
  1. demo:cpu0        named by --backend
  -  demo.fast:npu0   left out: software device: name it in full (demo.fast:npu0) to use it
  -  demo.exact:npu0  left out: software device: name it in full (demo.exact:npu0) to use it" ]
	run -0 "$D" --routes -b demo:npu0 demo.reverse
	[ "$output" = "route for demo.reverse (--backend):
  1. demo.fast:npu0   named by --backend (software device)
  2. demo.exact:npu0  named by --backend (software device)" ]
	run -0 "$D" --routes -b demo.exact:npu0,demo:cpu0 demo.reverse
	[ "$output" = "route for demo.reverse (--backend):
  1. demo.exact:npu0  named by --backend (software device)
  2. demo:cpu0        named by --backend" ]
	run -0 "$D" --routes -b cpu:cpu0 zstd.compress
	[ "${lines[1]}" = "  1. cpu              named by --backend" ]
}

@test "-b with a backend the registry does not hold is a usage error naming the backends" {
	run -2 --separate-stderr "$D" --routes -b demo,nosuch demo.reverse
	[ "${stderr_lines[0]}" = "accel-detect: --backend: unknown backend 'nosuch'; backends here: auto, cpu, demo, $(plugins ', ')" ]
	[ "${stderr_lines[1]}" = "Try 'accel-detect --help' for more information." ]
	[ -z "$output" ]
	printf 'x' > a
	run -2 --separate-stderr "$A" -b nosuch a -o out
	[ "${stderr_lines[0]}" = "accel-compress: --backend: unknown backend 'nosuch'; backends here: auto, cpu, demo, $(plugins ', ')" ]
	[ ! -e out ]
	# Without the demo folder on the path, demo is no backend here.
	run -2 --separate-stderr env -u ACCEL_BACKEND_PATH "$D" --routes -b demo zstd.compress
	[ "${stderr_lines[0]}" = "accel-detect: --backend: unknown backend 'demo'; backends here: auto, cpu, $(plugins ', ')" ]
}

@test "completions offer the registered backends, the demo backend among them" {
	# The scripts ask the program for the words of -b when completing.
	for p in "$D" "$A"; do
		run -0 "$p" --completion backends
		[ "$output" = "$(printf '%s\n' auto cpu demo $(plugins ' '))" ]
		name=${p##*/}
		run -0 bash -c 'source "$1"; COMP_WORDS=("$2" -b ""); COMP_CWORD=2; "$3";
			printf "%s\n" "${COMPREPLY[@]}"' _ "$ROOT/completions/bash/$name" "$p" "_${name//-/_}"
		[ "$output" = "$(printf '%s\n' auto cpu demo $(plugins ' '))" ]
	done
	# The programs built here list the plugins built beside them.
	run -0 env -u ACCEL_BACKEND_PATH "$D" --completion backends
	[ "$output" = "$(printf '%s\n' auto cpu $(plugins ' '))" ]
}

@test "--require knows every key and API the bundled backends report, found here or not" {
	keys=$(grep -rhoE 'accel_device_set(_num)?\([^,]+, *"[a-z0-9_]+"|accel_device_add_api\([^,]+, *"[a-z0-9_]+"|\{ *"[a-z0-9_]+", *ACCEL_API_' \
		"$ROOT/backends" | sed -E 's/.*"([a-z0-9_]+)".*/\1/' | sort -u)
	[ "$(echo "$keys" | wc -l)" -gt 40 ]
	for k in $keys; do
		run --separate-stderr "$D" --require "gpu.$k"
		[ "$status" -ne 2 ] || { echo "gpu.$k: $stderr"; false; }
	done
}

@test "the layouts ACCEL_BACKEND_ABI stands for are those recorded for its value (a change must raise it)" {
	run -0 python3 "$ROOT/tests/abi-layouts.py"
	diff -u "$ROOT/tests/abi-layouts.txt" - <<<"$output"
}

@test "abi-layouts.py sees a layout change: a member added to struct accel_fft changes its line" {
	mkdir -p tree/tests tree/libcore
	cp "$ROOT/tests/abi-layouts.py" tree/tests/
	cp -r "$ROOT/libcore/include" tree/libcore/
	sed -i 's/^\tunsigned average; /\tunsigned average; int extra; /' tree/libcore/include/accel/ops/fft.h
	grep -q 'int extra;' tree/libcore/include/accel/ops/fft.h
	run -0 python3 tree/tests/abi-layouts.py
	run -1 diff "$ROOT/tests/abi-layouts.txt" - <<<"$output"
	[[ "$output" == *"> accel_fft "* ]]
}
