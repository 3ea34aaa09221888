#!/bin/sh
# Benchmark (not a test): accel-compress beside zstd -T, pigz and lz4 (and
# igzip with PEER=igzip, rapidgzip where installed with PEER=rapidgzip),
# both ways, at the levels of LEVELS (default "1,3" for zstd and lz4, the
# gzip default of 6 run too), on SIZE bytes (64M) of this machine's files:
# a thin call of accel-bench --vs (accel-bench(1) says what it measures and
# prints). More accel-bench options follow on the command line.
set -eu
B=${ACCEL_BUILD:-build}
peer=${PEER:+--peer $PEER}
# shellcheck disable=SC2086
"$B/accel-bench" --vs --size "${SIZE:-64M}" --level "${LEVELS:-1,3}" $peer "$@" 'zstd.*' 'lz4.*'
# shellcheck disable=SC2086
"$B/accel-bench" --vs --size "${SIZE:-64M}" $peer "$@" 'gzip.*'
