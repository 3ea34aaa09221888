#!/bin/sh
# A tour of accel on real data: what accel-detect finds, then accel-compress
# in each format on a corpus built from this machine's files, checked
# against the standard tools. Run from the repository root (make demo).
set -eu
B=${ACCEL_BUILD:-build}
export PATH="$PWD/$B:$PATH"
work=$(mktemp -d)
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

for fmt in zstd gzip lz4; do
	step "accel-compress --format $fmt"
	t0=$(now)
	accel-compress -v --format "$fmt" -o "$work/c.$fmt" "$corpus" 2> "$work/log"
	t1=$(now)
	engine=$(sed -n 's/^  1\. \([^ ]*\).*/\1/p' "$work/log" | head -n 1)
	csize=$(stat -c %s "$work/c.$fmt")
	accel-compress -d -o "$work/d.$fmt" "$work/c.$fmt"
	t2=$(now)
	cmp -s "$corpus" "$work/d.$fmt" && rt=ok || rt=FAILED
	case $fmt in
	zstd) peer="zstd -dc" ;;
	gzip) peer="gzip -dc" ;;
	lz4) peer="lz4 -dc" ;;
	esac
	$peer < "$work/c.$fmt" | cmp -s - "$corpus" && interop=ok || interop=FAILED
	ratio=$(awk -v a="$size" -v b="$csize" 'BEGIN { printf "%.3f", a / b }')
	echo "engine: $engine   ratio: $ratio   compress: $(mbps "$size" "$t0" "$t1") MB/s" \
		"  decompress: $(mbps "$size" "$t1" "$t2") MB/s"
	echo "round trip: $rt   '$peer' reads our output: $interop"
	rm -f "$work/d.$fmt"
	[ "$rt" = ok ] && [ "$interop" = ok ]
done

step "Frames of the zstd file (accel-compress --list)"
accel-compress -l "$work/c.zstd"
echo
echo "tour done"
