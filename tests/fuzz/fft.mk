# accel-fft: the WAV header reader (libcore/ops/wav.c). Seed corpus written by
# tests/fuzz/corpus-wav.sh into tests/fuzz/corpus/wav.
FUZZ_TARGETS += wav
FUZZ_SRC_wav := tests/fuzz/wav.c
FUZZ_LIBS_wav :=
