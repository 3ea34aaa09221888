# accel-bench: its pieces under cmd/bench/ (bench.h says which does what).
accel-bench_SRC := $(wildcard cmd/bench/*.c)
# Its FFT peer, accel-bench-fftw (FFTW called directly), where pkg-config
# finds fftw3f: built into $(B)/libexec, where accel-bench looks beside
# itself, and installed in $(LIBEXECDIR)/accel, where it looks then.
accel-bench_CFLAGS := -DACCEL_BENCH_LIBEXEC='"$(LIBEXECDIR)/accel"'
ifeq ($(shell pkg-config --exists fftw3f 2>/dev/null && echo yes),yes)
BENCH_HELPERS := $(B)/libexec/accel-bench-fftw
all: $(BENCH_HELPERS)
$(B)/libexec/accel-bench-fftw: cmd/libexec/accel-bench-fftw.c | $(B)/lib/libaccel.so.$(VERSION)
	@mkdir -p $(@D)
	$(call hdeps,$(CPPFLAGS) $(shell pkg-config --cflags fftw3f),$<)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(shell pkg-config --cflags fftw3f) -o $@ $< $(LDFLAGS) -L$(B)/lib -laccel \
		-Wl,-rpath,'$$ORIGIN/../lib:$$ORIGIN/../../lib' $(shell pkg-config --libs fftw3f)
else
$(call build_note,accel: accel-bench --vs has no FFT peer: pkg-config cannot find fftw3f)
endif

# infer-direct: ONNX Runtime driven directly through its C API
# (tests/bench/infer_direct.c), the peer of onnx.run under --vs, found by
# accel-bench in libexec/ beside it, else where it is installed, in
# $(LIBEXECDIR)/accel (ACCEL_BENCH_INFER_DIRECT overrides).
# Built against the library the onnxruntime backend loads (the system's, or
# the copy `make deps` fetches); left out when there is neither.
# The copy `make deps` fetches is found from the build tree and, installed,
# beside the onnxruntime plugin ($(PLUGINDIR)/onnxruntime).
ifeq ($(shell pkg-config --exists libonnxruntime 2>/dev/null && echo yes),yes)
INFER_DIRECT_CFLAGS := $(shell pkg-config --cflags libonnxruntime)
INFER_DIRECT_LIBDIR := $(shell pkg-config --variable=libdir libonnxruntime)
INFER_DIRECT_RPATH := $(INFER_DIRECT_LIBDIR)
else ifneq ($(wildcard $(CURDIR)/build/deps/onnxruntime/include/onnxruntime_c_api.h),)
INFER_DIRECT_CFLAGS := -I$(CURDIR)/build/deps/onnxruntime/include
INFER_DIRECT_LIBDIR := $(CURDIR)/build/deps/onnxruntime/lib
INFER_DIRECT_RPATH := $$ORIGIN/../deps/onnxruntime/lib:$$ORIGIN/../../lib/accel/onnxruntime
endif
ifneq ($(INFER_DIRECT_LIBDIR),)
BENCH_HELPERS += $(B)/libexec/infer-direct
all: $(B)/libexec/infer-direct
$(B)/libexec/infer-direct: tests/bench/infer_direct.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(INFER_DIRECT_CFLAGS) -o $@ $< $(LDFLAGS) -L$(INFER_DIRECT_LIBDIR) -lonnxruntime \
		-Wl,-rpath,'$(INFER_DIRECT_RPATH)' -lm
endif
