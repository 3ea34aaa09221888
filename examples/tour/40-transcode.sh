# Tour step (sourced by examples/tour.sh): accel-transcode on a 1-s clip
# made with FFmpeg's lavfi sources, its output checked with ffprobe, and
# frames handed to numpy.
step "accel-transcode: a 1-s testsrc2 clip, MPEG-TS on a pipe to HEVC, then frames as .npy"
ffmpeg -v error -f lavfi -i testsrc2=size=320x240:rate=25:duration=1 -f lavfi -i sine=frequency=440:duration=1 \
	-c:v libx264 -preset ultrafast -c:a aac -shortest -f mpegts "$work/clip.ts"
t0=$(now)
cat "$work/clip.ts" | accel-transcode -v --to hevc --scale 160x-1 2> "$work/log" > "$work/clip.mkv"
t1=$(now)
grep -E '^accel-transcode: (decode|filter|encode) on' "$work/log"
got=$(ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=codec_name,width,height,nb_read_frames \
	-of csv=p=0 "$work/clip.mkv")
audio=$(ffprobe -v error -select_streams a:0 -show_entries stream=codec_name -of csv=p=0 "$work/clip.mkv")
echo "ffprobe: video $got, audio $audio, in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s"
[ "$got" = "hevc,160,120,25" ] && [ "$audio" = aac ]
accel-transcode --to npy --scale 64x48 "$work/clip.ts" > "$work/frames.npy"
/usr/bin/python3 -c "
import numpy as np
f = open('$work/frames.npy', 'rb')
a = [np.load(f) for _ in range(25)]
assert not f.read(1) and all(x.shape == (48, 64, 3) and x.dtype == np.uint8 for x in a)
print('numpy: 25 frames of', a[0].shape, a[0].dtype)"
# an encoder failing at frame 10 (injected) is taken over in software: no frame lost
ACCEL_FAULT='ffmpeg@encode:10' accel-transcode -q --audio none "$work/clip.ts" > "$work/takeover.mkv"
n=$(ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$work/takeover.mkv")
[ "$n" = 25 ] && [ -z "$(ffmpeg -v error -i "$work/takeover.mkv" -f null - 2>&1)" ]
echo "encoder failing at frame 10 (ACCEL_FAULT): taken over in software, $n frames, ffmpeg decodes them without error"
