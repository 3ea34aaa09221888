# accel-fft: its pieces under cmd/fft/ (fft.h says which does what).
# libsndfile is loaded with dlopen when an audio file other than WAV is read
# (audio.c): only its header is needed to build.
accel-fft_SRC := $(wildcard cmd/fft/*.c)
