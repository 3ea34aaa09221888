# VkFFT (Debian libvkfft-dev, header-only) on OpenCL and Vulkan devices:
# engines vkfft.opencl:DEVICE and vkfft.vulkan:DEVICE. The header is
# included by one file per API (it compiles slowly). Linked to the OpenCL
# ICD loader and the Vulkan loader, which VkFFT calls directly: a machine
# without them leaves the plugin out with a reason, never the program.
#
# Vulkan: Debian 12's vkFFT.h (1.2.26) does not compile as C (`= {}`
# initialisers) and fills glslang 12's glslang_resource_t by position, so
# its shaders fail at run time (error 4014). We build against a corrected
# copy made here, under $(B)/vkfft (never committed): `= {}` becomes
# `= {0}`, the positional resource struct is deleted and glslang's own
# glslang_default_resource() (glslang/Public/resource_limits_c.h) is passed
# instead. glslang and SPIRV-Tools are linked from Debian's static
# libraries (glslang-dev, spirv-tools). Without glslang-dev only the
# OpenCL engine is built.
vkfft_PKGS := OpenCL
vkfft_SRC := backends/vkfft/vkfft.c backends/vkfft/vkfft_opencl.c
vkfft_CFLAGS := -I$(B)/vkfft -DCL_TARGET_OPENCL_VERSION=120 -DCL_USE_DEPRECATED_OPENCL_1_2_APIS \
	-Wno-unused-function -Wno-unused-variable -Wno-unused-but-set-variable -Wno-shadow -Wno-sign-compare \
	-Wno-missing-field-initializers -Wno-strict-prototypes -Wno-dangling-pointer
vkfft_LIBS := -lm
ifneq ($(wildcard /usr/include/glslang/Public/resource_limits_c.h),)
vkfft_PKGS += vulkan
vkfft_SRC += backends/vkfft/vkfft_vulkan.c
vkfft_CFLAGS += -DACCEL_VKFFT_VULKAN
vkfft_LIBS += -lglslang -lMachineIndependent -lOSDependent -lGenericCodeGen -lOGLCompiler -lSPIRV \
	-lSPIRV-Tools-opt -lSPIRV-Tools -lglslang-default-resource-limits -lstdc++
endif
ifeq ($(wildcard /usr/include/vkFFT.h),)
vkfft_PKGS := libvkfft-is-not-installed
endif

$(B)/plugins/accel_vkfft.so: $(B)/vkfft/vkFFT.h
$(B)/vkfft/vkFFT.h: /usr/include/vkFFT.h backends/vkfft/backend.mk
	@mkdir -p $(@D)
	sed -e 's/= {};/= {0};/g' \
		-e '/const glslang_resource_t default_resource = {/,/^[[:space:]]*} };$$/d' \
		-e 's/&default_resource,/glslang_default_resource(),/' \
		-e 's|^#include <glslang/Include/glslang_c_interface.h>$$|&\n#include <glslang/Public/resource_limits_c.h>|' \
		$< > $@.tmp
	mv $@.tmp $@
