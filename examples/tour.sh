#!/bin/sh
# A tour of accel on real data: what accel-detect finds, then each program's
# step (tour/NN-NAME.sh beside this script, sourced in order, with $corpus,
# $size, $work, $out, $root and the helpers below) on a corpus built from this
# machine's files, checked against the standard tools. Runs from any folder
# (make demo runs it).
#   ACCEL_BUILD   the folder of the programs (default: the build folder of this
#                 tree when it holds them, else those in $PATH)
#   ACCEL_TOUR_MB the corpus size in MiB (128), made once into $ACCEL_CORPUS_DIR
#                 (default: build/corpus of this tree)
#   ACCEL_TOUR_OUT what the tour keeps to show, as the accel-bench plot
#                 (default: build/tour of this tree)
#   ACCEL_MODELS  the models of the infer step (default: build/deps/models of
#                 this tree, fetched by make deps)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${ACCEL_BUILD:-}" ]; then
	PATH="$(cd "$ACCEL_BUILD" && pwd):$PATH"
elif [ -x "$root/build/accel-detect" ]; then
	PATH="$root/build:$PATH"
fi
work=$(mktemp -d)
out=${ACCEL_TOUR_OUT:-$root/build/tour}
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
corpus=$(ACCEL_CORPUS_MB=${ACCEL_TOUR_MB:-128} ACCEL_CORPUS_DIR=${ACCEL_CORPUS_DIR:-$root/build/corpus} \
	sh "$root/tests/bench/corpus.sh")
size=$(stat -c %s "$corpus")
echo "$corpus: $size bytes (a tar of /usr/share/doc and /usr/lib, cut)"

for s in "$root"/examples/tour/*.sh; do
	# shellcheck disable=SC1090
	. "$s"
done
echo
echo "tour done"
