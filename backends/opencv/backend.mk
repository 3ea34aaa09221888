# OpenCV DNN (Debian libopencv-dnn-dev, which ships no pkg-config file):
# engines opencv:cpu0 and opencv.opencl:DEVICE. Its C++ is one file,
# dnn.cpp, compiled here with $(CXX) into the companion object
# $(B)/plugins/opencv/dnn.so, linked to OpenCV and libstdc++, which the
# probe loads: the plugin (opencv.c) links no OpenCV, so loading
# it costs nothing to programs that never probe opencv. Left out when the
# OpenCV DNN headers are not installed.
OPENCV_INC := $(firstword $(wildcard /usr/include/opencv4 /usr/local/include/opencv4))
OPENCV_ARCH_INC := $(wildcard /usr/include/$(shell $(CC) -dumpmachine 2>/dev/null)/opencv4)
ifneq ($(wildcard $(OPENCV_INC)/opencv2/dnn.hpp),)
opencv_PKGS := libcjson OpenCL
opencv_SRC := backends/opencv/opencv.c backends/common/onnx_cache.c
# OpenCV's version macros (opencv2/core/version.hpp, plain C), for the
# version said before the companion is loaded (dnn.cpp reports the same).
opencv_CFLAGS := -Wl,--as-needed $(addprefix -isystem ,$(OPENCV_INC))
opencv_LIBS := -ldl
opencv_PARTS := dnn
CXX ?= g++
$(B)/plugins/opencv/dnn.so: backends/opencv/dnn.cpp
	@mkdir -p $(@D)
	$(call hdeps,$(CPPFLAGS) -std=gnu++17 $(addprefix -I,$(OPENCV_INC) $(OPENCV_ARCH_INC)),$<)
	$(CXX) $(CPPFLAGS) -DCL_TARGET_OPENCL_VERSION=120 $(OPT) $(SAN) $(PREFIX_MAP) $(filter -Werror,$(WARN)) -Wall -Wextra -Wshadow -std=gnu++17 -fPIC -pthread \
		-fvisibility=hidden $(addprefix -isystem ,$(OPENCV_INC) $(OPENCV_ARCH_INC)) -shared -o $@ $< $(LDFLAGS) \
		-lopencv_dnn -lopencv_core $$(pkg-config --libs OpenCL)
else
OPT_BACKENDS := $(filter-out opencv,$(OPT_BACKENDS))
$(call build_note,accel: leaving out the opencv backend: no OpenCV DNN headers (libopencv-dnn-dev))
endif
