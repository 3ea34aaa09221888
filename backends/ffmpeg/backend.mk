# FFmpeg: headers from libavutil-dev and libavcodec-dev; the libraries are
# dlopen'ed at probe time (--as-needed drops the link), so loading the
# plugin costs nothing for programs that never probe video engines.
ffmpeg_PKGS := libavutil libavcodec
ffmpeg_SRC := backends/ffmpeg/ffmpeg.c
ffmpeg_CFLAGS := -Wl,--as-needed
ffmpeg_LIBS := -ldl -lpthread
