"""Small ONNX models for tests/infer*.bats, made with python3-onnx into the
folder given as argv[1], with their reference computations (numpy) in
ref.py's terms: each model's output is a simple numpy expression."""
import sys
import numpy as np
import onnx
from onnx import helper, TensorProto as T

out = sys.argv[1]


def save(name, nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, f"{out}/{name}.onnx")


W = (np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
B = np.array([0.5, -1, 0.25], np.float32)
# lin: y = relu(x @ W + b), z = 2 x; batch dim "N"
save("lin",
     [helper.make_node("MatMul", ["x", "W"], ["m"]), helper.make_node("Add", ["m", "b"], ["a"]),
      helper.make_node("Relu", ["a"], ["y"]), helper.make_node("Mul", ["x", "two"], ["z"])],
     [helper.make_tensor_value_info("x", T.FLOAT, ["N", 4])],
     [helper.make_tensor_value_info("y", T.FLOAT, ["N", 3]), helper.make_tensor_value_info("z", T.FLOAT, ["N", 4])],
     [helper.make_tensor("W", T.FLOAT, [4, 3], W.flatten()), helper.make_tensor("b", T.FLOAT, [3], B),
      helper.make_tensor("two", T.FLOAT, [], [2.0])])
# fixed: the same shapes, batch dim fixed at 1
save("fixed", [helper.make_node("Relu", ["x"], ["y"])],
     [helper.make_tensor_value_info("x", T.FLOAT, [1, 4])], [helper.make_tensor_value_info("y", T.FLOAT, [1, 4])])
# add2: s = a + b (int32), two inputs
save("add2", [helper.make_node("Add", ["a", "b"], ["s"])],
     [helper.make_tensor_value_info("a", T.INT32, ["N", 3]), helper.make_tensor_value_info("b", T.INT32, ["N", 3])],
     [helper.make_tensor_value_info("s", T.INT32, ["N", 3])])
# softmax: p = softmax(x) over the last axis, for --topk
save("softmax", [helper.make_node("Softmax", ["x"], ["p"], axis=-1)],
     [helper.make_tensor_value_info("x", T.FLOAT, ["N", 6])], [helper.make_tensor_value_info("p", T.FLOAT, ["N", 6])])
# ctc: an identity on (N, T, C) scores, for --decode ctc
save("ctc", [helper.make_node("Identity", ["x"], ["y"])],
     [helper.make_tensor_value_info("x", T.FLOAT, ["N", "T", 5])],
     [helper.make_tensor_value_info("y", T.FLOAT, ["N", "T", 5])])
# badop: an operator no engine knows
g = helper.make_graph([helper.make_node("NoSuchOp", ["x"], ["y"], domain="com.example")], "badop",
                      [helper.make_tensor_value_info("x", T.FLOAT, [1])],
                      [helper.make_tensor_value_info("y", T.FLOAT, [1])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])
m.ir_version = 8
onnx.save(m, f"{out}/badop.onnx")
# img, imghwc: identities on images in NCHW and NHWC
save("img", [helper.make_node("Identity", ["x"], ["y"])],
     [helper.make_tensor_value_info("x", T.FLOAT, ["N", 3, "H", "W"])],
     [helper.make_tensor_value_info("y", T.FLOAT, ["N", 3, "H", "W"])])
save("imghwc", [helper.make_node("Identity", ["x"], ["y"])],
     [helper.make_tensor_value_info("x", T.FLOAT, ["N", "H", "W", 3])],
     [helper.make_tensor_value_info("y", T.FLOAT, ["N", "H", "W", 3])])
# map: an identity on (N, 1, H, W) probability maps, for --decode db
save("map", [helper.make_node("Identity", ["x"], ["y"])],
     [helper.make_tensor_value_info("x", T.FLOAT, ["N", 1, "H", "W"])],
     [helper.make_tensor_value_info("y", T.FLOAT, ["N", 1, "H", "W"])])
# Models whose items would mix in a batch along axis 0, for --batch (each
# item (1, 3); three of them make 3 rows, as many as xᵀ has):
# transpose: y = xᵀ, declared (3, N); mean0: y = the mean over axis 0,
# declared (1, 3); cumsum: y = the running sum along axis 0, declared
# (N, 3) like x; softmax0: y = softmax(x) over axis 0, (N, 3) too.
save("transpose", [helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0])],
     [helper.make_tensor_value_info("x", T.FLOAT, ["N", 3])], [helper.make_tensor_value_info("y", T.FLOAT, [3, "N"])])
save("mean0", [helper.make_node("ReduceMean", ["x"], ["y"], axes=[0], keepdims=1)],
     [helper.make_tensor_value_info("x", T.FLOAT, ["N", 3])], [helper.make_tensor_value_info("y", T.FLOAT, [1, 3])])
save("cumsum", [helper.make_node("CumSum", ["x", "axis"], ["y"])],
     [helper.make_tensor_value_info("x", T.FLOAT, ["N", 3])], [helper.make_tensor_value_info("y", T.FLOAT, ["N", 3])],
     [helper.make_tensor("axis", T.INT64, [], [0])])
save("softmax0", [helper.make_node("Softmax", ["x"], ["y"], axis=0)],
     [helper.make_tensor_value_info("x", T.FLOAT, ["N", 3])], [helper.make_tensor_value_info("y", T.FLOAT, ["N", 3])])
# maxpool: y = the max of each pair along the last axis, i its index in
# the flattened tensor: counted over the whole batch, so items mix in i.
save("maxpool", [helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2], strides=[2])],
     [helper.make_tensor_value_info("x", T.FLOAT, ["N", 1, 4])],
     [helper.make_tensor_value_info("y", T.FLOAT, ["N", 1, 2]), helper.make_tensor_value_info("i", T.INT64, ["N", 1, 2])])
# idf16, idbool: identities on float16 and bool (N, 3), for --topk's dtypes
save("idf16", [helper.make_node("Identity", ["x"], ["y"])],
     [helper.make_tensor_value_info("x", T.FLOAT16, ["N", 3])], [helper.make_tensor_value_info("y", T.FLOAT16, ["N", 3])])
save("idbool", [helper.make_node("Identity", ["x"], ["y"])],
     [helper.make_tensor_value_info("x", T.BOOL, ["N", 3])], [helper.make_tensor_value_info("y", T.BOOL, ["N", 3])])
# utf8: y = x, the output named beyond ASCII, for .npz member names
save("utf8", [helper.make_node("Identity", ["x"], ["ü é"])],
     [helper.make_tensor_value_info("x", T.FLOAT, ["N", 3])],
     [helper.make_tensor_value_info("ü é", T.FLOAT, ["N", 3])])
# scalar: y = 2 x on a 0-d float, for outputs that cannot join along axis 0
save("scalar", [helper.make_node("Add", ["x", "x"], ["y"])],
     [helper.make_tensor_value_info("x", T.FLOAT, [])], [helper.make_tensor_value_info("y", T.FLOAT, [])])
