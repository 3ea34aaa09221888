#!/bin/sh
# Frames for inference: decode a clip (file or stdin), scale it to 224x224
# and hand the frames to Python as NumPy arrays, one (1, 3, 224, 224)
# float32 array in [0, 1] per frame, the layout most image models take;
# here the "model" prints each frame's mean per channel.
#   sh examples/transcode-frames.sh clip.mp4
#   cat clip.ts | sh examples/transcode-frames.sh
set -eu
# The programs: those in $ACCEL_BUILD (a folder) when set, else those of the
# build folder beside this script when it holds them, else those in $PATH.
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${ACCEL_BUILD:-}" ]; then
	PATH="$(cd "$ACCEL_BUILD" && pwd):$PATH"
elif [ -x "$here/../build/accel-detect" ]; then
	PATH="$here/../build:$PATH"
fi
accel-transcode --to npy --scale 224x224 --layout nchw --normalize "${1:--}" | /usr/bin/python3 -c '
import ast
import sys
import numpy as np
f = sys.stdin.buffer
n = 0
# numpy.load needs to seek; on a pipe, read each .npy header (format 1.0)
# and its data in turn
while True:
    head = f.read(10)
    if len(head) < 10:
        break
    assert head[:8] == b"\x93NUMPY\x01\x00"
    d = ast.literal_eval(f.read(int.from_bytes(head[8:10], "little")).decode())
    dt = np.dtype(d["descr"])
    x = np.frombuffer(f.read(dt.itemsize * int(np.prod(d["shape"]))), dt).reshape(d["shape"])
    print(n, x.shape, " ".join("%.3f" % m for m in x.mean(axis=(0, 2, 3))))
    n += 1
'
