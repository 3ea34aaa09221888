"""Models and references for tests/infer-opencv.bats (python3-onnx, numpy):
  opencv.py models DIR           write conv.onnx, rsum.onnx, fmod.onnx and gatherlast.onnx into DIR
  opencv.py check MODEL IN OUT   compare OUT (accel-infer's .npy stream) with
      numpy's reference for MODEL on each array of IN: shape, dtype, and
      values within rtol 1e-4 / atol 1e-5 (OpenCV's kernels sum in another
      order than numpy); exit 1 on the first difference
conv: y = sigmoid(conv2d(x, K) + c), x (N, 2, H, W), K (3, 2, 3, 3), pads 1
      (kernel_shape given: OpenCV 4.6 needs it)
rsum: s = sum(x, axis 1) of x (N, 5): a 1-D output (N,), which OpenCV
      holds as 2-D (opset 11)
fmod: y = fmod(x, 0.75): Mod, which OpenCV 4.6 cannot load
"""
import io
import sys
import numpy as np

K = (np.arange(54, dtype=np.float32).reshape(3, 2, 3, 3) - 27) / 40
C = np.array([0.1, -0.2, 0.3], np.float32)


def models(out):
    import onnx
    from onnx import helper, TensorProto as T

    def save(name, nodes, inputs, outputs, inits=(), opset=13):
        g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8
        onnx.checker.check_model(m)
        onnx.save(m, f"{out}/{name}.onnx")

    save("conv", [helper.make_node("Conv", ["x", "K", "c"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                  helper.make_node("Sigmoid", ["a"], ["y"])],
         [helper.make_tensor_value_info("x", T.FLOAT, ["N", 2, "H", "W"])],
         [helper.make_tensor_value_info("y", T.FLOAT, ["N", 3, "H", "W"])],
         [helper.make_tensor("K", T.FLOAT, K.shape, K.flatten()), helper.make_tensor("c", T.FLOAT, [3], C)])
    # opset 11: OpenCV 4.6 reads ReduceSum's axes as an attribute only
    save("rsum", [helper.make_node("ReduceSum", ["x"], ["s"], axes=[1], keepdims=0)],
         [helper.make_tensor_value_info("x", T.FLOAT, ["N", 5])],
         [helper.make_tensor_value_info("s", T.FLOAT, ["N"])], opset=11)
    save("fmod", [helper.make_node("Mod", ["x", "d"], ["y"], fmod=1)],
         [helper.make_tensor_value_info("x", T.FLOAT, ["N", 4])],
         [helper.make_tensor_value_info("y", T.FLOAT, ["N", 4])],
         [helper.make_tensor("d", T.FLOAT, [], [0.75])])
    # gatherlast: y = x[:, [0]], a Gather along axis -1, on which OpenCV
    # 4.6's importer writes out of bounds and aborts the process
    save("gatherlast", [helper.make_node("Gather", ["x", "i"], ["y"], axis=-1)],
         [helper.make_tensor_value_info("x", T.FLOAT, ["N", 3])],
         [helper.make_tensor_value_info("y", T.FLOAT, ["N", 1])],
         [helper.make_tensor("i", T.INT64, [1], [0])])


def reference(model, x):
    if model == "conv":
        n, _, h, w = x.shape
        p = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        a = np.zeros((n, 3, h, w), np.float64)
        for i in range(3):
            for j in range(3):
                a += np.einsum("nchw,oc->nohw", p[:, :, i:i + h, j:j + w], K[:, :, i, j])
        a += C.reshape(1, 3, 1, 1)
        return (1 / (1 + np.exp(-a))).astype(np.float32)
    if model == "rsum":
        return x.sum(axis=1)
    if model == "fmod":
        return np.fmod(x, np.float32(0.75))
    if model == "gatherlast":
        return x[:, [0]]
    raise SystemExit(f"no reference for {model}")


def arrays(path):
    data = open(path, "rb").read()
    f = io.BytesIO(data)
    out = []
    while f.tell() < len(data):
        out.append(np.load(f))
    return out


if __name__ == "__main__":
    if sys.argv[1] == "models":
        models(sys.argv[2])
    elif sys.argv[1] == "check":
        model, ins, outs = sys.argv[2], arrays(sys.argv[3]), arrays(sys.argv[4])
        if len(outs) != len(ins):
            raise SystemExit(f"{len(outs)} arrays for {len(ins)} inputs")
        for i, (x, got) in enumerate(zip(ins, outs)):
            want = reference(model, x)
            if got.shape != want.shape or got.dtype != want.dtype or not np.allclose(got, want, rtol=1e-4, atol=1e-5):
                raise SystemExit(f"input {i}: got {got.shape} {got.dtype} {got.tolist()}, want {want.shape} {want.tolist()}")
        print(f"{len(ins)} inputs match")
