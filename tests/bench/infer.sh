#!/bin/sh
# Benchmark (not a test): accel-infer side by side with ONNX Runtime driven
# directly through its C API (tests/bench/infer_direct.c, built here against
# the same library), on the PaddleOCR recogniser from make deps (input
# 1x3x48x320), same threads: model load apart, then latency percentiles
# (p50/p90/p99 per batch) and throughput at batch 1 and 8, and the ratio
# accel-infer / direct. accel-infer is fed through a pipe
# (tests/bench/infer_drive.py), so its figures include reading and writing
# .npy. Settings: THREADS (intra-op threads, default all cores),
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
