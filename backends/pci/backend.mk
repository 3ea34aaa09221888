# pci: needs no package (it reads sysfs),
# so it is always built, by this rule rather than the Makefile's pkg-config one.
pci_SRC := $(wildcard backends/pci/*.c)
OPT_BACKENDS := $(filter-out pci,$(OPT_BACKENDS))
PLUGINS += $(B)/plugins/accel_pci.so
$(B)/plugins/accel_pci.so: $(pci_SRC) $(wildcard backends/pci/*.h) $(LIB) libcore/include/accel.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -shared -o $@ $(pci_SRC) $(LDFLAGS) -L$(B)/lib -laccel -ldl
