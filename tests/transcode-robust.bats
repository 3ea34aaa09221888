#!/usr/bin/env bats
# accel-transcode: per-stage routing and fallback, progress, and what it
# does with bad input and with readers that go away or signals.

bats_require_minimum_version 1.5.0

load lib/common

setup_file() {
	export CLIPS="$BATS_FILE_TMPDIR/clips"
	mkdir -p "$CLIPS"
	cd "$CLIPS"
	ffmpeg -v error -f lavfi -i testsrc2=size=160x120:rate=25:duration=2 -f lavfi -i sine=frequency=440:duration=2 \
		-c:v libx264 -preset ultrafast -g 25 -pix_fmt yuv420p -c:a aac -shortest -f mpegts clip.ts
}

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	T="$ROOT/build/accel-transcode"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
}

aprobe_codec() {
	ffprobe -v error -select_streams a:0 -show_entries stream=codec_name -of csv=p=0 "$1" | head -n 1
}

frames() {
	ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$1" | head -n 1
}

# The tests of fallback need a host without a usable CUDA video engine.
no_cuda() {
	if "$ROOT/build/accel-detect" --json 2>/dev/null |
		jq -e '[.devices[].apis[]? | select(.name == "nvdec" and .ok)] | length > 0' > /dev/null; then
		skip "this host has NVDEC"
	fi
}

@test "--hw cuda without a CUDA device: one line, then every stage in software" {
	no_cuda
	run -0 --separate-stderr sh -c "'$T' --hw cuda '$CLIPS/clip.ts' > out.mkv"
	[ "${#stderr_lines[@]}" = 1 ]
	[[ "$stderr" == "accel-transcode: warning: --hw cuda: no cuda device ("*"); decoding and encoding in software" ]]
	[ "$(frames out.mkv)" = 50 ]
}

@test "--hw cuda --fallback none: exit 1 with the reason, no output file" {
	no_cuda
	run -1 --separate-stderr "$T" --hw cuda --fallback none "$CLIPS/clip.ts" -o out.mkv
	[[ "$stderr" == "accel-transcode: --hw cuda: no cuda device ("*") (--fallback none)" ]]
	[ ! -e out.mkv ]
	# --hw none never looks for hardware: no line at all
	run -0 --separate-stderr "$T" --hw none --fallback none "$CLIPS/clip.ts" -o out.mkv
	[ -z "$stderr" ]
	[ "$(frames out.mkv)" = 50 ]
}

@test "-v: the route of each stage, then what ran where with frame counts and times" {
	run -0 --separate-stderr sh -c "'$T' -v --hw none --scale 80x60 '$CLIPS/clip.ts' > out.mkv"
	grep -q '^accel-transcode: route for decode (--hw none):$' <<< "$stderr"
	grep -q '^accel-transcode: route for filter (--hw none):$' <<< "$stderr"
	grep -q '^accel-transcode: route for encode (--hw none):$' <<< "$stderr"
	grep -Eq '^accel-transcode: decode on +[a-z0-9.:]+ +h264 +50 frames, [0-9.]+ s$' <<< "$stderr"
	grep -Eq '^accel-transcode: filter on +[a-z0-9.:]+ +scale=80:60:flags=bicubic,format=pix_fmts=yuv420p +50 frames' <<< "$stderr"
	grep -Eq '^accel-transcode: encode on +[a-z0-9.:]+ +libx264 +50 frames' <<< "$stderr"
	# --hw auto lists each hardware type with the reason it was left out
	no_cuda
	run -0 --separate-stderr sh -c "'$T' -v '$CLIPS/clip.ts' > out.mkv"
	grep -Eq '^  -  cuda +left out: no cuda device' <<< "$stderr"
}

