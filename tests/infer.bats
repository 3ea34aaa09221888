#!/usr/bin/env bats
# accel-infer end to end on small models made here with python3-onnx
# (tests/infer/models.py): outputs checked against numpy's reference
# (tests/infer/npy.py, rtol 1e-5, atol 1e-6), --info, raw tensors, several
# inputs, bad input, -o FILE, batching and the timed flush with a slow
# writer, top-k, CTC decoding, DB text boxes, images and --crops, an engine that cannot load a model,
# the fallback from a failing engine (ACCEL_FAULT) to a second one (ortwin,
# the onnxruntime backend built again under another name), and the real
# models from make deps: the PaddleOCR detector and recogniser, and Silero VAD.

bats_require_minimum_version 1.5.0

load lib/common

# have_ort: the onnxruntime plugin is built and the library it loads is there.
have_ort() {
	[ -f "$ROOT/build/plugins/accel_onnxruntime.so" ] &&
		{ [ -f "$ROOT/build/deps/onnxruntime/lib/libonnxruntime.so.1" ] || pkg-config --exists libonnxruntime; }
}

setup_file() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	have_ort || return 0
	/usr/bin/python3 "$ROOT/tests/infer/models.py" "$BATS_FILE_TMPDIR" >&2
}

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	A="$ROOT/build/accel-infer"
	PY=/usr/bin/python3
	NPY="$ROOT/tests/infer/npy.py"
	M="$BATS_FILE_TMPDIR"
	have_ort || skip "no onnxruntime backend: run make deps (ONNX Runtime from npm) and make"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
}

# arrays FILE PYEXPR: save the arrays of the Python list PYEXPR (np is numpy) one after another.
arrays() {
	$PY -c "import numpy as np, sys
with open(sys.argv[1], 'wb') as f:
    for a in $2: np.save(f, a)" "$1"
}

