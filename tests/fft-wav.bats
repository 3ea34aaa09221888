#!/usr/bin/env bats
# accel-fft: WAV input (detected by its header, sizes that lie) and the
# FFTW wisdom cache.

bats_require_minimum_version 1.5.0

load lib/common

setup() {
	ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
	F="$ROOT/build/accel-fft"
	T="$BATS_TEST_TMPDIR"
	export XDG_CACHE_HOME="$T/cache"
	command -v sox > /dev/null || skip "sox is not installed"
}

# wav FILE [fmt-chunk-bytes-hex]: a WAV file written by python's own bytes
# (header fields given, so they can lie): wav OUT CHANNELS BITS TAG
# DATASIZE NSAMPLES [TRAILER].
mkwav() {
	/usr/bin/python3 -c "
import struct, sys
out, ch, bits, tag, size, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
trailer = sys.argv[7].encode() if len(sys.argv) > 7 else b''
align = ch * bits // 8
fmt = struct.pack('<HHIIHH', tag, ch, 8000, 8000 * align, align, bits)
data = bytes((i * 37 + 11) % 256 for i in range(n * align))
body = b'WAVE' + b'fmt ' + struct.pack('<I', len(fmt)) + fmt + b'data' + struct.pack('<I', size) + data + trailer
open(out, 'wb').write(b'RIFF' + struct.pack('<I', len(body)) + body)
" "$@"
}

@test "a 16-bit mono WAV is read as i16 samples after its header" {
	sox -n -r 8000 -b 16 -c 1 "$T/a.wav" synth 1 sine 440 gain -3
	sox "$T/a.wav" -t s16 "$T/a.i16"
	"$F" --plan estimate -n 800 --out db "$T/a.wav" > "$T/w"
	"$F" --plan estimate -t i16 -n 800 --out db "$T/a.i16" > "$T/r"
	cmp "$T/w" "$T/r"
	[ "$(stat -c %s "$T/w")" -eq $((10 * 401 * 4)) ]
	run "$F" -v --plan estimate -n 800 "$T/a.wav" -o /dev/null
	[[ "$output" == *"accel-fft: $T/a.wav: WAV, 1 channel, 8000 Hz, 16-bit, read as i16"* ]]
}

@test "a stereo WAV is two real channels (as raw --channels 2); --iq reads it as I/Q (cf32, cu8)" {
	sox -n -r 8000 -e floating-point -b 32 -c 2 "$T/s.wav" synth 1 sine 440 sine 445
	sox "$T/s.wav" -t f32 "$T/s.cf32"
	"$F" --plan estimate -n 1000 "$T/s.wav" > "$T/w"
	"$F" --plan estimate -t f32 --channels 2 -n 1000 "$T/s.cf32" > "$T/r"
	cmp "$T/w" "$T/r"
	# 8 rows of two half spectra (501 complex bins each).
	[ "$(stat -c %s "$T/w")" -eq $((8 * 2 * 501 * 8)) ]
	"$F" --plan estimate --iq -n 1000 "$T/s.wav" > "$T/w"
	"$F" --plan estimate -n 1000 "$T/s.cf32" > "$T/r"
	cmp "$T/w" "$T/r"
	sox -n -r 8000 -e unsigned -b 8 -c 2 "$T/u.wav" synth 1 sine 440 sine 445
	sox "$T/u.wav" -t u8 "$T/u.raw"
	"$F" --plan estimate --iq -n 1000 "$T/u.wav" > "$T/w"
	"$F" --plan estimate -t cu8 -n 1000 "$T/u.raw" > "$T/r"
	cmp "$T/w" "$T/r"
	"$F" --plan estimate -n 1000 "$T/u.wav" > "$T/w"
	"$F" --plan estimate -t u8 --channels 2 -n 1000 "$T/u.raw" > "$T/r"
	cmp "$T/w" "$T/r"
	run -0 "$F" -v --iq --plan estimate -n 1000 -o /dev/null "$T/u.wav"
	[[ "$output" == *"accel-fft: $T/u.wav: WAV, 2 channels, 8000 Hz, 8-bit, read as cu8 (I/Q)"* ]]
}

