# The routing profile's reader (libcore/profile.c, cJSON underneath):
# profile.json as the router finds it in $XDG_CACHE_HOME/accel. Seed corpus
# written by tests/fuzz/corpus-profile.sh into tests/fuzz/corpus/profile.
FUZZ_TARGETS += profile
FUZZ_SRC_profile := tests/fuzz/profile.c tests/fuzz/ref.c
FUZZ_LIBS_profile := $(FUZZ_REF_LIBS)
