# FFTW: single-precision FFTs on the CPU device (fftw:cpu0), from libfftw3-dev.
fftw_PKGS := fftw3f
fftw_SRC := backends/fftw/fftw.c
fftw_LIBS := -lm
