# qat: needs no package (it reads sysfs),
# so it is always built, by this rule rather than the Makefile's pkg-config one.
qat_SRC := $(wildcard backends/qat/*.c)
OPT_BACKENDS := $(filter-out qat,$(OPT_BACKENDS))
PLUGINS += $(B)/plugins/accel_qat.so
$(B)/plugins/accel_qat.so: $(qat_SRC) $(wildcard backends/qat/*.h) $(LIB) libcore/include/accel.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -shared -o $@ $(qat_SRC) $(LDFLAGS) -L$(B)/lib -laccel -ldl
