#!/bin/sh
# Benchmark (not a test): accel-transcode side by side with the ffmpeg
# program, the same clip with identical settings in one run: x264 veryfast
# and medium, x265 ultrafast, SVT-AV1 preset 10, and decode only (raw
# frames to /dev/null). Prints frames per second of each and ours/ffmpeg.
# Settings: ACCEL_BENCH_SIZE (1920x1080), ACCEL_BENCH_SECONDS (2),
# ACCEL_BENCH_CASES (all: "x264-veryfast x264-medium x265-ultrafast
# svtav1-10 decode"; also "cuda-x264": NVDEC decode, x264 veryfast encode,
# against ffmpeg -hwaccel cuda, on a host with NVDEC, printing our route).
set -eu
B=${ACCEL_BUILD:-build}
A="$B/accel-transcode"
size=${ACCEL_BENCH_SIZE:-1920x1080}
secs=${ACCEL_BENCH_SECONDS:-2}
cases=${ACCEL_BENCH_CASES:-"x264-veryfast x264-medium x265-ultrafast svtav1-10 decode"}
command -v ffmpeg > /dev/null || { echo "transcode bench: ffmpeg not installed (make deps)"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/accel-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
clip="$work/clip.mp4"
ffmpeg -v error -f lavfi -i "testsrc2=size=$size:rate=25:duration=$secs" -c:v libx264 -preset ultrafast -crf 18 \
	-pix_fmt yuv420p "$clip"
frames=$((secs * 25))

# wall CMD...: seconds CMD takes.
wall() {
	t0=$(date +%s.%N)
	"$@"
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}
fps() { awk -v n="$frames" -v s="$1" 'BEGIN { printf "%.1f", n / s }'; }

echo "clip: $size, $frames frames of testsrc2 (H.264); $(nproc) cores (noisy when shared)"
printf '%-16s %10s %10s %8s\n' "case" "ours fps" "ffmpeg fps" "ratio"
for c in $cases; do
	case $c in
	x264-veryfast) ours="--to h264 --preset veryfast"; peer="-c:v libx264 -preset veryfast" ;;
	x264-medium) ours="--to h264 --preset medium"; peer="-c:v libx264 -preset medium" ;;
	x265-ultrafast) ours="--to hevc --preset ultrafast"; peer="-c:v libx265 -preset ultrafast -x265-params log-level=error" ;;
	svtav1-10) ours="--to av1 --preset 10"; peer="-c:v libsvtav1 -preset 10" ;;
	decode) ours="--to rawvideo"; peer="-f rawvideo" ;;
	cuda-x264) ours="--to h264 --preset veryfast"; peer="-c:v libx264 -preset veryfast" ;;
	*) echo "unknown case $c"; exit 1 ;;
	esac
	if [ "$c" = cuda-x264 ]; then
		# shellcheck disable=SC2086
		o=$(wall "$A" -v --hw cuda --fallback none --audio none $ours -o "$work/ours.mkv" -f "$clip" 2> "$work/log") ||
			{ tail -n 1 "$work/log"; exit 1; }
		grep -E '^accel-transcode: (filter graph|decode on|filter on|encode on)' "$work/log"
		# shellcheck disable=SC2086
		p=$(wall ffmpeg -v error -nostdin -hwaccel cuda -i "$clip" -an $peer -f matroska -y "$work/peer.mkv")
	elif [ "$c" = decode ]; then
		# shellcheck disable=SC2086
		o=$(wall "$A" --hw none --audio none $ours -o /dev/null "$clip")
		# shellcheck disable=SC2086
		p=$(wall ffmpeg -v error -nostdin -i "$clip" -an $peer -y /dev/null)
	else
		# shellcheck disable=SC2086
		o=$(wall "$A" --hw none --audio none $ours -o "$work/ours.mkv" -f "$clip")
		# shellcheck disable=SC2086
		p=$(SVT_LOG=1 wall ffmpeg -v error -nostdin -i "$clip" -an $peer -f matroska -y "$work/peer.mkv")
		n=$(ffprobe -v error -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$work/ours.mkv")
		[ "$n" = "$frames" ] || { echo "$c: ours wrote $n frames, not $frames"; exit 1; }
	fi
	printf '%-16s %10s %10s %8s\n' "$c" "$(fps "$o")" "$(fps "$p")" \
		"$(awk -v a="$o" -v b="$p" 'BEGIN { printf "%.3f", b / a }')"
done
