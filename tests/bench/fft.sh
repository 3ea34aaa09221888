#!/bin/sh
# Benchmark (not a test): accel-fft's engines (fftw:cpu0, and VkFFT or
# cuFFT on each device that can run them) beside FFTW called directly on
# the same plans (accel-bench-fftw), for each N of SIZES (default
# 256,1024,4096,65536,1048576) on 16 MiB of tones and noise: GFLOPS,
# Msamples/s, the plan time apart: a thin call of accel-bench --vs
# (accel-bench(1)). More accel-bench options follow on the command line.
set -eu
B=${ACCEL_BUILD:-build}
exec "$B/accel-bench" --vs --size "${SIZES:-256,1024,4096,65536,1048576}" "$@" 'fft.*'
