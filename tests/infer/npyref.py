"""numpy's reading of .npy streams against accel's (libcore/ops/npy.c, through
the npy fuzz target's replay with FUZZ_NPY_VERDICT set):

  npyref.py compare REPLAY PATH...   every file (or file of a folder) given
  npyref.py mutate REPLAY N SEED [DIR]   N headers mutated from numpy's own
                                         (kept in DIR if given)
  npyref.py seeds DIR                write the crafted seeds of the npy corpus

Each stream is read array by array: "ok DTYPE SHAPE" per array, then "end",
or "refused". The readings must agree, except where numpy reads an array
accel refuses as beyond what it takes (a dtype or layout it does not
support, more than 16 dimensions, over the fuzz target's 1 MiB limit).
Prints the disagreements and a summary; exit 1 if there is one.
"""
import io
import os
import random
import struct
import subprocess
import sys
import tempfile
import numpy as np
from numpy.lib import format as npf

# accel's refusals of arrays numpy reads: what it does not take, and text
# before the header's dict other than blank and comment lines.
BEYOND = ("unsupported dtype", "fortran_order arrays are not supported", "more than 16 dimensions",
          "over the limit of 1048576", "header does not begin with its dict")


def numpy_reading(data):
    """numpy.load's reading of a stream (format.read_array, as np.load calls it for a .npy file)."""
    f = io.BytesIO(data)
    out = []
    while f.tell() < len(data):
        if data[f.tell():f.tell() + 6] != npf.MAGIC_PREFIX:
            return out + ["refused"]
        try:
            a = npf.read_array(f, allow_pickle=False)
        except Exception:
            return out + ["refused"]
        out.append(f"ok {a.dtype.name} {a.shape}")
    return out + ["end"]


def accel_readings(replay, paths):
    r = subprocess.run([replay] + paths, env=dict(os.environ, FUZZ_NPY_VERDICT="1"),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True, text=True)
    lines, out, cur = r.stdout.split("\n")[:-1], [], []
    for line in lines:
        cur.append(line)
        if line == "end" or line.startswith("refused"):
            out.append(cur)
            cur = []
    if len(out) != len(paths):
        raise SystemExit(f"{replay}: {len(out)} readings for {len(paths)} files")
    return out


def compare(replay, paths):
    files = []
    for p in paths:
        files += [os.path.join(p, n) for n in sorted(os.listdir(p)) if not n.startswith(".")] if os.path.isdir(p) else [p]
    bad = beyond = 0
    for path, got in zip(files, accel_readings(replay, files)):
        want = numpy_reading(open(path, "rb").read())
        if got[:-1] + ["refused" if got[-1].startswith("refused") else got[-1]] == want:
            continue
        # accel stops early with a refusal of what it does not take.
        k = len(got) - 1
        if got[:k] == want[:k] and want[k].startswith("ok") and got[k].startswith("refused") and any(b in got[k] for b in BEYOND):
            beyond += 1
            continue
        bad += 1
        print(f"{path}: numpy {want}, accel {got}")
    print(f"{len(files)} files: {len(files) - bad - beyond} read alike, {beyond} beyond what accel takes, {bad} differ")
    return 1 if bad else 0


def npy(header, version=(1, 0), data=b""):
    """A .npy array of this header text (bytes), padded as numpy pads it."""
    lenfmt = "<H" if version == (1, 0) else "<I"
    total = 6 + 2 + struct.calcsize(lenfmt) + len(header) + 1
    header += b" " * (-total % 64) + b"\n"
    return b"\x93NUMPY" + bytes(version) + struct.pack(lenfmt, len(header)) + header + data


# Pieces a mutation puts in: Python's forms of the same tokens, and what breaks them.
PIECES = [b" ", b"\t", b"\n", b"\r", b"\f", b"\v", b"\\\n", b"#c\n", b"'", b'"', b"'''", b"u", b"r", b"b", b"L", b"l",
          b"0", b"1", b"-", b"+", b"_", b"0x", b"0o", b"0b", b"(", b")", b",", b":", b"{", b"}", b"[", b"]", b".", b"j",
          b"\\x41", b"\\", b"\x00", b"\xc3\xa9", b"\xff", b"True", b"False", b"None", b"'shape'", b"'descr'",
          b"'fortran_order'", b"'<f4'", b"'>i2'", b"'|b1'", b"'float32'", b"'f'", b"(2, 3)", b"()", b"(1,)", b"'x': 1, "]


# What Python reads as the same header, put between tokens.
SOFT = [b" ", b"\t", b"\n", b"\r\n", b"\r", b"\f", b"\\\n", b"#c\n", b"# \xc3\xa9\n", b",", b"(", b")", b"L", b"+", b"-"]


