# FFTW: single-precision FFTs on the CPU device (fftw:cpu0), headers from
# libfftw3-dev; libfftw3f.so.3 is dlopen'ed at probe time (--as-needed
# drops the link), so loading the plugin costs nothing.
fftw_PKGS := fftw3f
fftw_SRC := backends/fftw/fftw.c
fftw_CFLAGS := -Wl,--as-needed
fftw_LIBS := -ldl -lm
