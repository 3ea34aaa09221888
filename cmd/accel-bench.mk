# accel-bench: its pieces under cmd/bench/ (bench.h says which does what).
accel-bench_SRC := $(wildcard cmd/bench/*.c)

# infer-direct: ONNX Runtime driven directly through its C API
# (tests/bench/infer_direct.c), the peer of onnx.run under --vs, found by
# accel-bench in libexec/ beside it (ACCEL_BENCH_INFER_DIRECT overrides).
# Built against the library the onnxruntime backend loads (the system's, or
# the copy `make deps` fetches); left out when there is neither.
ifeq ($(shell pkg-config --exists libonnxruntime 2>/dev/null && echo yes),yes)
INFER_DIRECT_CFLAGS := $(shell pkg-config --cflags libonnxruntime)
INFER_DIRECT_LIBDIR := $(shell pkg-config --variable=libdir libonnxruntime)
else ifneq ($(wildcard $(CURDIR)/build/deps/onnxruntime/include/onnxruntime_c_api.h),)
INFER_DIRECT_CFLAGS := -I$(CURDIR)/build/deps/onnxruntime/include
INFER_DIRECT_LIBDIR := $(CURDIR)/build/deps/onnxruntime/lib
endif
ifneq ($(INFER_DIRECT_LIBDIR),)
all: $(B)/libexec/infer-direct
$(B)/libexec/infer-direct: tests/bench/infer_direct.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(INFER_DIRECT_CFLAGS) -o $@ $< $(LDFLAGS) -L$(INFER_DIRECT_LIBDIR) -lonnxruntime \
		-Wl,-rpath,$(INFER_DIRECT_LIBDIR) -lm
endif
