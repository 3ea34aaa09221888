#!/usr/bin/env bats
# accel-transcode end to end: inputs from files and pipes (MP4, fragmented
# MP4, MPEG-TS, HEVC and VP9), every --to and container, filters, audio,
# output files; results checked with ffprobe and against the ffmpeg program.
# Clips are made here with FFmpeg's lavfi sources (testsrc2 + sine).

bats_require_minimum_version 1.5.0

load lib/common

setup_file() {
	export CLIPS="$BATS_FILE_TMPDIR/clips"
	mkdir -p "$CLIPS"
	cd "$CLIPS"
	# 2 s, 160x120, 25 fps, H.264 + AAC; ffmpeg puts the MP4 index at the end.
	ffmpeg -v error -f lavfi -i testsrc2=size=160x120:rate=25:duration=2 -f lavfi -i sine=frequency=440:duration=2 \
		-c:v libx264 -preset ultrafast -g 25 -pix_fmt yuv420p -c:a aac -shortest clip.mp4
	ffmpeg -v error -i clip.mp4 -c copy -f mpegts clip.ts
	ffmpeg -v error -i clip.mp4 -c copy -movflags frag_keyframe+empty_moov -f mp4 frag.mp4
	ffmpeg -v error -f lavfi -i testsrc2=size=176x144:rate=25:duration=1 -c:v libx265 -preset ultrafast \
		-x265-params log-level=error -f matroska hevc.mkv
	ffmpeg -v error -f lavfi -i testsrc2=size=128x96:rate=25:duration=1 -c:v libvpx-vp9 -deadline realtime \
		-cpu-used 8 -f webm vp9.webm
	ffmpeg -v error -f lavfi -i sine=frequency=440:duration=1 -c:a aac audio.m4a
}

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	T="$ROOT/build/accel-transcode"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
}

# probe FILE ENTRIES: ffprobe's compact line(s) for the video stream.
vprobe() {
	# (MPEG-TS lists its streams twice: in the program and alone)
	ffprobe -v error -select_streams v:0 -count_frames -show_entries "stream=$2" -of csv=p=0 "$1" | head -n 1
}
aprobe() {
	ffprobe -v error -select_streams a:0 -show_entries stream=codec_name -of csv=p=0 "$1" | head -n 1
}
format() {
	ffprobe -v error -show_entries format=format_name -of default=nw=1:nk=1 "$1"
}

@test "MPEG-TS on stdin: H.264 in Matroska on stdout by default, every frame, audio copied" {
	"$T" < "$CLIPS/clip.ts" > out.mkv
	[ "$(vprobe out.mkv codec_name,width,height,nb_read_frames)" = "h264,160,120,50" ]
	[ "$(aprobe out.mkv)" = "aac" ]
	[ "$(format out.mkv)" = "matroska,webm" ]
	d=$(ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 out.mkv)
	[ "$d" = 50 ]
}

@test "fragmented MP4 on a pipe, to HEVC scaled with -1 keeping the aspect ratio" {
	cat "$CLIPS/frag.mp4" | "$T" --to hevc --scale 80x-1 > out.mkv
	[ "$(vprobe out.mkv codec_name,width,height,nb_read_frames)" = "hevc,80,60,50" ]
	[ "$(aprobe out.mkv)" = "aac" ]
}

@test "an MP4 with its index at the end on a pipe: one line suggesting a file argument, exit 1" {
	run -1 --separate-stderr sh -c "cat '$CLIPS/clip.mp4' | '$T' > out.mkv"
	[ "$stderr" = "accel-transcode: stdin: an MP4 with its index (moov) at the end cannot be read from a pipe; give the file as an argument" ]
	# the same file as an argument, and redirected (seekable), both work
	"$T" "$CLIPS/clip.mp4" > a.mkv
	"$T" < "$CLIPS/clip.mp4" > b.mkv
	[ "$(vprobe a.mkv nb_read_frames)" = 50 ]
	[ "$(vprobe b.mkv nb_read_frames)" = 50 ]
}

@test "-o FILE.mp4 is an ordinary MP4 (index written after the data); mp4 on a pipe is fragmented" {
	"$T" "$CLIPS/clip.ts" --to av1 --quality 45 --preset fast -o out.mp4
	[ "$(vprobe out.mp4 codec_name,width,height,nb_read_frames)" = "av1,160,120,50" ]
	[ "$(aprobe out.mp4)" = "aac" ]
	run ! grep -q moof out.mp4
	"$T" "$CLIPS/clip.ts" --container mp4 | cat > pipe.mp4
	grep -q moof pipe.mp4
	[ "$(vprobe pipe.mp4 codec_name,nb_read_frames)" = "h264,50" ]
	[ "$(aprobe pipe.mp4)" = "aac" ]
	dur=$(ffprobe -v error -show_entries format=duration -of csv=p=0 pipe.mp4)
	awk -v d="$dur" 'BEGIN { exit !(d > 1.95 && d < 2.1) }'
}

