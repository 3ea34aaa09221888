/*
 * topology.c - the CPU device: packages, cores, threads, NUMA nodes and
 * caches from hwloc (loaded only for them: hwloc_dl.h); model and feature
 * flags from /proc/cpuinfo (under
 * $ACCEL_SYSROOT for recorded trees), memory from /proc/meminfo.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cpu.h"
#include "hwloc_dl.h"

static void read_cpuinfo(struct accel_device *d, const char *root)
{
	char path[4096], line[8192];
	snprintf(path, sizeof path, "%s/proc/cpuinfo", root);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	int have_flags = 0, have_model = 0;
	while (fgets(line, sizeof line, f) && !(have_flags && have_model)) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		char *v = colon + 1;
		while (*v == ' ')
			v++;
		v[strcspn(v, "\n")] = 0;
		if (!have_model && !strncmp(line, "model name", 10)) {
			snprintf(d->model, sizeof d->model, "%s", v);
			have_model = 1;
		} else if (!d->vendor[0] && !strncmp(line, "vendor_id", 9)) {
			snprintf(d->vendor, sizeof d->vendor, "%s", v);
		} else if (!have_flags && !strncmp(line, "flags", 5)) {
			accel_device_set_features(d, v);
			have_flags = 1;
		}
	}
	fclose(f);
}

static uint64_t meminfo_total(const char *root)
{
	char path[4096], line[256];
	unsigned long long kb = 0;
	snprintf(path, sizeof path, "%s/proc/meminfo", root);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

/* Container limits from cgroup v2 (the process's own cgroup is the root
 * of its namespace): CPU quota in CPUs and memory.max in bytes. */
static void read_cgroup(struct accel_device *d, const char *root)
{
	char path[4096], buf[64];
	snprintf(path, sizeof path, "%s/sys/fs/cgroup/cpu.max", root);
	FILE *f = fopen(path, "r");
	if (f) {
		long long quota = 0, period = 0;
		if (fgets(buf, sizeof buf, f) && sscanf(buf, "%lld %lld", &quota, &period) == 2 && period > 0)
			accel_device_set_num(d, "cgroup_cpus", (double)quota / (double)period);
		fclose(f);
	}
	snprintf(path, sizeof path, "%s/sys/fs/cgroup/memory.max", root);
	if ((f = fopen(path, "r"))) {
		unsigned long long max;
		if (fgets(buf, sizeof buf, f) && sscanf(buf, "%llu", &max) == 1)
			accel_device_set_num(d, "cgroup_memory_bytes", (double)max);
		fclose(f);
	}
}

int cpu_topology(struct accel_device *d, const char *root, int full, char *why, size_t len)
{
	why[0] = 0;
	read_cgroup(d, root);
	read_cpuinfo(d, root);
	snprintf(d->driver, sizeof d->driver, "kernel");
	accel_device_add_api(d, "host", 1, NULL);
	d->memory_bytes = meminfo_total(root);
	/* hwloc reads all of the CPU's topology from sysfs (a few ms): only
	 * for an inventory, or where /proc did not name the model and the
	 * memory (what profiles and routes read). */
	if (!full && d->model[0] && d->memory_bytes)
		return 0;

	/* A recorded tree: hwloc reads its /sys and /proc there, and not
	 * this host's CPUID (its x86 component). A tree without CPU topology
	 * leaves the counts unknown (0), without hwloc's warning. */
	if (root[0]) {
		char dir[4096];
		snprintf(dir, sizeof dir, "%s/sys/devices/system/cpu", root);
		if (access(dir, F_OK)) {
			if (!d->model[0])
				snprintf(d->model, sizeof d->model, "unknown");
			return 0;
		}
		setenv("HWLOC_FSROOT", root, 1);
		setenv("HWLOC_COMPONENTS", "-x86", 1);
	}
	const struct core_hwloc *h = core_hwloc(why, len);
	if (!h) {
		/* Without hwloc the CPU is still there: its counts unknown. */
		if (!d->model[0])
			snprintf(d->model, sizeof d->model, "unknown");
		return 0;
	}
	hwloc_topology_t topo;
	if (core_hwloc_topology(h, &topo) < 0)
		return ACCEL_ENOTSUP;
	d->packages = core_hwloc_count(h, topo, HWLOC_OBJ_PACKAGE);
	d->cores = core_hwloc_count(h, topo, HWLOC_OBJ_CORE);
	d->threads = core_hwloc_count(h, topo, HWLOC_OBJ_PU);
	d->numa_nodes = core_hwloc_count(h, topo, HWLOC_OBJ_NUMANODE);
	static const hwloc_obj_type_t caches[4] = {
		HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE,
	};
	for (int i = 0; i < 4; i++) {
		hwloc_obj_t c = core_hwloc_obj(h, topo, caches[i], 0);
		d->cache_bytes[i] = c && c->attr ? c->attr->cache.size : 0;
	}
	hwloc_obj_t rootobj = h->get_obj_by_depth(topo, 0, 0);
	if (!d->model[0]) {
		const char *m = hwloc_obj_get_info_by_name(rootobj, "CPUModel");
		hwloc_obj_t pkg = core_hwloc_obj(h, topo, HWLOC_OBJ_PACKAGE, 0);
		if (!m && pkg)
			m = hwloc_obj_get_info_by_name(pkg, "CPUModel");
		snprintf(d->model, sizeof d->model, "%s", m ? m : "unknown");
	}
	if (!d->memory_bytes && rootobj->total_memory)
		d->memory_bytes = rootobj->total_memory;
	/* Local memory of each NUMA node: on VMs their sum may differ from
	 * MemTotal, so both are reported. */
	for (int i = 0; i < d->numa_nodes && i < 8; i++) {
		hwloc_obj_t node = core_hwloc_obj(h, topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
		char key[48];
		snprintf(key, sizeof key, "numa%u_memory_bytes", node->os_index);
		accel_device_set_num(d, key, (double)node->attr->numanode.local_memory);
	}
	d->numa_node = d->numa_nodes > 1 ? -1 : 0;
	h->topology_destroy(topo);
	return 0;
}
