# accel-bench: its pieces under cmd/bench/ (bench.h says which does what).
accel-bench_SRC := $(wildcard cmd/bench/*.c)
# Its FFT peer, accel-bench-fftw (FFTW called directly), where pkg-config
# finds fftw3f: built into $(B)/libexec, where accel-bench looks beside
# itself, and installed in $(LIBEXECDIR)/accel, where it looks then.
accel-bench_CFLAGS := -DACCEL_BENCH_LIBEXEC='"$(LIBEXECDIR)/accel"'
ifeq ($(shell pkg-config --exists fftw3f 2>/dev/null && echo yes),yes)
BENCH_HELPERS := $(B)/libexec/accel-bench-fftw
all: $(BENCH_HELPERS)
$(B)/libexec/accel-bench-fftw: cmd/libexec/accel-bench-fftw.c | $(B)/lib/libaccel.so.$(VERSION)
	@mkdir -p $(@D)
	$(call hdeps,$(CPPFLAGS) $(shell pkg-config --cflags fftw3f),$<)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(shell pkg-config --cflags fftw3f) -o $@ $< $(LDFLAGS) -L$(B)/lib -laccel \
		-Wl,-rpath,'$$ORIGIN/../lib:$$ORIGIN/../../lib' $(shell pkg-config --libs fftw3f)
else
$(info accel: accel-bench --vs has no FFT peer: pkg-config cannot find fftw3f)
endif
