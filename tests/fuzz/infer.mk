# The .npy reader of accel-infer (libcore/npy.c); corpus in tests/fuzz/corpus/npy.
FUZZ_TARGETS += npy
FUZZ_SRC_npy := tests/fuzz/npy.c tests/fuzz/ref.c
FUZZ_LIBS_npy := $(FUZZ_REF_LIBS)
