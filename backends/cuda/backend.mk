# cuda: needs no package: libcuda.so.1 and libnvidia-ml.so.1 are dlopen'ed at
# probe time and their few entry points declared in cuda_api.h, so it is always built.
cuda_PKGS :=
cuda_SRC := $(wildcard backends/cuda/*.c)
cuda_LIBS := -ldl
