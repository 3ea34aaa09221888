#!/bin/sh
# Write the seed corpus of the fuzz targets into tests/fuzz/corpus: small
# files from zstd, gzip, lz4 and accel-compress, and crafted ones (sizes
# that lie, frames across the targets' 2 KiB parallel limit, skippable
# frames, empty frames and members, truncations, trailing bytes, lz4's
# legacy frames).
# Usage: tests/fuzz/corpus.sh [ACCEL_COMPRESS]  (default build/accel-compress)
set -eu
cd "$(dirname "$0")/../.."
ac=${1:-build/accel-compress}
out=tests/fuzz/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out/zstd" "$out/gzip" "$out/lz4" "$out/frame"

# Plain data: text that compresses, bytes that do not, and one of each size
# around the 2 KiB limit.
python3 -c 'import sys; sys.stdout.write("".join("line %d of the seed corpus\n" % i for i in range(300)))' > "$tmp/text"
python3 -c 'import random, sys; r = random.Random(7); sys.stdout.buffer.write(bytes(r.getrandbits(8) for _ in range(3000)))' > "$tmp/rand"
head -c 100 "$tmp/text" > "$tmp/small"
: > "$tmp/empty"

for f in text rand small empty; do
	zstd -q -c -19 --no-check "$tmp/$f" > "$out/zstd/$f.zst"
	zstd -q -c --check < "$tmp/$f" > "$out/zstd/$f-pipe.zst"      # no content size
	gzip -c -n "$tmp/$f" > "$out/gzip/$f.gz"
	lz4 -q -c "$tmp/$f" > "$out/lz4/$f.lz4"
	lz4 -q -c --content-size -BD -BX "$tmp/$f" > "$out/lz4/$f-size.lz4"
	"$ac" -q -c -B 1K < "$tmp/$f" > "$out/zstd/$f-accel.zst"
	"$ac" -q -c -B 1K -F gzip < "$tmp/$f" > "$out/gzip/$f-accel.gz"
	"$ac" -q -c -B 1K -F lz4 < "$tmp/$f" > "$out/lz4/$f-accel.lz4"
	lz4 -q -c -l "$tmp/$f" > "$out/lz4/legacy-$f.lz4"
done
touch -t 202001010000 "$tmp/text"
gzip -c -N "$tmp/text" > "$out/gzip/fname.gz"
cat "$out/zstd/small.zst" "$out/zstd/rand.zst" "$out/zstd/text-pipe.zst" > "$out/zstd/multi.zst"
cat "$out/gzip/small.gz" "$out/gzip/text-accel.gz" "$out/gzip/empty.gz" > "$out/gzip/multi.gz"
cat "$out/lz4/small.lz4" "$out/lz4/rand-size.lz4" > "$out/lz4/multi.lz4"
# lz4 frames of several independent 64 KiB blocks, decoded in parts
python3 -c 'import sys; sys.stdout.write("".join("line %d of the long seed\n" % (i % 50) for i in range(3000)))' > "$tmp/long"
lz4 -q -c -B4 "$tmp/long" > "$out/lz4/blocks.lz4"
lz4 -q -c -B4 -BX --content-size "$tmp/long" > "$out/lz4/blocks-bx-size.lz4"

# Debian's python3, for its python3-xxhash
/usr/bin/python3 - "$out" "$tmp" <<'PY'
import struct, sys, zlib
out, tmp = sys.argv[1], sys.argv[2]
def rd(p): return open(p, 'rb').read()
def wr(p, b): open(out + '/' + p, 'wb').write(b)
skip = struct.pack('<II', 0x184D2A50, 5) + b'hello'
for fmt, ext in (('zstd', 'zst'), ('lz4', 'lz4')):
    small = rd('%s/%s/small.%s' % (out, fmt, ext))
    wr('%s/skip-first.%s' % (fmt, ext), skip + small)
    wr('%s/skip-between.%s' % (fmt, ext), small + skip + small)
    wr('%s/truncated.%s' % (fmt, ext), small[:-3])
    wr('%s/trailing.%s' % (fmt, ext), small + b'junk')
wr('zstd/skip-only.zst', skip + skip)
# zstd: the content size in the header lies (single segment, 1-byte FCS).
s = bytearray(rd(out + '/zstd/small.zst'))
fhd = s[4]
if fhd & 0x20 and (fhd >> 6) == 0:
    s[5] = (s[5] + 7) & 0xff
    wr('zstd/lying-fcs.zst', bytes(s))
# zstd: a 2-byte FCS claiming more than the 2 KiB limit on a small frame,
# and a window of 2 GiB (windowLog 31) on a tiny frame.
t = bytearray(rd(out + '/zstd/text-accel.zst'))
wr('zstd/window-31.zst', b'\x28\xb5\x2f\xfd' + bytes([0x00, (31 - 10) << 3]) + b'\x01\x00\x00')
# zstd: a raw block claiming 100 KiB in a 20-byte frame.
wr('zstd/lying-block.zst', b'\x28\xb5\x2f\xfd\x20\x05' + struct.pack('<I', (100 << 10) << 3 | 1)[:3] + b'hello')
# gzip: our 'AC' member size spans the next member; ISIZE lies; the member
# size is too small.
a = rd(out + '/gzip/small-accel.gz'); b = rd(out + '/gzip/text-accel.gz')
def ac(m, total=None, isize=None):
    m = bytearray(m)
    if total is not None: m[16:20] = struct.pack('<I', total)
    if isize is not None: m[20:24] = struct.pack('<I', isize)
    return bytes(m)
