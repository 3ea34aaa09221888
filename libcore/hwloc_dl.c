/*
 * hwloc_dl.c - hwloc with dlopen (hwloc_dl.h): its soname, taken at build
 * time from the library the headers belong to, is loaded once; an API of
 * another major version is refused, as hwloc's documentation of
 * hwloc_get_api_version asks.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "hwloc_dl.h"
#include "accel/backend.h"

#ifndef ACCEL_HWLOC_SONAME
#error "ACCEL_HWLOC_SONAME: the Makefile names hwloc's shared library"
#endif

static struct core_hwloc hw;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char load_why[256];

static void load(void)
{
	char why[200];
	void *lib = accel_dlopen(ACCEL_HWLOC_SONAME, why, sizeof why);
	if (!lib) {
		snprintf(load_why, sizeof load_why, "%s", why);
		return;
	}
	const char *missing = NULL;
#define SYM(field, name) (missing ? 0 : (*(void **)&hw.field = dlsym(lib, name)) ? 1 : ((missing = name), 0))
	SYM(get_api_version, "hwloc_get_api_version");
	SYM(topology_init, "hwloc_topology_init");
	SYM(topology_load, "hwloc_topology_load");
	SYM(topology_destroy, "hwloc_topology_destroy");
	SYM(get_type_depth, "hwloc_get_type_depth");
	SYM(get_nbobjs_by_depth, "hwloc_get_nbobjs_by_depth");
	SYM(get_obj_by_depth, "hwloc_get_obj_by_depth");
	SYM(topology_get_topology_cpuset, "hwloc_topology_get_topology_cpuset");
	SYM(set_cpubind, "hwloc_set_cpubind");
	SYM(bitmap_alloc, "hwloc_bitmap_alloc");
	SYM(bitmap_free, "hwloc_bitmap_free");
	SYM(bitmap_list_sscanf, "hwloc_bitmap_list_sscanf");
	SYM(bitmap_list_snprintf, "hwloc_bitmap_list_snprintf");
	SYM(bitmap_isincluded, "hwloc_bitmap_isincluded");
	SYM(bitmap_intersects, "hwloc_bitmap_intersects");
	SYM(bitmap_set, "hwloc_bitmap_set");
	SYM(bitmap_iszero, "hwloc_bitmap_iszero");
#undef SYM
	if (missing) {
		snprintf(load_why, sizeof load_why, "%s lacks %s", ACCEL_HWLOC_SONAME, missing);
		dlclose(lib);
		return;
	}
	unsigned api = hw.get_api_version();
	if (api >> 16 != HWLOC_API_VERSION >> 16) {
		snprintf(load_why, sizeof load_why, "%s has API %u.%u.%u, built for %u.x", ACCEL_HWLOC_SONAME, api >> 16,
			 (api >> 8) & 0xff, api & 0xff, HWLOC_API_VERSION >> 16);
		dlclose(lib);
		return;
	}
	loaded = 1;
}

const struct core_hwloc *core_hwloc(char *why, size_t len)
{
	pthread_once(&once, load);
	if (!loaded && len)
		snprintf(why, len, "%s", load_why);
	return loaded ? &hw : NULL;
}

int core_hwloc_topology(const struct core_hwloc *h, hwloc_topology_t *topo)
{
	if (h->topology_init(topo) < 0)
		return -1;
	if (h->topology_load(*topo) < 0) {
		h->topology_destroy(*topo);
		return -1;
	}
	return 0;
}

int core_hwloc_count(const struct core_hwloc *h, hwloc_topology_t topo, hwloc_obj_type_t type)
{
	int depth = h->get_type_depth(topo, type);
	if (depth == HWLOC_TYPE_DEPTH_UNKNOWN)
		return 0;
	if (depth == HWLOC_TYPE_DEPTH_MULTIPLE)
		return -1;
	return (int)h->get_nbobjs_by_depth(topo, depth);
}

hwloc_obj_t core_hwloc_obj(const struct core_hwloc *h, hwloc_topology_t topo, hwloc_obj_type_t type, unsigned idx)
{
	int depth = h->get_type_depth(topo, type);
	if (depth == HWLOC_TYPE_DEPTH_UNKNOWN || depth == HWLOC_TYPE_DEPTH_MULTIPLE)
		return NULL;
	return h->get_obj_by_depth(topo, depth, idx);
}
