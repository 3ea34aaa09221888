#!/usr/bin/env python3
"""Check the seek table at the end of FILE against zstd's seekable format
("Zstandard Seekable Format" 0.1.0, zstd's contrib/seekable_format): a
skippable frame (magic 0x184D2A5E, its size) of entries, a 9-byte footer
(frame count, descriptor, magic 0x8F92EAB1), the compressed sizes summing
to the bytes before the table, and each entry matching the zstd frame it
names: its header's content size and, with the checksum flag, its last 4
bytes. With PLAIN (the original content) each entry's checksum is also
checked against XXH64 of its bytes (python3-xxhash) and the decompressed
sizes against the content's length. Prints "frames N checksums 0|1"."""
import struct, sys

path = sys.argv[1]
d = open(path, 'rb').read()
plain = open(sys.argv[2], 'rb').read() if len(sys.argv) > 2 else None
n, desc, magic = struct.unpack('<IBI', d[-9:])
assert magic == 0x8F92EAB1, 'seekable magic %#x' % magic
assert desc & 0x7C == 0, 'reserved bits'
esz = 12 if desc & 0x80 else 8
size = 8 + n * esz + 9
start = len(d) - size
m, fsize = struct.unpack_from('<II', d, start)
assert m == 0x184D2A5E and fsize == size - 8, 'skippable header %#x %d' % (m, fsize)
off = doff = 0
for k in range(n):
    e = start + 8 + k * esz
    c, u = struct.unpack_from('<II', d, e)
    assert struct.unpack_from('<I', d, off)[0] == 0xFD2FB528, 'frame %d not at %d' % (k, off)
    fhd = d[off + 4]
    single, fcs_flag = fhd >> 5 & 1, fhd >> 6
    fcs_len = [1 if single else 0, 2, 4, 8][fcs_flag]
    at = off + 5 + (0 if single else 1) + [0, 1, 2, 4][fhd & 3]
    if fcs_len:
        fcs = int.from_bytes(d[at:at + fcs_len], 'little') + (256 if fcs_len == 2 else 0)
        assert fcs == u, 'frame %d content %d, entry %d' % (k, fcs, u)
    if esz == 12:
        ck, = struct.unpack_from('<I', d, e + 8)
        assert fhd & 4 and struct.unpack_from('<I', d, off + c - 4)[0] == ck, 'frame %d checksum' % k
        if plain is not None:
            import xxhash
            assert xxhash.xxh64(plain[doff:doff + u]).intdigest() & 0xFFFFFFFF == ck, 'XXH64 of frame %d' % k
    off += c
    doff += u
assert off == start, 'frames add up to %d, table at %d' % (off, start)
assert plain is None or doff == len(plain), 'content %d, entries %d' % (len(plain), doff)
print('frames', n, 'checksums', esz // 12)
