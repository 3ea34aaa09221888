"""accel-infer's side of tests/bench/infer.sh: start accel-infer on MODEL
with T threads and --batch B, feed it float32 arrays of shape DIMS (batch
first, one row each) through a pipe and read its .npy outputs back:
 - start: from the start of the process to the first batch's outputs
   (process start, model load, first run);
 - latency: N/B batches one at a time, from writing a batch's first input
   to reading its last output (p50, p90, p99 in ms);
 - throughput: N inputs streamed by a writer thread while the outputs are
   read (inputs per second).
  infer_drive.py ACCEL_INFER MODEL THREADS N D1,D2,... B"""
import subprocess
import sys
import threading
import time
import numpy as np

prog, model, threads, n, dims, batch = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], int(sys.argv[6])
import io
shape = [int(d) for d in dims.split(",")]
shape[0] = 1
x = np.random.default_rng(1).random(shape, dtype=np.float32) - 0.5
import io
f = io.BytesIO()
np.save(f, x)
item = f.getvalue()


buf = bytearray(1 << 20)


def read_exact(out, k):
    global buf
    if len(buf) < k:
        buf = bytearray(k)
    view = memoryview(buf)[:k]
    got = 0
    while got < k:
        c = out.readinto(view[got:])
        if not c:
            raise SystemExit("accel-infer's output ended early")
        got += c
    return bytes(view[:10]) if k == 10 else view


def read_output(out):
    head = read_exact(out, 10)
    hlen = int.from_bytes(head[8:10], "little")
    h = io.BytesIO(head + bytes(read_exact(out, hlen)))
    np.lib.format.read_magic(h)
    shp, fortran, dtype = np.lib.format.read_array_header_1_0(h)
    read_exact(out, int(np.prod(shp)) * dtype.itemsize)


t0 = time.monotonic()
p = subprocess.Popen([prog, "-m", model, "-T", threads, "--batch", str(batch)], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, bufsize=0)
for _ in range(batch):
    p.stdin.write(item)
for _ in range(batch):
    read_output(p.stdout)
start = time.monotonic() - t0
lat = []
for _ in range(max(n // batch, 4)):
    a = time.monotonic()
    p.stdin.write(item * batch)
    for _ in range(batch):
        read_output(p.stdout)
    lat.append((time.monotonic() - a) * 1000)
lat.sort()


def writer():
    p.stdin.write(item * n)


t = threading.Thread(target=writer)
a = time.monotonic()
t.start()
for _ in range(n):
    read_output(p.stdout)
tput = n / (time.monotonic() - a)
t.join()
p.stdin.close()
p.wait()
k = len(lat)
print(f"accel-infer start {start:.3f} s")
print(f"accel-infer batch {batch}: p50 {lat[k // 2]:.2f} ms p90 {lat[k * 9 // 10]:.2f} ms p99 {lat[k * 99 // 100]:.2f} ms, {tput:.1f} inputs/s")
