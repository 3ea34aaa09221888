/*
 * codec_dl.c - the compression libraries with dlopen (codec_dl.h): each
 * soname, taken at build time from the library its headers belong to, is
 * loaded once, unless the process already holds the library in its global
 * scope; a table is handed out only with every function resolved.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "codec_dl.h"
#include "accel/backend.h"

#if !defined(ACCEL_ZSTD_SONAME) || !defined(ACCEL_LZ4_SONAME) || !defined(ACCEL_ISAL_SONAME) || \
	!defined(ACCEL_DEFLATE_SONAME) || !defined(ACCEL_ZLIB_SONAME) || !defined(ACCEL_MINIZIP_SONAME) || \
	!defined(ACCEL_XXHASH_SONAME)
#error "ACCEL_*_SONAME: the Makefile names the compression libraries' shared objects"
#endif

#define CORE_CODEC_NAME(f) #f,

struct codec_lib {
	const char *soname;
	const char *const *names;  /* the table's members, in order */
	size_t count;
	void **fns;                /* the table, `count` pointers */
	pthread_once_t once;
	int loaded;
	char why[256];
};

/* Resolve lib's functions into its table: in the global scope when its
 * first function is there, else in the library opened by soname. */
static void load(struct codec_lib *lib)
{
	void *h = RTLD_DEFAULT;
	if (!dlsym(RTLD_DEFAULT, lib->names[0])) {
		char why[200];
		if (!lib->soname[0]) {
			snprintf(lib->why, sizeof lib->why, "the library of %s was not found at build time",
				 lib->names[0]);
			return;
		}
		if (!(h = accel_dlopen(lib->soname, why, sizeof why))) {
			snprintf(lib->why, sizeof lib->why, "%s", why);
			return;
		}
	}
	for (size_t i = 0; i < lib->count; i++) {
		void *f = dlsym(h, lib->names[i]);
		if (!f) {
			snprintf(lib->why, sizeof lib->why, "%s lacks %s", h == RTLD_DEFAULT ? "this process" : lib->soname,
				 lib->names[i]);
			if (h != RTLD_DEFAULT)
				dlclose(h);
			return;
		}
		memcpy(&lib->fns[i], &f, sizeof f);
	}
	lib->loaded = 1;
}

static const void *get(struct codec_lib *lib, void (*once)(void), char *why, size_t len)
{
	pthread_once(&lib->once, once);
	if (!lib->loaded && len)
		snprintf(why, len, "%s", lib->why);
	return lib->loaded ? lib->fns : NULL;
}

/* One library: its table, names, state and getter. */
#define CODEC_LIB(type, fns_list, soname)                                                         \
	struct core_##type core_##type##_fns;                                                     \
	static const char *const type##_names[] = { fns_list(CORE_CODEC_NAME) };                 \
	_Static_assert(sizeof(struct core_##type) == sizeof type##_names / sizeof type##_names[0] * sizeof(void *), \
		       "core_" #type ": one pointer per name");                                  \
	static struct codec_lib type##_lib = { soname, type##_names,                              \
		sizeof type##_names / sizeof type##_names[0], (void **)&core_##type##_fns, PTHREAD_ONCE_INIT, 0, "" }; \
	static void type##_load(void)                                                             \
	{                                                                                         \
		load(&type##_lib);                                                                \
	}                                                                                         \
	const struct core_##type *core_##type(char *why, size_t len)                              \
	{                                                                                         \
		return get(&type##_lib, type##_load, why, len);                                   \
	}

CODEC_LIB(zstd, CORE_ZSTD_FNS, ACCEL_ZSTD_SONAME)
CODEC_LIB(lz4, CORE_LZ4_FNS, ACCEL_LZ4_SONAME)
CODEC_LIB(isal, CORE_ISAL_FNS, ACCEL_ISAL_SONAME)
CODEC_LIB(deflate, CORE_DEFLATE_FNS, ACCEL_DEFLATE_SONAME)
CODEC_LIB(zlib, CORE_ZLIB_FNS, ACCEL_ZLIB_SONAME)
CODEC_LIB(minizip, CORE_MINIZIP_FNS, ACCEL_MINIZIP_SONAME)
CODEC_LIB(xxhash, CORE_XXHASH_FNS, ACCEL_XXHASH_SONAME)
