# ONNX Runtime: built against the system's headers when pkg-config finds
# libonnxruntime, else against the build-local copy `make deps` fetches from
# npm (tests/deps.d/infer.sh, build/deps/onnxruntime); left out when neither
# is there. libonnxruntime.so.1 is dlopen'ed by name at probe time
# (--as-needed drops the link), which searches the plugin's RUNPATH: the
# system's libdir, or, for the build-local copy, onnxruntime/ beside the
# plugin, where its libraries are linked in the build tree and copied by
# `make install` (companions that are not plugin tables: PLUGIN_PARTS).
ORT_LOCAL := $(CURDIR)/build/deps/onnxruntime
ifeq ($(shell pkg-config --exists libonnxruntime 2>/dev/null && echo yes),yes)
onnxruntime_PKGS := libcjson libonnxruntime
onnxruntime_CFLAGS := -Wl,--as-needed -Wl,-rpath,$(shell pkg-config --variable=libdir libonnxruntime)
else ifneq ($(wildcard $(ORT_LOCAL)/include/onnxruntime_c_api.h),)
onnxruntime_PKGS := libcjson
onnxruntime_CFLAGS := -I$(ORT_LOCAL)/include -Wl,-rpath,'$$ORIGIN/onnxruntime'
ORT_LIBS := $(notdir $(wildcard $(ORT_LOCAL)/lib/libonnxruntime.so.1 $(ORT_LOCAL)/lib/libonnxruntime_providers_*.so))
PLUGIN_PARTS += $(ORT_LIBS:%=$(B)/plugins/onnxruntime/%)
$(ORT_LIBS:%=$(B)/plugins/onnxruntime/%): $(B)/plugins/onnxruntime/%: $(ORT_LOCAL)/lib/%
	@mkdir -p $(@D)
	ln -sf $< $@
else
OPT_BACKENDS := $(filter-out onnxruntime,$(OPT_BACKENDS))
$(call build_note,accel: leaving out the onnxruntime backend: no libonnxruntime (pkg-config) and no build-local copy (make deps))
endif
onnxruntime_SRC := backends/onnxruntime/onnxruntime.c backends/common/onnx_cache.c backends/common/cuda_driver.c
onnxruntime_LIBS := -ldl -lpthread
# ortwin: this backend built again under another name, for the tests only
# (build/tests/ortwin, never installed): a second engine that runs ONNX
# models, so that tests/infer.bats can show fallback from a failing engine.
# It finds the build-local ONNX Runtime where the plugin does.
ifneq ($(filter onnxruntime,$(OPT_BACKENDS)),)
TEST_BACKEND_SO += $(B)/tests/ortwin/accel_ortwin.so
$(B)/tests/ortwin/accel_ortwin.so: $(onnxruntime_SRC) backends/common/plugin.ver | $(LIB)
	@mkdir -p $(@D)
	$(call hdeps,$(CPPFLAGS) $(onnxruntime_CFLAGS) $(shell pkg-config --cflags $(onnxruntime_PKGS)),$(onnxruntime_SRC))
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PLUGIN_CFLAGS) $(onnxruntime_CFLAGS) -Wl,-rpath,'$$ORIGIN/../../plugins/onnxruntime' -DORT_BACKEND=ortwin $(shell pkg-config --cflags $(onnxruntime_PKGS)) \
		-shared -o $@ $(onnxruntime_SRC) $(LDFLAGS) -L$(B)/lib -laccel $(shell pkg-config --libs $(onnxruntime_PKGS)) $(onnxruntime_LIBS)
endif
