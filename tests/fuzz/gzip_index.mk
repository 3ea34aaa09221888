# The deflate block boundary finder and speculative decoder of parallel
# gzip decompression (libcore/ops/gzip_index.c), compared with zlib. Seed
# corpus: tests/fuzz/corpus/gzip_index (raw deflate data, written by
# tests/fuzz/corpus-gzip-index.sh).
FUZZ_TARGETS += gzip_index
FUZZ_SRC_gzip_index := tests/fuzz/gzip_index.c
FUZZ_LIBS_gzip_index := -lz -lisal
# The replay driver compiles libcore's loader of zlib and ISA-L
# (codec_dl.c) with the source: it binds the two linked here.
FUZZ_DEF_gzip_index = $(CODEC_SONAMES)