@test "--progress-json: one JSON object per line on stderr, the last one done with every frame" {
	run -0 --separate-stderr sh -c "'$T' --progress-json '$CLIPS/clip.ts' > out.mkv"
	last=$(printf '%s\n' "$stderr" | tail -n 1)
	printf '%s\n' "$stderr" | jq -e -s 'all(.[]; has("frames") and has("fps") and has("speed") and has("bitrate_kbps") and has("size") and has("eta"))'
	jq -e '.done == true and .frames == 50 and .time > 1.9 and .duration > 1.9 and .size > 1000' <<< "$last"
	[ "$(jq .size <<< "$last")" = "$(stat -c %s out.mkv)" ]
}

@test "damaged packets are counted and skipped; --strict exits 3; the output stays valid" {
	cp "$CLIPS/clip.ts" bad.ts
	# overwrite 188-byte TS packets in the middle with noise
	size=$(stat -c %s bad.ts)
	dd if=/dev/urandom of=bad.ts bs=188 seek=$(( size / 188 / 2 )) count=20 conv=notrunc status=none
	run -0 --separate-stderr sh -c "'$T' --audio none bad.ts > out.mkv"
	[[ "$stderr" =~ ^accel-transcode:\ warning:\ bad.ts:\ [0-9]+\ undecodable\ or\ damaged\ packets\ skipped$ ]]
	n=$(frames out.mkv)
	[ "$n" -ge 30 ]
	run -3 --separate-stderr "$T" --strict --audio none bad.ts -o strict.mkv
	[[ "$stderr" == "accel-transcode: bad.ts: "*"(--strict)" ]]
	[ ! -e strict.mkv ]
}

@test "truncated input: what was there is transcoded, the container is complete" {
	head -c $(( $(stat -c %s "$CLIPS/clip.ts") / 2 )) "$CLIPS/clip.ts" > half.ts
	cat half.ts | "$T" > out.mkv
	n=$(frames out.mkv)
	[ "$n" -ge 15 ] && [ "$n" -le 30 ]
	ffmpeg -v error -xerror -i out.mkv -f null -
}

@test "a reader that goes away (SIGPIPE): quiet exit 0" {
	run -0 --separate-stderr bash -c "'$T' --to rawvideo '$CLIPS/clip.ts' | head -c 1000 > /dev/null; exit \${PIPESTATUS[0]}"
	[ -z "$stderr" ]
	run -0 --separate-stderr bash -c "'$T' '$CLIPS/clip.ts' | head -c 100 > /dev/null; exit \${PIPESTATUS[0]}"
	[ -z "$stderr" ]
}

@test "SIGTERM while writing to stdout: the container is finalized, then the signal ends the run" {
	mkfifo in.fifo
	# all of the clip, then the input stays open
	( cat "$CLIPS/clip.ts"; sleep 20 ) > in.fifo &
	feeder=$!
	"$T" < in.fifo > out.mkv &
	pid=$!
	sleep 2
	kill -TERM "$pid"
	st=0
	wait "$pid" || st=$?
	kill "$feeder" 2>/dev/null || true
	[ "$st" = 143 ]
	[ "$(frames out.mkv)" -ge 40 ]
	ffmpeg -v error -xerror -i out.mkv -f null -
}

@test "SIGTERM with -o FILE: no file is left" {
	mkfifo in.fifo
	( cat "$CLIPS/clip.ts"; sleep 20 ) > in.fifo &
	feeder=$!
	"$T" -o out.mkv < in.fifo &
	pid=$!
	sleep 1.5
	kill -TERM "$pid"
	st=0
	wait "$pid" || st=$?
	kill "$feeder" 2>/dev/null || true
	[ "$st" = 143 ]
	[ -z "$(ls -A | grep -v in.fifo)" ]
}