@test "--info prints inputs and outputs with symbolic dims, as text and as JSON" {
	run -0 "$A" -m "$M/lin.onnx" --info
	[ "$output" = "model: $M/lin.onnx
engine: onnxruntime.cpu:cpu0
inputs:
  x                        float32 (N, 4)
outputs:
  y                        float32 (N, 3)
  z                        float32 (N, 4)" ]
	run -0 "$A" -m "$M/lin.onnx" --info --json
	[ "$(echo "$output" | jq -c '[.schema_version, .engine, .inputs, .outputs]')" = \
	  '[1,"onnxruntime.cpu:cpu0",[{"name":"x","dtype":"float32","shape":["N",4]}],[{"name":"y","dtype":"float32","shape":["N",3]},{"name":"z","dtype":"float32","shape":["N",4]}]]' ]
}

@test "a stream of .npy arrays gives one array per output per input, as numpy computes them" {
	arrays in.npy '[np.random.default_rng(1).standard_normal((k, 4)).astype("f4") for k in (1, 2, 3, 1)]'
	"$A" -m "$M/lin.onnx" < in.npy > out.npy
	run -0 $PY "$NPY" check lin in.npy out.npy
	[ "$output" = "4 inputs, 8 arrays match" ]
	# FILE operands and -T give the same bytes.
	"$A" -m "$M/lin.onnx" -T 2 in.npy > out2.npy
	cmp out.npy out2.npy
	# --output picks one.
	"$A" -m "$M/lin.onnx" --output z < in.npy > z.npy
	run -0 $PY "$NPY" check lin in.npy z.npy z
	[ "$output" = "4 inputs, 4 arrays match" ]
}

@test "raw tensors with --shape and --dtype give what the same arrays as .npy give" {
	arrays in.npy '[np.arange(8, dtype="f4").reshape(2, 4) + i for i in range(3)]'
	$PY -c "import numpy as np, sys
sys.stdout.buffer.write(b''.join((np.arange(8, dtype='<f4').reshape(2, 4) + i).tobytes() for i in range(3)))" > in.raw
	"$A" -m "$M/lin.onnx" < in.npy > a.npy
	"$A" -m "$M/lin.onnx" --shape 2,4 --dtype float32 < in.raw > b.npy
	cmp a.npy b.npy
	# --dim fixes the free dim, so --dtype alone takes the model's shape.
	"$A" -m "$M/lin.onnx" --dim N=2 --dtype float32 < in.raw > c.npy
	cmp a.npy c.npy
	# A raw stream that ends inside a tensor is truncated: exit 3, once
	# the outputs of the whole tensors before it are written, as zstd -d
	# writes what it decoded of a file cut short.
	head -c 40 in.raw > short.raw
	run -3 sh -c '"$0" -m "$1" --shape 1,4 < short.raw > part.npy' "$A" "$M/lin.onnx"
	[ "$output" = "accel-infer: stdin: truncated raw tensor at byte offset 32: shape (1, 4) of float32 needs 16 bytes, got 8" ]
	head -c 32 in.raw > whole.raw
	"$A" -m "$M/lin.onnx" --shape 1,4 < whole.raw > whole.npy
	cmp part.npy whole.npy
}

@test "--input NAME=FILE feeds a model of two inputs in lockstep" {
	arrays a.npy '[np.full((1, 3), i, "i4") for i in range(4)]'
	arrays b.npy '[np.arange(3, dtype="i4").reshape(1, 3) * 10 for i in range(4)]'
	"$A" -m "$M/add2.onnx" --input b=b.npy < a.npy > s.npy
	run -0 $PY "$NPY" load s.npy
	[ "$output" = "(1, 3) int32 [[0, 10, 20]]
(1, 3) int32 [[1, 11, 21]]
(1, 3) int32 [[2, 12, 22]]
(1, 3) int32 [[3, 13, 23]]" ]
	"$A" -m "$M/add2.onnx" --input a=a.npy --input b=b.npy > s2.npy
	cmp s.npy s2.npy
	# Inputs of unequal length are bad input, once the items both have are
	# run and written.
	arrays b3.npy '[np.zeros((1, 3), "i4")] * 3'
	run -3 sh -c '"$0" -m "$1" --input b=b3.npy < a.npy > part.npy' "$A" "$M/add2.onnx"
	[ "$output" = "accel-infer: stdin: b3.npy: input 'b' ended after 3 arrays, before input 'a' at byte offset 560" ]
	run -0 $PY "$NPY" load part.npy
	[ "$output" = "(1, 3) int32 [[0, 0, 0]]
(1, 3) int32 [[1, 1, 1]]
(1, 3) int32 [[2, 2, 2]]" ]
	run -2 "$A" -m "$M/add2.onnx" < a.npy
	[ "${lines[0]}" = "accel-infer: the model has several inputs: give all but one with --input NAME=FILE" ]
	run -2 "$A" -m "$M/add2.onnx" --input c=b.npy < a.npy
	[ "${lines[0]}" = "accel-infer: --input: the model has no input 'c'" ]
	run -2 "$A" -m "$M/add2.onnx" --input b=b.npy --output q < a.npy
	[ "${lines[0]}" = "accel-infer: --output: the model has no output 'q'" ]
	# inputs of unequal length on axis 0 (ONNX Runtime broadcasts the 1):
	# such an item runs alone under --batch, what --batch 1 writes
	arrays ua.npy '[np.ones((1, 3), "i4"), np.ones((2, 3), "i4") * 2, np.ones((1, 3), "i4") * 3]'
	arrays ub.npy '[np.arange(6, dtype="i4").reshape(2, 3), np.full((1, 3), 10, "i4"), np.full((1, 3), 20, "i4")]'
	"$A" -m "$M/add2.onnx" --input b=ub.npy < ua.npy > one.npy
	"$A" -m "$M/add2.onnx" --input b=ub.npy --batch 3 < ua.npy > three.npy
	cmp one.npy three.npy
	run -0 $PY -c "import numpy as np, io
d = open('three.npy', 'rb').read(); f = io.BytesIO(d); s = []
while f.tell() < len(d): s.append(np.load(f))
print([a.shape for a in s], s[0].tolist())"
	[ "$output" = "[(2, 3), (2, 3), (1, 3)] [[1, 2, 3], [4, 5, 6]]" ]
}

@test "an array of the wrong shape or dtype is refused with one line naming the input and both shapes, exit 3" {
	arrays in.npy '[np.zeros((1, 4), "f4"), np.zeros((1, 5), "f4")]'
	run -3 "$A" -m "$M/lin.onnx" -o out.npz in.npy
	[ "$output" = "accel-infer: in.npy: input 'x': expected float32 (N, 4), got float32 (1, 5) at byte offset 144" ]
	[ ! -e out.npz ]
	arrays d.npy '[np.zeros((1, 4), "f8")]'
	run -3 "$A" -m "$M/lin.onnx" < d.npy
	[ "$output" = "accel-infer: stdin: input 'x': expected float32 (N, 4), got float64 (1, 4) at byte offset 0" ]
	arrays f.npy '[np.zeros((2, 4), "f4")]'
	run -3 "$A" -m "$M/lin.onnx" --dim N=1 < f.npy
	[ "$output" = "accel-infer: stdin: input 'x': expected float32 (1, 4), got float32 (2, 4) at byte offset 0" ]
	run -3 "$A" -m "$M/fixed.onnx" < f.npy
	[ "$output" = "accel-infer: stdin: input 'x': expected float32 (1, 4), got float32 (2, 4) at byte offset 0" ]
}

@test "a truncated .npy, a bad header and a huge declared shape are exit 3; -o FILE is left absent" {
	arrays in.npy '[np.zeros((1, 4), "f4")] * 2'
	head -c 280 in.npy > cut.npy
	run -3 "$A" -m "$M/lin.onnx" -o out.npz cut.npy
	[ "$output" = "accel-infer: cut.npy: truncated .npy array at byte offset 144: shape (1, 4) of float32 needs 16 bytes of data, got 8" ]
	[ ! -e out.npz ]
	head -c 100 in.npy > hdr.npy
	run -3 "$A" -m "$M/lin.onnx" hdr.npy
	[ "$output" = "accel-infer: hdr.npy: truncated .npy array at byte offset 0: the header ends early" ]
	printf 'not an array' > junk.npy
	run -3 "$A" -m "$M/lin.onnx" junk.npy
	[ "$output" = "accel-infer: junk.npy: neither a .npy array nor an image FFmpeg can read (Invalid data found when processing input) at byte offset 0" ]
	# after whole arrays: the offset where the junk begins, -o left absent
	{ cat in.npy; printf 'JUNKJUNKJUNK'; } > tail.npy
	run -3 --separate-stderr "$A" -m "$M/lin.onnx" -o t.npz tail.npy
	[ "$stderr" = "accel-infer: tail.npy: neither a .npy array nor an image FFmpeg can read (Invalid data found when processing input) at byte offset $(stat -c %s in.npy)" ]
	[ ! -e t.npz ]
	# 10^15 floats declared in 80 bytes: refused from the header, at once.
	$PY -c "import sys
h = \"{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 10000000, 1000), }\"
h = h + ' ' * (63 - (10 + len(h)) % 64) + '\n'
sys.stdout.buffer.write(b'\x93NUMPY\x01\x00' + len(h).to_bytes(2, 'little') + h.encode())" > huge.npy
	run -3 "$A" -m "$M/lin.onnx" huge.npy
	[ "$output" = "accel-infer: huge.npy: bad .npy array at byte offset 0: shape (100000, 10000000, 1000) of float32 is 4000000000000000 bytes, over the limit of 1073741824" ]
}

@test "a missing model, a model no engine can load, and no ONNX Runtime (named) are exit 1 with the reason" {
	run -1 "$A" -m nosuch.onnx --info
	[ "$output" = "accel-infer: nosuch.onnx: cannot read: No such file or directory" ]
	run -1 "$A" -m "$M/badop.onnx" --info
	[ "$output" = "accel-infer: $M/badop.onnx: no engine can run the model: onnxruntime.cpu:cpu0: cannot load the model: Fatal error: com.example:NoSuchOp(-1) is not a registered function/op" ]
	# -v shows the route, the reason on the engine's line.
	run -1 "$A" -m "$M/badop.onnx" -v --info
	[[ "$output" = *"-  onnxruntime.cpu:cpu0 left out: cannot load the model: Fatal error: com.example:NoSuchOp(-1) is not a registered function/op"* ]]
	ACCEL_ONNXRUNTIME_LIB=/nonexistent/libonnxruntime.so.1 run -1 "$A" -m "$M/lin.onnx" -b onnxruntime --info
	[ "$output" = "accel-infer: $M/lin.onnx: no engine can run the model: onnxruntime: cannot load libonnxruntime.so.1: /nonexistent/libonnxruntime.so.1: cannot open shared object file: No such file or directory" ]
	ACCEL_ONNXRUNTIME_LIB=/nonexistent/libonnxruntime.so.1 run -1 "$A" -m "$M/lin.onnx" -b onnxruntime -v --info
	[[ "$output" = *"onnxruntime      left out: cannot load libonnxruntime.so.1: /nonexistent/libonnxruntime.so.1: cannot open shared object file"* ]]
}

@test "-o FILE is written whole, never over an existing file without -f" {
	arrays in.npy '[np.ones((1, 4), "f4")]'
	"$A" -m "$M/lin.onnx" -o out.arrays < in.npy
	run -0 $PY "$NPY" check lin in.npy out.arrays
	run -1 "$A" -m "$M/lin.onnx" -o out.arrays < in.npy
	[ "$output" = "accel-infer: out.arrays already exists; use -f to overwrite it" ]
	"$A" -m "$M/lin.onnx" -f -o out.arrays < in.npy
}

@test ".npy headers read as numpy reads them: a key given twice counts once, its last value; version 1.1 is refused" {
	$PY -c "import struct, numpy as np
h = b\"{'descr': '<f4', 'fortran_order': False, 'shape': (9, 9), 'shape': (1, 4), }\"
h += b' ' * (-(10 + len(h) + 1) % 64) + b'\\n'
for name, minor in (('dup.npy', 0), ('v11.npy', 1)):
    open(name, 'wb').write(b'\\x93NUMPY\\x01' + bytes([minor]) + struct.pack('<H', len(h)) + h + np.arange(4, dtype='f4').tobytes())
np.save('plain.npy', np.arange(4, dtype='f4').reshape(1, 4))"
	run -0 $PY -c "import numpy as np; print(np.load('dup.npy').shape)"
	[ "$output" = "(1, 4)" ]
	"$A" -m "$M/lin.onnx" < plain.npy > want.npy
	"$A" -m "$M/lin.onnx" < dup.npy > got.npy
	cmp want.npy got.npy
	run -0 $PY -c "import numpy as np
try:
    np.load('v11.npy')
except ValueError as e:
    print('refused')"
	[ "$output" = refused ]
	run -3 "$A" -m "$M/lin.onnx" < v11.npy
	[ "$output" = "accel-infer: stdin: bad .npy array at byte offset 0: unsupported .npy format version 1.1 (numpy reads 1.0, 2.0 and 3.0)" ]
}

@test "--batch joins inputs into runs and writes exactly what --batch 1 writes" {
	arrays in.npy '[np.random.default_rng(i).standard_normal((1 + i % 3, 4)).astype("f4") for i in range(11)]'
	"$A" -m "$M/lin.onnx" < in.npy > b1.npy
	"$A" -m "$M/lin.onnx" --batch 4 -v < in.npy > b4.npy 2> log
	cmp b1.npy b4.npy
	grep -q "accel-infer: stdin: 3 units," log
	run -0 $PY "$NPY" check lin in.npy b4.npy
	# Arrays whose other dims differ start a new batch.
	arrays mixed.npy '[np.zeros((1, 4, 2), "f4")] * 2'
	arrays ctcin.npy '[np.zeros((1, 3, 5), "f4"), np.zeros((1, 3, 5), "f4"), np.zeros((1, 2, 5), "f4")]'
	"$A" -m "$M/ctc.onnx" < ctcin.npy > c1.npy
	"$A" -m "$M/ctc.onnx" --batch 8 -v < ctcin.npy > c8.npy 2> log
	cmp c1.npy c8.npy
	grep -q "accel-infer: stdin: 2 units," log
}

@test "--parallel runs batches at once on one session and writes exactly what one run at a time writes, in order" {
	arrays in.npy '[np.random.default_rng(i).standard_normal((1 + i % 3, 4)).astype("f4") for i in range(40)]'
	"$A" -m "$M/lin.onnx" --parallel 1 -v < in.npy > p1.npy 2> log
	grep -qx "accel-infer: up to 1 run at once on a CPU engine, $(nproc) threads\? each" log
	grep -qE "^  onnxruntime.cpu:cpu0 workers 1, units 40," log
	run -0 $PY "$NPY" check lin in.npy p1.npy
	for p in 2 3 7; do
		"$A" -m "$M/lin.onnx" --parallel $p -T 6 -v < in.npy > p.npy 2> log
		cmp p1.npy p.npy
		grep -qE "^  onnxruntime.cpu:cpu0 workers $p, units 40," log
		grep -qx "accel-infer: up to $p runs at once on a CPU engine, $((6 / p > 1 ? 6 / p : 1)) threads\? each" log
		"$A" -m "$M/lin.onnx" --parallel $p --batch 3 --topk 2 --output y < in.npy > k$p.json
	done
	# The model is loaded once for all the runs (one session): ONNX
	# Runtime opens the file as often as with one run at a time.
	opens() {
		strace -f -e trace=openat "$A" -m "$M/lin.onnx" --parallel "$1" < in.npy 2>&1 > /dev/null |
			grep -c "lin\.onnx\""
	}
	[ "$(opens 4)" -eq "$(opens 1)" ]
	"$A" -m "$M/lin.onnx" --parallel 1 --batch 3 --topk 2 --output y < in.npy > k1.json
	cmp k1.json k2.json
	cmp k1.json k7.json
	# The default: one run a core for a stream, one run on every thread
	# for a lone array (a pipe is a stream whatever it holds).
	"$A" -m "$M/lin.onnx" -T 4 -v < in.npy 2> log > /dev/null
	grep -qx "accel-infer: up to 4 runs at once on a CPU engine, 1 thread each" log
	arrays one.npy '[np.ones((2, 4), "f4")]'
	"$A" -m "$M/lin.onnx" -T 4 -v one.npy 2> log > /dev/null
	grep -qx "accel-infer: up to 1 run at once on a CPU engine, 4 threads each" log
	"$A" -m "$M/lin.onnx" -T 4 -v < one.npy 2> log > /dev/null
	grep -qx "accel-infer: up to 1 run at once on a CPU engine, 4 threads each" log
	cat one.npy | "$A" -m "$M/lin.onnx" -T 4 -v 2> log > /dev/null
	grep -qx "accel-infer: up to 4 runs at once on a CPU engine, 1 thread each" log
	# A FIFO is not opened to look (that would wait for its writer): a stream.
	mkfifo fifo
	cat in.npy > fifo &
	"$A" -m "$M/lin.onnx" -T 4 -v fifo 2> log > f.npy
	wait
	cmp p1.npy f.npy
	grep -qx "accel-infer: up to 4 runs at once on a CPU engine, 1 thread each" log
	run -2 "$A" -m "$M/lin.onnx" --parallel -1 < in.npy
	[ "${lines[0]}" = "accel-infer: --parallel: '-1' is not a count from 0 to 4096" ]
}

@test "--batch runs items one by one where the model does not declare axis 0 the batch axis, or its graph mixes items" {
	arrays in.npy '[np.random.default_rng(i).standard_normal((1, 3)).astype("f4") for i in range(3)]'
	for m in transpose mean0 cumsum softmax0; do
		"$A" -m "$M/$m.onnx" < in.npy > b1.npy
		run -0 $PY "$NPY" check $m in.npy b1.npy
		"$A" -m "$M/$m.onnx" --batch 4 -v < in.npy > b4.npy 2> log
		cmp b1.npy b4.npy
		grep -q "accel-infer: stdin: 3 units," log
		grep "items run one by one" log > why
		case $m in
		transpose) want="output 'y' has no free first dim: float32 (3, N)" ;;
		mean0) want="output 'y' has no free first dim: float32 (1, 3)" ;;
		cumsum) want="its CumSum node runs along axis 0" ;;
		softmax0) want="its Softmax node runs along axis 0" ;;
		esac
		[ "$(cat why)" = "accel-infer: --batch 4: items run one by one: $want" ]
	done
	# MaxPool's indices count over the whole tensor, batch and all.
	arrays mp.npy '[np.random.default_rng(i).standard_normal((1, 1, 4)).astype("f4") for i in range(3)]'
	"$A" -m "$M/maxpool.onnx" < mp.npy > b1.npy
	run -0 $PY "$NPY" check maxpool mp.npy b1.npy
	"$A" -m "$M/maxpool.onnx" --batch 4 -v < mp.npy > b4.npy 2> log
	cmp b1.npy b4.npy
	grep -qx "accel-infer: --batch 4: items run one by one: its MaxPool node gives indices counted over the whole batch" log
	# A model of items apart runs them in batches, saying nothing of it.
	arrays lin.npy '[np.random.default_rng(i).standard_normal((1, 4)).astype("f4") for i in range(6)]'
	"$A" -m "$M/lin.onnx" < lin.npy > b1.npy
	"$A" -m "$M/lin.onnx" --batch 4 -v < lin.npy > b4.npy 2> log
	cmp b1.npy b4.npy
	grep -q "accel-infer: stdin: 2 units," log
	run -1 grep -q "one by one" log
	# A batch dim fixed by the model or by --dim.
	"$A" -m "$M/fixed.onnx" < lin.npy > b1.npy
	"$A" -m "$M/fixed.onnx" --batch 2 -v < lin.npy > b2.npy 2> log
	cmp b1.npy b2.npy
	grep -qx "accel-infer: --batch 2: items run one by one: input 'x' has no free first dim: float32 (1, 4)" log
	"$A" -m "$M/lin.onnx" --dim N=1 --batch 2 -v < lin.npy > b2.npy 2> log
	grep -qx "accel-infer: --batch 2: items run one by one: input 'x' has no free first dim: float32 (1, 4)" log
}