@test "a WAV streamed through a pipe (sox's data size is a placeholder) is read to its end" {
	sox -n -r 8000 -b 16 -c 1 "$T/a.wav" synth 1 sine 440
	sox "$T/a.wav" -t s16 "$T/a.i16"
	sox "$T/a.wav" -t wav - 2>/dev/null | "$F" --plan estimate -n 800 > "$T/w"
	"$F" --plan estimate -t i16 -n 800 "$T/a.i16" > "$T/r"
	cmp "$T/w" "$T/r"
}

@test "the data size bounds the samples: a chunk after the data is not read as samples" {
	mkwav "$T/t.wav" 1 16 1 2000 1000 "LIST....trailing chunk"
	mkwav "$T/p.wav" 1 16 1 2000 1000
	"$F" --plan estimate -n 100 "$T/t.wav" > "$T/a"
	"$F" --plan estimate -n 100 "$T/p.wav" > "$T/b"
	cmp "$T/a" "$T/b"
	[ "$(stat -c %s "$T/a")" -eq $((10 * 51 * 8)) ]
	# A size larger than the file: what is there is read (as sox writes
	# to pipes), not an error.
	mkwav "$T/l.wav" 1 16 1 1000000 1000
	"$F" --plan estimate -n 100 "$T/l.wav" > "$T/c"
	cmp "$T/a" "$T/c"
	# A size of 0 or 0xFFFFFFFF means to the end.
	mkwav "$T/z.wav" 1 16 1 0 1000
	"$F" --plan estimate -n 100 "$T/z.wav" > "$T/d"
	cmp "$T/a" "$T/d"
	mkwav "$T/f.wav" 1 16 1 4294967295 1000
	"$F" --plan estimate -n 100 "$T/f.wav" > "$T/e"
	cmp "$T/a" "$T/e"
	# --npy: the row count of the header follows what was read.
	"$F" --plan estimate -n 100 --npy -o "$T/l.npy" "$T/l.wav"
	/usr/bin/python3 -c "import numpy as np; assert np.load('$T/l.npy').shape == (10, 51)"
}

@test "24- and 32-bit PCM WAV (plain and WAVE_FORMAT_EXTENSIBLE, mono and stereo) against numpy, through sox's f64" {
	/usr/bin/python3 -c 'import numpy as np; np.random.default_rng(5).uniform(-0.9, 0.9, 16000).astype("<f4").tofile("'"$T"'/n.f32")'
	: > "$T/list"
	for c in 1 2; do
		for spec in "24 wav" "24 wavpcm" "32 wav" "32 wavpcm"; do
			set -- $spec
			w="$T/$1.$2.$c.wav"
			sox -r 8000 -t f32 -c $c "$T/n.f32" -e signed-integer -b $1 -t $2 "$w"
			sox "$w" -t f64 "$w.f64"
			# Stereo read as I/Q here: numpy's reference is a complex FFT.
			t=$([ $c = 2 ] && echo cf64 || echo f64)
			"$F" --plan estimate -n 500 -w hann $([ $c = 2 ] && echo --iq) "$w" > "$w.out"
			echo "-t $t -n 500 -w hann $w.f64 $w.out" >> "$T/list"
			# The samples' integer value over 2^23 (2^31): the bytes of the
			# same values as doubles.
			cmp "$w.out" <("$F" --plan estimate -t $t -n 500 -w hann "$w.f64")
		done
	done
	run /usr/bin/python3 "$ROOT/tests/fixtures/fft/ref.py" checks "$T/list"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c ' rel_l2 ' <<< "$output")" -eq 8 ]
	xxd -s 20 -l 2 -p "$T/24.wav.1.wav" | grep -qx feff
	xxd -s 20 -l 2 -p "$T/24.wavpcm.2.wav" | grep -qx 0100
	run "$F" -v --plan estimate -n 500 -o /dev/null "$T/24.wav.2.wav"
	[[ "$output" == *"accel-fft: $T/24.wav.2.wav: WAV, 2 channels, 8000 Hz, 24-bit, read as 2 channels of i24"* ]]
	run "$F" -v --iq --plan estimate -n 500 -o /dev/null "$T/24.wav.2.wav"
	[[ "$output" == *"accel-fft: $T/24.wav.2.wav: WAV, 2 channels, 8000 Hz, 24-bit, read as ci24 (I/Q)"* ]]
	run "$F" -v --plan estimate -n 500 -o /dev/null "$T/32.wavpcm.1.wav"
	[[ "$output" == *"accel-fft: $T/32.wavpcm.1.wav: WAV, 1 channel, 8000 Hz, 32-bit, read as i32"* ]]
}

