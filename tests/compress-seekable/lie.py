import struct, sys
src, dst, what = sys.argv[1], sys.argv[2], sys.argv[3]
d = bytearray(open(src, 'rb').read())
n, desc, magic = struct.unpack('<IBI', d[-9:])
esz = 12 if desc & 0x80 else 8
start = len(d) - 9 - n * esz
def ent(k): return start + k * esz
if what == 'dsize':      # frame 0 said to hold one byte more
    c, u = struct.unpack_from('<II', d, ent(0)); struct.pack_into('<II', d, ent(0), c, u + 1)
elif what == 'shift':    # frame 0 one byte longer, frame 1 one shorter: the sums still add up
    c0, = struct.unpack_from('<I', d, ent(0)); c1, = struct.unpack_from('<I', d, ent(1))
    struct.pack_into('<I', d, ent(0), c0 + 1); struct.pack_into('<I', d, ent(1), c1 - 1)
elif what == 'count':    # one frame fewer in the footer
    struct.pack_into('<I', d, len(d) - 9, n - 1)
elif what == 'checksum':
    struct.pack_into('<I', d, ent(0) + 8, struct.unpack_from('<I', d, ent(0) + 8)[0] ^ 1)
elif what == 'reserved':
    d[-5] |= 0x04
elif what == 'huge':     # a frame said to be 4 GiB
    struct.pack_into('<I', d, ent(0), 0xffffffff)
open(dst, 'wb').write(d)
