#!/bin/sh
# A tour of accel on real data: what accel-detect finds, then each program's
# step (examples/tour/NN-NAME.sh, sourced in order, with $corpus, $size,
# $work, $out and the helpers below) on a corpus built from this machine's
# files, checked against the standard tools. $work goes at the end; $out
# (ACCEL_TOUR_OUT, else build/tour) keeps what the tour shows, as the
# accel-bench plot. Run from the repository root (make demo).
set -eu
B=${ACCEL_BUILD:-build}
export PATH="$PWD/$B:$PATH"
work=$(mktemp -d)
out=${ACCEL_TOUR_OUT:-$B/tour}
mkdir -p "$out"
trap 'rm -rf "$work"' EXIT

step() { printf '\n== %s\n' "$*"; }
# mbps BYTES T0 T1: MB/s for BYTES moved between times T0 and T1.
mbps() { awk -v b="$1" -v t0="$2" -v t1="$3" 'BEGIN { s = t1 - t0; printf "%.0f", (s > 0 ? b / s / 1e6 : 0) }'; }
now() { date +%s.%N; }

step "Discovery: accel-detect"
accel-detect
step "Video engines: each FFmpeg device type tried, and why not (accel-detect --class video --json)"
accel-detect --class video --json | jq -r '.probes[] | select(.name == "ffmpeg") | .notes[]'
accel-detect --require nvenc || echo "(no NVENC here: video would be encoded on the CPU)"
step "Routes for compression (accel-detect --routes)"
accel-detect --routes zstd.compress gzip.compress

step "Corpus"
corpus=$(ACCEL_CORPUS_MB=${ACCEL_TOUR_MB:-128} sh tests/bench/corpus.sh)
size=$(stat -c %s "$corpus")
echo "$corpus: $size bytes (a tar of /usr/share/doc and /usr/lib, cut)"

for s in examples/tour/*.sh; do
	# shellcheck disable=SC1090
	. "./$s"
done
echo
echo "tour done"
