# accel-transcode: the FFmpeg libraries (C API), linked to the program;
# libaccel links none of them.
accel-transcode_SRC := $(wildcard cmd/transcode/*.c)
accel-transcode_PKGS := libavformat libavfilter libavcodec libswscale libavutil

# The unit test of plan.c builds it in, with the FFmpeg libraries it reads
# the codecs' tables from.
$(B)/tests/test_transcode_plan: cmd/transcode/plan.c cmd/transcode/plan.h cmd/transcode/transcode.h
$(B)/tests/test_transcode_plan: PKG_CFLAGS += $(shell pkg-config --cflags libavformat libavfilter libavcodec libswscale libavutil 2>/dev/null)
$(B)/tests/test_transcode_plan: PKG_LIBS += $(shell pkg-config --libs libavformat libavcodec libavutil 2>/dev/null)
