# VkFFT (Debian libvkfft-dev, header-only) on OpenCL and Vulkan devices:
# engines vkfft.opencl:DEVICE and vkfft.vulkan:DEVICE. The header is
# included by one file per API (it compiles slowly), each built with
# chain.c into a companion object (vkfft.h), $(B)/plugins/vkfft/opencl.so
# and vulkan.so, linked to the OpenCL ICD loader and to the Vulkan loader
# and glslang, which VkFFT calls directly. The plugin (vkfft.c) links none
# of them: its probe loads the companions, so loading the plugin maps no
# OpenCL, Vulkan or glslang, and a machine without them leaves the engines
# of that API out with a note, never the program.
#
# Vulkan: Debian 12's vkFFT.h (1.2.26) does not compile as C (`= {}`
# initialisers) and fills glslang 12's glslang_resource_t by position, so
# its shaders fail at run time (error 4014). We build against a corrected
# copy made here, under $(B)/vkfft (never committed): `= {}` becomes
# `= {0}`, the positional resource struct is deleted and glslang's own
# glslang_default_resource() (glslang/Public/resource_limits_c.h) is passed
# instead. glslang and SPIRV-Tools are linked from Debian's static
# libraries (glslang-dev, spirv-tools). Without glslang-dev only the
# OpenCL companion is built (the probe notes vkfft/vulkan.so not found).
vkfft_PKGS := OpenCL
vkfft_SRC := backends/vkfft/vkfft.c backends/common/ctx_pool.c
vkfft_CFLAGS := -Wl,--as-needed
vkfft_LIBS := -ldl
VKFFT_CFLAGS := -I$(B)/vkfft -DCL_TARGET_OPENCL_VERSION=120 -DCL_USE_DEPRECATED_OPENCL_1_2_APIS \
	-Wno-unused-function -Wno-unused-variable -Wno-unused-but-set-variable -Wno-shadow -Wno-sign-compare \
	-Wno-missing-field-initializers -Wno-strict-prototypes -Wno-dangling-pointer -fvisibility=hidden
vkfft_PARTS := opencl
vkfft_opencl_LIBS := $(shell pkg-config --libs OpenCL 2>/dev/null) -lm
ifneq ($(wildcard /usr/include/glslang/Public/resource_limits_c.h),)
vkfft_PKGS += vulkan
vkfft_PARTS += vulkan
vkfft_vulkan_LIBS := $(shell pkg-config --libs vulkan 2>/dev/null) -lglslang -lMachineIndependent -lOSDependent \
	-lGenericCodeGen -lOGLCompiler -lSPIRV -lSPIRV-Tools-opt -lSPIRV-Tools -lglslang-default-resource-limits -lstdc++ -lm
endif
ifeq ($(wildcard /usr/include/vkFFT.h),)
vkfft_PKGS := libvkfft-is-not-installed
endif

$(B)/plugins/vkfft/%.so: backends/vkfft/vkfft_%.c backends/vkfft/chain.c $(B)/vkfft/vkFFT.h | $(LIB)
	@mkdir -p $(@D)
	$(call hdeps,$(CPPFLAGS) $(VKFFT_CFLAGS),$< backends/vkfft/chain.c)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(VKFFT_CFLAGS) -shared -o $@ $< backends/vkfft/chain.c $(LDFLAGS) \
		-L$(B)/lib -laccel $(vkfft_$*_LIBS)

$(B)/vkfft/vkFFT.h: /usr/include/vkFFT.h backends/vkfft/backend.mk
	@mkdir -p $(@D)
	sed -e 's/= {};/= {0};/g' \
		-e '/const glslang_resource_t default_resource = {/,/^[[:space:]]*} };$$/d' \
		-e 's/&default_resource,/glslang_default_resource(),/' \
		-e 's|^#include <glslang/Include/glslang_c_interface.h>$$|&\n#include <glslang/Public/resource_limits_c.h>|' \
		$< > $@.tmp
	mv $@.tmp $@
