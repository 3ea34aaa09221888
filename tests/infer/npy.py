"""Helpers for tests/infer*.bats, numpy's side of the interop:
  npy.py load FILE            print each array of a .npy stream: shape, dtype, values
  npy.py shapes FILE          print the shapes of the arrays of a .npy stream, on one line
  npy.py check MODEL IN OUT [OUTPUTS]  compare OUT (accel-infer's .npy stream)
      with numpy's reference for tests/infer/models.py's MODEL on the arrays of
      IN, within rtol 1e-5 / atol 1e-6; exit 1 on the first difference
"""
import io
import sys
import numpy as np


def arrays(path):
    data = open(path, "rb").read()
    f = io.BytesIO(data)
    out = []
    while f.tell() < len(data):
        out.append(np.load(f))
    return out


def reference(model, x):
    if model == "lin":
        W = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
        b = np.array([0.5, -1, 0.25], np.float32)
        return {"y": np.maximum(x @ W + b, 0), "z": x * 2}
    if model == "softmax":
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return {"p": e / e.sum(axis=-1, keepdims=True)}
    if model == "transpose":
        return {"y": x.T}
    if model == "mean0":
        return {"y": x.mean(axis=0, keepdims=True)}
    if model == "cumsum":
        return {"y": np.cumsum(x, axis=0)}
    if model == "softmax0":
        e = np.exp(x - x.max(axis=0, keepdims=True))
        return {"y": e / e.sum(axis=0, keepdims=True)}
    if model == "maxpool":
        # kernel 2, stride 2 along the last axis of (1, 1, 4); indices count
        # from the start of the whole tensor (the item is all of it here)
        p = x.reshape(-1, 2)
        return {"y": p.max(axis=1).reshape(1, 1, 2),
                "i": (p.argmax(axis=1) + np.arange(0, x.size, 2)).astype(np.int64).reshape(1, 1, 2)}
    raise SystemExit(f"no reference for {model}")


if __name__ == "__main__":
    if sys.argv[1] == "shapes":
        print(" ".join(str(a.shape) for a in arrays(sys.argv[2])))
    elif sys.argv[1] == "load":
        for a in arrays(sys.argv[2]):
            print(a.shape, a.dtype, a.tolist())
    elif sys.argv[1] == "check":
        model, ins, outs = sys.argv[2], arrays(sys.argv[3]), arrays(sys.argv[4])
        names = sys.argv[5].split(",") if len(sys.argv) > 5 else None
        k = 0
        for i, x in enumerate(ins):
            ref = reference(model, x)
            for name in names or list(ref):
                if k >= len(outs):
                    raise SystemExit(f"output ends at input {i}")
                got, want = outs[k], ref[name]
                k += 1
                if got.shape != want.shape or got.dtype != want.dtype or not np.allclose(got, want, rtol=1e-5, atol=1e-6):
                    raise SystemExit(f"input {i} output {name}: got {got.shape} {got.dtype} {got.tolist()}, want {want.tolist()}")
        if k != len(outs):
            raise SystemExit(f"{len(outs) - k} arrays too many")
        print(f"{len(ins)} inputs, {k} arrays match")
