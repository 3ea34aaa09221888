#!/usr/bin/env bats
# accel-infer on the OpenCV DNN engine (backends/opencv): small models made
# here with python3-onnx (tests/infer/opencv.py, tests/infer/models.py) give
# numpy's outputs within rtol 1e-4 / atol 1e-5 on opencv:cpu0 and on
# opencv.opencl:ID (PoCL: a software device, named in full); a model OpenCV cannot load runs on ONNX Runtime
# under auto, OpenCV's check of it (its importer in a child) left to the
# fallback's first use, whose error then gives OpenCV's reason; without
# ONNX Runtime auto runs OpenCV; a batch failing on ONNX Runtime
# (ACCEL_FAULT) runs again on OpenCV with the same bytes OpenCV gives alone.

bats_require_minimum_version 1.5.0

load lib/common

have_opencv() {
	[ -f "$ROOT/build/plugins/accel_opencv.so" ]
}

have_ort() {
	[ -f "$ROOT/build/plugins/accel_onnxruntime.so" ] &&
		{ [ -f "$ROOT/build/deps/onnxruntime/lib/libonnxruntime.so.1" ] || pkg-config --exists libonnxruntime; }
}

setup_file() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	have_opencv || return 0
	/usr/bin/python3 "$ROOT/tests/infer/models.py" "$BATS_FILE_TMPDIR" >&2
	/usr/bin/python3 "$ROOT/tests/infer/opencv.py" models "$BATS_FILE_TMPDIR" >&2
}

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-infer"
	PY=/usr/bin/python3
	REF="$ROOT/tests/infer/opencv.py"
	M="$BATS_FILE_TMPDIR"
	have_opencv || skip "no opencv backend: install libopencv-dnn-dev (tests/deps.d/infer-opencv.list) and make"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
}

# arrays FILE PYEXPR: save the arrays of the Python list PYEXPR (np is numpy) one after another.
arrays() {
	$PY -c "import numpy as np, sys
with open(sys.argv[1], 'wb') as f:
    for a in $2: np.save(f, a)" "$1"
}

inputs() {
	arrays conv.npy '[np.random.default_rng(k).standard_normal((k, 2, 5, 7)).astype("f4") for k in (1, 3, 2)]'
	arrays rsum.npy '[np.random.default_rng(k).standard_normal((k, 5)).astype("f4") for k in (1, 4)]'
	arrays lin.npy '[np.random.default_rng(k).standard_normal((k, 4)).astype("f4") for k in (1, 2, 3)]'
}

@test "opencv:cpu0 gives numpy's outputs: a convolution, a 1-D output, two outputs" {
	inputs
	"$A" -m "$M/conv.onnx" -b opencv:cpu0 < conv.npy > out.npy
	run -0 $PY "$REF" check conv conv.npy out.npy
	[ "$output" = "3 inputs match" ]
	# OpenCV holds the (N,) sum as 2-D; the model's rank comes back.
	"$A" -m "$M/rsum.onnx" -b opencv:cpu0 rsum.npy > out.npy
	run -0 $PY "$REF" check rsum rsum.npy out.npy
	[ "$output" = "2 inputs match" ]
	"$A" -m "$M/lin.onnx" -b opencv:cpu0 -T 1 < lin.npy > out.npy
	run -0 $PY "$ROOT/tests/infer/npy.py" check lin lin.npy out.npy
	[ "$output" = "3 inputs, 6 arrays match" ]
	# --output and --batch: the same bytes as one run per input.
	"$A" -m "$M/lin.onnx" -b opencv:cpu0 --output z < lin.npy > z.npy
	run -0 $PY "$ROOT/tests/infer/npy.py" check lin lin.npy z.npy z
	arrays one.npy '[np.random.default_rng(i).standard_normal((1, 4)).astype("f4") for i in range(7)]'
	"$A" -m "$M/lin.onnx" -b opencv:cpu0 < one.npy > b1.npy
	"$A" -m "$M/lin.onnx" -b opencv:cpu0 --batch 4 < one.npy > b4.npy
	cmp b1.npy b4.npy
}