@test "--max-wait sends a partial batch when a slow writer pauses; without it the batch waits" {
	slow() {
		$PY -c "import numpy as np, sys, time
for i in range(2):
    np.save(sys.stdout.buffer, np.full((1, 6), i, 'f4')); sys.stdout.flush()
    time.sleep(5)"
	}
	# The first result must come out within 3 s of the start (the writer
	# sends the second input only after 5 s).
	first() {
		local line
		IFS= read -r -t 3 line || { echo "no line within 3 s"; cat > /dev/null; return 0; }
		echo "first: $line"
		cat
	}
	run -0 bash -c "$(declare -f slow first); PY=$PY; slow | '$A' -m '$M/softmax.onnx' --batch 8 --max-wait 200 --topk 1 | first"
	[ "${lines[0]}" = 'first: {"input":0,"topk":[{"index":0,"score":0.1666666716337204}]}' ]
	[ "${lines[1]}" = '{"input":1,"topk":[{"index":0,"score":0.1666666716337204}]}' ]
	run -0 bash -c "$(declare -f slow first); PY=$PY; slow | '$A' -m '$M/softmax.onnx' --batch 8 --topk 1 | first"
	[ "${lines[0]}" = "no line within 3 s" ]
}

@test "--max-wait 0 sends each batch at once with the inputs already there; it never waits for a full one" {
	slow() {
		$PY -c "import numpy as np, sys, time
for i in range(2):
    np.save(sys.stdout.buffer, np.full((1, 6), i, 'f4')); sys.stdout.flush()
    time.sleep(5)"
	}
	first() {
		local line
		IFS= read -r -t 3 line || { echo "no line within 3 s"; cat > /dev/null; return 0; }
		echo "first: $line"
		cat
	}
	run -0 bash -c "$(declare -f slow first); PY=$PY; slow | '$A' -m '$M/softmax.onnx' --batch 8 --max-wait 0 --topk 1 | first"
	[ "${lines[0]}" = 'first: {"input":0,"topk":[{"index":0,"score":0.1666666716337204}]}' ]
	[ "${lines[1]}" = '{"input":1,"topk":[{"index":0,"score":0.1666666716337204}]}' ]
	# Inputs already there when a batch starts still join it.
	arrays in.npy '[np.full((1, 6), i, "f4") for i in range(10)]'
	"$A" -m "$M/softmax.onnx" < in.npy > b1.npy
	"$A" -m "$M/softmax.onnx" --batch 4 --max-wait 0 -v < in.npy > b4.npy 2> log
	cmp b1.npy b4.npy
	grep -q "accel-infer: stdin: 3 units," log
}