@test "WAV headers that are not supported or malformed are exit 3 with the reason" {
	mkwav "$T/12.wav" 1 12 1 300 100
	run "$F" "$T/12.wav"
	[ "$status" -eq 3 ]
	[ "$output" = "accel-fft: $T/12.wav: WAV header: format 1 with 12-bit samples is not supported (8-, 16-, 24- or 32-bit PCM, 32- or 64-bit float)" ]
	mkwav "$T/0.wav" 0 16 1 600 100
	run "$F" "$T/0.wav"
	[ "$status" -eq 3 ]
	[ "$output" = "accel-fft: $T/0.wav: WAV header: 0 channels" ]
	mkwav "$T/a.wav" 1 16 1 200 100
	head -c 30 "$T/a.wav" > "$T/cut.wav"
	run "$F" "$T/cut.wav"
	[ "$status" -eq 3 ]
	[ "$output" = "accel-fft: $T/cut.wav: WAV header: the input ends inside the header (at byte 30)" ]
	printf 'RIFF\0\0\0\0AVI LIST' > "$T/avi"
	run "$F" "$T/avi"
	[ "$status" -eq 3 ]
	[ "$output" = "accel-fft: $T/avi: WAV header: a RIFF file that is not WAVE" ]
	# An odd data size is a partial sample: exit 3 unless --pad.
	mkwav "$T/odd.wav" 1 16 1 201 101
	run "$F" -n 10 "$T/odd.wav"
	[ "$status" -eq 3 ]
	[[ "$output" == *"partial sample at the end of input: 1 of the 2 bytes of a i16 sample at byte offset 244"* ]]
	run "$F" -n 10 --pad -o "$T/o" "$T/odd.wav"
	[ "$status" -eq 0 ]
	[ "$(stat -c %s "$T/o")" -eq $((11 * 6 * 8)) ]
}

