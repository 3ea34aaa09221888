# The .npy reader of accel-infer (libcore/ops/npy.c); corpus in tests/fuzz/corpus/npy
# (crafted seeds from tests/infer/npyref.py seeds; tests/infer-npy.bats reads
# it with numpy too).
FUZZ_TARGETS += npy
FUZZ_SRC_npy := tests/fuzz/npy.c tests/fuzz/ref.c
FUZZ_LIBS_npy := $(FUZZ_REF_LIBS)
# The opencv backend's reader of a model's inputs and outputs
# (accel_onnx_io_parse, libcore/ops/onnx.c); corpus in tests/fuzz/corpus/onnxpb: the
# models of tests/infer/models.py and tests/infer/opencv.py, and a few
# broken ones.
FUZZ_TARGETS += onnxpb
FUZZ_SRC_onnxpb := tests/fuzz/onnxpb.c
FUZZ_LIBS_onnxpb :=
# accel-infer's reading of a model's graph for --batch (accel_onnx_batch_check, libcore/ops/onnx_graph.c);
# corpus in tests/fuzz/corpus/onnxgraph: the models of tests/infer/models.py
# and a few broken ones.
FUZZ_TARGETS += onnxgraph
FUZZ_SRC_onnxgraph := tests/fuzz/onnxgraph.c
FUZZ_LIBS_onnxgraph :=
# The reader of accel-infer's --crops lines (crop_parse, cmd/infer/crops.c);
# corpus in tests/fuzz/corpus/crops: lines --decode db writes and a few
# broken ones.
FUZZ_TARGETS += crops
FUZZ_SRC_crops := tests/fuzz/crops.c cmd/infer/crops.c
FUZZ_LIBS_crops := $(shell pkg-config --libs libcjson 2>/dev/null) -lm