@test "--shape or --dim with a zero dimension is a usage error: raw tensors of no bytes read no input" {
	run -2 timeout 10 "$A" -m "$M/lin.onnx" --shape 0,4 < /dev/null
	[ "${lines[0]}" = "accel-infer: --shape: '0,4' has a zero dimension: raw tensors of no bytes would read no input" ]
	run -2 timeout 10 "$A" -m "$M/lin.onnx" --dtype float32 --dim N=0 < /dev/null
	[ "${lines[0]}" = "accel-infer: input 'x' would be raw tensors of shape (0, 4) (--dim): no bytes, so no input would be read" ]
	[ ! -e out.npy ]
	run -2 timeout 10 "$A" -m "$M/lin.onnx" --shape 2,0 -o out.npy < /dev/null
	[ ! -e out.npy ]
	[ -z "$(ls -A)" ]
}

@test "--topk prints the best classes with their labels as JSON lines, as numpy ranks them" {
	arrays in.npy '[np.array([[0.1, 3, 0.2, 2, -1, 0.5]], "f4"), np.array([[5, 0, 0, 0, 0, 4]], "f4")]'
	printf '%s\n' zero one two three four five > labels.txt
	run -0 "$A" -m "$M/softmax.onnx" --topk 2 --labels labels.txt --batch 2 < in.npy
	want=$($PY -c "import numpy as np, json
for x in [np.array([0.1, 3, 0.2, 2, -1, 0.5], 'f4'), np.array([5, 0, 0, 0, 0, 4], 'f4')]:
    p = np.exp(x - x.max()); p /= p.sum()
    print(json.dumps([int(i) for i in np.argsort(-p)[:2]], separators=(',', ':')))")
	got=$(echo "$output" | jq -c '[.topk[].index]')
	[ "$got" = "$want" ]
	[ "$(echo "$output" | jq -r '[.input, .topk[0].label, .topk[1].label] | @tsv')" = "0	one	three
1	zero	five" ]
	run -2 "$A" -m "$M/lin.onnx" --topk 2 < in.npy
	[ "${lines[0]}" = "accel-infer: --topk reads one output: name it with --output" ]
	# float16 and bool scores rank by value; NaN last, as numpy's argsort(-p)
	arrays h.npy '[np.array([[0.5, 65504, -1]], "f2")]'
	run -0 "$A" -m "$M/idf16.onnx" --topk 3 < h.npy
	[ "$output" = '{"input":0,"topk":[{"index":1,"score":65504},{"index":0,"score":0.5},{"index":2,"score":-1}]}' ]
	arrays b.npy '[np.array([[True, False, True]])]'
	run -0 "$A" -m "$M/idbool.onnx" --topk 2 < b.npy
	[ "$output" = '{"input":0,"topk":[{"index":0,"score":1},{"index":2,"score":1}]}' ]
	arrays n.npy '[np.array([[0.5, np.nan, 0.75]], "f2")]'
	run -0 "$A" -m "$M/idf16.onnx" --topk 3 < n.npy
	[ "$(echo "$output" | jq -c '[.topk[].index]')" = "[2,0,1]" ]
}

@test "--decode ctc decodes greedily: repeats merged, blanks dropped, the extra class a space" {
	# classes: 0 blank, 1..3 the labels a b c, 4 the space.
	printf '%s\n' a b c > dict.txt
	arrays in.npy '[np.eye(5, dtype="f4")[[1, 1, 0, 1, 2, 4, 3, 3, 0]][None], np.eye(5, dtype="f4")[[0, 0]][None]]'
	run -0 "$A" -m "$M/ctc.onnx" --decode ctc --labels dict.txt < in.npy
	[ "$output" = '{"input":0,"text":"aab c","score":1}
{"input":1,"text":"","score":0}' ]
	run -2 "$A" -m "$M/ctc.onnx" --decode ctc < in.npy
	[ "${lines[0]}" = "accel-infer: --decode ctc needs --labels FILE" ]
}

@test "a batch that fails on the first engine runs again on the next: the same bytes (ACCEL_FAULT)" {
	export ACCEL_BACKEND_PATH="$ROOT/build/tests/ortwin"
	arrays in.npy '[np.random.default_rng(i).standard_normal((1, 4)).astype("f4") for i in range(20)]'
	"$A" -m "$M/lin.onnx" < in.npy > ref.npy
	# Both engines serve the stream; every batch onnxruntime takes fails
	# and runs again on ortwin.
	ACCEL_FAULT='onnxruntime:*' "$A" -m "$M/lin.onnx" -b onnxruntime,ortwin --fallback next -v < in.npy > out.npy 2> log
	cmp ref.npy out.npy
	grep -qE "^  onnxruntime.cpu:cpu0 workers [0-9]+, units 0," log
	grep -qE "^  ortwin.cpu:cpu0  workers [0-9]+, units 20," log
	ACCEL_FAULT='onnxruntime:1' run -1 "$A" -m "$M/lin.onnx" -b onnxruntime --fallback none -o out2.npz < in.npy
	[ ! -e out2.npz ]
	[[ "${lines[-1]}" = *"injected fault (ACCEL_FAULT)"* ]]
}

# png2x2 FILE: a 2x2 RGB PNG of red, green / blue, (10, 20, 30), written by ffmpeg.
png2x2() {
	printf '\377\000\000\000\377\000\000\000\377\012\024\036' |
		ffmpeg -loglevel error -f rawvideo -pix_fmt rgb24 -s 2x2 -i - -frames:v 1 -y "$1"
}

@test "images decoded by FFmpeg become tensors: --scale, --mean, --std, --layout, --bgr, as numpy computes them" {
	png2x2 p.png
	"$A" -m "$M/img.onnx" p.png > a.npy
	"$A" -m "$M/imghwc.onnx" --layout nhwc --bgr --scale 1 --mean 10,20,30 --std 2 < p.png > b.npy
	run -0 $PY -c "import numpy as np, sys
px = np.array([[[255, 0, 0], [0, 255, 0]], [[0, 0, 255], [10, 20, 30]]], 'f4')
a, b = np.load('a.npy'), np.load('b.npy')
assert a.shape == (1, 3, 2, 2) and np.allclose(a[0], px.transpose(2, 0, 1) / 255, atol=1e-6), a
want = (px[:, :, ::-1] - np.array([10, 20, 30], 'f4')) / 2
assert b.shape == (1, 2, 2, 3) and np.allclose(b[0], want, atol=1e-6), b
print('ok')"
	[ "$output" = ok ]
	# --resize: both sides, or one with the ratio kept.
	"$A" -m "$M/img.onnx" --resize 6x4 p.png > r.npy
	"$A" -m "$M/img.onnx" --resize 0x8 p.png >> r.npy
	run -0 $PY "$NPY" shapes r.npy
	[ "$output" = "(1, 3, 4, 6) (1, 3, 8, 8)" ]
	run -2 "$A" -m "$M/img.onnx" --std 0,1,1 p.png
	[ "${lines[0]}" = "accel-infer: --std: '0,1,1' is not one number or three separated by commas (not 0)" ]
}

@test "the PaddleOCR recogniser reads a line of text rendered by ffmpeg, exactly (--decode ctc)" {
	ocr="$ROOT/build/deps/models/ocr"
	[ -f "$ocr/ch_PP-OCRv4_rec_infer.onnx" ] || skip "no OCR models: run make deps"
	ffmpeg -loglevel error -f lavfi -i color=c=white:s=280x48 -frames:v 1 -y -vf \
		"drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='Hello accel 2026':fontsize=30:fontcolor=black:x=8:y=(h-th)/2" line.png
	run -0 "$A" -m "$ocr/ch_PP-OCRv4_rec_infer.onnx" --resize 0x48 --mean 0.5 --std 0.5 --bgr \
		--decode ctc --labels "$ocr/ppocr_keys_v1.txt" line.png
	[ "$(echo "$output" | jq -r .text)" = "Hello accel 2026" ]
	[ "$(echo "$output" | jq '.score > 0.9')" = true ]
}

@test "--decode db: boxes of a probability map, grown by area * 1.5 / perimeter, weak and tiny ones dropped, in reading order" {
	# Blocks (rows, cols): 0.9 at 30-39 x 60-99 and 10-19 x 20-59 (two
	# lines, the lower first in the map), 0.5 at 50-59 x 10-29 (mean under
	# 0.6), 0.9 at 60-61 x 80-81 (under 3 pixels).
	$PY -c "import numpy as np
p = np.zeros((1, 1, 64, 128), 'f4')
p[0, 0, 30:40, 60:100] = 0.9
p[0, 0, 10:20, 20:60] = 0.9
p[0, 0, 50:60, 10:30] = 0.5
p[0, 0, 60:62, 80:82] = 0.9
np.save('m.npy', p)"
	run -0 "$A" -m "$M/map.onnx" --decode db m.npy
	# A 40 x 10 block: sides 39 and 9 from centre to centre, d = 39 * 9 *
	# 1.5 / (2 * 48) = 5.48; [20 - d, 10 - d, 20 + 39 + d, 10 + 9 + d] rounded.
	[ "$(echo "$output" | jq -c '[.input, .box, (.score * 1000 | round)]')" = '[0,[15,5,64,24],900]
[0,[55,25,104,44],900]' ]
	run -0 "$A" -m "$M/map.onnx" --decode db --db-box-thresh 0.4 --db-unclip 0 m.npy
	[ "$(echo "$output" | jq -c .box)" = '[20,10,59,19]
[60,30,99,39]
[10,50,29,59]' ]
	run -0 "$A" -m "$M/map.onnx" --decode db --db-thresh 0.95 m.npy
	[ -z "$output" ]
	run -2 "$A" -m "$M/map.onnx" --decode db --db-thresh 2 m.npy
	[ "${lines[0]}" = "accel-infer: --db-thresh: '2' is not a probability from 0 to 1" ]
	arrays c.npy '[np.zeros((1, 3, 2, 2), "f4")]'
	run -1 "$A" -m "$M/img.onnx" --decode db c.npy
	[ "${lines[-1]}" = "accel-infer: --decode db reads a float32 probability map of one channel per input, not float32 (1, 3, 2, 2)" ]
}

@test "--crops: each box of the image becomes one input, scaled by --resize; input and box in the JSON lines" {
	# A 40x20 image: the left half red, the right half blue.
	ffmpeg -loglevel error -f lavfi -i color=c=red:s=20x20 -f lavfi -i color=c=blue:s=20x20 \
		-filter_complex hstack -frames:v 1 -y rb.png
	printf '%s\n' '{"input":0,"box":[0,0,10,5]}' '{"box":[30,10,40,20],"score":1}' '{"input":1,"box":[0,0,40,20]}' > boxes.jsonl
	"$A" -m "$M/img.onnx" --crops boxes.jsonl rb.png > c.npy
	run -0 $PY "$NPY" shapes c.npy
	[ "$output" = "(1, 3, 5, 10) (1, 3, 10, 10)" ]
	run -0 $PY -c "import numpy as np
f = open('c.npy', 'rb'); a, b = np.load(f), np.load(f)
print(a[0, :, 2, 2].round(1).tolist(), b[0, :, 5, 5].round(1).tolist())"
	[ "$output" = "[1.0, 0.0, 0.0] [0.0, 0.0, 1.0]" ]
	# Two images: the box of input 1 cuts the second; --resize scales each crop.
	"$A" -m "$M/img.onnx" --resize 0x4 --crops boxes.jsonl rb.png rb.png > c2.npy
	run -0 $PY "$NPY" shapes c2.npy
	[ "$output" = "(1, 3, 4, 8) (1, 3, 4, 4) (1, 3, 4, 8)" ]
	# Boxes from stdin; a box past the edge is clipped to the image.
	echo '{"box":[-5,-5,10,50]}' | "$A" -m "$M/img.onnx" --crops - rb.png > c3.npy
	run -0 $PY "$NPY" shapes c3.npy
	[ "$output" = "(1, 3, 20, 10)" ]
	# No boxes: no input, no arrays.
	"$A" -m "$M/img.onnx" --crops /dev/null rb.png > none.npy
	[ ! -s none.npy ]
}

@test "--crops refuses bad boxes (exit 3, FILE:LINE), a box outside the image, .npy input, and - without FILEs" {
	png2x2 p.png
	printf '%s\n' '{"box":[0,0,1,1]}' 'not json' > bad.jsonl
	run -3 "$A" -m "$M/img.onnx" --crops bad.jsonl p.png
	[ "${lines[-1]}" = "accel-infer: bad.jsonl:2: not a JSON object" ]
	for line in '{"box":[0,0,1]}' '{"box":[0,0,1.5,1]}' '{"box":[1,0,1,1]}' '{"input":-1,"box":[0,0,1,1]}'; do
		echo "$line" > bad.jsonl
		run -3 "$A" -m "$M/img.onnx" --crops bad.jsonl p.png
		[[ "${lines[-1]}" = "accel-infer: bad.jsonl:1: "* ]]
	done
	echo '{"box":[5,5,9,9]}' > out.jsonl
	run -3 "$A" -m "$M/img.onnx" -o o.npy --crops out.jsonl p.png
	[[ "${lines[-1]}" = "accel-infer: p.png: --crops: box [5, 5, 9, 9] lies outside image 0 (2x2)"* ]]
	[ ! -e o.npy ]
	arrays x.npy '[np.zeros((1, 3, 2, 2), "f4")]'
	run -3 "$A" -m "$M/img.onnx" --crops out.jsonl x.npy
	[[ "${lines[-1]}" = *"--crops cuts images, and this input is a .npy array"* ]]
	run -2 "$A" -m "$M/img.onnx" --crops - < p.png
	[ "${lines[0]}" = "accel-infer: --crops - reads the boxes from stdin: give the images as FILEs" ]
	run -1 "$A" -m "$M/img.onnx" --crops nosuch.jsonl p.png
	[ "${lines[0]}" = "accel-infer: cannot read nosuch.jsonl: No such file or directory" ]
}

@test "OCR: the PaddleOCR detector's boxes (--decode db) piped to the recogniser (--crops -) read two lines rendered by ffmpeg, exactly" {
	ocr="$ROOT/build/deps/models/ocr"
	[ -f "$ocr/ch_PP-OCRv4_det_infer.onnx" ] || skip "no OCR models: run make deps"
	font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
	ffmpeg -loglevel error -f lavfi -i color=c=white:s=480x200 -frames:v 1 -y -vf \
		"drawtext=fontfile=$font:text='ACCEL 2026':fontsize=40:x=30:y=30,drawtext=fontfile=$font:text='hello world':fontsize=28:x=200:y=130" page.png
	"$A" -m "$ocr/ch_PP-OCRv4_det_infer.onnx" --align 32 --mean 0.485,0.456,0.406 --std 0.229,0.224,0.225 --bgr \
		--decode db page.png > boxes.jsonl
	# Each box holds its line (drawn from x=30, y=30, 40 px; x=200, y=130, 28 px), in the image's pixels.
	run -0 jq -c '[.input, .box[0] <= 36, .box[1] <= 30, .box[2] >= 240, .box[3] >= 60, .box[3] < 130, .score > 0.6]' boxes.jsonl
	[ "${lines[0]}" = "[0,true,true,true,true,true,true]" ]
	[ "${#lines[@]}" = 2 ]
	run -0 jq -c '[.box[0] <= 200, .box[1] <= 130, .box[2] >= 340, .box[3] >= 150, .box[3] <= 200]' boxes.jsonl
	[ "${lines[1]}" = "[true,true,true,true,true]" ]
	run -0 bash -c "'$A' -m '$ocr/ch_PP-OCRv4_rec_infer.onnx' --resize 0x48 --mean 0.5 --std 0.5 --bgr \
		--decode ctc --labels '$ocr/ppocr_keys_v1.txt' --crops - page.png < boxes.jsonl"
	[ "$(echo "$output" | jq -r .text)" = "ACCEL 2026
hello world" ]
	[ "$(echo "$output" | jq -c '.box')" = "$(jq -c .box boxes.jsonl)" ]
}

@test "a reader that goes away ends the run quietly, exit 0 (.npy, batches, JSON lines)" {
	arrays in.npy '[np.full((1, 6), i % 7, "f4") for i in range(3000)]'
	for opts in "" "--batch 4" "--topk 1"; do
		run --separate-stderr bash -c "'$A' -m '$M/softmax.onnx' $opts < in.npy | head -c 100 > /dev/null; echo \${PIPESTATUS[0]}"
		[ "$output" = 0 ]
		[ -z "$stderr" ]
	done
}

@test "Silero VAD, a real model of three inputs (one an int64 scalar), runs from three streams" {
	vad="$ROOT/build/deps/models/vad/silero_vad_v5.onnx"
	[ -f "$vad" ] || skip "no VAD model: run make deps"
	arrays audio.npy '[np.zeros((1, 512), "f4")] * 3'
	arrays state.npy '[np.zeros((2, 1, 128), "f4")] * 3'
	arrays sr.npy '[np.array(16000, "i8")] * 3'
	run -0 "$A" -m "$vad" --info
	[[ "$output" = *"  sr                       int64 ()"* ]]
	"$A" -m "$vad" --input state=state.npy --input sr=sr.npy --output output --output stateN < audio.npy > out.npy
	# Per input: the speech probability (1, 1), low for silence, and the next state.
	run -0 $PY -c "import sys; sys.path.insert(0, '$ROOT/tests/infer'); import npy
a = npy.arrays('out.npy')
assert len(a) == 6, len(a)
for p, s in zip(a[0::2], a[1::2]):
    assert p.shape == (1, 1) and p.dtype == 'float32' and 0 <= p[0, 0] < 0.1, p
    assert s.shape == (2, 1, 128), s.shape
print('ok')"
	[ "$output" = ok ]
}

@test "--progress: the inputs run and inferences per second, lines of their own when stderr is no terminal; -q silences it" {
	arrays in.npy '[np.ones((1, 4), "f4") for k in range(5)]'
	run -0 --separate-stderr "$A" -m "$M/lin.onnx" --progress -o out.npz in.npy
	[[ "$stderr" != *$'\e'* && "$stderr" != *$'\r'* ]]
	[[ "${stderr_lines[-1]}" =~ ^onnx\.run:\ 5\ inferences\ [0-9.]+[kMG]?\ inferences/s$ ]]
	run -0 --separate-stderr "$A" -m "$M/lin.onnx" -q --progress -o q.npz in.npy
	[ -z "$stderr" ]
	# not asked for, stderr no terminal: none
	run -0 --separate-stderr "$A" -m "$M/lin.onnx" -o n.npz in.npy
	[ -z "$stderr" ]
}
