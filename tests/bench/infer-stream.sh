#!/bin/sh
# Benchmark (not a test): accel-infer on a stream of ITEMS (1024) inputs of
# the model make deps fetched (PaddleOCR's text orientation classifier, one
# 3x48x192 float32 item a .npy array), from a file and from a pipe, at
# --batch 1 and 8, with --parallel 1 (one run at a time on all the threads)
# and the default (one run a core), beside ONNX Runtime's C API driven
# directly (infer-direct: one session, runs one after another, the same
# threads) with the backend's settings and with ONNX Runtime's defaults
# (INFER_DIRECT_SPIN=1: its threads spin). It prints inputs/s, CPU ms per
# input and ours / the direct run with the backend's settings. Our figures
# include the program's start and the model's load (~0.05 s); the direct
# ones do not. The best of REPS (3) runs counts. THREADS (0: all cores) is
# -T on both sides.
set -eu
B=${ACCEL_BUILD:-build}
ITEMS=${ITEMS:-1024}
REPS=${REPS:-3}
THREADS=${THREADS:-0}
model=${ACCEL_BENCH_MODELS:-$B/deps/models}/ocr/ch_ppocr_mobile_v2.0_cls_infer.onnx
[ -r "$model" ] || { echo "infer-stream.sh: no $model (make deps fetches it)" >&2; exit 2; }
t=$THREADS
[ "$t" -gt 0 ] || t=$(nproc)
dir=$(mktemp -d "${TMPDIR:-/tmp}/accel-infer-stream.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM

# One item: a .npy version 1.0 header (NumPy's format: magic, version,
# little-endian uint16 header length, a dict padded with spaces and ended by
# a newline to 128 bytes) and 3*48*192 float32 of a slow ramp; ITEMS of them.
hdr="{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 48, 192), }"
{
	printf '\223NUMPY\001\000\166\000%s' "$hdr"
	printf '%*s\n' $((128 - 10 - ${#hdr} - 1)) ''
	awk 'BEGIN { for (i = 0; i < 3 * 48 * 192; i++) printf "%c%c%c%c", 0, 0, 0, 60 + (i % 7) }'
} >"$dir/item.npy"
[ "$(stat -c %s "$dir/item.npy")" -eq $((128 + 4 * 3 * 48 * 192)) ] || {
	echo "infer-stream.sh: could not write an item (LC_ALL=C awk?)" >&2; exit 2; }
i=0
while [ "$i" -lt "$ITEMS" ]; do cat "$dir/item.npy"; i=$((i + 1)); done >"$dir/items.npy"

# "WALL CPU" seconds of the best (by wall) of REPS runs of shell command $1.
best() {
	b=
	i=0
	while [ "$i" -lt "$REPS" ]; do
		/usr/bin/time -f '%e %U %S' -o "$dir/time" sh -c "$1"
		b=$(awk -v prev="$b" '{ w = $1; c = $2 + $3 } END {
			split(prev, p, " "); if (prev == "" || w < p[1]) print w, c; else print prev }' "$dir/time")
		i=$((i + 1))
	done
	echo "$b"
}

direct() {
	"$B/libexec/infer-direct" "$model" "$t" "$ITEMS" 1,3,48,192 |
		awk -v b="$1" '$2 == "batch" && $3 == b ":" { for (i = 1; i <= NF; i++) {
			if ($i == "inputs/s,") r = $(i - 1); if ($i == "CPU/input") c = $(i - 2) } }
			END { print r, c }'
}

printf '%-32s %5s %10s %10s %8s\n' case batch 'inputs/s' 'CPU ms/in' 'ours/ORT'
for batch in 1 8; do
	ref=$(direct "$batch")
	spin=$(INFER_DIRECT_SPIN=1 direct "$batch")
	echo "$ref" | awk -v b="$batch" -v t="$t" '{ printf "%-32s %5d %10.0f %10.3f %8s\n", "ORT direct -T " t, b, $1, $2, "1.00" }'
	echo "$spin" | awk -v b="$batch" -v r="$ref" '{ split(r, p, " ");
		printf "%-32s %5d %10.0f %10.3f %8.2f\n", "ORT direct, spinning", b, $1, $2, $1 / p[1] }'
	for par in 1 0; do
		for src in file pipe; do
			if [ "$src" = file ]; then
				cmd="'$B/accel-infer' -q -m '$model' -T $THREADS --batch $batch --parallel $par '$dir/items.npy' >/dev/null"
			else
				cmd="cat '$dir/items.npy' | '$B/accel-infer' -q -m '$model' -T $THREADS --batch $batch --parallel $par >/dev/null"
			fi
			name="accel-infer --parallel $par, $src"
			[ "$par" -ne 0 ] || name="accel-infer, $src"
			best "$cmd" | awk -v n="$name" -v b="$batch" -v k="$ITEMS" -v r="$ref" '{ split(r, p, " ");
				printf "%-32s %5d %10.0f %10.3f %8.2f\n", n, b, k / $1, $2 * 1000 / k, k / $1 / p[1] }'
		done
	done
done
