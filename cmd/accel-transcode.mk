# accel-transcode: the FFmpeg libraries (C API), linked to the program;
# libaccel links none of them.
accel-transcode_SRC := cmd/transcode/pipeline.c cmd/transcode/hw.c cmd/transcode/mp4box.c
accel-transcode_PKGS := libavformat libavfilter libavcodec libswscale libavutil
