/*
 * accel/ops/video.h - video containers: whether an MP4 can be read from a
 * pipe (accel-transcode). Part of libaccel's public API; <accel.h>
 * includes every such header.
 */
#ifndef ACCEL_OPS_VIDEO_H
#define ACCEL_OPS_VIDEO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Whether the n bytes at p begin an MP4 (ISO BMFF, ISO/IEC 14496-12, 4.2:
 * top-level boxes of a 32-bit big-endian size in bytes, a four-character
 * type, a 64-bit size after it when the size is 1, to the end of the file
 * when it is 0) whose 'mdat' box (the media) comes before its 'moov' box
 * (the index), which a pipe cannot read: 1; 0 when it is not an MP4 (no
 * 'ftyp' first), has its index first, or these bytes do not tell (a box
 * that runs past them, a size below 8 or of 0). Reads only p[0..n); no
 * error codes. */
int accel_mp4_index_at_end(const uint8_t *p, size_t n);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