@test "the decoder failing mid-stream (ACCEL_FAULT) reopens from the last keyframe: the same frames, one line" {
	# (the rule names the backend: on a host with a hardware decoder, its
	# engine fails; here the software one, reopened in software; @decode:
	# the decode stage only)
	"$T" "$CLIPS/clip.ts" --to rawvideo > ref.yuv
	run -0 --separate-stderr sh -c "ACCEL_FAULT='ffmpeg@decode:30' '$T' '$CLIPS/clip.ts' --to rawvideo > out.yuv"
	[[ "$stderr" =~ ^accel-transcode:\ warning:\ decode\ on\ [a-z0-9.:]+\ failed\ at\ video\ packet\ 30\ \(injected\ fault,\ ACCEL_FAULT\)\;\ reopened\ on\ [a-z0-9.:]+\ from\ the\ keyframe\ [0-9]+\ packets\ before:\ [1-9][0-9]*\ frames\ decoded\ again,\ none\ lost$ ]]
	cmp ref.yuv out.yuv
	# encoded output too: every frame, and the same frames as without the fault
	ACCEL_FAULT='ffmpeg@decode:3' "$T" "$CLIPS/clip.ts" --to h264 --audio none -q > f.mkv
	"$T" "$CLIPS/clip.ts" --to h264 --audio none > r.mkv
	[ "$(frames f.mkv)" = 50 ]
	[ "$(ffmpeg -v error -i f.mkv -f md5 -)" = "$(ffmpeg -v error -i r.mkv -f md5 -)" ]
	# --fallback none: the failure ends the run
	run -1 --separate-stderr sh -c "ACCEL_FAULT='ffmpeg@decode:30' '$T' --fallback none '$CLIPS/clip.ts' -o x.mkv"
	[ "$stderr" = "accel-transcode: decode on ${stderr#*decode on }" ]
	[[ "$stderr" == *"failed at video packet 30: injected fault, ACCEL_FAULT (--fallback none)" ]]
	[ ! -e x.mkv ]
	run -2 --separate-stderr sh -c "ACCEL_FAULT='ffmpeg:1,,2' '$T' '$CLIPS/clip.ts' > /dev/null"
	[[ "$stderr" == "accel-transcode: ACCEL_FAULT is malformed: "* ]]
}

# keyframe_at FILE N: whether the video packet of the Nth frame (in
# presentation order, from 0) is a keyframe.
keyframe_at() {
	ffprobe -v error -select_streams v:0 -show_entries packet=pts,flags -of csv=p=0 "$1" | sort -t, -k1,1n |
		sed -n "$(( $2 + 1 ))p" | grep -q ',K'
}

@test "the encoder failing mid-stream (ACCEL_FAULT @encode) reopens in software: every frame, headers in band, one line" {
	# lossless (-Q 0): the frames decoded are those of an undisturbed run
	for c in mkv mp4 mpegts nut; do
		"$T" -Q 0 --audio none "$CLIPS/clip.ts" -o "r.$c"
		run -0 --separate-stderr env ACCEL_FAULT='ffmpeg@encode:30' "$T" -Q 0 "$CLIPS/clip.ts" -o "f.$c"
		[[ "$stderr" =~ ^accel-transcode:\ warning:\ encode\ on\ [a-z0-9.:]+\ \(libx264\)\ failed\ at\ frame\ 30\ \(injected\ fault,\ ACCEL_FAULT\)\;\ reopened\ on\ [a-z0-9.:]+\ \(libx264(,\ headers\ in\ band)?\)\ from\ frame\ ([0-9]+):\ ([0-9]+)\ frames\ encoded\ again,\ none\ lost$ ]]
		from=${BASH_REMATCH[2]} n=${BASH_REMATCH[3]}
		[ $(( from + n )) = 31 ]
		[ "${#stderr_lines[@]}" = 1 ]
		[ "$(frames "f.$c")" = 50 ]
		# the whole file decodes without a word from ffmpeg
		run -0 --separate-stderr ffmpeg -v error -i "f.$c" -f null -
		[ -z "$stderr" ]
		[ "$(ffmpeg -v error -i "f.$c" -map 0:v -f md5 -)" = "$(ffmpeg -v error -i "r.$c" -map 0:v -f md5 -)" ]
		[ "$(aprobe_codec "f.$c")" = aac ]
		# the new encoder's stream starts with a keyframe
		keyframe_at "f.$c" "$from"
	done
	# -v: the stage's line says where it ran first
	run -0 --separate-stderr env ACCEL_FAULT='ffmpeg@encode:30' "$T" -v -Q 0 "$CLIPS/clip.ts" -o v.mkv
	grep -Eq "^accel-transcode: encode on +[a-z0-9.:]+ +libx264, headers in band +50 frames, [0-9.]+ s \(first on [a-z0-9.:]+ \(libx264\), which wrote $from frames\)$" <<< "$stderr"
	# fragmented MP4 on a pipe, HEVC, VP9: every frame, decodable
	ACCEL_FAULT='ffmpeg@encode:20' "$T" -q --container mp4 "$CLIPS/clip.ts" > frag.mp4
	[ "$(frames frag.mp4)" = 50 ]
	for to in hevc vp9; do
		ACCEL_FAULT='ffmpeg@encode:20' "$T" -q --to $to "$CLIPS/clip.ts" -o "$to.mkv"
		[ "$(frames "$to.mkv")" = 50 ]
		run -0 --separate-stderr ffmpeg -v error -i "$to.mkv" -f null -
		[ -z "$stderr" ]
	done
	ffmpeg -v error -xerror -i frag.mp4 -f null -
}

