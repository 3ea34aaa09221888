#!/bin/sh
# Re-encode a folder of clips in a batch job: each FILE in DIR to
# OUT/FILE.mp4 (HEVC, constant quality, audio copied where MP4 takes it),
# JOBS at a time, each encoder capped to THREADS threads so the jobs share
# the machine; the clips that failed are listed at the end and make the
# exit status 1. An output appears only when complete, so a rerun skips
# the clips already done.
#   sh examples/transcode-batch.sh DIR OUT [JOBS] [THREADS]
set -eu
dir=$1 out=$2 jobs=${3:-2} threads=${4:-1}
# The programs: those in $ACCEL_BUILD (a folder) when set, else those of the
# build folder beside this script when it holds them, else those in $PATH.
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${ACCEL_BUILD:-}" ]; then
	PATH="$(cd "$ACCEL_BUILD" && pwd):$PATH"
elif [ -x "$here/../build/accel-detect" ]; then
	PATH="$here/../build:$PATH"
fi
mkdir -p "$out"
failed="$out/failed.txt"
: > "$failed"
find "$dir" -maxdepth 1 -type f | sort | while read -r f; do
	dst="$out/$(basename "$f").mp4"
	[ -e "$dst" ] || printf '%s\n' "$f"
done | xargs -r -P "$jobs" -I{} sh -c '
	f=$1 out=$2 threads=$3 failed=$4
	dst="$out/$(basename "$f").mp4"
	accel-transcode -q --to hevc --quality 28 --preset medium -T "$threads" "$f" -o "$dst" ||
		printf "%s\n" "$f" >> "$failed"' sh {} "$out" "$threads" "$failed"
if [ -s "$failed" ]; then
	echo "failed:"; cat "$failed"
	exit 1
fi
echo "done: $(find "$out" -name '*.mp4' | wc -l) clips in $out"
