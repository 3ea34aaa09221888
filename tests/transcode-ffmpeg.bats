#!/usr/bin/env bats
# accel-transcode beside the ffmpeg program: --start/--duration/--end cut
# as ffmpeg's -ss/-t/-to before -i (checked against ffmpeg, frame for frame
# and sample for sample), ffmpeg's single-dash words answered with ours,
# the container by -o's extension, --scale W x -2, and the sizes encoders
# refuse said before they are opened.

bats_require_minimum_version 1.5.0

load lib/common

setup_file() {
	export CLIPS="$BATS_FILE_TMPDIR/clips"
	mkdir -p "$CLIPS"
	cd "$CLIPS"
	# 2 s, 160x120, 25 fps, a keyframe a second, H.264 + AAC (44.1 kHz);
	# the MPEG-TS copy starts at 1.4 s (video at 1.423 s).
	ffmpeg -v error -f lavfi -i testsrc2=size=160x120:rate=25:duration=2 -f lavfi -i sine=frequency=440:duration=2 \
		-c:v libx264 -preset ultrafast -g 25 -pix_fmt yuv420p -c:a aac -shortest clip.mp4
	ffmpeg -v error -i clip.mp4 -c copy -f mpegts clip.ts
}

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	T="$ROOT/build/accel-transcode"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
}

# ffraw ARGS...: the frames ffmpeg's trim passes on (no frame repeated for
# a constant rate), as raw yuv420p.
ffraw() {
	ffmpeg -v error "$@" -vsync passthrough -f rawvideo -pix_fmt yuv420p -
}
frames() {
	ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$1" | head -n 1
}
first_pts() {
	ffprobe -v error -select_streams "$2:0" -show_entries frame=pts_time -of csv=p=0 "$1" | head -n 1 | tr -d ,
}
samples() {
	ffmpeg -v error -i "$1" -map 0:a -f s16le - | md5sum
}

@test "--start and --duration: the frames of ffmpeg -ss -t -i, byte for byte, on and between frame times" {
	for s in 0 0.52 1.3 1.96 0.5; do
		"$T" --start $s --duration 0.4 --to rawvideo "$CLIPS/clip.mp4" > ours.yuv
		ffraw -ss $s -t 0.4 -i "$CLIPS/clip.mp4" > ref.yuv
		[ -s ref.yuv ]
		cmp ours.yuv ref.yuv
	done
	# 10 frames of 160x120 yuv420p from 0.5 s
	[ "$(stat -c %s ours.yuv)" = $(( 160 * 120 * 3 / 2 * 10 )) ]
	# times as ffmpeg reads them: [HH:]MM:SS[.ms], a unit
	"$T" --start 00:00:00.5 --duration 400ms --to rawvideo "$CLIPS/clip.mp4" > a.yuv
	"$T" --start 0.5 --duration 0.4 --to rawvideo "$CLIPS/clip.mp4" > b.yuv
	ffraw -ss 0.5 -t 0.4 -i "$CLIPS/clip.mp4" > ref.yuv
	cmp a.yuv ref.yuv
	cmp b.yuv ref.yuv
}

@test "--start in MPEG-TS: where the seek lands after the start, none of the frames ffmpeg keeps reading all of it is lost" {
	for s in 0.52 1.3; do
		"$T" --start $s --duration 0.4 --to rawvideo "$CLIPS/clip.ts" > file.yuv
		cat "$CLIPS/clip.ts" | "$T" --start $s --duration 0.4 --to rawvideo > pipe.yuv
		cat "$CLIPS/clip.ts" | ffraw -ss $s -t 0.4 -i - > ref.yuv
		[ "$(stat -c %s ref.yuv)" = $(( 160 * 120 * 3 / 2 * 10 )) ]
		cmp file.yuv ref.yuv
		cmp pipe.yuv ref.yuv
	done
}

