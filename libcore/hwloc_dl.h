/*
 * hwloc_dl.h - hwloc, loaded with dlopen the first time topology is asked
 * for (an inventory, a device worker's placement, a Slurm gres.conf,
 * --version), so that a program that routes to the CPU maps neither hwloc
 * nor the libraries it links (libudev). The functions libaccel calls,
 * resolved once; the helpers hwloc's header inlines, remade over them.
 */
#ifndef ACCEL_HWLOC_DL_H
#define ACCEL_HWLOC_DL_H

#include <stddef.h>
#include <hwloc.h>

struct core_hwloc {
	unsigned (*get_api_version)(void);
	int (*topology_init)(hwloc_topology_t *topo);
	int (*topology_load)(hwloc_topology_t topo);
	void (*topology_destroy)(hwloc_topology_t topo);
	int (*get_type_depth)(hwloc_topology_t topo, hwloc_obj_type_t type);
	unsigned (*get_nbobjs_by_depth)(hwloc_topology_t topo, int depth);
	hwloc_obj_t (*get_obj_by_depth)(hwloc_topology_t topo, int depth, unsigned idx);
	hwloc_const_cpuset_t (*topology_get_topology_cpuset)(hwloc_topology_t topo);
	int (*set_cpubind)(hwloc_topology_t topo, hwloc_const_cpuset_t set, int flags);
	hwloc_bitmap_t (*bitmap_alloc)(void);
	void (*bitmap_free)(hwloc_bitmap_t map);
	int (*bitmap_list_sscanf)(hwloc_bitmap_t map, const char *s);
	int (*bitmap_list_snprintf)(char *buf, size_t len, hwloc_const_bitmap_t map);
	int (*bitmap_isincluded)(hwloc_const_bitmap_t sub, hwloc_const_bitmap_t super);
	int (*bitmap_intersects)(hwloc_const_bitmap_t a, hwloc_const_bitmap_t b);
	int (*bitmap_set)(hwloc_bitmap_t map, unsigned i);
	int (*bitmap_iszero)(hwloc_const_bitmap_t map);
};

/* hwloc's functions, loaded on the first call (thread-safe). NULL when it
 * cannot be: why[len] says so in one line ("libhwloc.so.15 not found", or
 * an API of another major version). */
const struct core_hwloc *core_hwloc(char *why, size_t len);
/* A topology of this machine (or of $HWLOC_FSROOT) loaded: 0, or -1 (none
 * made). Destroy it with h->topology_destroy. */
int core_hwloc_topology(const struct core_hwloc *h, hwloc_topology_t *topo);
/* The number of objects of `type` (hwloc_get_nbobjs_by_type): 0 when there
 * is no such level, -1 when it spans several depths. */
int core_hwloc_count(const struct core_hwloc *h, hwloc_topology_t topo, hwloc_obj_type_t type);
/* Object number idx of `type` (hwloc_get_obj_by_type), or NULL. */
hwloc_obj_t core_hwloc_obj(const struct core_hwloc *h, hwloc_topology_t topo, hwloc_obj_type_t type, unsigned idx);

#endif
