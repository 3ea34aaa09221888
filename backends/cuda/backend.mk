# cuda: needs no package: libcuda.so.1 (backends/common/cuda_driver.h) and
# libnvidia-ml.so.1 (nvml_api.h) are dlopen'ed at probe time, so it is always built.
cuda_PKGS :=
cuda_SRC := $(wildcard backends/cuda/*.c) backends/common/cuda_driver.c
cuda_LIBS := -ldl