@test "--start with encoded video and audio: frame count, first timestamps and the decoded AAC samples of ffmpeg's" {
	for s in 0.52 0.5 1.3; do
		"$T" --start $s --duration 0.4 --audio aac "$CLIPS/clip.mp4" -o ours.mkv
		ffmpeg -v error -ss $s -t 0.4 -i "$CLIPS/clip.mp4" -c:v libx264 -c:a aac ref.mkv
		[ "$(frames ours.mkv)" = "$(frames ref.mkv)" ]
		[ "$(first_pts ours.mkv v)" = "$(first_pts ref.mkv v)" ]
		[ "$(first_pts ours.mkv a)" = 0.000000 ]
		[ "$(first_pts ref.mkv a)" = 0.000000 ]
		[ "$(samples ours.mkv)" = "$(samples ref.mkv)" ]
		rm ours.mkv ref.mkv
	done
}

@test "--end is --start plus --duration; copied audio keeps the packets that start inside the cut" {
	"$T" --start 0.5 --end 0.9 --to rawvideo "$CLIPS/clip.mp4" > end.yuv
	ffraw -ss 0.5 -to 0.9 -i "$CLIPS/clip.mp4" > ref.yuv
	cmp end.yuv ref.yuv
	"$T" --start 0.5 --end 0.9 "$CLIPS/clip.mp4" -o copy.mkv
	[ "$(ffprobe -v error -select_streams a:0 -show_entries stream=codec_name -of default=nw=1:nk=1 copy.mkv)" = aac ]
	# the source's packets from 0.5 s (after its start time) to 0.9 s, shifted by 0.5 s
	st=$(ffprobe -v error -show_entries format=start_time -of csv=p=0 "$CLIPS/clip.mp4")
	ffprobe -v error -select_streams a:0 -show_entries packet=pts_time -of csv=p=0 "$CLIPS/clip.mp4" |
		awk -v st="$st" '{ t = $1 - st - 0.5 } t >= 0 && t < 0.4 { printf "%.3f\n", t }' > want
	ffprobe -v error -select_streams a:0 -show_entries packet=pts_time -of csv=p=0 copy.mkv |
		awk '{ printf "%.3f\n", $1 }' > got
	[ "$(wc -l < want)" -ge 16 ]
	diff want got
}

@test "times: bad ones, --end with --duration or not after --start exit 2; --start past the end exits 1, no file" {
	run -2 --separate-stderr "$T" --start 1:2:x "$CLIPS/clip.mp4"
	[ "${stderr%%$'\n'*}" = "accel-transcode: --start: '1:2:x' is not a time: seconds, or [HH:]MM:SS[.ms]" ]
	run -2 --separate-stderr "$T" --duration 0 "$CLIPS/clip.mp4"
	[ "${stderr%%$'\n'*}" = "accel-transcode: --duration: '0' is not a time above 0: seconds, or [HH:]MM:SS[.ms]" ]
	run -2 --separate-stderr "$T" --end 1 --duration 1 "$CLIPS/clip.mp4"
	[ "${stderr%%$'\n'*}" = "accel-transcode: --end and --duration: give one of them" ]
	run -2 --separate-stderr "$T" --start 1 --end 0.5 "$CLIPS/clip.mp4"
	[ "${stderr%%$'\n'*}" = "accel-transcode: --end must come after --start" ]
	run -1 --separate-stderr "$T" --start 5 "$CLIPS/clip.mp4" -o late.mkv
	[ "$stderr" = "accel-transcode: $CLIPS/clip.mp4: no video frame at or after --start 5" ]
	[ ! -e late.mkv ]
}