@test "--to vp9 with --fps 10 in Matroska; --container mpegts with --crop; nut" {
	"$T" "$CLIPS/clip.mp4" --to vp9 --fps 10 -T 1 > out.mkv
	[ "$(vprobe out.mkv codec_name,nb_read_frames)" = "vp9,20" ]
	[ "$(ffprobe -v error -select_streams v:0 -show_entries stream=r_frame_rate -of csv=p=0 out.mkv)" = "10/1" ]
	"$T" "$CLIPS/clip.mp4" --container mpegts --crop 64:48:8:4 > out.ts
	[ "$(vprobe out.ts codec_name,width,height,nb_read_frames)" = "h264,64,48,50" ]
	[ "$(format out.ts)" = "mpegts" ]
	[ "$(aprobe out.ts)" = "aac" ]
	"$T" "$CLIPS/clip.mp4" --container nut --keyint 10 --deinterlace > out.nut
	[ "$(vprobe out.nut codec_name,nb_read_frames)" = "h264,50" ]
	# --keyint 10: a keyframe every 10 frames
	k=$(ffprobe -v error -select_streams v:0 -show_entries packet=flags -of csv=p=0 out.nut | grep -c K)
	[ "$k" = 5 ]
}

@test "--audio none, opus and aac; copy refused where the container cannot hold it" {
	"$T" "$CLIPS/clip.mp4" --audio none > none.mkv
	[ -z "$(aprobe none.mkv)" ]
	"$T" "$CLIPS/clip.mp4" --audio opus > opus.mkv
	[ "$(aprobe opus.mkv)" = "opus" ]
	"$T" "$CLIPS/clip.mp4" --audio aac --container nut > aac.nut
	[ "$(aprobe aac.nut)" = "aac" ]
	n=$(ffprobe -v error -select_streams a:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 opus.mkv)
	[ "$n" -ge 95 ]
	run -2 --separate-stderr "$T" "$CLIPS/clip.mp4" --to rawvideo --audio aac
	[ "$stderr" = "accel-transcode: --audio aac: --to rawvideo has no audio" ]
}

@test "HEVC and VP9 inputs decode; frame counts and sizes kept" {
	"$T" "$CLIPS/hevc.mkv" > h.mkv
	[ "$(vprobe h.mkv codec_name,width,height,nb_read_frames)" = "h264,176,144,25" ]
	"$T" "$CLIPS/vp9.webm" --to hevc > v.mkv
	[ "$(vprobe v.mkv codec_name,width,height,nb_read_frames)" = "hevc,128,96,25" ]
}

@test "--quality is CRF: a lower number gives a larger file; --bitrate sets the rate" {
	"$T" "$CLIPS/clip.mp4" --audio none --quality 10 > q10.mkv
	"$T" "$CLIPS/clip.mp4" --audio none --quality 45 > q45.mkv
	[ "$(stat -c %s q10.mkv)" -gt "$(( $(stat -c %s q45.mkv) * 3 ))" ]
	"$T" "$CLIPS/clip.mp4" --audio none --bitrate 50k > b.mkv
	# 2 s at 50 kbit/s is about 12.5 kB; allow for the encoder's slack
	[ "$(stat -c %s b.mkv)" -lt 40000 ]
}

@test "--to rawvideo is the same bytes as ffmpeg -f rawvideo; --to y4m is read by ffprobe" {
	"$T" "$CLIPS/clip.mp4" --to rawvideo > ours.yuv
	ffmpeg -v error -i "$CLIPS/clip.mp4" -f rawvideo - > ref.yuv
	[ "$(stat -c %s ours.yuv)" = $(( 160 * 120 * 3 / 2 * 50 )) ]
	cmp ours.yuv ref.yuv
	"$T" "$CLIPS/clip.mp4" --to rawvideo --scale 80x60 --pix-fmt rgb24 > ours.rgb
	ffmpeg -v error -i "$CLIPS/clip.mp4" -vf scale=80:60 -pix_fmt rgb24 -f rawvideo - > ref.rgb
	cmp ours.rgb ref.rgb
	"$T" "$CLIPS/clip.mp4" --to y4m > out.y4m
	head -c 9 out.y4m | grep -q '^YUV4MPEG2'
	[ "$(vprobe out.y4m width,height,nb_read_frames)" = "160,120,50" ]
}

