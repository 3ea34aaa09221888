#!/bin/sh
# Benchmark (not a test): accel-infer side by side with ONNX Runtime driven
# directly through its C API (tests/bench/infer_direct.c, built here against
# the same library), on the PaddleOCR recogniser from make deps (input
# 1x3x48x320), same threads: model load apart, then latency percentiles
# (p50/p90/p99 per batch) and throughput at batch 1 and 8, and the ratio
# accel-infer / direct. accel-infer is fed through a pipe
# (tests/bench/infer_drive.py), so its figures include reading and writing
# .npy. Then OpenCV DNN (opencv:cpu0) beside onnxruntime.cpu:cpu0, both
# through accel-infer (ACCEL_BACKEND): whether OpenCV loads each real model
# (its reason when not), and on a small CNN made here with python3-onnx
# (three 3x3 convolutions, input 1x3x128x128), which both load, the same
# figures and the ratio opencv / onnxruntime. Settings: THREADS (intra-op threads, default all cores),
# ACCEL_BENCH_INPUTS (inputs per measurement, 64).
set -eu
B=${ACCEL_BUILD:-build}
A="$B/accel-infer"
deps=build/deps
model="$deps/models/ocr/ch_PP-OCRv4_rec_infer.onnx"
dims=1,3,48,320
n=${ACCEL_BENCH_INPUTS:-64}
t=${THREADS:-$(nproc)}
if [ ! -f "$model" ] || [ ! -f "$B/plugins/accel_onnxruntime.so" ]; then
	echo "infer bench: no ONNX Runtime or models (make deps, then make): skipped"
	exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/accel-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The yardstick, against the library the plugin loads.
inc=$deps/onnxruntime/include
lib=$deps/onnxruntime/lib
if pkg-config --exists libonnxruntime 2>/dev/null; then
	inc=$(pkg-config --variable=includedir libonnxruntime)/onnxruntime
	lib=$(pkg-config --variable=libdir libonnxruntime)
fi
cc -O2 -std=gnu11 -I"$inc" -I"$(dirname "$inc")" -o "$work/direct" tests/bench/infer_direct.c \
	-L"$lib" -lonnxruntime -Wl,-rpath,"$(cd "$lib" && pwd)" -lm
echo "model: $model, input $dims, $t threads, $n inputs per measurement"
t0=$(date +%s.%N)
"$A" -m "$model" -T "$t" --info > /dev/null
t1=$(date +%s.%N)
echo "accel-infer --info (process start + model load): $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') s"
"$work/direct" "$model" "$t" "$n" "$dims" > "$work/direct.txt"
cat "$work/direct.txt"
for b in 1 8; do
	/usr/bin/python3 tests/bench/infer_drive.py "$A" "$model" "$t" "$n" "$dims" "$b" > "$work/ours$b.txt"
	cat "$work/ours$b.txt"
done
# ratio accel-infer / direct of throughput, per batch size
for b in 1 8; do
	ours=$(sed -n "s/^accel-infer batch $b: .*, \([0-9.]*\) inputs\/s/\1/p" "$work/ours$b.txt")
	theirs=$(sed -n "s/^direct batch $b: .*, \([0-9.]*\) inputs\/s/\1/p" "$work/direct.txt")
	echo "batch $b throughput accel-infer/direct: $(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.3f", a / b }')"
done
# OpenCV DNN beside ONNX Runtime, both through accel-infer.
if [ -f "$B/plugins/accel_opencv.so" ]; then
	for m in "$deps"/models/*/*.onnx; do
		if why=$("$A" -m "$m" -b opencv:cpu0 --info 2>&1 > /dev/null); then
			echo "opencv:cpu0 loads $(basename "$m")"
		else
			echo "opencv:cpu0 cannot run $(basename "$m"): ${why#*opencv:cpu0: }"
		fi
	done
	/usr/bin/python3 - "$work/cnn.onnx" <<'PY'
import sys
import numpy as np
import onnx
from onnx import helper, TensorProto as T
rng = np.random.default_rng(3)
nodes, inits, prev, c = [], [], "x", 3
for i, k in enumerate((16, 32, 32)):
    w = (rng.standard_normal((k, c, 3, 3)) / (3 * c) ** 0.5).astype("f4")
    inits.append(helper.make_tensor(f"w{i}", T.FLOAT, w.shape, w.flatten()))
    nodes += [helper.make_node("Conv", [prev, f"w{i}"], [f"c{i}"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
              helper.make_node("Relu", [f"c{i}"], [f"r{i}"])]
    prev, c = f"r{i}", k
nodes[-1].output[0] = "y"
g = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", T.FLOAT, ["N", 3, 128, 128])],
                      [helper.make_tensor_value_info("y", T.FLOAT, ["N", 32, 128, 128])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, sys.argv[1])
PY
	echo "small CNN (1x3x128x128, three 3x3 convolutions), $t threads, $n inputs per measurement"
	for e in onnxruntime.cpu:cpu0 opencv:cpu0; do
		for b in 1 8; do
			ACCEL_BACKEND=$e /usr/bin/python3 tests/bench/infer_drive.py "$A" "$work/cnn.onnx" "$t" "$n" \
				1,3,128,128 "$b" | sed "s/^accel-infer/$e/" > "$work/cnn-$e-$b.txt"
			cat "$work/cnn-$e-$b.txt"
		done
	done
	for b in 1 8; do
		o=$(sed -n "s/^opencv:cpu0 batch $b: .*, \([0-9.]*\) inputs\/s/\1/p" "$work/cnn-opencv:cpu0-$b.txt")
		r=$(sed -n "s/^onnxruntime.cpu:cpu0 batch $b: .*, \([0-9.]*\) inputs\/s/\1/p" "$work/cnn-onnxruntime.cpu:cpu0-$b.txt")
		echo "small CNN batch $b throughput opencv/onnxruntime: $(awk -v a="$o" -v b="$r" 'BEGIN { printf "%.3f", a / b }')"
	done
fi
