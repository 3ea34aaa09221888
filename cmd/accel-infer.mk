# accel-infer: its reader, model description, image decoding and
# post-processing under cmd/infer/; cJSON (a core package) for the JSON it
# reads and writes; FFmpeg's libraries for images when pkg-config finds them
# (else images are refused with a line saying so); Leptonica for the
# connected components of --decode db when pkg-config finds it (else
# --decode db is refused with a line saying so). Neither is linked: both
# (and the codec and image libraries they link) are loaded with dlopen
# when an image is read or --decode db runs, so only their headers and
# sonames are taken here.
accel-infer_SRC := $(wildcard cmd/infer/*.c)
ifeq ($(shell pkg-config --exists libavformat libavcodec libswscale libavutil 2>/dev/null && echo yes),yes)
accel-infer_CFLAGS := -DINFER_IMAGES $(shell pkg-config --cflags libavformat libavcodec libswscale libavutil)
else
$(call build_note,accel: accel-infer reads no images: pkg-config cannot find libavformat libavcodec libswscale libavutil)
endif
# Leptonica's soname is not in its headers: it is read from the
# development library (liblept.so names liblept.so.5 on Debian 12).
ifeq ($(shell pkg-config --exists lept 2>/dev/null && echo yes),yes)
INFER_LEPT_SO := $(call soname,$(patsubst -l%,%,$(firstword $(shell pkg-config --libs-only-l lept))))
endif
ifneq ($(INFER_LEPT_SO),)
accel-infer_CFLAGS += -DINFER_DB -DINFER_LEPT_SO='"$(INFER_LEPT_SO)"' $(shell pkg-config --cflags lept)
else
$(call build_note,accel: accel-infer has no --decode db: pkg-config cannot find lept (libleptonica-dev)$(comma) or readelf its soname)
endif
accel-infer_LIBS := -lm