first_len = struct.unpack('<I', b[16:20])[0]
wr('gzip/ac-spans-next.gz', ac(b[:first_len], total=first_len + len(a)) + b[first_len:] + a)
# The 'AC' member size and content size of the first member cover the
# second member exactly (its trailer and ISIZE end the span).
wr('gzip/ac-spans-exact.gz', ac(a, total=len(a) + first_len, isize=struct.unpack('<I', b[20:24])[0]) + b[:first_len])
wr('gzip/ac-isize-lies.gz', ac(a, isize=struct.unpack('<I', a[20:24])[0] + 1))
wr('gzip/ac-too-small.gz', ac(a, total=20))
wr('gzip/ac-plus-plain.gz', ac(a, total=len(a) + 5) + rd(out + '/gzip/small.gz'))
g = rd(out + '/gzip/small.gz')
wr('gzip/truncated.gz', g[:-4])
wr('gzip/trailing-zeros.gz', g + b'\0' * 8)
wr('gzip/trailing-junk.gz', g + b'junk')
# gzip -d: zeros then junk, and a skippable frame, are trailing garbage; a
# lone byte is a member cut short.
wr('gzip/trailing-zeros-junk.gz', g + b'\0' * 8 + b'junk')
wr('gzip/trailing-skippable.gz', g + skip)
wr('gzip/trailing-byte.gz', g + b'j')
# lz4 legacy frames: two blocks after one magic (each block of lz4 -l alone
# is at most 8 MiB), before and after a frame, followed by junk, truncated
# in a block and in a block size.
lt, ls = rd(out + '/lz4/legacy-text.lz4'), rd(out + '/lz4/legacy-small.lz4')
lsmall = rd(out + '/lz4/small.lz4')
wr('lz4/legacy-two-blocks.lz4', lt + ls[4:])
wr('lz4/legacy-then-frame.lz4', ls + lsmall + lt)
wr('lz4/frame-then-legacy.lz4', lsmall + ls + skip + ls)
wr('lz4/legacy-trailing.lz4', ls + b'junk')
wr('lz4/legacy-truncated.lz4', lt[:-3])
wr('lz4/legacy-cut-size.lz4', ls + b'\x10\x00')
# gzip with a header CRC (FHCRC) and a comment (FCOMMENT).
body = zlib.compressobj(6, zlib.DEFLATED, -15)
data = b'header crc and comment\n'
defl = body.compress(data) + body.flush()
hdr = bytes([0x1f, 0x8b, 8, 0x12, 0, 0, 0, 0, 0, 3]) + b'a comment\0'
hdr += struct.pack('<H', zlib.crc32(hdr) & 0xffff)
wr('gzip/fhcrc.gz', hdr + defl + struct.pack('<II', zlib.crc32(data), len(data)))
bad = bytearray(hdr); bad[-1] ^= 0xff
wr('gzip/fhcrc-bad.gz', bytes(bad) + defl + struct.pack('<II', zlib.crc32(data), len(data)))
# lz4: the content size lies; a block bigger than the frame's maximum.
# The header checksum is the second byte of XXH32 (seed 0) of the frame
# descriptor (LZ4 Frame Format, "Header Checksum").
from xxhash import xxh32_intdigest as xxh32
l = bytearray(rd(out + '/lz4/small-size.lz4'))
if l[4] & 0x08:
    assert l[14] == (xxh32(bytes(l[4:14])) >> 8) & 0xff
    for name, delta in (('lying-size-more', 9), ('lying-size-less', -9), ('lying-size-huge', 1 << 40)):
        m = bytearray(l)
        m[6:14] = struct.pack('<Q', (struct.unpack('<Q', bytes(l[6:14]))[0] + delta) % (1 << 64))
        m[14] = (xxh32(bytes(m[4:14])) >> 8) & 0xff
        wr('lz4/%s.lz4' % name, bytes(m))
# gzip: BGZF blocks (SAM/BAM Format Specification 4.1: FEXTRA 'BC', BSIZE
# the block's size less 1) of 30000 bytes, and the empty EOF block.
def bgzf_block(d):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = c.compress(d) + c.flush()
    return (struct.pack('<BBBBIBBHBBHH', 31, 139, 8, 4, 0, 0, 255, 6, 66, 67, 2, 25 + len(body)) + body +
            struct.pack('<II', zlib.crc32(d), len(d)))
seed = b''.join(b'line %d of the bgzf seed\n' % (i % 40) for i in range(3000))
wr('gzip/bgzf.gz', b''.join(bgzf_block(seed[i:i + 30000]) for i in range(0, len(seed), 30000)) + bgzf_block(b''))
PY
cp "$out"/zstd/* "$out"/gzip/* "$out"/lz4/* "$out/frame/"
ls "$out"/* | wc -l
