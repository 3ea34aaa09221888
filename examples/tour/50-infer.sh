# Tour step (sourced by examples/tour.sh): accel-infer reads a line of text.
# ffmpeg renders it into a PNG; the PaddleOCR recogniser (from npm, in
# build/deps/models: make deps) reads it back through ONNX Runtime, decoding
# its output with greedy CTC; the step fails unless the text comes back whole.
ocr=${ACCEL_MODELS:-$root/build/deps/models}/ocr
step "accel-infer: the PaddleOCR recogniser reads a line rendered by ffmpeg"
if [ ! -f "$ocr/ch_PP-OCRv4_rec_infer.onnx" ] || ! accel-detect --routes onnx.run | grep -q ' onnxruntime\.cpu:cpu0 '; then
	echo "(no ONNX Runtime or OCR models: run make deps, then make)"
else
	text="Hello accel 2026"
	ffmpeg -loglevel error -f lavfi -i color=c=white:s=280x48 -frames:v 1 -y -vf \
		"drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='$text':fontsize=30:fontcolor=black:x=8:y=(h-th)/2" \
		"$work/line.png"
	accel-infer -m "$ocr/ch_PP-OCRv4_rec_infer.onnx" --info
	t0=$(now)
	accel-infer -m "$ocr/ch_PP-OCRv4_rec_infer.onnx" --resize 0x48 --mean 0.5 --std 0.5 --bgr \
		--decode ctc --labels "$ocr/ppocr_keys_v1.txt" "$work/line.png" > "$work/read.json"
	t1=$(now)
	read_text=$(jq -r .text "$work/read.json")
	echo "rendered: '$text'   read: '$read_text'   score: $(jq -r '.score * 1000 | floor / 1000' "$work/read.json")" \
		"  ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s with the model load)"
	[ "$read_text" = "$text" ]
fi
