#!/bin/sh
# Write the seed corpus of the wav fuzz target into tests/fuzz/corpus/wav:
# headers from sox (mono, stereo, float with a fact chunk, extensible, to a
# pipe, 24- and 32-bit PCM, RIFX, Wave64), RF64 from ffmpeg -rf64 always
# (to a file and to a pipe), and crafted ones whose sizes lie (data size past the end, 0 and
# 0xFFFFFFFF, a chunk size past 1 MiB, an odd chunk with its pad byte),
# chunks in the wrong order, truncations and unsupported formats, and RF64
# and BW64 ones (ds64 missing, short, with a table, a data size past
# 2^63, a data chunk's own size). Each file is cut to its header and a few
# samples.
set -eu
cd "$(dirname "$0")/../.."
out=tests/fuzz/corpus/wav
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
sox -n -r 8000 -b 16 -c 1 "$tmp/a.wav" synth 0.002 sine 440
sox -n -r 8000 -b 8 -e unsigned -c 2 "$tmp/b.wav" synth 0.002 sine 440
sox -n -r 8000 -b 32 -e floating-point -c 2 "$tmp/c.wav" synth 0.002 sine 440
sox -n -r 8000 -b 64 -e floating-point -c 1 "$tmp/d.wav" synth 0.002 sine 440
sox -n -r 8000 -b 16 -c 2 -t wavpcm "$tmp/e.wav" synth 0.002 sine 440
sox -n -r 8000 -b 24 -c 4 "$tmp/f.wav" synth 0.002 sine 440
sox -n -r 8000 -b 16 -c 1 -t wav - synth 0.002 sine 440 2>/dev/null > "$tmp/g.wav"
sox -n -r 8000 -b 24 -c 1 "$tmp/h.wav" synth 0.002 sine 440
sox -n -r 8000 -b 24 -c 2 -t wavpcm "$tmp/i.wav" synth 0.002 sine 440
sox -n -r 8000 -b 32 -e signed-integer -c 2 "$tmp/j.wav" synth 0.002 sine 440
sox -n -r 8000 -b 16 -c 1 -B "$tmp/k.wav" synth 0.002 sine 440
sox -n -r 8000 -b 16 -c 1 "$tmp/l.w64" synth 0.002 sine 440
mv "$tmp/l.w64" "$tmp/l.wav"
for f in a b c d e f g h i j k l; do head -c 200 "$tmp/$f.wav" > "$out/sox-$f.wav"; done
ffmpeg -loglevel error -i "$tmp/a.wav" -rf64 always "$tmp/r.wav"
ffmpeg -loglevel error -i "$tmp/c.wav" -rf64 always -c:a pcm_f32le -f wav - > "$tmp/p.wav"
head -c 200 "$tmp/r.wav" > "$out/ffmpeg-rf64.wav"
head -c 200 "$tmp/p.wav" > "$out/ffmpeg-rf64-pipe.wav"
python3 - "$out" <<'PY'
import struct, sys
out = sys.argv[1]
def fmt(tag=1, ch=1, bits=16, ext=None):
    align = ch * bits // 8
    body = struct.pack('<HHIIHH', tag, ch, 8000, 8000 * align, align, bits)
    if ext is not None:
        body += struct.pack('<HHI', 22, bits, 3) + struct.pack('<H', ext) + bytes.fromhex('000000001000800000aa00389b71')
    return b'fmt ' + struct.pack('<I', len(body)) + body
def chunk(cid, body, size=None):
    return cid + struct.pack('<I', len(body) if size is None else size) + body + (b'\0' if len(body) & 1 else b'')
def wav(*chunks, riff=None):
    body = b'WAVE' + b''.join(chunks)
    return b'RIFF' + struct.pack('<I', len(body) if riff is None else riff) + body
