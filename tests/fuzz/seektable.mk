# zstd's seekable format (libcore/ops/seekable.c) and -d --range: the seek
# table read from the end of the input, and ranges decoded against
# libzstd. Seed corpus written by tests/fuzz/corpus-seektable.sh into
# tests/fuzz/corpus/seektable.
FUZZ_TARGETS += seektable
FUZZ_SRC_seektable := tests/fuzz/seektable.c tests/fuzz/ref.c
FUZZ_LIBS_seektable := $(FUZZ_REF_LIBS)
