#!/usr/bin/env bats
# The examples under examples/, each run as `sh PATH/example.sh` from a folder
# outside the tree (the programs found through the build folder beside the
# script, or $ACCEL_BUILD), their output checked. The tour (examples/tour.sh)
# runs in tests/install.bats, against the installed programs.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	cd "$BATS_TEST_TMPDIR"
	# no accel program in PATH: the examples find the build folder themselves
	export PATH=/usr/sbin:/usr/bin:/sbin:/bin
}

@test "examples/backup.sh from another folder: relative paths, the .sha256 beside the archive, restore checks it" {
	mkdir -p src/sub
	head -c 200000 /dev/urandom > src/a
	seq 1 5000 > src/sub/b
	age-keygen -o key.txt 2> /dev/null
	run -0 sh "$ROOT/examples/backup.sh" backup src out/b.tar.zst.age "$(age-keygen -y key.txt)"
	[ "$output" = "wrote out/b.tar.zst.age and out/b.tar.zst.age.sha256" ]
	[ "$(cat out/b.tar.zst.age.sha256)" = "$(cd out && sha256sum b.tar.zst.age)" ]
	[ ! -e out/b.tar.zst.age.sha256.tmp ]
	run -0 sh "$ROOT/examples/backup.sh" restore out/b.tar.zst.age key.txt dst
	[ "$output" = "restored into dst" ]
	diff -r src dst
	age -d -i key.txt out/b.tar.zst.age | zstd -dq | tar tf - | grep -qx './sub/b'
}

@test "examples/backup.sh: programs not found leave no archive checksum (exit 127, no empty .sha256)" {
	mkdir -p src bin
	echo x > src/a
	age-keygen -o key.txt 2> /dev/null
	cp "$ROOT/examples/backup.sh" .
	run -127 sh backup.sh backup src b.age "$(age-keygen -y key.txt)"
	[ ! -e b.age.sha256 ] && [ ! -e b.age.sha256.tmp ]
}

@test "examples/backup.sh run as sh examples/backup.sh from the tree's root, and with a relative ACCEL_BUILD" {
	mkdir -p src
	echo x > src/a
	age-keygen -o key.txt 2> /dev/null
	t=$PWD
	(cd "$ROOT" && sh examples/backup.sh backup "$t/src" "$t/b.age" "$(age-keygen -y "$t/key.txt")")
	[ "$(cat b.age.sha256)" = "$(sha256sum b.age)" ]
	ln -s "$ROOT/build" progs
	ACCEL_BUILD=progs run -0 sh "$ROOT/examples/backup.sh" restore b.age key.txt dst
	diff -r src dst
}

@test "examples/transcode-frames.sh from another folder: one (1, 3, 224, 224) array per frame, file or stdin" {
	ffmpeg -v error -f lavfi -i testsrc2=size=64x48:rate=5:duration=1 -c:v libx264 -preset ultrafast -f mpegts clip.ts
	run -0 sh "$ROOT/examples/transcode-frames.sh" clip.ts
	[ "${#lines[@]}" = 5 ]
	[[ "${lines[0]}" == "0 (1, 3, 224, 224) "* ]] && [[ "${lines[4]}" == "4 (1, 3, 224, 224) "* ]]
	run -0 sh -c "sh '$ROOT/examples/transcode-frames.sh' < clip.ts"
	[ "${#lines[@]}" = 5 ]
}

@test "examples/transcode-batch.sh from another folder: each clip to HEVC MP4, a failure listed and exit 1, a rerun skips what is done" {
	mkdir clips
	ffmpeg -v error -f lavfi -i testsrc2=size=64x48:rate=5:duration=1 -c:v libx264 -preset ultrafast -f mpegts clips/a.ts
	echo 'not a video' > clips/b.txt
	run -1 --separate-stderr sh "$ROOT/examples/transcode-batch.sh" clips out 2 1
	[ "$output" = "failed:
clips/b.txt" ]
	[[ "$stderr" == "accel-transcode: clips/b.txt: "* ]] && [ "${#stderr_lines[@]}" = 1 ]
	[ "$(ffprobe -v error -select_streams v:0 -show_entries stream=codec_name,width,height -of csv=p=0 out/a.ts.mp4)" = "hevc,64,48" ]
	rm clips/b.txt
	run -0 sh "$ROOT/examples/transcode-batch.sh" clips out 2 1
	[ "$output" = "done: 1 clips in out" ]
}

@test "examples/ocr.sh from another folder: the text of the image it renders, a line per box; an IMAGE given; no models" {
	[ -f "$ROOT/build/deps/models/ocr/ch_PP-OCRv4_det_infer.onnx" ] || skip "no OCR models: run make deps"
	run -0 sh "$ROOT/examples/ocr.sh"
	[ "$output" = "ACCEL 2026
hello world" ]
	ffmpeg -loglevel error -f lavfi -i color=c=white:s=320x64 -frames:v 1 -vf \
		"drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='pipeline 42':fontsize=32:x=20:y=14" line.png
	run -0 sh "$ROOT/examples/ocr.sh" line.png
	[ "$output" = "pipeline 42" ]
	ACCEL_OCR_MODELS=nowhere run -1 sh "$ROOT/examples/ocr.sh"
	[ "$output" = "ocr.sh: no OCR models in nowhere: run make deps, or set ACCEL_OCR_MODELS" ]
}
