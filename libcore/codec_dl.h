/*
 * codec_dl.h - the compression libraries (libzstd, liblz4, ISA-L,
 * libdeflate, zlib, minizip) and libxxhash (lz4's checksums), loaded with dlopen the first time a job, a
 * reader or --version needs one, so that a program that compresses nothing
 * (accel-fft, accel-crypt, accel-infer, accel-detect) maps none of them:
 * linked, the six cost every start about 0.4 ms and 0.8 MB.
 * The functions libaccel calls, resolved once per library, are the
 * members of its table, named as the library names them (z->ZSTD_compress2).
 * A library the process already holds in its global scope (linked by the
 * program, or by a test that wraps one of its functions) is bound there,
 * as the dynamic linker would have bound it; else it is opened by soname.
 */
#ifndef ACCEL_CODEC_DL_H
#define ACCEL_CODEC_DL_H

#include <stddef.h>
#include <isa-l.h>
#include <libdeflate.h>
#include <lz4.h>
#include <lz4frame.h>
#include <minizip/zip.h>
#include <zlib.h>
#include <xxhash.h>
#include <zstd.h>

#define CORE_CODEC_FN(f) __typeof__(f) *f;

/* The first name of each list is looked up first: where the process holds
 * it, the library is bound in the global scope. */
#define CORE_ZSTD_FNS(X) X(ZSTD_versionString) X(ZSTD_isError) X(ZSTD_getErrorName) \
	X(ZSTD_createCCtx) X(ZSTD_freeCCtx) X(ZSTD_CCtx_setParameter) X(ZSTD_compressBound) \
	X(ZSTD_compress2) X(ZSTD_createDCtx) X(ZSTD_freeDCtx) X(ZSTD_DCtx_reset) \
	X(ZSTD_DCtx_setParameter) X(ZSTD_sizeof_DCtx) X(ZSTD_decompressDCtx) X(ZSTD_DStreamInSize) \
	X(ZSTD_DStreamOutSize) X(ZSTD_decompressStream)
#define CORE_LZ4_FNS(X) X(LZ4_versionString) X(LZ4F_isError) X(LZ4F_getErrorName) \
	X(LZ4F_createCompressionContext) X(LZ4F_freeCompressionContext) X(LZ4F_compressFrameBound) \
	X(LZ4F_compressBegin) X(LZ4F_compressUpdate) X(LZ4F_compressEnd) \
	X(LZ4F_createDecompressionContext) X(LZ4F_freeDecompressionContext) \
	X(LZ4F_resetDecompressionContext) X(LZ4F_decompress) X(LZ4_decompress_safe)
#define CORE_ISAL_FNS(X) X(isal_inflate_init) X(isal_inflate) X(isal_inflate_set_dict) \
	X(isal_inflate_stateless) X(isal_deflate_stateless_init) X(isal_deflate_stateless) X(crc32_gzip_refl)
#define CORE_DEFLATE_FNS(X) X(libdeflate_alloc_compressor) X(libdeflate_free_compressor) \
	X(libdeflate_deflate_compress) X(libdeflate_deflate_compress_bound) X(libdeflate_crc32)
#define CORE_ZLIB_FNS(X) X(zlibVersion) X(inflateInit2_) X(inflate) X(inflateEnd) X(inflateReset) \
	X(inflatePrime) X(inflateSetDictionary) X(crc32_combine)
/* XXH32 (the checksums of lz4 frames decoded in parts, libcore/ops/compress.c):
 * liblz4 keeps its own copy to itself. */
#define CORE_XXHASH_FNS(X) X(XXH_versionNumber) X(XXH32) X(XXH32_createState) X(XXH32_freeState) \
	X(XXH32_reset) X(XXH32_update) X(XXH32_digest)
#define CORE_MINIZIP_FNS(X) X(zipOpen2_64) X(zipOpenNewFileInZip4_64) X(zipWriteInFileInZip) \
	X(zipCloseFileInZip) X(zipClose)

struct core_zstd { CORE_ZSTD_FNS(CORE_CODEC_FN) };
struct core_lz4 { CORE_LZ4_FNS(CORE_CODEC_FN) };
struct core_isal { CORE_ISAL_FNS(CORE_CODEC_FN) };
struct core_deflate { CORE_DEFLATE_FNS(CORE_CODEC_FN) };
struct core_zlib { CORE_ZLIB_FNS(CORE_CODEC_FN) };
struct core_minizip { CORE_MINIZIP_FNS(CORE_CODEC_FN) };
struct core_xxhash { CORE_XXHASH_FNS(CORE_CODEC_FN) };

/* The tables, filled by the loaders below: a function that calls through
 * one runs after its loader returned it (on its thread, or on one that
 * started this thread since). */
extern struct core_zstd core_zstd_fns;
extern struct core_lz4 core_lz4_fns;
extern struct core_isal core_isal_fns;
extern struct core_deflate core_deflate_fns;
extern struct core_zlib core_zlib_fns;
extern struct core_minizip core_minizip_fns;
extern struct core_xxhash core_xxhash_fns;

/* Each library's functions, loaded on the first call (thread-safe): its
 * table, or NULL when it cannot be loaded, why[len] (len 0: nothing
 * written) saying so in one line ("libzstd.so.1 not found", "libzstd.so.1
 * lacks ZSTD_compress2"). */
const struct core_zstd *core_zstd(char *why, size_t len);
const struct core_lz4 *core_lz4(char *why, size_t len);
const struct core_isal *core_isal(char *why, size_t len);
const struct core_deflate *core_deflate(char *why, size_t len);
const struct core_zlib *core_zlib(char *why, size_t len);
const struct core_minizip *core_minizip(char *why, size_t len);
const struct core_xxhash *core_xxhash(char *why, size_t len);

#endif
