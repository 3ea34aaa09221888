#!/bin/sh
# OCR with two accel-infer runs chained: PaddleOCR's text detector (DB)
# finds the boxes of text in the image (--decode db, JSON lines), the
# recogniser reads each box cut from the image and scaled to 48 pixels
# high (--crops, --decode ctc), and jq prints the text, one line per box,
# top to bottom. Without IMAGE it renders two lines of text with ffmpeg's drawtext
# filter and reads those. The models come from `make deps` (the build
# folder's deps/models/ocr) or the folder $ACCEL_OCR_MODELS.
#   sh examples/ocr.sh [IMAGE]
set -eu
# The programs: those in $ACCEL_BUILD (a folder) when set, else those of the
# build folder beside this script when it holds them, else those in $PATH.
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${ACCEL_BUILD:-}" ]; then
	PATH="$(cd "$ACCEL_BUILD" && pwd):$PATH"
elif [ -x "$here/../build/accel-detect" ]; then
	PATH="$here/../build:$PATH"
fi
models=${ACCEL_OCR_MODELS:-$(dirname "$(command -v accel-infer)")/deps/models/ocr}
if [ ! -f "$models/ch_PP-OCRv4_det_infer.onnx" ]; then
	echo "ocr.sh: no OCR models in $models: run make deps, or set ACCEL_OCR_MODELS" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
img=${1:-}
if [ -z "$img" ]; then
	img="$tmp/text.png"
	font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
	ffmpeg -loglevel error -f lavfi -i color=c=white:s=480x200 -frames:v 1 -vf \
		"drawtext=fontfile=$font:text='ACCEL 2026':fontsize=40:x=30:y=30,drawtext=fontfile=$font:text='hello world':fontsize=28:x=200:y=130" \
		"$img"
fi
# The detector: sides of multiples of 32, ImageNet's mean and deviation on
# B,G,R (PaddleOCR's det preprocessing); the recogniser: 48 pixels high,
# values in [-1, 1] (its rec preprocessing).
# The boxes go through a file, so that a detector that fails stops the
# script (sh has no pipefail); `... --decode db IMAGE | accel-infer ...
# --crops - IMAGE` is the same chain in one pipe.
accel-infer -q -m "$models/ch_PP-OCRv4_det_infer.onnx" --align 32 \
	--mean 0.485,0.456,0.406 --std 0.229,0.224,0.225 --bgr --decode db -o "$tmp/boxes.jsonl" "$img"
accel-infer -q -m "$models/ch_PP-OCRv4_rec_infer.onnx" --resize 0x48 --mean 0.5 --std 0.5 --bgr \
	--decode ctc --labels "$models/ppocr_keys_v1.txt" --crops "$tmp/boxes.jsonl" -o "$tmp/lines.jsonl" "$img"
jq -r .text "$tmp/lines.jsonl"
