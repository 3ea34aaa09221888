# accel-transcode's parsers of untrusted input (FFmpeg parses the media):
# the MP4 top-level box walker that decides whether a pipe can be read
# (libcore/ops/mp4.c, in libaccel).
FUZZ_TARGETS += mp4box
FUZZ_SRC_mp4box := tests/fuzz/mp4box.c tests/fuzz/ref.c
FUZZ_LIBS_mp4box := $(FUZZ_REF_LIBS)