@test "ffmpeg's single-dash words: one line naming our option, exit 2, nothing written" {
	check() {
		local want="$1"
		shift
		run -2 --separate-stderr "$T" "$@"
		[ "${stderr%%$'\n'*}" = "accel-transcode: $want" ] || { echo "$*: $stderr"; return 1; }
		[ "$(wc -l <<< "$stderr")" = 2 ]
		[ -z "$output" ]
	}
	check "-ss is ffmpeg's; use --start 1" -ss 1 "$CLIPS/clip.mp4"
	check "-crf is ffmpeg's; use --quality 23" "$CLIPS/clip.mp4" -crf 23 -o x.mkv
	check "-t is ffmpeg's; use --duration 00:00:05" -t 00:00:05 "$CLIPS/clip.mp4"
	check "-to is ffmpeg's; use --end 3" -to 3 "$CLIPS/clip.mp4"
	check "-c:v is ffmpeg's; use --to hevc" -c:v libx265 "$CLIPS/clip.mp4"
	check "-vcodec is ffmpeg's; use --to h264" -vcodec h264_nvenc "$CLIPS/clip.mp4"
	check "-c:a is ffmpeg's; use --audio opus" -c:a libopus "$CLIPS/clip.mp4"
	check "-an is ffmpeg's; use --audio none" -an "$CLIPS/clip.mp4"
	check "-b:v is ffmpeg's; use --bitrate 2M" -b:v 2M "$CLIPS/clip.mp4"
	check "-r is ffmpeg's; use --fps 30" -r 30 "$CLIPS/clip.mp4"
	check "-preset is ffmpeg's; use --preset slow" -preset slow "$CLIPS/clip.mp4"
	check "-pix_fmt is ffmpeg's; use --pix-fmt yuv444p" -pix_fmt yuv444p "$CLIPS/clip.mp4"
	check "-y is ffmpeg's; use -f" -y "$CLIPS/clip.mp4"
	check "-i is ffmpeg's; give the input as FILE: accel-transcode [options] $CLIPS/clip.mp4" -i "$CLIPS/clip.mp4" out.mkv
	check "-vf is ffmpeg's; use --scale 320x-2" -vf scale=320:-2 "$CLIPS/clip.mp4"
	check "-f is ffmpeg's; use --container mp4 (-f is --force here)" "$CLIPS/clip.mp4" -f mp4
	check "-hwaccel is ffmpeg's; use --hw cuda" -hwaccel cuda "$CLIPS/clip.mp4"
	check "-map is ffmpeg's; accel-transcode has no equivalent (it writes the best video stream and its audio)" -map 0 "$CLIPS/clip.mp4"
	[ -z "$(ls -A)" ]
}

@test "the same letters as our own options keep their meaning: -t FORMAT, -c NAME, -vf FILE, -f, -s" {
	"$T" -t hevc -c nut -s 80x-2 --duration 0.2 "$CLIPS/clip.mp4" > a.nut
	[ "$(ffprobe -v error -select_streams v:0 -show_entries stream=codec_name,width,height -of csv=p=0 a.nut)" = "hevc,80,60" ]
	run -0 --separate-stderr "$T" -vf --duration 0.2 "$CLIPS/clip.mp4" -o a.nut
	grep -q '^accel-transcode: filter graph: ' <<< "$stderr"
	[ "$(frames a.nut)" = 5 ]
}