@test "--info on opencv:cpu0 reads the model's names, dtypes and symbolic dims from the file" {
	run -0 "$A" -m "$M/conv.onnx" -b opencv:cpu0 --info
	[ "$output" = "model: $M/conv.onnx
engine: opencv:cpu0
inputs:
  x                        float32 (N, 2, H, W)
outputs:
  y                        float32 (N, 3, H, W)" ]
	have_ort || skip "no ONNX Runtime to compare with"
	for m in conv rsum lin softmax; do
		"$A" -m "$M/$m.onnx" -b opencv:cpu0 --info --json | jq -c '[.inputs, .outputs]' > a
		"$A" -m "$M/$m.onnx" -b onnxruntime --info --json | jq -c '[.inputs, .outputs]' > b
		cmp a b
	done
	# --dim fixes a symbolic dim, as ONNX Runtime's override does.
	"$A" -m "$M/lin.onnx" -b opencv:cpu0 --dim N=2 --info --json | jq -c '[.inputs, .outputs]' > a
	"$A" -m "$M/lin.onnx" -b onnxruntime --dim N=2 --info --json | jq -c '[.inputs, .outputs]' > b
	cmp a b
	[ "$(cat a)" = '[[{"name":"x","dtype":"float32","shape":[2,4]}],[{"name":"y","dtype":"float32","shape":[2,3]},{"name":"z","dtype":"float32","shape":[2,4]}]]' ]
}

@test "a model OpenCV cannot load runs on ONNX Runtime under auto; the fallback's first use checks it and gives OpenCV's reason" {
	have_ort || skip "no ONNX Runtime"
	arrays in.npy '[np.array([[1.5, -2.0, 0.8, 3.0]], "f4")]'
	"$A" -m "$M/fmod.onnx" -v < in.npy > out.npy 2> log
	run -0 $PY "$REF" check fmod in.npy out.npy
	grep -qx '  1. onnxruntime.cpu:cpu0 prior 100 MB/s (ONNX Runtime [0-9.]* CPUExecutionProvider)' log
	grep -qx '  2. opencv:cpu0      prior 40 MB/s (OpenCV 4.6.0 DNN CPU target); checked when first used' log
	# ONNX Runtime failing, the fallback's check fails: OpenCV's reason,
	# nothing written, and no retry on OpenCV's other units.
	ACCEL_FAULT='onnxruntime:*' run -1 "$A" -m "$M/fmod.onnx" --fallback next -o out2.npy < in.npy
	[ "${lines[0]}" = "accel-infer: warning: onnxruntime.cpu:cpu0: unit 0 failed: injected fault (ACCEL_FAULT); retrying on opencv:cpu0" ]
	[[ "${lines[1]}" = "accel-infer: $M/fmod.onnx: opencv:cpu0: unit 0 (byte offset 0) failed: OpenCV 4.6.0 cannot load the model: Node [Mod@ai.onnx]: Can't create layer"*"; no engine left to retry on" ]]
	[ "${#lines[@]}" = 2 ]
	[ ! -e out2.npy ]
	# Named alone, OpenCV's reason is the error.
	run -1 "$A" -m "$M/fmod.onnx" -b opencv:cpu0 < in.npy
	[[ "$output" = "accel-infer: $M/fmod.onnx: no engine can run the model: opencv:cpu0: OpenCV 4.6.0 cannot load the model: Node [Mod@ai.onnx]:"* ]]
	# int32 tensors: OpenCV DNN computes in float32 only.
	run -1 "$A" -m "$M/add2.onnx" -b opencv:cpu0 --info
	[ "$output" = "accel-infer: $M/add2.onnx: no engine can run the model: opencv:cpu0: OpenCV DNN runs float32 tensors only: input 'a' is of another type (ONNX type 6)" ]
	run -0 "$A" -m "$M/add2.onnx" --info
	[ "${lines[1]}" = "engine: onnxruntime.cpu:cpu0" ]
}

@test "under auto, with ONNX Runtime running every batch, OpenCV never reads the model: no child process, one open of the file" {
	have_ort || skip "no ONNX Runtime"
	command -v strace > /dev/null || skip "no strace (make deps installs it)"
	inputs
	strace -f -qq -e trace=openat,clone,clone3,fork,vfork -o trace.log "$A" -m "$M/lin.onnx" < lin.npy > out.npy
	run -0 $PY "$ROOT/tests/infer/npy.py" check lin lin.npy out.npy
	[ "$(grep -c '/lin\.onnx"' trace.log)" = 1 ]
	# Threads only: no process (accel_call_isolated's fork) was made.
	grep -qE 'clone3?\(' trace.log
	run -1 grep -vE 'CLONE_THREAD|^[0-9]+ +(openat|\+\+\+|---)|resumed>' trace.log
	# Named, the check runs before the first batch, as before.
	strace -f -qq -e trace=openat -o trace2.log "$A" -m "$M/lin.onnx" -b opencv < lin.npy > out2.npy
	run -0 $PY "$ROOT/tests/infer/npy.py" check lin lin.npy out2.npy
	[ "$(grep -c '/lin\.onnx"' trace2.log)" -ge 2 ]
}

@test "OpenCV's companion that does not load: auto runs ONNX Runtime, its fallback fails with the reason; named, the probe's reason" {
	have_ort || skip "no ONNX Runtime"
	inputs
	cp -a "$ROOT/build/plugins" plg
	: > plg/opencv/dnn.so
	export ACCEL_BACKEND_PATH="$PWD/plg"
	"$A" -m "$M/lin.onnx" -v < lin.npy > out.npy 2> log
	run -0 $PY "$ROOT/tests/infer/npy.py" check lin lin.npy out.npy
	grep -qx '  2. opencv:cpu0      prior 40 MB/s (OpenCV 4.6.0 DNN CPU target); checked when first used' log
	ACCEL_FAULT='onnxruntime:*' run -1 "$A" -m "$M/lin.onnx" --fallback next < lin.npy
	[ "${lines[1]}" = "accel-infer: $M/lin.onnx: opencv:cpu0: unit 0 (byte offset 0) failed: cannot load opencv/dnn.so: file too short; no engine left to retry on" ]
	run -1 "$A" -m "$M/lin.onnx" -b opencv < lin.npy
	[ "$output" = "accel-infer: $M/lin.onnx: no engine can run the model: opencv: cannot load opencv/dnn.so: file too short" ]
}

@test "a model on which OpenCV's importer crashes (a Gather along axis -1) is read by OpenCV in a child only: auto runs ONNX Runtime, --info too" {
	have_ort || skip "no ONNX Runtime"
	arrays in.npy '[np.array([[1.5, -2.0, 0.8], [3.0, 4.0, 5.0]], "f4")]'
	run -0 "$A" -m "$M/gatherlast.onnx" --info
	"$A" -m "$M/gatherlast.onnx" -v < in.npy > out.npy 2> log
	run -0 $PY "$REF" check gatherlast in.npy out.npy
	# The fallback's check: the child's crash is the engine's failure.
	# heap corruption: malloc aborts (SIGABRT), or a signal of the fault
	ACCEL_FAULT='onnxruntime:*' run -1 "$A" -m "$M/gatherlast.onnx" --fallback next < in.npy
	[[ "${lines[1]}" =~ ^"accel-infer: $M/gatherlast.onnx: opencv:cpu0: unit 0 (byte offset 0) failed: OpenCV "(aborted|was\ killed\ by).*" reading the model; no engine left to retry on"$ ]]
	run -1 "$A" -m "$M/gatherlast.onnx" -b opencv:cpu0 < in.npy
	[[ "$output" == "accel-infer: $M/gatherlast.onnx: no engine can run the model: opencv:cpu0: OpenCV "*" reading the model" ]]
}

@test "under auto ONNX Runtime ranks first, opencv:cpu0 next; without ONNX Runtime auto runs OpenCV" {
	inputs
	if have_ort; then
		"$A" -m "$M/lin.onnx" -v < lin.npy 2> log > /dev/null
		[ "$(grep -m1 -A2 '^route for onnx.run' log | awk 'NR > 1 { print $1, $2 }')" = "1. onnxruntime.cpu:cpu0
2. opencv:cpu0" ]
	fi
	# An OpenCL engine on a software device (PoCL) is never preferred.
	if grep -q "opencv.opencl:.*software device" log 2> /dev/null; then
		grep -q "opencv.opencl:[a-z0-9]* *software device: never preferred to native CPU code" log
	fi
	ACCEL_ONNXRUNTIME_LIB=/nonexistent/libonnxruntime.so.1 "$A" -m "$M/conv.onnx" -v < conv.npy > out.npy 2> log
	run -0 $PY "$REF" check conv conv.npy out.npy
	grep -qx '  1. opencv:cpu0      prior 40 MB/s (OpenCV 4.6.0 DNN CPU target)' log
	grep -q '^  -  onnxruntime      left out: cannot load libonnxruntime.so.1: /nonexistent/libonnxruntime.so.1' log
	grep -qE '^  opencv:cpu0      workers [0-9]+, units 3,' log
	ACCEL_ONNXRUNTIME_LIB=/nonexistent/libonnxruntime.so.1 run -0 "$A" -m "$M/conv.onnx" --info
	[ "${lines[1]}" = "engine: opencv:cpu0" ]
}

@test "a batch failing on ONNX Runtime (ACCEL_FAULT) runs again on OpenCV: the bytes OpenCV gives alone" {
	have_ort || skip "no ONNX Runtime"
	arrays in.npy '[np.random.default_rng(i).standard_normal((1, 2, 4, 4)).astype("f4") for i in range(12)]'
	"$A" -m "$M/conv.onnx" -b opencv:cpu0 < in.npy > ref.npy
	ACCEL_FAULT='onnxruntime:*' "$A" -m "$M/conv.onnx" --fallback next -v < in.npy > out.npy 2> log
	cmp ref.npy out.npy
	run -0 $PY "$REF" check conv in.npy out.npy
	# onnxruntime is dropped after its first failures; opencv runs all.
	grep -qE "^  onnxruntime.cpu:cpu0 workers [0-9]+, units 0, .*dropped" log
	grep -qE "^  opencv:cpu0      workers [0-9]+, units 12, .*failures 0, retried here [1-9]" log
	# --fallback none: the run fails, nothing written.
	ACCEL_FAULT='onnxruntime:1' run -1 "$A" -m "$M/conv.onnx" --fallback none -o out2.npy < in.npy
	[ ! -e out2.npy ]
}

@test "opencv.opencl runs when named in full, by the name accel-detect gives it, on PoCL too, and gives numpy's outputs on a clean stdout" {
	local e
	# accel-detect --json probes every backend.
	e=$("$ROOT/build/accel-detect" --json --routes onnx.run |
		jq -r '[.routes[0].engines[].name | select(startswith("opencv.opencl:"))][0] // empty')
	[ -n "$e" ] || skip "no OpenCL device OpenCV can use"
	arrays in.npy '[np.random.default_rng(k).standard_normal((2, 2, 5, 7)).astype("f4") for k in range(3)]'
	# This run probes ONNX Runtime and OpenCV only: the device has the same
	# id.
	"$A" -m "$M/conv.onnx" -b "$e" -v < in.npy > out.npy 2> log
	# The .npy stream is whole: OpenCV's OpenCL build logs stay out of it.
	run -0 $PY "$REF" check conv in.npy out.npy
	[ "$output" = "3 inputs match" ]
	grep -qx "  1\. $e named by --backend (software device)\|  1\. $e named by --backend" log
	grep -q "^  $e *workers 1, units 3," log
	"$A" -m "$M/conv.onnx" -b "$e" -o out2.arrays < in.npy
	run -0 $PY "$REF" check conv in.npy out2.arrays
	# On a software device (PoCL), -b opencv.opencl alone does not take it.
	"$ROOT/build/accel-detect" --json | jq -e --arg id "${e#*:}" '.devices[] | select(.id == $id) | .software' > /dev/null ||
		return 0
	run -1 --separate-stderr "$A" -m "$M/conv.onnx" -b opencv.opencl -o out3.npy < in.npy
	[ "$stderr" = "accel-infer: --backend opencv.opencl: only a software device ($e); name it in full to use it" ]
	[ ! -e out3.npy ]
}
