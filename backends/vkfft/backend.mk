# VkFFT (Debian libvkfft-dev, header-only) on OpenCL devices: engines
# vkfft.opencl:DEVICE. The header is included by one file per API (it
# compiles slowly): vkfft_opencl.c. Linked to the ICD loader, as VkFFT's
# OpenCL backend calls it directly; a machine without libOpenCL.so.1 leaves
# the plugin out with a reason.
vkfft_PKGS := OpenCL
vkfft_SRC := backends/vkfft/vkfft.c backends/vkfft/vkfft_opencl.c
vkfft_CFLAGS := -DCL_TARGET_OPENCL_VERSION=120 -DCL_USE_DEPRECATED_OPENCL_1_2_APIS -Wno-unused-function \
	-Wno-unused-variable -Wno-unused-but-set-variable -Wno-shadow -Wno-sign-compare -Wno-missing-field-initializers
vkfft_LIBS := -lm
ifeq ($(wildcard /usr/include/vkFFT.h),)
vkfft_PKGS := libvkfft-is-not-installed
endif