@test "the container follows -o's extension (FFmpeg's guess); .webm is VP9 and Opus; .y4m frames; others exit 2" {
	# (MP4 and QuickTime are told apart by their brand)
	for x in avi:avi mov:qt m4v:isom mp4:isom ts:mpegts m2ts:mpegts nut:nut mkv:matroska,webm; do
		"$T" --duration 0.4 "$CLIPS/clip.mp4" -o "out.${x%%:*}"
		got=$(ffprobe -v error -show_entries format=format_name:format_tags=major_brand -of default=nw=1:nk=1 "out.${x%%:*}" |
			sed 's/^mov,mp4.*//; s/ *$//' | paste -sd '')
		[ "$got" = "${x#*:}" ] || { echo "$x: $got"; return 1; }
		[ "$(frames "out.${x%%:*}")" = 10 ]
	done
	"$T" --duration 0.4 "$CLIPS/clip.mp4" -o out.webm
	[ "$(ffprobe -v error -show_entries stream=codec_name -of csv=p=0 out.webm | sort | paste -sd,)" = "opus,vp9" ]
	"$T" --duration 0.4 "$CLIPS/clip.mp4" -o out.y4m
	head -c 9 out.y4m | grep -qx YUV4MPEG2
	run -2 --separate-stderr "$T" "$CLIPS/clip.mp4" -o out.flv
	[ "${stderr%%$'\n'*}" = "accel-transcode: -o out.flv: FFmpeg writes .flv with its flv muxer, not one of this program's; use .mkv, .mp4, .mov, .webm, .ts, .nut or .avi, or --container" ]
	run -2 --separate-stderr "$T" --to h264 "$CLIPS/clip.mp4" -o out2.y4m
	[ "${stderr%%$'\n'*}" = "accel-transcode: -o out2.y4m: YUV4MPEG2 holds raw frames, not h264; use --to y4m" ]
	run -2 --separate-stderr "$T" --to h264 "$CLIPS/clip.mp4" -o out2.webm
	[ "$stderr" = "accel-transcode: h264 cannot go in a webm container; choose another --container" ]
	[ ! -e out.flv ] && [ ! -e out2.y4m ] && [ ! -e out2.webm ]
	# --container wins over the extension
	"$T" --duration 0.4 --container nut "$CLIPS/clip.mp4" -o x.avi
	[ "$(ffprobe -v error -show_entries format=format_name -of csv=p=0 x.avi)" = nut ]
}

@test "--scale W x -2 as ffmpeg's scale=W:-2 (the aspect kept, the side even), pixel for pixel" {
	"$T" --scale 90x-2 --duration 0.4 --to rawvideo "$CLIPS/clip.mp4" > ours.yuv
	ffraw -t 0.4 -i "$CLIPS/clip.mp4" -vf scale=90:-2 > ref.yuv
	[ "$(stat -c %s ref.yuv)" = $(( 90 * 68 * 3 / 2 * 10 )) ]
	cmp ours.yuv ref.yuv
	"$T" --scale -2x50 --duration 0.4 "$CLIPS/clip.mp4" -o s.mkv
	[ "$(ffprobe -v error -show_entries stream=width,height -select_streams v -of csv=p=0 s.mkv)" = "66,50" ]
	run -2 "$T" --scale -2x-2 "$CLIPS/clip.mp4"
}

@test "sizes the encoder refuses: a line naming the size and the --scale that fits, exit 2; AV1 under 64x64 on libaom" {
	run -2 --separate-stderr "$T" --scale 161x120 "$CLIPS/clip.mp4" -o odd.mkv
	[ "$stderr" = "accel-transcode: --to h264: width 161 is odd: yuv420p needs even widths; use --scale 160x-2" ]
	run -2 --separate-stderr "$T" --to hevc --scale 160x121 "$CLIPS/clip.mp4" -o odd.mkv
	[ "$stderr" = "accel-transcode: --to hevc: height 121 is odd: yuv420p needs even heights; use --scale -2x120" ]
	[ ! -e odd.mkv ]
	# the same size in 4:4:4 is whole
	"$T" --scale 161x121 --pix-fmt yuv444p --duration 0.2 "$CLIPS/clip.mp4" -o odd.mkv
	[ "$(ffprobe -v error -show_entries stream=width,height -select_streams v -of csv=p=0 odd.mkv)" = "161,121" ]
	run -0 --separate-stderr "$T" -v --to av1 --scale 48x36 --duration 0.2 "$CLIPS/clip.mp4" -o small.mkv
	grep -Eq '^accel-transcode: encode on +[a-z0-9.:]+ +libaom-av1 ' <<< "$stderr"
	[ "$(frames small.mkv)" = 5 ]
}
