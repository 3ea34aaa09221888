#!/bin/sh
# Write the seed corpus of the gzip_index fuzz target: raw deflate data
# (no gzip header) of zlib's levels 0 (stored blocks), 1, 6 and 9 and its
# fixed Huffman strategy, of text and of bytes that do not compress.
# Usage: tests/fuzz/corpus-gzip-index.sh
set -eu
cd "$(dirname "$0")/../.."
out=tests/fuzz/corpus/gzip_index
mkdir -p "$out"
python3 - "$out" <<'PY'
import random, sys, zlib
out = sys.argv[1]
text = "".join("line %d of the seed corpus, word %d\n" % (i, i * 7 % 13) for i in range(2000)).encode()
rnd = random.Random(7)
noise = bytes(rnd.getrandbits(8) for _ in range(3000))
for name, data in (("text", text), ("noise", noise), ("mixed", text[:20000] + noise + text[:5000])):
    for level, strategy, tag in ((0, zlib.Z_DEFAULT_STRATEGY, "0"), (1, zlib.Z_DEFAULT_STRATEGY, "1"),
                                 (6, zlib.Z_DEFAULT_STRATEGY, "6"), (9, zlib.Z_DEFAULT_STRATEGY, "9"),
                                 (6, zlib.Z_FIXED, "fixed")):
        c = zlib.compressobj(level, zlib.DEFLATED, -15, 8, strategy)
        # a full flush in the middle: an empty stored block, a boundary
        half = len(data) // 2
        z = c.compress(data[:half]) + c.flush(zlib.Z_FULL_FLUSH) + c.compress(data[half:]) + c.flush()
        open("%s/%s-%s.deflate" % (out, name, tag), "wb").write(z)
PY
