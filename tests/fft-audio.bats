#!/usr/bin/env bats
# accel-fft: audio files libsndfile reads (FLAC, W64, AIFF; from a file and
# from a pipe), --rate, the spectrogram's axes in -o FILE.npz and --png.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	F="$ROOT/build/accel-fft"
	T="$BATS_TEST_TMPDIR"
	export XDG_CACHE_HOME="$T/cache"
	command -v sox > /dev/null || skip "sox is not installed"
	[ -e /usr/include/sndfile.h ] || skip "libsndfile is not installed"
}

# The same 16-bit samples as a WAV and in FORMAT (sox names it by suffix).
same_as_wav() {
	sox -n -r 8000 -b 16 -c 2 "$T/a.wav" synth 1 sine 1000 sine 440 gain -3
	sox "$T/a.wav" "$T/a.$1"
	"$F" --plan estimate -n 256 --out db "$T/a.wav" > "$T/w"
	"$F" --plan estimate -n 256 --out db "$T/a.$1" > "$T/x"
	cmp "$T/w" "$T/x"
	# From a pipe, decoded as it comes.
	cat "$T/a.$1" | "$F" --plan estimate -n 256 --out db > "$T/p"
	cmp "$T/w" "$T/p"
}

@test "FLAC, from a file and a pipe, gives the spectra of the same samples in a WAV" {
	same_as_wav flac
	run "$F" -v --plan estimate -n 256 -o /dev/null "$T/a.flac"
	[[ "${lines[0]}" == "accel-fft: $T/a.flac: FLAC (Free Lossless Audio Codec) (libsndfile), 2 channels, 8000 Hz, 16-bit, read as f32 per channel" ]]
}

@test "W64 and AIFF give the spectra of the same samples in a WAV" {
	same_as_wav w64
	same_as_wav aiff
}

@test "a FLAC cut short is a data error (exit 3), from a file and from a pipe, and leaves no output" {
	sox -n -r 8000 -b 16 -c 1 "$T/a.flac" synth 10 whitenoise
	head -c 30000 "$T/a.flac" > "$T/cut.flac"
	run -3 "$F" -n 256 --out db -o "$T/o.npz" "$T/cut.flac"
	[[ "${lines[0]}" == "accel-fft: $T/cut.flac: FLAC (Free Lossless Audio Codec): "* ]]
	[ ! -e "$T/o.npz" ]
	run -3 bash -c "cat '$T/cut.flac' | '$F' -n 256 --out db -o '$T/o.f32'"
	[[ "${lines[0]}" == "accel-fft: stdin: FLAC (Free Lossless Audio Codec): the file ends after "*" of the 80000 frames its header states" ]]
	[ ! -e "$T/o.f32" ]
	printf 'fLaC and not a FLAC stream at all' > "$T/bad.flac"
	run -3 "$F" "$T/bad.flac"
	[[ "$output" == "accel-fft: $T/bad.flac: "* ]]
}

@test "AIFF, W64 and AU cut short are a data error (exit 3) from a file as from a pipe; a FLAC of unknown length (written to a pipe) is whole" {
	sox -n -r 8000 -b 16 -c 2 "$T/a.wav" synth 0.5 sine 440 sine 1000
	for x in aiff w64 au; do
		sox "$T/a.wav" "$T/a.$x"
		head -c 8000 "$T/a.$x" > "$T/cut.$x"
		run -3 "$F" -n 256 --out power -o "$T/o.f32" "$T/cut.$x"
		[[ "$output" == "accel-fft: $T/cut.$x: "*": the file ends after "*" of the 4000 frames its header states" ]]
		[ ! -e "$T/o.f32" ]
		run -3 bash -c "cat '$T/cut.$x' | '$F' -n 256 --out power > /dev/null"
		[[ "$output" == *": the file ends after "*" of the 4000 frames its header states" ]]
	done
	# sox writing FLAC to a pipe cannot go back to STREAMINFO's total
	# samples: 0 there is unknown, the samples end where the file does
	sox "$T/a.wav" -t flac - | cat > "$T/p.flac"
	"$F" -n 256 --out power "$T/a.wav" > "$T/w"
	"$F" -n 256 --out power "$T/p.flac" | cmp - "$T/w"
	cat "$T/p.flac" | "$F" -n 256 --out power | cmp - "$T/w"
	# no sample at all: exit 2 as any FILE shorter than a frame
	sox -n -r 8000 -b 16 -c 1 "$T/e.aiff" trim 0 0
	run -2 "$F" -n 256 "$T/e.aiff"
	[ "$output" = "accel-fft: $T/e.aiff: 0 samples, fewer than one frame of N = 256: no row to write (--pad zero-pads them to one frame, as numpy.fft.fft(x, n=256) does)" ]
}

