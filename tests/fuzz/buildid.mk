# The GNU build-id reader (libcore/buildid.c) that the plugin manifest
# (libcore/manifest.c) runs over every listed plugin at start: ELF headers,
# program headers and notes whose offsets and sizes may lie. Seed corpus
# written by tests/fuzz/corpus-buildid.sh into tests/fuzz/corpus/buildid.
FUZZ_TARGETS += buildid
FUZZ_SRC_buildid := tests/fuzz/buildid.c tests/fuzz/ref.c
FUZZ_LIBS_buildid := $(FUZZ_REF_LIBS)
