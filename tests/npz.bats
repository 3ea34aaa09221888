#!/usr/bin/env bats
# NumPy's forms of a run's arrays (accel_npy_pack): -o FILE.npy is one
# array with a leading axis, -o FILE.npz numpy's ZIP of arrays, anything
# else (stdout, a pipe, another name) the stream of .npy arrays back to
# back, read with the man pages' readers. numpy (python3-numpy) reads every
# form; a file of several arrays is never cut short by np.load.

bats_require_minimum_version 1.5.0

load lib/common

have_ort() {
	[ -f "$ROOT/build/plugins/accel_onnxruntime.so" ] &&
		{ [ -f "$ROOT/build/deps/onnxruntime/lib/libonnxruntime.so.1" ] || pkg-config --exists libonnxruntime; }
}

setup_file() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	/usr/bin/python3 -c 'import numpy, onnx' 2>/dev/null || return 0
	have_ort || return 0
	/usr/bin/python3 "$ROOT/tests/infer/models.py" "$BATS_FILE_TMPDIR" >&2
}

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	PY=/usr/bin/python3
	M="$BATS_FILE_TMPDIR"
	$PY -c 'import numpy' 2>/dev/null || skip "python3-numpy is not installed"
	mkdir "$BATS_TEST_TMPDIR/w"
	cd "$BATS_TEST_TMPDIR/w"
}

need_infer() {
	have_ort && [ -f "$M/lin.onnx" ] || skip "no onnxruntime backend or python3-onnx (make deps)"
	A="$ROOT/build/accel-infer"
}

# The readers the man pages give, run as printed there: a stream in a
# file, then from a pipe (np.load seeks, which a pipe cannot).
read_file() {
	$PY -c "import sys, numpy as np
arrays = []
with open(sys.argv[1], 'rb') as f:
    while f.peek(1):
        arrays.append(np.load(f))
np.savez('stream-file.npz', *arrays)" "$1"
}
read_pipe() {
	$PY -c "import sys, numpy as np
arrays = []
f = sys.stdin.buffer
while f.peek(1):
    np.lib.format.read_magic(f); shape, _, dt = np.lib.format.read_array_header_1_0(f)
    arrays.append(np.frombuffer(f.read(dt.itemsize * int(np.prod(shape))), dt).reshape(shape))
np.savez('stream-pipe.npz', *arrays)"
}

# in.npy: four arrays of 1, 2, 3 and 1 rows of 4 floats.
inputs() {
	$PY -c "import numpy as np
with open('in.npy', 'wb') as f:
    for k in (1, 2, 3, 1): np.save(f, np.random.default_rng(k).standard_normal((k, 4)).astype('f4'))"
}

