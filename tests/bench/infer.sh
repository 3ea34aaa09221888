#!/bin/sh
# Benchmark (not a test): onnx.run on the real model make deps fetched, on
# each engine that loads it (ONNX Runtime, OpenCV DNN), beside ONNX
# Runtime's C API driven directly (infer-direct), at the batches of
# BATCHES (default 1,8): inferences/s, p50/p90/p99 latency, the model load
# apart: a thin call of accel-bench --vs (accel-bench(1)). More
# accel-bench options follow on the command line.
set -eu
B=${ACCEL_BUILD:-build}
exec "$B/accel-bench" --vs --size "${BATCHES:-1,8}" "$@" onnx.run