@test "-o FILE.npz: f, t and Sxx as scipy.signal.spectrogram gives them" {
	/usr/bin/python3 -c 'import numpy' 2> /dev/null || skip "numpy is not installed"
	sox -n -r 8000 -b 16 -c 1 "$T/t.flac" synth 1 sine 1000
	"$F" --plan estimate -n 256 --hop 128 -w hann --out power -o "$T/s.npz" "$T/t.flac"
	"$F" --plan estimate -n 256 --hop 128 -w hann --out power --npy -o "$T/s.npy" "$T/t.flac"
	/usr/bin/python3 -c "
import numpy as np
z = np.load('$T/s.npz')
f, t, S = z['f'], z['t'], z['Sxx']
assert sorted(z.files) == ['Sxx', 'f', 't'], z.files
assert f.dtype == np.float64 and t.dtype == np.float64 and S.dtype == np.float32
assert np.array_equal(f, np.fft.rfftfreq(256, 1 / 8000)), f[:4]
# 8000 samples, frames of 256 every 128: 61 frames centred at (128 k + 128) / fs.
assert np.allclose(t, (np.arange(61) * 128 + 128) / 8000), t[:4]
assert S.shape == (129, 61), S.shape
assert np.array_equal(S, np.load('$T/s.npy').T)
assert (f[S.argmax(axis=0)] == 1000).all()
"
	# --rate scales both axes; stereo gets a leading channel axis.
	sox -n -r 8000 -b 16 -c 2 "$T/s.flac" synth 1 sine 1000 sine 2000
	"$F" --plan estimate -n 256 --rate 16000 --average 2 --out db -o "$T/r.npz" "$T/s.flac"
	/usr/bin/python3 -c "
import numpy as np
z = np.load('$T/r.npz')
f, t, S = z['f'], z['t'], z['Sxx']
assert S.shape == (2, 129, 16), S.shape
assert np.array_equal(f, np.fft.rfftfreq(256, 1 / 16000))
# Rows average frames 2j and 2j+1: the mean of their centres; the last row has frame 30 only.
assert np.allclose(t[:15], (np.arange(15) * 512 + 128 + 128) / 16000) and np.isclose(t[15], (30 * 256 + 128) / 16000), t
assert f[S[0, :, 3].argmax()] == 2000 and f[S[1, :, 3].argmax()] == 4000
"
}

@test "-o FILE.npz and --png: what does not apply is a usage error (exit 2)" {
	sox -n -r 8000 -b 16 -c 2 "$T/s.flac" synth 0.5 sine 1000
	run -2 "$F" -o "$T/o.npz" "$T/s.flac"
	[ "${lines[0]}" = "accel-fft: -o FILE.npz holds real spectra (Sxx): add --out mag, power or db (complex rows: --npy)" ]
	run -2 "$F" --png "$T/o.png" --text "$T/s.flac"
	[ "${lines[0]}" = "accel-fft: --png writes a format of its own: --text and --npy do not apply" ]
	run -2 "$F" --png "$T/o.png" "$T/s.flac"
	[ "${lines[0]}" = "accel-fft: --png draws one spectrum a row: $T/s.flac has 2 channels (add --channel K or --mix mono)" ]
	run -2 "$F" --png "$T/o.png" -o "$T/o.f32" "$T/s.flac"
	[ "${lines[0]}" = "accel-fft: --png: the spectra go to -o FILE.npz only (drop -o, or name a .npz)" ]
	run -2 "$F" --png "$T/o.png" --out mag "$T/s.flac"
	[ "${lines[0]}" = "accel-fft: --png draws dB: give --out db or no --out" ]
	[ ! -e "$T/o.png" ]
	[ ! -e "$T/o.npz" ]
	[ ! -e "$T/o.f32" ]
	touch "$T/old.png"
	run -1 "$F" --png "$T/old.png" --channel 0 "$T/s.flac"
	[ "${lines[0]}" = "accel-fft: $T/old.png already exists; use -f to overwrite it" ]
	[ ! -s "$T/old.png" ]
}

@test "--png draws a PNG whose brightest row is the tone's frequency" {
	command -v gnuplot > /dev/null || skip "gnuplot is not installed"
	sox -n -r 8000 -b 16 -c 1 "$T/t.flac" synth 1 sine 1000
	"$F" --plan estimate -n 256 --hop 64 -w hann --png "$T/t.png" "$T/t.flac"
	# PNG signature, then IHDR: 1000 x 600.
	[ "$(head -c 8 "$T/t.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
	[ "$(head -c 24 "$T/t.png" | tail -c 12 | od -An -tx1 | tr -d ' \n')" = 49484452000003e800000258 ]
	# Decode it (zlib, PNG filters) and look down the middle column: the
	# image spans the plot's height, 0 to 4000 Hz, and its brightest
	# (yellow) pixel is a quarter of the way up.
	/usr/bin/python3 -c "
import struct, zlib
d = open('$T/t.png', 'rb').read()
pos, idat = 8, b''
while pos < len(d):
    n, kind = struct.unpack('>I4s', d[pos:pos + 8])
    body = d[pos + 8:pos + 8 + n]
    if kind == b'IHDR':
        w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
    if kind == b'IDAT':
        idat += body
    pos += 12 + n
assert depth == 8 and ctype in (2, 6), (depth, ctype)
bpp = 3 if ctype == 2 else 4
raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
for y in range(h):
    ft, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if ft == 1: line[i] = (line[i] + a) & 255
        elif ft == 2: line[i] = (line[i] + b) & 255
        elif ft == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif ft == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line); prev = line
x = w // 2
px = [tuple(rows[y][x * bpp:x * bpp + 3]) for y in range(h)]
# Viridis holds no grey: the image's rows are those whose pixel is not grey.
img = [y for y in range(h) if max(px[y]) - min(px[y]) > 40]
top, bottom = min(img), max(img)
bright = max(img, key=lambda y: px[y][0] + px[y][1] - px[y][2])
up = (bottom + 0.5 - bright) / (bottom - top + 1)
assert abs(up - 0.25) < 0.02, (top, bottom, bright, up)
print(up)
"
}