@test "pixel formats: the encoder's own when it takes the input's, else what the ffmpeg program picks; --pix-fmt it refuses exits 2" {
	# 4:4:4, 4:2:2 and 10-bit inputs (FFV1 keeps them), RGB, and nv12
	for p in yuv444p yuv422p yuv420p10le rgb24 nv12; do
		ffmpeg -v error -f lavfi -i testsrc2=size=64x48:rate=25:duration=0.4,format=$p -c:v ffv1 -f nut in.nut
		"$T" --audio none in.nut -o ours.mkv
		ffmpeg -v error -i in.nut -c:v libx264 -f matroska theirs.mkv
		[ "$(vprobe ours.mkv pix_fmt)" = "$(vprobe theirs.mkv pix_fmt)" ]
		"$T" --to hevc --audio none in.nut -f -o ours.mkv
		ffmpeg -v error -y -i in.nut -c:v libx265 -x265-params log-level=error -f matroska theirs.mkv
		[ "$(vprobe ours.mkv pix_fmt)" = "$(vprobe theirs.mkv pix_fmt)" ]
		rm -f in.nut ours.mkv theirs.mkv
	done
	"$T" --pix-fmt yuv444p "$CLIPS/clip.mp4" -o x.mkv
	[ "$(vprobe x.mkv pix_fmt)" = yuv444p ]
	run -2 --separate-stderr "$T" --pix-fmt rgb24 "$CLIPS/clip.mp4" -o y.mkv
	[ "$stderr" = "accel-transcode: --pix-fmt rgb24: libx264 takes yuv420p, yuvj420p, yuv422p, yuvj422p, yuv444p, yuvj444p, nv12, nv16, nv21, yuv420p10le, yuv422p10le, yuv444p10le, nv20le, gray, gray10le" ]
	[ ! -e y.mkv ]
	# -v names the filter graph and where it runs
	run -0 --separate-stderr "$T" -v --hw none --scale 80x-1 "$CLIPS/clip.mp4" -o z.mkv
	grep -qx 'accel-transcode: filter graph: scale=80:-2:flags=bicubic,format=pix_fmts=yuv420p (in software: libavfilter, swscale)' <<< "$stderr"
}

@test "-o FILE: an existing file needs -f; a failed run leaves no file" {
	echo keep > out.mkv
	run -1 --separate-stderr "$T" "$CLIPS/clip.mp4" -o out.mkv
	[ "$stderr" = "accel-transcode: out.mkv already exists; use -f to overwrite it" ]
	[ "$(cat out.mkv)" = keep ]
	"$T" "$CLIPS/clip.mp4" -o out.mkv -f
	[ "$(vprobe out.mkv nb_read_frames)" = 50 ]
	head -c 3000 /dev/urandom > junk.bin
	run -3 "$T" junk.bin -o new.mkv
	[ ! -e new.mkv ]
	[ -z "$(ls -A | grep -v -e '^out.mkv$' -e '^junk.bin$')" ]
}

@test "no video stream: exit 3 with one line; usage errors exit 2" {
	run -3 --separate-stderr "$T" "$CLIPS/audio.m4a" -o out.mkv
	[ "$stderr" = "accel-transcode: $CLIPS/audio.m4a: no video stream" ]
	[ ! -e out.mkv ]
	run -2 "$T" --scale 0x10 "$CLIPS/clip.mp4"
	run -2 "$T" --to gif "$CLIPS/clip.mp4"
	run -2 "$T" --quality 60 "$CLIPS/clip.mp4"
	run -2 "$T" --to npy --quality 20 "$CLIPS/clip.mp4"
	run -2 --separate-stderr "$T" --container mp4 --to rawvideo "$CLIPS/clip.mp4"
	[ "$stderr" = "accel-transcode: rawvideo cannot go in a mp4 container; choose another --container" ]
}

# npy_check OURS REF H W LAYOUT: every .npy array of OURS, in order, equals
# the frames of the rgb24 file REF (H x W x 3 each) exactly; LAYOUT hwc
# (uint8) or nchw (1 x 3 x H x W float32 = value / 255).
npy_check() {
	/usr/bin/python3 - "$@" <<'PY'
import sys
import numpy as np
ours, ref, h, w, layout = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
arrays = []
with open(ours, 'rb') as f:
    while f.peek(1):
        arrays.append(np.load(f))
frames = np.fromfile(ref, np.uint8).reshape(-1, h, w, 3)
assert len(arrays) == len(frames) == 50, (len(arrays), len(frames))
for a, r in zip(arrays, frames):
    if layout == 'hwc':
        assert a.dtype == np.uint8 and a.shape == (h, w, 3), (a.dtype, a.shape)
        assert np.array_equal(a, r)
    else:
        assert a.dtype == np.float32 and a.shape == (1, 3, h, w), (a.dtype, a.shape)
        assert np.array_equal(a, (r.transpose(2, 0, 1)[None].astype(np.float32) / np.float32(255)))
PY
}

