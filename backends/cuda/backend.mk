# cuda: needs no package: libcuda.so.1 and libnvidia-ml.so.1 are dlopen'ed at
# probe time and their few entry points declared in cuda_api.h, so it is always built.
cuda_SRC := $(wildcard backends/cuda/*.c)
OPT_BACKENDS := $(filter-out cuda,$(OPT_BACKENDS))
PLUGINS += $(B)/plugins/accel_cuda.so
$(B)/plugins/accel_cuda.so: $(cuda_SRC) $(wildcard backends/cuda/*.h) $(LIB) libcore/include/accel.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -shared -o $@ $(cuda_SRC) $(LDFLAGS) -L$(B)/lib -laccel -ldl
