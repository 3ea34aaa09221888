# ONNX Runtime: built against the system's headers when pkg-config finds
# libonnxruntime, else against the build-local copy `make deps` fetches from
# npm (tests/deps.d/infer.sh, build/deps/onnxruntime); left out when neither
# is there. libonnxruntime.so.1 is dlopen'ed at probe time (--as-needed drops
# the link), first from the folder it was built against (ORT_LIBDIR, so the
# build tree finds its own copy), then from the standard places.
ORT_LOCAL := $(CURDIR)/build/deps/onnxruntime
ifeq ($(shell pkg-config --exists libonnxruntime 2>/dev/null && echo yes),yes)
onnxruntime_PKGS := libcjson libonnxruntime
onnxruntime_CFLAGS := -Wl,--as-needed -DORT_LIBDIR='"$(shell pkg-config --variable=libdir libonnxruntime)"'
else ifneq ($(wildcard $(ORT_LOCAL)/include/onnxruntime_c_api.h),)
onnxruntime_PKGS := libcjson
onnxruntime_CFLAGS := -I$(ORT_LOCAL)/include -DORT_LIBDIR='"$(ORT_LOCAL)/lib"'
else
OPT_BACKENDS := $(filter-out onnxruntime,$(OPT_BACKENDS))
$(info accel: leaving out the onnxruntime backend: no libonnxruntime (pkg-config) and no build-local copy (make deps))
endif
onnxruntime_SRC := backends/onnxruntime/onnxruntime.c backends/common/onnx_cache.c backends/common/cuda_driver.c
onnxruntime_LIBS := -ldl -lpthread
# ortwin: this backend built again under another name, for the tests only
# (build/tests/ortwin, never installed): a second engine that runs ONNX
# models, so that tests/infer.bats can show fallback from a failing engine.
ifneq ($(filter onnxruntime,$(OPT_BACKENDS)),)
TEST_BACKEND_SO += $(B)/tests/ortwin/accel_ortwin.so
$(B)/tests/ortwin/accel_ortwin.so: $(onnxruntime_SRC) backends/common/plugin.ver | $(LIB)
	@mkdir -p $(@D)
	$(call hdeps,$(CPPFLAGS) $(onnxruntime_CFLAGS) $(shell pkg-config --cflags $(onnxruntime_PKGS)),$(onnxruntime_SRC))
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PLUGIN_CFLAGS) $(onnxruntime_CFLAGS) -DORT_BACKEND=ortwin $(shell pkg-config --cflags $(onnxruntime_PKGS)) \
		-shared -o $@ $(onnxruntime_SRC) $(LDFLAGS) -L$(B)/lib -laccel $(shell pkg-config --libs $(onnxruntime_PKGS)) $(onnxruntime_LIBS)
endif