@test "RF64 and BW64 (ffmpeg -rf64 always, to a file and to a pipe) are read as their samples, against numpy" {
	command -v ffmpeg > /dev/null || skip "ffmpeg is not installed"
	/usr/bin/python3 -c 'import numpy' 2>/dev/null || skip "python3-numpy is not installed"
	sox -n -r 8000 -b 16 -c 1 "$T/m.wav" synth 1 sine 440 gain -3
	sox -n -r 8000 -e floating-point -b 32 -c 2 "$T/s.wav" synth 1 sine 440 sine 445
	sox "$T/m.wav" -t s16 "$T/m.i16"
	sox "$T/s.wav" -t f32 "$T/s.cf32"
	ffmpeg -loglevel error -i "$T/m.wav" -rf64 always "$T/m.rf64.wav"
	ffmpeg -loglevel error -i "$T/s.wav" -rf64 always -c:a pcm_f32le "$T/s.rf64.wav"
	[ "$(head -c 4 "$T/m.rf64.wav")" = RF64 ] && [ "$(head -c 4 "$T/s.rf64.wav")" = RF64 ]
	# BW64 is RF64 under another name.
	{ printf BW64; tail -c +5 "$T/m.rf64.wav"; } > "$T/m.bw64.wav"
	: > "$T/list"
	for w in m.rf64 m.bw64 s.rf64; do
		"$F" --plan estimate -n 800 -w hann --out power "$T/$w.wav" > "$T/$w.out"
	done
	cmp "$T/m.rf64.out" <("$F" --plan estimate -t i16 -n 800 -w hann --out power "$T/m.i16")
	cmp "$T/m.bw64.out" "$T/m.rf64.out"
	cmp "$T/s.rf64.out" <("$F" --plan estimate -t f32 --channels 2 -n 800 -w hann --out power "$T/s.cf32")
	"$F" --plan estimate --iq -n 800 -w hann --out power "$T/s.rf64.wav" > "$T/s.iq.out"
	# Streamed, ffmpeg leaves ds64's sizes 0 and the data size 0xFFFFFFFF:
	# read to the end.
	ffmpeg -loglevel error -i "$T/m.wav" -rf64 always -f wav - | "$F" --plan estimate -n 800 -w hann --out power > "$T/p.out"
	cmp "$T/p.out" "$T/m.rf64.out"
	echo "-t i16 -n 800 -w hann --out power $T/m.i16 $T/m.rf64.out" >> "$T/list"
	echo "-t cf32 -n 800 -w hann --out power $T/s.cf32 $T/s.iq.out" >> "$T/list"
	run /usr/bin/python3 "$ROOT/tests/fixtures/fft/ref.py" checks "$T/list"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c ' rel_l2 ' <<< "$output")" -eq 2 ]
	[[ "$output" == *"rows 10 bins 401 "* ]]
	run "$F" -v --plan estimate -n 800 -o /dev/null "$T/m.bw64.wav"
	[[ "$output" == *"accel-fft: $T/m.bw64.wav: WAV (BW64), 1 channel, 8000 Hz, 16-bit, read as i16"* ]]
}

@test "RF64: ds64's data size bounds the samples (a chunk after them is not read); an odd chunk before them is padded" {
	# ds64's data size 2000 bytes (1000 i16 samples), the data chunk's
	# 0xFFFFFFFF; an odd LIST chunk with its pad byte before the data and
	# a trailing chunk after it.
	/usr/bin/python3 -c "
import struct
fmt = struct.pack('<HHIIHH', 1, 1, 8000, 16000, 2, 16)
data = bytes((i * 37 + 11) % 256 for i in range(2000))
body = (b'WAVE' + b'ds64' + struct.pack('<IQQQI', 28, 0, len(data), 1000, 0) + b'LIST' + struct.pack('<I', 7) + b'INFOodd\0' +
        b'fmt ' + struct.pack('<I', 16) + fmt + b'data' + struct.pack('<I', 0xFFFFFFFF) + data + b'junk' + struct.pack('<I', 4) + b'tail')
open('$T/r.wav', 'wb').write(b'RF64' + struct.pack('<I', 0xFFFFFFFF) + body)
open('$T/r.i16', 'wb').write(data)
"
	"$F" --plan estimate -n 100 "$T/r.wav" > "$T/a"
	"$F" --plan estimate -t i16 -n 100 "$T/r.i16" > "$T/b"
	cmp "$T/a" "$T/b"
	[ "$(stat -c %s "$T/a")" -eq $((10 * 51 * 8)) ]
}

@test "RIFX and Sony Wave64 are read through libsndfile (fft-audio.bats); RF64 without ds64 is exit 3, not samples" {
	sox -n -r 8000 -b 16 -c 1 "$T/l.wav" synth 0.1 sine 440
	sox "$T/l.wav" -B "$T/x.wav"
	[ "$(head -c 4 "$T/x.wav")" = RIFX ]
	"$F" --plan estimate -n 100 "$T/l.wav" > "$T/l"
	"$F" --plan estimate -n 100 "$T/x.wav" > "$T/x"
	cmp "$T/l" "$T/x"
	sox "$T/l.wav" "$T/x.w64"
	"$F" --plan estimate -n 100 "$T/x.w64" > "$T/w"
	cmp "$T/l" "$T/w"
	mkwav "$T/a.wav" 1 16 1 2000 1000
	{ printf RF64; tail -c +5 "$T/a.wav"; } > "$T/n.wav"
	run "$F" "$T/n.wav"
	[ "$status" -eq 3 ]
	[ "$output" = "accel-fft: $T/n.wav: WAV header: an RF64 or BW64 file without a ds64 chunk first" ]
	# Raw samples that merely start with "riff" are samples.
	{ printf riff; head -c 8188 /dev/zero; } > "$T/raw"
	run "$F" --plan estimate -n 1024 -o "$T/o" "$T/raw"
	[ "$status" -eq 0 ]
	[ "$(stat -c %s "$T/o")" -eq 8192 ]
}

