#!/bin/sh
# Benchmark (not a test): accel-transcode's decode and encode stages beside
# the ffmpeg program with the same encoder and settings, on a clip of
# SIZE (default 1280x720) made here: frames/s, the encoder's opening
# apart: a thin call of accel-bench --vs (accel-bench(1)). OPS chooses the
# stages (default: h264 and hevc decode, h264 encode). More accel-bench
# options follow on the command line.
set -eu
B=${ACCEL_BUILD:-build}
# shellcheck disable=SC2086
exec "$B/accel-bench" --vs --size "${SIZE:-1280x720}" "$@" ${OPS:-h264.decode hevc.decode h264.encode}
