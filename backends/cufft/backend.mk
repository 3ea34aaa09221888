# cufft: cuFFT on CUDA GPUs (engine cufft:gpuN). Needs no package at build
# time: libcuda.so.1, libcufft.so and libnvrtc.so are dlopen'ed at probe
# time and their few entry points declared in cufft_api.h, so the plugin
# is always built and loads on machines without the driver or toolkit.
#
# chain.cu (the kernels NVRTC compiles at open) is embedded as a C string
# made here under $(B)/cufft. Where the toolkit's headers are installed
# (CUDA_INC, /usr/local/cuda/include), api_check.c is compiled too: it
# checks every declaration of cufft_api.h and of the driver binding the
# CUDA backends share (backends/common/cuda_driver.h) against cuda.h,
# cufft.h and nvrtc.h (the plugin is not built when they differ).
CUDA_INC ?= /usr/local/cuda/include
cufft_PKGS :=
cufft_SRC := backends/cufft/cufft.c backends/cufft/nvrtc.c backends/common/cuda_driver.c backends/common/ctx_pool.c $(B)/cufft/chain_src.c
cufft_CFLAGS := -Ibackends/cufft
cufft_LIBS := -ldl -lpthread

$(B)/cufft/chain_src.c: backends/cufft/chain.cu backends/cufft/backend.mk
	@mkdir -p $(@D)
	{ echo '/* Generated from backends/cufft/chain.cu by backends/cufft/backend.mk. */'; \
	  echo '#include "cufft_chain.h"'; \
	  echo 'const char cufft_chain_source[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/\t"/' -e 's/$$/\\n"/' $<; \
	  echo ';'; } > $@.tmp
	mv $@.tmp $@

# The unit test compiles chain.cu as C and the generated string with NVRTC.
$(B)/tests/test_cufft: backends/cufft/chain.cu backends/cufft/nvrtc.c backends/cufft/cufft_chain.h \
	backends/cufft/cufft_api.h backends/common/cuda_driver.h $(B)/cufft/chain_src.c
$(B)/tests/test_cufft: CPPFLAGS += -Ibackends/cufft -I$(B)/cufft

ifneq ($(and $(wildcard $(CUDA_INC)/cuda.h),$(wildcard $(CUDA_INC)/cufft.h),$(wildcard $(CUDA_INC)/nvrtc.h)),)
$(B)/plugins/accel_cufft.so: $(B)/cufft/api_check.o
$(B)/cufft/api_check.o: backends/cufft/api_check.c backends/cufft/cufft_api.h backends/common/cuda_driver.h
	@mkdir -p $(@D)
	$(CC) -MMD -MP $(CPPFLAGS) $(CFLAGS) -I$(CUDA_INC) -c -o $@ $<
endif

# A test double of libcuda.so.1 and libcufft.so.12 (tests/fakecuda) for
# tests/fft-cuda.bats on machines without a GPU.
# Built where FFTW (fftw3f), which stands in for cuFFT, is installed.
ifneq ($(shell pkg-config --exists fftw3f 2>/dev/null && echo yes),)
tests: $(B)/tests/fakecuda/libcuda.so.1 $(B)/tests/fakecuda/libcufft.so.12
endif
$(B)/tests/fakecuda/libcuda.so.1: tests/fakecuda/fakecuda.c backends/cufft/chain.cu backends/cufft/cufft_api.h \
	backends/common/cuda_driver.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fvisibility=hidden -shared -o $@ $< $$(pkg-config --cflags --libs fftw3f) \
		-lfftw3f_threads -lm
$(B)/tests/fakecuda/libcufft.so.12: $(B)/tests/fakecuda/libcuda.so.1
	ln -sf libcuda.so.1 $@