@test "-t reads a file as raw samples, WAV header or not" {
	mkwav "$T/a.wav" 1 16 1 2000 1000
	run "$F" --plan estimate -t i16 -n 1022 -o "$T/o" "$T/a.wav"
	[ "$status" -eq 0 ]
	[ "$(stat -c %s "$T/o")" -eq $((512 * 8)) ]
}

@test "a tone made by sox lands in its bin at the expected level" {
	sox -n -r 48000 -e floating-point -b 32 -c 1 "$T/tone.wav" synth 1 sine 1000 gain -6.0206
	# Amplitude 0.5, N = 48000 (1 Hz bins), rect window, --norm forward:
	# |X[1000]| = 0.25, 10 log10(0.0625) = -12.04 dB.
	"$F" -n 48000 --norm forward --out db --text "$T/tone.wav" > "$T/db.csv"
	run /usr/bin/python3 -c "
import numpy as np
a = np.loadtxt('$T/db.csv', delimiter=',')
print(a.argmax(), '%.2f' % a.max())"
	[ "$output" = "1000 -12.04" ]
}

@test "FFTW wisdom: measured plans are kept in XDG_CACHE_HOME/accel and reused" {
	sox -n -r 8000 -b 16 -c 1 "$T/a.wav" synth 2 sine 440
	"$F" --plan measure -n 4096 "$T/a.wav" > "$T/a"
	w="$XDG_CACHE_HOME/accel/fftw3f.wisdom"
	[ -s "$w" ]
	head -c 9 "$w" | grep -q '^(fftw-3\.'
	cp "$w" "$T/w1"
	# The same job again plans from the wisdom: nothing new is written.
	"$F" --plan measure -n 4096 "$T/a.wav" > "$T/b"
	cmp "$w" "$T/w1"
	cmp "$T/a" "$T/b"
	"$F" --plan estimate -n 4096 "$T/a.wav" > /dev/null
	cmp "$w" "$T/w1"
	# Another size adds to it.
	"$F" --plan measure -n 1000 "$T/a.wav" > /dev/null
	run ! cmp -s "$w" "$T/w1"
	ls "$XDG_CACHE_HOME/accel" | grep -v -q tmp || true
	[ "$(ls "$XDG_CACHE_HOME/accel")" = "fftw3f.wisdom" ]
	# A cache that cannot be written is not an error.
	XDG_CACHE_HOME=/proc/nonexistent run "$F" --plan measure -n 512 -o "$T/c" "$T/a.wav"
	[ "$status" -eq 0 ]
	[ -s "$T/c" ]
}

# stereo OUT: 1 s at 8000 Hz, 16-bit, 440 Hz on the left, 1000 Hz on the
# right, written by numpy.
stereo() {
	/usr/bin/python3 -c "
import numpy as np, wave, sys
t = np.arange(8000) / 8000
x = np.stack([0.5 * np.sin(2 * np.pi * 440 * t), 0.25 * np.sin(2 * np.pi * 1000 * t)], 1)
w = wave.open(sys.argv[1], 'wb'); w.setnchannels(2); w.setsampwidth(2); w.setframerate(8000)
w.writeframes((x * 32767).astype('<i2').tobytes()); w.close()
" "$1"
}

