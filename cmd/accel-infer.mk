# accel-infer: its reader, model description, image decoding and
# post-processing under cmd/infer/; cJSON (a core package) for the JSON it
# reads and writes; FFmpeg's libraries for images when pkg-config finds them
# (else images are refused with a line saying so); Leptonica for the
# connected components of --decode db when pkg-config finds it (else
# --decode db is refused with a line saying so).
accel-infer_SRC := $(wildcard cmd/infer/*.c)
ifeq ($(shell pkg-config --exists libavformat libavcodec libswscale libavutil 2>/dev/null && echo yes),yes)
accel-infer_PKGS := libavformat libavcodec libswscale libavutil
accel-infer_CFLAGS := -DINFER_IMAGES
else
$(info accel: accel-infer reads no images: pkg-config cannot find libavformat libavcodec libswscale libavutil)
endif
ifeq ($(shell pkg-config --exists lept 2>/dev/null && echo yes),yes)
accel-infer_PKGS += lept
accel-infer_CFLAGS += -DINFER_DB
else
$(info accel: accel-infer has no --decode db: pkg-config cannot find lept (libleptonica-dev))
endif
accel-infer_LIBS := -lm