@test "the encoder failing: --fallback none exits 1; a rule without @STAGE fails decoder and encoder" {
	run -1 --separate-stderr env ACCEL_FAULT='ffmpeg@encode:30' "$T" --fallback none "$CLIPS/clip.ts" -o x.mkv
	[[ "$stderr" =~ ^accel-transcode:\ encode\ on\ [a-z0-9.:]+\ failed\ at\ frame\ 30:\ injected\ fault,\ ACCEL_FAULT\ \(--fallback\ none\)$ ]]
	[ ! -e x.mkv ]
	"$T" --to rawvideo "$CLIPS/clip.ts" > ref.yuv
	run -0 --separate-stderr env ACCEL_FAULT='ffmpeg:30' "$T" --to rawvideo "$CLIPS/clip.ts" -o out.yuv
	[ "${#stderr_lines[@]}" = 2 ]
	[[ "${stderr_lines[0]}" == "accel-transcode: warning: decode on "*"failed at video packet 30"* ]]
	[[ "${stderr_lines[1]}" == "accel-transcode: warning: encode on "*"(rawvideo) failed at frame 30"*"none lost" ]]
	cmp ref.yuv out.yuv
}

@test "--progress (or a terminal): frames, fps, speed, bit rate, size and ETA, redrawn in place only on a terminal" {
	# stderr a file: lines of their own, no escape code, no carriage return
	run -0 --separate-stderr "$T" --progress "$CLIPS/clip.ts" -o out.mkv
	[[ "$stderr" != *$'\e'* && "$stderr" != *$'\r'* ]]
	[[ "${stderr_lines[-1]}" =~ ^frame\ 50\ \ [0-9.]+\ fps\ \ [0-9.]+x\ \ [0-9]+\ kbit/s\ \ [0-9.]+\ MiB\ ETA\ 00:00$ ]]
	# on a terminal without --progress too (script gives it one), redrawn
	command -v script > /dev/null || skip "no script(1)"
	script -qec "'$T' '$CLIPS/clip.ts' -o tty.mkv" /dev/null > tty.log
	grep -q $'\r\e\\[Kframe 50 ' tty.log
	# --no-progress and -q silence it
	run -0 --separate-stderr "$T" --progress --no-progress "$CLIPS/clip.ts" -o q.mkv
	[ -z "$stderr" ]
	run -0 --separate-stderr "$T" -q --progress "$CLIPS/clip.ts" -o q2.mkv
	[ -z "$stderr" ]
}