@test "a stereo WAV with a tone per channel: one half spectrum per channel, its peak where numpy.fft.rfft has it; --channel and --mix mono" {
	/usr/bin/python3 -c 'import numpy' 2>/dev/null || skip "python3-numpy is not installed"
	stereo "$T/s.wav"
	"$F" --plan estimate -n 1024 -w hann --out db --npy -o "$T/s.npy" "$T/s.wav"
	"$F" --plan estimate -n 1024 -w hann --out db --channel 1 --npy -o "$T/r.npy" "$T/s.wav"
	"$F" --plan estimate -n 1024 --out mag --mix mono --npy -o "$T/m.npy" "$T/s.wav"
	run -0 /usr/bin/python3 -c "
import numpy as np, wave
w = wave.open('$T/s.wav'); x = np.frombuffer(w.readframes(8000), '<i2').reshape(-1, 2) / 32768
win = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(1024) / 1024)
a = np.load('$T/s.npy')
assert a.shape == (7, 2, 513), a.shape
for c in range(2):
    for k in range(7):
        ref = np.abs(np.fft.rfft(x[k * 1024:(k + 1) * 1024, c] * win)) ** 2
        assert np.argmax(a[k, c]) == np.argmax(ref), (k, c)
        assert np.max(np.abs(10 ** (a[k, c] / 10) - ref)) < 1e-4 * ref.max(), (k, c)
print(np.argmax(a[0, 0]), np.argmax(a[0, 1]))
r = np.load('$T/r.npy')
assert r.shape == (7, 513) and np.array_equal(r, a[:, 1])
m = np.load('$T/m.npy')
ref = np.abs(np.fft.rfft(x[:7 * 1024].mean(1).reshape(7, 1024), axis=1))
assert m.shape == (7, 513) and np.max(np.abs(m - ref)) < 1e-4 * ref.max()
"
	# 440 Hz and 1000 Hz at 7.8125 Hz a bin.
	[ "$output" = "56 128" ]
	# The README's music.wav example: (frames, channels, N/2+1).
	"$F" -n 2048 -w hann --overlap 0.75 --out power --npy -o "$T/stft.npy" "$T/s.wav"
	run -0 /usr/bin/python3 -c "import numpy as np; print(np.load('$T/stft.npy').shape)"
	[ "$output" = "(12, 2, 1025)" ]
	# CSV: one line per frame, the channels' bins one after the other.
	"$F" --plan estimate -n 1024 --out db --text "$T/s.wav" > "$T/s.csv"
	[ "$(wc -l < "$T/s.csv")" -eq 7 ]
	[ "$(awk -F, '{ print NF }' "$T/s.csv" | sort -u)" = 1026 ]
}

@test "channel options: out of range and conflicting ones are usage errors (exit 2)" {
	stereo "$T/s.wav"
	run -2 "$F" --channel 2 "$T/s.wav"
	[ "${lines[0]}" = "accel-fft: --channel 2: the input has 2 channels (0 to 1)" ]
	run -2 "$F" --channel 0 --mix mono "$T/s.wav"
	[ "${lines[0]}" = "accel-fft: --channel and --mix mono exclude each other" ]
	run -2 "$F" --mix stereo "$T/s.wav"
	[ "${lines[0]}" = "accel-fft: --mix: 'stereo' is not mono (the mean of every channel)" ]
	run -2 "$F" --iq -t i16 "$T/s.wav"
	[ "${lines[0]}" = "accel-fft: --iq reads a stereo WAV as I/Q: with --type, name a complex type (ci16, cf32 ...)" ]
	run -2 "$F" --channels 3 "$T/s.wav"
	[ "${lines[0]}" = "accel-fft: --channels 3: $T/s.wav is a WAV of 2 channels" ]
	sox -n -r 8000 -b 16 -c 1 "$T/m.wav" synth 1 sine 440
	run -2 "$F" --iq "$T/m.wav"
	[ "${lines[0]}" = "accel-fft: --iq: $T/m.wav has 1 channel; I/Q is two (I left, Q right)" ]
}