def ds64(data, table=b'', size=None):
    body = struct.pack('<QQQI', 1000, data, 32, len(table) // 12) + table
    return chunk(b'ds64', body, size)
def rf64(*chunks, form=b'RF64'):
    return form + struct.pack('<I', 0xFFFFFFFF) + b'WAVE' + b''.join(chunks)
samples = bytes(range(64))
files = {
    'plain': wav(fmt(), chunk(b'data', samples)),
    'data-size-lies': wav(fmt(), chunk(b'data', samples, 1 << 30)),
    'data-size-zero': wav(fmt(), chunk(b'data', samples, 0)),
    'data-size-ffff': wav(fmt(), chunk(b'data', samples, 0xFFFFFFFF)),
    'riff-size-lies': wav(fmt(), chunk(b'data', samples), riff=7),
    'list-first': wav(chunk(b'LIST', b'INFOodd'), fmt(), chunk(b'data', samples)),
    'chunk-past-1mib': wav(fmt(), chunk(b'junk', b'', 2 << 20), chunk(b'data', samples)),
    'chunk-size-max': wav(chunk(b'junk', b'', 0xFFFFFFFF), fmt(), chunk(b'data', samples)),
    'data-before-fmt': wav(chunk(b'data', samples), fmt()),
    'two-fmt': wav(fmt(), fmt(), chunk(b'data', samples)),
    'fmt-short': wav(chunk(b'fmt ', b'\1\0\1\0'), chunk(b'data', samples)),
    'fmt-size-lies': wav(chunk(b'fmt ', fmt()[8:], 4000), chunk(b'data', samples)),
    'extensible-float': wav(fmt(0xFFFE, 2, 32, ext=3), chunk(b'data', samples)),
    'extensible-pcm': wav(fmt(0xFFFE, 1, 16, ext=1), chunk(b'data', samples)),
    'extensible-bad-guid': wav(fmt(0xFFFE, 1, 16, ext=1)[:-1] + b'x', chunk(b'data', samples)),
    'pcm-24': wav(fmt(1, 1, 24), chunk(b'data', samples)),
    'pcm-32-stereo': wav(fmt(1, 2, 32), chunk(b'data', samples)),
    'extensible-24-in-32': wav(fmt(0xFFFE, 2, 32, ext=1)[:26] + b'\x18\0' + fmt(0xFFFE, 2, 32, ext=1)[28:], chunk(b'data', samples)),
    'pcm-24-bad-align': wav(fmt(1, 1, 24)[:20] + b'\4\0' + fmt(1, 1, 24)[22:], chunk(b'data', samples)),
    'float-16': wav(fmt(3, 1, 16), chunk(b'data', samples)),
    'three-channels': wav(fmt(1, 3, 16), chunk(b'data', samples)),
    'bad-align': wav(fmt()[:20] + b'\3\0' + fmt()[22:], chunk(b'data', samples)),
    'odd-data': wav(fmt(), chunk(b'data', samples[:63])),
    'not-wave': b'RIFF\x10\0\0\0AVI LIST\0\0\0\0',
    'truncated': wav(fmt(), chunk(b'data', samples))[:30],
    'riff-only': b'RIFF',
    'empty': b'',
    'rf64': rf64(ds64(64), fmt(), chunk(b'data', samples, 0xFFFFFFFF)),
    'bw64': rf64(ds64(64), fmt(), chunk(b'data', samples, 0xFFFFFFFF), form=b'BW64'),
    'rf64-ds64-table': rf64(ds64(64, b'LIST' + struct.pack('<Q', 7)), chunk(b'LIST', b'INFOodd'), fmt(),
                            chunk(b'data', samples, 0xFFFFFFFF)),
    'rf64-data-own-size': rf64(ds64(1 << 40), fmt(), chunk(b'data', samples)),
    'rf64-ds64-zero': rf64(ds64(0), fmt(), chunk(b'data', samples, 0xFFFFFFFF)),
    'rf64-ds64-past-2-63': rf64(ds64(1 << 63), fmt(), chunk(b'data', samples, 0xFFFFFFFF)),
    'rf64-ds64-short': rf64(chunk(b'ds64', b'\0' * 20), fmt(), chunk(b'data', samples, 0xFFFFFFFF)),
    'rf64-no-ds64': rf64(fmt(), chunk(b'data', samples, 0xFFFFFFFF)),
    'rf64-ds64-second': rf64(fmt(), ds64(64), chunk(b'data', samples, 0xFFFFFFFF)),
    'rf64-truncated': rf64(ds64(64), fmt(), chunk(b'data', samples, 0xFFFFFFFF))[:40],
    'rf64-not-wave': b'RF64\xff\xff\xff\xffAVI ds64',
    'rifx': b'RIFX' + wav(fmt(), chunk(b'data', samples))[4:],
    'riff-not-w64': b'riff' + bytes(60),
}
for name, data in files.items():
    open('%s/%s.wav' % (out, name), 'wb').write(data)
PY
