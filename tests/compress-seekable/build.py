#!/usr/bin/env python3
"""build.py OUT PLAIN FRAME... [--lie K]: write OUT as the seekable format
("Zstandard Seekable Format" 0.1.0) by hand: the zstd frames given (files
of one frame each, as `zstd -c` of a pipe writes them: no content size in
the header) and a seek table without checksums whose entries are the
frames' sizes, the decompressed ones those of the PLAIN files. --lie K
states frame K's decompressed size one byte more, K+1's one less."""
import struct, sys

args = sys.argv[1:]
lie = None
if '--lie' in args:
    i = args.index('--lie')
    lie = int(args[i + 1])
    del args[i:i + 2]
out, pairs = args[0], args[1:]
frames = [open(p, 'rb').read() for p in pairs[1::2]]
sizes = [len(open(p, 'rb').read()) for p in pairs[0::2]]
if lie is not None:
    sizes[lie] += 1
    sizes[lie + 1] -= 1
body = b''.join(struct.pack('<II', len(f), s) for f, s in zip(frames, sizes))
body += struct.pack('<IBI', len(frames), 0, 0x8F92EAB1)
with open(out, 'wb') as f:
    f.write(b''.join(frames))
    f.write(struct.pack('<II', 0x184D2A5E, len(body)) + body)