def mutate(replay, n, seed, keep=None):
    rnd = random.Random(seed)
    bases = []
    for a in (np.zeros((2, 3), "f4"), np.zeros(5, "u1"), np.zeros((), "i8"), np.zeros((1, 0, 2), "?"), np.zeros(3, ">f4")):
        f = io.BytesIO()
        np.save(f, a)
        raw = f.getvalue()
        hlen = struct.unpack("<H", raw[8:10])[0]
        bases.append((raw[10:10 + hlen].rstrip(b" \n"), raw[10 + hlen:]))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = keep or tmp
        os.makedirs(tmp, exist_ok=True)
        for i in range(n):
            h, data = rnd.choice(bases)
            h = bytearray(h)
            for _ in range(rnd.randint(1, 3)):
                at = rnd.randrange(len(h) + 1)
                op = rnd.random()
                if op < 0.4:
                    # Between tokens, or around a string's quotes and an int's digits.
                    at = rnd.choice([i for i in range(len(h) + 1) if i == len(h) or h[i:i + 1] in b" ,:{}()'"] )
                    h[at:at] = rnd.choice(SOFT)
                elif op < 0.6:
                    h[at:at] = rnd.choice(PIECES)
                elif op < 0.85:
                    h[at:at + rnd.randint(1, 3)] = b""
                else:
                    h[at:at + 1] = rnd.choice(PIECES)
            version = rnd.choice([(1, 0), (1, 0), (2, 0), (3, 0), (1, 1)])
            with open(f"{tmp}/{i:05d}", "wb") as f:
                f.write(npy(bytes(h), version, data + data[:rnd.choice([0, 0, 1])]))
        return compare(replay, [tmp])


# Seeds for tests/fuzz/corpus/npy: headers numpy reads in its own way, and
# ones it refuses (name, version, header text, data bytes).
D = b"'descr': '<f4', 'fortran_order': False"
SEEDS = [
    ("dup-shape", (1, 0), b"{%s, 'shape': (2,), 'shape': (1, 3)}" % D, 12),
    ("dup-descr", (3, 0), b"{'descr': 5, 'fortran_order': False, 'shape': (2,), 'descr': '<i2'}", 4),
    ("version-1.1", (1, 1), b"{%s, 'shape': (2,)}" % D, 8),
    ("version-2.1", (2, 1), b"{%s, 'shape': (2,)}" % D, 8),
    ("version-4.0", (4, 0), b"{%s, 'shape': (2,)}" % D, 8),
    ("long-l-v1", (1, 0), b"{%s, 'shape': (2L, 1 L)}" % D, 8),
    ("long-l-v3", (3, 0), b"{%s, 'shape': (2L,)}" % D, 8),
    ("python-ints", (2, 0), b"{%s, 'shape': (0x2, 0o1, 0b1_0, +1, -0)}" % D, 0),
    ("python-strings", (1, 0), b"{u'descr': '<' \"f\" '''4''', 'fortran_order': (False), r'shape': ((2),)}", 8),
    ("python-escapes", (1, 0), b"{'descr': '\\x3cf\\064', 'fortran_order': False, 'sh\\u0061pe': (2,)}", 8),
    ("python-layout", (3, 0), b"\n# \xc3\xa9\n{'descr':'float32', # c\n'fortran_order':False,\\\n'shape':(2,)}\r\n", 8),
    ("python-names", (1, 0), b"{'descr': '?', 'fortran_order': False, 'shape': (2,)}", 2),
    ("shape-true", (1, 0), b"{%s, 'shape': (True,)}" % D, 4),
    ("shape-negative", (1, 0), b"{%s, 'shape': (2, -1)}" % D, 8),
    ("shape-list", (1, 0), b"{%s, 'shape': [2]}" % D, 8),
    ("shape-leading-zero", (1, 0), b"{%s, 'shape': (02,)}" % D, 8),
    ("order-int", (1, 0), b"{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", 8),
    ("order-fortran-1d", (1, 0), b"{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2)}", 8),
    ("extra-key", (1, 0), b"{%s, 'shape': (2,), 'x': 1}" % D, 8),
    ("descr-space", (1, 0), b"{'descr': '<f4 ', 'fortran_order': False, 'shape': (2,)}", 8),
    ("trailing-nul", (1, 0), b"{%s, 'shape': (2,)}\x00" % D, 8),
    ("trailing-indent", (3, 0), b"{%s, 'shape': (2,)}\n " % D, 8),
    ("v3-bad-utf8", (3, 0), b"{%s, 'shape': (2,)} # \xc3(" % D, 8),
    ("header-10001", (1, 0), b"{%s, 'shape': (2,)}" % D + b" " * (10001 - 55), 8),
]


def seeds(folder):
    for name, version, header, n in SEEDS:
        lenfmt = "<H" if version[0] == 1 else "<I"
        with open(f"{folder}/{name}", "wb") as f:
            f.write(b"\x93NUMPY" + bytes(version) + struct.pack(lenfmt, len(header)) + header + bytes(range(n)))


if __name__ == "__main__":
    if sys.argv[1] == "seeds":
        sys.exit(seeds(sys.argv[2]))
    if sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3:]))
    if sys.argv[1] == "mutate":
        sys.exit(mutate(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else None))
    raise SystemExit(__doc__)
