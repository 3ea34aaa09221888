#!/usr/bin/env bats
# accel-transcode's audio: copied only where the container carries it as
# audio (else encoded, or refused with --audio copy), and encoded from any
# codec to any, whatever their frame sizes (MP3 1152, AAC 1024, Opus 960,
# PCM and FLAC of their own), with the samples and their timing kept.

bats_require_minimum_version 1.5.0

load lib/common

setup_file() {
	export CLIPS="$BATS_FILE_TMPDIR/clips"
	mkdir -p "$CLIPS"
	cd "$CLIPS"
	# 2 s of 160x120 H.264 and a 440 Hz stereo tone, in Matroska
	# (timestamps in milliseconds: an MP3 frame is 26.12 ms)
	for a in pcm_s16le flac libvorbis aac libopus libmp3lame; do
		ffmpeg -v error -f lavfi -i testsrc2=size=160x120:rate=25:duration=2 \
			-f lavfi -i sine=frequency=440:sample_rate=44100:duration=2 \
			-c:v libx264 -preset ultrafast -c:a $a -ac 2 "$a.mkv"
	done
}

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	T="$ROOT/build/accel-transcode"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
}

# acodec FILE: the codec of the audio stream, as ffprobe reads it
acodec() {
	ffprobe -v error -select_streams a:0 -show_entries stream=codec_name -of csv=p=0 "$1" | head -n 1
}

# tone FILE: the audio's length in seconds and its strongest frequency
# (Hz), decoded by ffmpeg; then whether its packets' timestamps rise.
tone() {
	ffmpeg -v error -i "$1" -map a:0 -ac 1 -ar 48000 -f f32le - |
		/usr/bin/python3 -c '
import sys, numpy as np
x = np.frombuffer(sys.stdin.buffer.read(), "<f4")
f = np.abs(np.fft.rfft(x * np.hanning(len(x))))
print("%.2f %d" % (len(x) / 48000, round(np.argmax(f) * 48000 / len(x))))'
	ffprobe -v error -select_streams a:0 -show_entries packet=pts -of csv=p=0 "$1" |
		awk -F, '$1 == "" { next } n++ && $1 <= last { bad = 1 } { last = $1 } END { print bad ? "backwards" : "rising" }'
}

@test "the default --audio re-encodes what MPEG-TS cannot carry as audio (PCM, FLAC, Vorbis) instead of copying it as data" {
	for a in pcm_s16le flac libvorbis; do
		"$T" -q -o out.ts "$CLIPS/$a.mkv"
		[ "$(acodec out.ts)" = aac ]
		run tone out.ts
		[[ "${lines[0]}" =~ ^(1\.9[5-9]|2\.0[0-9])\ 440$ ]]
		[ "${lines[1]}" = rising ]
		rm out.ts
		run -2 --separate-stderr "$T" -a copy -o out.ts "$CLIPS/$a.mkv"
		[ "$stderr" = "accel-transcode: --audio copy: MPEG-TS has no audio stream type for ${a#lib}; use --audio aac, opus or none" ]
		[ ! -e out.ts ]
	done
	# what TS carries is copied: the packets are the input's
	for a in aac libopus libmp3lame; do
		"$T" -q -o out.ts "$CLIPS/$a.mkv"
		want=${a#lib}; want=${want/mp3lame/mp3}
		[ "$(acodec out.ts)" = "$want" ]
		rm out.ts
	done
}

@test "FLAC into MP4 (experimental in FFmpeg 5.1): re-encoded by default, --audio copy refused with FFmpeg's reason" {
	"$T" -q -o out.mp4 "$CLIPS/flac.mkv"
	[ "$(acodec out.mp4)" = aac ]
	run tone out.mp4
	[[ "${lines[0]}" =~ ^(1\.9[5-9]|2\.0[0-9])\ 440$ ]]
	"$T" -v -o v.mp4 "$CLIPS/flac.mkv" 2> log
	grep -qx "accel-transcode: audio: not copied (FFmpeg's mp4 muxer refuses flac: Experimental feature): encoded to aac" log
	run -2 --separate-stderr "$T" -a copy -o c.mp4 "$CLIPS/flac.mkv"
	[ "$stderr" = "accel-transcode: --audio copy: FFmpeg's mp4 muxer refuses flac: Experimental feature; use --audio aac, opus or none" ]
	[ ! -e c.mp4 ]
	# Matroska carries FLAC and PCM: copied
	"$T" -q -o out.mkv "$CLIPS/flac.mkv"
	[ "$(acodec out.mkv)" = flac ]
	"$T" -q -o pcm.mkv "$CLIPS/pcm_s16le.mkv"
	[ "$(acodec pcm.mkv)" = pcm_s16le ]
}

@test "--audio aac and opus from every codec: frame sizes differ, samples and timing are kept" {
	for a in pcm_s16le flac libvorbis aac libopus libmp3lame; do
		for m in aac opus; do
			"$T" -q -a $m -o "$a-$m.mkv" "$CLIPS/$a.mkv"
			[ "$(acodec "$a-$m.mkv")" = $m ]
			run tone "$a-$m.mkv"
			echo "$a -> $m: ${lines[*]}"
			[[ "${lines[0]}" =~ ^(1\.9[5-9]|2\.0[0-9])\ 440$ ]]
			[ "${lines[1]}" = rising ]
		done
	done
}
