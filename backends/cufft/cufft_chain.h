/*
 * cufft_chain.h - what the files of the cufft backend (and its unit test)
 * share: the kernels' source (chain.cu, embedded as a string by
 * backend.mk) and NVRTC, loaded at run time, that compiles it to PTX.
 */
#ifndef ACCEL_BACKEND_CUFFT_CHAIN_H
#define ACCEL_BACKEND_CUFFT_CHAIN_H

#include "cufft_api.h"

/* chain.cu, NUL-terminated (chain_src.c, generated). */
extern const char cufft_chain_source[];

/* Load NVRTC (libnvrtc.so.13, .12 or libnvrtc.so, on the library path or
 * under /usr/local/cuda/lib64) into *n: 0, or -1 with the reason in
 * err[len]. The handle stays open for the life of the process. */
int cufft_nvrtc_load(struct nvrtc_lib *n, char *err, size_t len);

/* Compile chain.cu to PTX for compute capability major.minor (or the
 * newest architecture this NVRTC supports below it): 0 with *ptx set
 * (malloc'ed, NUL-terminated; free it), or -1 with one line in err[len]
 * (NVRTC's error and the first line of its log). Thread-safe. */
int cufft_nvrtc_compile(const struct nvrtc_lib *n, int major, int minor, char **ptx, char *err, size_t len);

#endif