@test "accel-infer: the stream read by both readers, -o FILE.npz (one member per output) and -o FILE.npy agree with it" {
	need_infer
	inputs
	"$A" -m "$M/lin.onnx" in.npy > out.stream
	read_file out.stream
	"$A" -m "$M/lin.onnx" in.npy | read_pipe
	"$A" -m "$M/lin.onnx" -o out.npz in.npy
	"$A" -m "$M/lin.onnx" --output z -o z.npy in.npy
	# --batch cuts and joins other units: the same arrays.
	"$A" -m "$M/lin.onnx" --batch 3 -o b.npz in.npy
	run -0 $PY -c "import numpy as np
f, p, z, b = (np.load(n) for n in ('stream-file.npz', 'stream-pipe.npz', 'out.npz', 'b.npz'))
s = [f[k] for k in f.files]
assert len(s) == 8 and all(np.array_equal(s[i], p[k]) for i, k in enumerate(p.files))
assert z.files == ['y', 'z'] and b.files == ['y', 'z']
y, zz = np.concatenate(s[0::2]), np.concatenate(s[1::2])
assert np.array_equal(z['y'], y) and np.array_equal(z['z'], zz) and np.array_equal(b['y'], y)
one = np.load('z.npy')
assert one.dtype == np.float32 and np.array_equal(one, zz)
print(z['y'].shape, z['z'].shape, one.shape)"
	[ "$output" = "(7, 3) (7, 4) (7, 4)" ]
	# numpy's own zipfile module reads it: stored members, dated 1980.
	run -0 $PY -c "import zipfile
for i in zipfile.ZipFile('out.npz').infolist(): print(i.filename, i.compress_type, i.date_time[0])"
	[ "$output" = "y.npy 0 1980
z.npy 0 1980" ]
	# a name beyond ASCII is flagged UTF-8 (bit 11), as np.savez writes it
	$PY -c "import numpy as np; np.save('u3.npy', np.zeros((2, 3), 'f4'))"
	"$A" -m "$M/utf8.onnx" -o u.npz u3.npy
	run -0 $PY -c "import numpy as np, zipfile
print(np.load('u.npz').files, [hex(i.flag_bits & 0x800) for i in zipfile.ZipFile('u.npz').infolist()])"
	[ "$output" = "['ü é'] ['0x800']" ]
}

@test "accel-infer: -o FILE.npy with several outputs is a usage error; arrays that cannot join are refused for .npy, one member each in .npz" {
	need_infer
	inputs
	run -2 "$A" -m "$M/lin.onnx" -o out.npy in.npy
	[ "$output" = "accel-infer: out.npy: a .npy file holds one array, and there are 2 outputs; write a .npz" ]
	[ ! -e out.npy ]
	# transpose gives (3, k): axis 0 is not the one that grows.
	$PY -c "import numpy as np
with open('t.npy', 'wb') as f:
    for k in (1, 2): np.save(f, np.arange(3 * k, dtype='f4').reshape(k, 3))"
	run -1 "$A" -m "$M/transpose.onnx" -o out.npy t.npy
	[ "$output" = "accel-infer: array 1 of shape (3, 2) of float32 cannot join array 0 of shape (3, 1) of float32 in one .npy array; write a .npz" ]
	[ ! -e out.npy ]
	"$A" -m "$M/transpose.onnx" -o out.npz t.npy
	run -0 $PY -c "import numpy as np
z = np.load('out.npz')
print(z.files, z['y_0'].tolist(), z['y_1'].tolist())"
	[ "$output" = "['y_0', 'y_1'] [[0.0], [1.0], [2.0]] [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]" ]
	# scalars have no axis 0: refused for .npy (saying so), members in .npz
	$PY -c "import numpy as np
with open('s.npy', 'wb') as f:
    for v in (1.5, -2): np.save(f, np.float32(v))"
	run -1 "$A" -m "$M/scalar.onnx" -o out.npy s.npy
	[ "$output" = "accel-infer: array 0 is a scalar: arrays join along their axis 0 in one .npy array; write a .npz" ]
	"$A" -m "$M/scalar.onnx" -o s.npz s.npy
	run -0 $PY -c "import numpy as np
z = np.load('s.npz')
print(z.files, [z[k].shape for k in z.files], [float(z[k]) for k in z.files])"
	[ "$output" = "['y_0', 'y_1'] [(), ()] [3.0, -4.0]" ]
}

@test "accel-transcode --to npy: -o FILE.npy is (N, H, W, C), -o FILE.npz holds it as arr_0, the stream holds the same frames" {
	command -v ffmpeg >/dev/null || skip "no ffmpeg"
	T="$ROOT/build/accel-transcode"
	ffmpeg -v error -f lavfi -i testsrc2=size=32x24:rate=10:duration=0.5 -c:v libx264 -pix_fmt yuv420p clip.mp4
	"$T" --to npy clip.mp4 > frames.stream
	read_file frames.stream
	"$T" --to npy clip.mp4 | read_pipe
	"$T" --to npy -o frames.npy clip.mp4
	"$T" --to npy -o frames.npz clip.mp4
	"$T" --to npy --layout nchw --normalize -o nchw.npy clip.mp4
	run -0 $PY -c "import numpy as np
f, p, z = (np.load(n) for n in ('stream-file.npz', 'stream-pipe.npz', 'frames.npz'))
s = np.stack([f[k] for k in f.files])
assert np.array_equal(s, np.stack([p[k] for k in p.files]))
a, n = np.load('frames.npy'), np.load('nchw.npy')
assert np.array_equal(a, s) and z.files == ['arr_0'] and np.array_equal(z['arr_0'], s)
assert n.dtype == np.float32 and np.allclose(n, s.transpose(0, 3, 1, 2) / 255)
print(a.shape, a.dtype, n.shape)"
	[ "$output" = "(5, 24, 32, 3) uint8 (5, 3, 24, 32)" ]
	# A .npy or .npz is written with seeks: a FIFO named so is refused.
	mkfifo fifo.npy
	cat fifo.npy > /dev/null &
	run -1 "$T" --to npy -o fifo.npy clip.mp4
	[ "$output" = "accel-transcode: fifo.npy: a .npy is written with seeks, and the output is not a regular file" ]
}