@test "--to npy: one H x W x 3 uint8 array per frame, pixel for pixel ffmpeg's rgb24 frames" {
	"$T" "$CLIPS/clip.mp4" --to npy --scale 64x48 > frames.npy
	ffmpeg -v error -i "$CLIPS/clip.mp4" -vf scale=64:48 -pix_fmt rgb24 -f rawvideo - > ref.rgb
	npy_check frames.npy ref.rgb 48 64 hwc
	# without --scale: the decoded size, converted as ffmpeg converts it
	cat "$CLIPS/clip.ts" | "$T" --to npy > full.npy
	ffmpeg -v error -i "$CLIPS/clip.ts" -pix_fmt rgb24 -f rawvideo - > full.rgb
	npy_check full.npy full.rgb 120 160 hwc
}

@test "--to npy --layout nchw --normalize: 1 x 3 x H x W float32 in [0, 1]; gray is one channel" {
	"$T" "$CLIPS/clip.mp4" --to npy --layout nchw --normalize --scale 32x24 > n.npy
	ffmpeg -v error -i "$CLIPS/clip.mp4" -vf scale=32:24 -pix_fmt rgb24 -f rawvideo - > ref.rgb
	npy_check n.npy ref.rgb 24 32 nchw
	"$T" "$CLIPS/clip.mp4" --to npy --pix-fmt gray --scale 32x24 > g.npy
	/usr/bin/python3 -c "
import numpy as np
f = open('g.npy', 'rb'); a = np.load(f)
assert a.shape == (24, 32, 1) and a.dtype == np.uint8, a.shape"
	run -2 "$T" "$CLIPS/clip.mp4" --to npy --pix-fmt yuv420p
	run -2 "$T" "$CLIPS/clip.mp4" --to npy --normalize
}

# peak_threads CMD...: run CMD in the background, print the most threads
# it had and how many of them ran under real-time scheduling (FF, RR).
peak_threads() {
	"$@" > /dev/null &
	local pid=$! max=0 rt=0 n r
	while kill -0 "$pid" 2>/dev/null; do
		n=$(awk '/^Threads:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
		r=$(ps -L -o cls= -p "$pid" 2>/dev/null | grep -c -e FF -e RR || true)
		[ -n "$n" ] && [ "$n" -gt "$max" ] && max=$n
		[ -n "$r" ] && [ "$r" -gt "$rt" ] && rt=$r
		sleep 0.05
	done
	wait "$pid"
	echo "$max $rt"
}

@test "-T caps the thread pools of x265 and SVT-AV1; SVT-AV1's threads are not real-time" {
	ffmpeg -v error -f lavfi -i testsrc2=size=640x360:rate=25:duration=2 -c:v libx264 -preset ultrafast big.mp4
	read -r max rt < <(peak_threads "$T" big.mp4 --to hevc -T 1)
	[ "$max" -gt 0 ] && [ "$max" -le 5 ] && [ "$rt" = 0 ]
	read -r max rt < <(peak_threads "$T" big.mp4 --to av1 -T 1)
	# SVT-AV1 1.4 starts 17 threads for one logical processor (about 90 for two)
	[ "$max" -gt 0 ] && [ "$max" -le 24 ] && [ "$rt" = 0 ]
}

@test "accel-transcode --to npy | accel-infer: the frames feed a model (mean per channel), as numpy computes it" {
	[ -f "$ROOT/build/plugins/accel_onnxruntime.so" ] || skip "no onnxruntime backend (make deps)"
	/usr/bin/python3 - <<'PY'
import onnx
from onnx import helper, TensorProto
x = helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 3, 24, 32])
y = helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 3])
g = helper.make_graph([helper.make_node('ReduceMean', ['x'], ['y'], axes=[2, 3], keepdims=0)], 'mean', [x], [y])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
m.ir_version = 7
onnx.save(m, 'mean.onnx')
PY
	cat "$CLIPS/clip.ts" | "$T" --to npy --scale 32x24 --layout nchw --normalize | "$ROOT/build/accel-infer" -m mean.onnx > means.npy
	ffmpeg -v error -i "$CLIPS/clip.ts" -vf scale=32:24 -pix_fmt rgb24 -f rawvideo - > ref.rgb
	/usr/bin/python3 - <<'PY'
import numpy as np
f = open('means.npy', 'rb')
got = []
while f.peek(1):
    got.append(np.load(f))
ref = np.fromfile('ref.rgb', np.uint8).reshape(-1, 24, 32, 3).astype(np.float32) / np.float32(255)
want = ref.mean(axis=(1, 2))
assert len(got) == len(want) == 50, (len(got), len(want))
for g, w in zip(got, want):
    assert g.shape == (1, 3) and np.allclose(g[0], w, rtol=1e-5, atol=1e-6), (g, w)
PY
}
