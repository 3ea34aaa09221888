/*
 * discover.c - the context: the backend table (built-in and dlopen'ed
 * plugins with an ABI check), lazy probing, and the devices and engines the
 * probes found. A plugin or library that is missing is a reason, never a crash.
 *
 * Every plugin is registered when the context is made, with its table
 * (names, ops, classes, priority, apis: what -b, --require and routing
 * read). Where a plugin folder has a fresh manifest (manifest.c), the table
 * is the manifest's and the plugin is dlopen'ed only when it is probed or
 * asked for its versions; a plugin the manifest does not list, and every
 * plugin of a folder without a manifest or with a stale one (a listed
 * plugin missing or not the file recorded: size and build-id, manifest.c),
 * is loaded at once. A backend is probed only when the job needs it (accel_discover for
 * an op in its ops, accel_discover_classes, accel_probe_backend), so a
 * route on the built-in CPU engine loads no plugin. A plugin links nothing
 * heavier than libaccel's own libraries: what its engines run on is loaded
 * by its probe, dlopen'ed by soname (accel_dlopen) or, for code that must
 * link it, a companion object in PLUGINDIR/<name>/ (accel_probe_dlopen).
 * accel(7), PLUGINS; the rule is checked by tests/startup.bats. A probe for
 * a route may find only what its engines need (accel_probe_list_devices:
 * no hwloc topology, no OpenSSL provider devices); a report or an inventory
 * (core_ctx_inventory) probes such a backend again, in full.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <accel/cli.h>
#include "core.h"

static const struct accel_backend *const builtin[] = {
	&accel_backend_cpu,
};

int core_backend_offers(const struct accel_backend *b, const char *op)
{
	if (!b || !b->ops)
		return 0;
	for (const char *const *o = b->ops; *o; o++)
		if (!strcmp(*o, op))
			return 1;
	return 0;
}

struct accel_backend_status *core_backend_add(struct accel_ctx *ctx, const char *name, const char *origin)
{
	for (int i = 0; i < ctx->nbackends; i++)
		if (!strcmp(ctx->backends[i].name, name))
			return NULL;
	if (ctx->nbackends == ctx->cap && ctx->cap <= CORE_MAX_BACKENDS) {
		/* Doubled from 16, to the limit and the slot past it. */
		int cap = ctx->cap ? ctx->cap * 2 : 16;
		if (cap > CORE_MAX_BACKENDS)
			cap = CORE_MAX_BACKENDS + 1;
		struct accel_backend_status *b = realloc(ctx->backends, (size_t)cap * sizeof *b);
		if (!b)
			return NULL;
		ctx->backends = b;
		ctx->cap = cap;
	}
	if (ctx->nbackends >= CORE_MAX_BACKENDS) {
		struct accel_backend_status *o = &ctx->backends[CORE_MAX_BACKENDS];
		if (ctx->nbackends == CORE_MAX_BACKENDS) {
			memset(o, 0, sizeof *o);
			core_strlcpy(o->name, name, sizeof o->name);
			core_strlcpy(o->origin, origin, sizeof o->origin);
			o->rc = ACCEL_ENOTSUP;
			ctx->nbackends++;
		}
		ctx->left_out++;
		snprintf(o->reason, sizeof o->reason,
			 "the registry is full: libaccel holds at most %d backends (%d plugin%s left out)",
			 CORE_MAX_BACKENDS, ctx->left_out, ctx->left_out == 1 ? "" : "s");
		return NULL;
	}
	struct accel_backend_status *s = &ctx->backends[ctx->nbackends++];
	/* The notes (6 KiB of the 6.6) are read up to nnotes only: left
	 * untouched, most of the registry's pages are never faulted in (24 of
	 * accel-fft's 444 page faults were this memset). */
	memset(s, 0, offsetof(struct accel_backend_status, notes));
	core_strlcpy(s->name, name, sizeof s->name);
	core_strlcpy(s->origin, origin, sizeof s->origin);
	return s;
}

/* Why a plugin's table cannot be used, or NULL when it can: it must be of
 * this ABI, carry its own name and a probe, and a table that offers
 * operations must have every function that runs them. */
const char *core_table_problem(const struct accel_backend *b, const char *name, char *buf, size_t len)
{
	if (b->abi != ACCEL_BACKEND_ABI) {
		snprintf(buf, len, "plugin built for backend ABI %u, this libaccel has ABI %u", b->abi,
			 ACCEL_BACKEND_ABI);
		return buf;
	}
	if (!b->name || strcmp(b->name, name) || !b->probe)
		return "plugin table is malformed (name or probe missing)";
	if (b->ops && b->ops[0] && (!b->supports || !b->open || !b->run || !b->close)) {
		const char *fn[] = { b->supports ? NULL : "supports", b->open ? NULL : "open",
				     b->run ? NULL : "run", b->close ? NULL : "close" };
		int k = snprintf(buf, len, "plugin table is malformed: it offers %s but has no", b->ops[0]);
		for (int i = 0, first = 1; i < 4 && k > 0 && (size_t)k < len; i++)
			if (fn[i]) {
				k += snprintf(buf + k, len - (size_t)k, "%s %s", first ? "" : ",", fn[i]);
				first = 0;
			}
		return buf;
	}
	return NULL;
}

int core_plugin_name(const char *file, char *name, size_t len)
{
	size_t n = strlen(file);
	if (n <= 9 || strncmp(file, "accel_", 6) || strcmp(file + n - 3, ".so") || n - 9 >= len)
		return -1;
	memcpy(name, file + 6, n - 9);
	name[n - 9] = 0;
	return 0;
}

/* dlopen plugin s->origin and take its table: s->backend, or NULL with
 * the reason and rc set. */
static void open_plugin(struct accel_backend_status *s)
{
	char sym[64], why[256];
	void *h = dlopen(s->origin, RTLD_NOW | RTLD_LOCAL);
	s->backend = NULL;
	if (!h) {
		snprintf(s->reason, sizeof s->reason, "cannot load plugin: %s", dlerror());
		s->rc = ACCEL_ENOTSUP;
		return;
	}
	snprintf(sym, sizeof sym, "accel_backend_%s", s->name);
	const struct accel_backend *b = dlsym(h, sym);
	const char *problem = b ? core_table_problem(b, s->name, why, sizeof why) : NULL;
	if (!b) {
		snprintf(s->reason, sizeof s->reason, "plugin does not export %s", sym);
	} else if (problem) {
		core_strlcpy(s->reason, problem, sizeof s->reason);
	} else {
		s->backend = b;
		return;
	}
	s->rc = ACCEL_ENOTSUP;
	dlclose(h);
}

/* Register accel_<name>.so of dir: with the manifest's table (loaded when
 * used) when m lists it, else loaded now; a failure to load is recorded
 * with its reason. */
static void add_plugin(struct accel_ctx *ctx, const char *dir, const char *file, const struct core_manifest *m)
{
	char name[32], path[PATH_MAX];
	if (core_plugin_name(file, name, sizeof name))
		return;
	snprintf(path, sizeof path, "%s/%s", dir, file);
	struct accel_backend_status *s = core_backend_add(ctx, name, path);
	if (!s)
		return;
	const struct accel_backend *listed = core_manifest_find(m, file);
	if (listed) {
		s->backend = listed;
		ctx->lazy[ctx->nbackends - 1] = 1;
		return;
	}
	open_plugin(s);
}

void core_backend_load(struct accel_ctx *ctx, int i)
{
	if (i < 0 || i > CORE_MAX_BACKENDS || !ctx->lazy[i])
		return;
	ctx->lazy[i] = 0;
	open_plugin(&ctx->backends[i]);
}

static void scan_dir(struct accel_ctx *ctx, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	/* Sorted, so the order of backends does not depend on the file system. */
	struct dirent **list;
	closedir(d);
	struct core_manifest *m = core_manifest_read(dir);
	if (m)
		core_manifest_keep(ctx, m);
	int n = scandir(dir, &list, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		add_plugin(ctx, dir, list[i]->d_name, m);
		free(list[i]);
	}
	if (n >= 0)
		free(list);
}

struct accel_ctx *accel_ctx_new(void)
{
	core_guard_std_fds();
	struct accel_ctx *ctx = calloc(1, sizeof *ctx);
	if (!ctx)
		return NULL;
	pthread_mutex_init(&ctx->lock, NULL);
	ctx->reprobing = -1;
	ctx->named_probe = -1;
	const char *root = getenv("ACCEL_SYSROOT");
	ctx->sysroot = root ? root : "";
	for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++) {
		struct accel_backend_status *s = core_backend_add(ctx, builtin[i]->name, "built-in");
		if (!s) {
			accel_ctx_free(ctx);
			return NULL;
		}
		s->backend = builtin[i];
	}
	const char *env = getenv("ACCEL_BACKEND_PATH");
	if (env && *env) {
		char *copy = strdup(env), *save = NULL;
		for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save))
			scan_dir(ctx, dir);
		free(copy);
	}
	char exe[PATH_MAX], dir[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = 0;
		snprintf(dir, sizeof dir, "%s/../lib/accel", exe);
		scan_dir(ctx, dir);
		snprintf(dir, sizeof dir, "%s/plugins", exe);
		scan_dir(ctx, dir);
	}
	/* accel/ beside libaccel: the plugin folder of the prefix it was
	 * installed into, whichever program links it. */
	Dl_info self;
	const char *slash;
	if (dladdr((void *)accel_ctx_new, &self) && self.dli_fname && (slash = strrchr(self.dli_fname, '/'))) {
		snprintf(dir, sizeof dir, "%.*s/accel", (int)(slash - self.dli_fname), self.dli_fname);
		scan_dir(ctx, dir);
	}
#ifdef ACCEL_PLUGIN_DIR
	scan_dir(ctx, ACCEL_PLUGIN_DIR);
#endif
	return ctx;
}

void accel_ctx_free(struct accel_ctx *ctx)
{
	if (!ctx)
		return;
	for (int i = 0; i < ctx->nengines; i++) {
		struct accel_engine *e = &ctx->engines[i];
		if (e->data && e->backend->release)
			e->backend->release(e);
	}
	/* Plugins stay loaded: a backend's library may have registered
	 * destructors (Vulkan and OpenCL loaders do) that must run at exit. */
	pthread_mutex_destroy(&ctx->lock);
	core_manifest_free(ctx->manifests);
	free(ctx->backends);
	free(ctx);
}

int core_backend_index(const struct accel_ctx *ctx, const char *name)
{
	for (int i = 0; i < ctx->nbackends; i++)
		if (!strcmp(ctx->backends[i].name, name))
			return i;
	return -1;
}

void core_engine_split(const char *sel, char *backend, size_t blen, char *variant, size_t vlen,
		       char *device, size_t dlen)
{
	size_t n = strcspn(sel, ".:");
	snprintf(backend, blen, "%.*s", (int)n, sel);
	variant[0] = device[0] = 0;
	sel += n;
	if (*sel == '.') {
		n = strcspn(++sel, ":");
		snprintf(variant, vlen, "%.*s", (int)n, sel);
		sel += n;
	}
	if (*sel == ':')
		snprintf(device, dlen, "%s", sel + 1);
}

static int probe_index(struct accel_ctx *ctx, int i)
{
	struct accel_backend_status *s = &ctx->backends[i];
	if (!s->probed)
		core_backend_load(ctx, i);
	if (s->probed || !s->backend)
		return s->backend ? s->rc : ACCEL_ENOTSUP;
	struct accel_probe p = { ctx, i, s->reason, sizeof s->reason };
	/* Probed from now on: a probe this one starts (accel_probe_cpu_device,
	 * a class's discovery) does not start it again. Its time leaves out
	 * theirs. */
	s->probed = 1;
	ctx->partial[i] = 0;
	double t0 = accel_now(), outer = ctx->nested_seconds;
	ctx->nested_seconds = 0;
	int rc = s->backend->probe(&p);
	double t = accel_now() - t0;
	s->probe_seconds = t - ctx->nested_seconds;
	ctx->nested_seconds = outer + t;
	s->rc = rc < 0 ? rc : 0;
	/* What drivers, sysfs and pci.ids said reaches terminals and files:
	 * no control characters, only valid UTF-8. */
	for (int k = 0; k < ctx->ndevices; k++)
		core_device_sanitize(&ctx->devices[k]);
	accel_text_sanitize(s->reason);
	for (int k = 0; k < s->nnotes; k++)
		accel_text_sanitize(s->notes[k]);
	return s->rc;
}

int accel_probe_backend(struct accel_ctx *ctx, const char *name)
{
	int i = core_backend_index(ctx, name);
	if (i < 0)
		return ACCEL_ENOTSUP;
	pthread_mutex_lock(&ctx->lock);
	int rc = probe_index(ctx, i);
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

void accel_discover(struct accel_ctx *ctx, const char *op)
{
	pthread_mutex_lock(&ctx->lock);
	for (int i = 0; i < ctx->nbackends; i++)
		if (!op || core_backend_offers(ctx->backends[i].backend, op))
			probe_index(ctx, i);
	pthread_mutex_unlock(&ctx->lock);
}

/* Probe, by priority (equal ones in registry order), the backends that find
 * devices of `classes` (any when it holds them all); discovery: only those
 * that offer no operation. The caller holds the context's lock. */
static void probe_classes(struct accel_ctx *ctx, unsigned classes, int discovery)
{
	int order[CORE_MAX_BACKENDS + 1], n = 0;
	for (int i = 0; i < ctx->nbackends; i++) {
		const struct accel_backend *b = ctx->backends[i].backend;
		if (!b || ctx->backends[i].probed || (discovery && b->ops && b->ops[0]) ||
		    !((b->classes & classes) || (classes & ACCEL_CLASS_ALL) == ACCEL_CLASS_ALL))
			continue;
		int k = n++;
		for (; k > 0 && ctx->backends[order[k - 1]].backend->priority > b->priority; k--)
			order[k] = order[k - 1];
		order[k] = i;
	}
	for (int k = 0; k < n; k++)
		probe_index(ctx, order[k]);
}

void accel_discover_classes(struct accel_ctx *ctx, unsigned classes)
{
	core_ctx_inventory(ctx, classes);
	pthread_mutex_lock(&ctx->lock);
	probe_classes(ctx, classes, 0);
	pthread_mutex_unlock(&ctx->lock);
}

/* Backend i, probed for a route only, again: what it found is found again
 * and merged (its devices, its engines kept), its notes and reason are
 * this probe's. The caller holds the context's lock. */
static int reprobe_locked(struct accel_ctx *ctx, int i)
{
	struct accel_backend_status *s = &ctx->backends[i];
	double before = s->probe_seconds;
	s->probed = 0;
	s->nnotes = 0;
	s->reason[0] = 0;
	ctx->soft_skipped[i] = 0;
	ctx->reprobing = i;
	int rc = probe_index(ctx, i);
	ctx->reprobing = -1;
	s->probe_seconds += before;
	return rc;
}

void core_ctx_inventory(struct accel_ctx *ctx, unsigned classes)
{
	pthread_mutex_lock(&ctx->lock);
	ctx->inventory = 1;
	for (int i = 0; i < ctx->nbackends && i <= CORE_MAX_BACKENDS; i++) {
		struct accel_backend_status *s = &ctx->backends[i];
		if (!ctx->partial[i] || !s->backend ||
		    !((s->backend->classes & classes) || (classes & ACCEL_CLASS_ALL) == ACCEL_CLASS_ALL))
			continue;
		reprobe_locked(ctx, i);
	}
	pthread_mutex_unlock(&ctx->lock);
}

int core_probe_named(struct accel_ctx *ctx, int i)
{
	pthread_mutex_lock(&ctx->lock);
	ctx->named_probe = i;
	int rc = ctx->backends[i].probed && ctx->soft_skipped[i] ? reprobe_locked(ctx, i) : probe_index(ctx, i);
	ctx->named_probe = -1;
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

int accel_probe_list_devices(struct accel_probe *p)
{
	if (p->ctx->inventory)
		return 1;
	p->ctx->partial[p->backend] = 1;
	return 0;
}

int accel_probe_software_devices(struct accel_probe *p)
{
	struct accel_ctx *ctx = p->ctx;
	if (ctx->inventory || ctx->named_probe == p->backend || core_may_have_devices(ctx))
		return 1;
	ctx->partial[p->backend] = 1;
	ctx->soft_skipped[p->backend] = 1;
	return 0;
}

int core_may_have_devices(struct accel_ctx *ctx)
{
	static const char *const nodes[] = { "/dev/dri", "/dev/kfd", "/dev/accel", "/dev/dxg", "/dev/nvidiactl" };
	if (!ctx->pci_scanned) {
		ctx->npci = core_pci_scan(ctx->sysroot, ctx->pci, CORE_MAX_DEVICES);
		ctx->pci_scanned = 1;
	}
	for (int i = 0; i < ctx->npci; i++)
		if (core_class_reserves(ctx->pci[i].cls))
			return 1;
	for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
		char path[PATH_MAX];
		struct stat st;
		snprintf(path, sizeof path, "%s%s", ctx->sysroot, nodes[i]);
		if (stat(path, &st) < 0)
			continue;
		if (!S_ISDIR(st.st_mode))
			return 1;
		DIR *d = opendir(path);
		struct dirent *de;
		int any = 0;
		while (d && !any && (de = readdir(d)))
			any = de->d_name[0] != '.';
		if (d)
			closedir(d);
		if (any)
			return 1;
	}
	return 0;
}

/* The entry for API `name` in b's table, or NULL. */
static const struct accel_api_info *api_info(const struct accel_backend *b, const char *name)
{
	for (const struct accel_api_info *a = b && b->apis ? b->apis : NULL; a && a->name; a++)
		if (!strcmp(a->name, name))
			return a;
	return NULL;
}

unsigned accel_api_kinds(const struct accel_ctx *ctx, const char *name)
{
	unsigned kinds = 0;
	for (int i = 0; i < ctx->nbackends; i++) {
		const struct accel_api_info *a = api_info(ctx->backends[i].backend, name);
		if (a)
			kinds |= a->kinds;
	}
	return kinds;
}

unsigned accel_api_classes(const struct accel_ctx *ctx, const char *name)
{
	unsigned classes = 0;
	for (int i = 0; i < ctx->nbackends; i++)
		if (api_info(ctx->backends[i].backend, name))
			classes |= ctx->backends[i].backend->classes;
	return classes;
}

const char *accel_api_backend(const struct accel_ctx *ctx, const char *name)
{
	const struct accel_backend *best = NULL;
	for (int i = 0; i < ctx->nbackends; i++) {
		const struct accel_backend *b = ctx->backends[i].backend;
		if (api_info(b, name) && (!best || b->priority < best->priority))
			best = b;
	}
	return best ? best->name : NULL;
}

size_t accel_backend_names(const struct accel_ctx *ctx, const char *sep, char *buf, size_t len)
{
	size_t need = 0;
	if (len)
		buf[0] = 0;
	for (int i = 0; i < ctx->nbackends && i < CORE_MAX_BACKENDS; i++) {
		int k = snprintf(len > need ? buf + need : NULL, len > need ? len - need : 0, "%s%s",
				 i ? sep : "", ctx->backends[i].name);
		need += k > 0 ? (size_t)k : 0;
	}
	return need;
}

int accel_backend_list_check(const struct accel_ctx *ctx, const char *list, char *err, size_t len)
{
	if (!strcmp(list, "auto"))
		return 0;
	/* The form of the whole list first, then its names. */
	for (int pass = 0; pass < 2; pass++) {
		for (const char *t = list;; t++) {
			size_t n = strcspn(t, ",+");
			char tok[64], name[32], variant[16], dev[32];
			if (!n) {
				snprintf(err, len, "empty item in '%s'", list);
				return ACCEL_EINVAL;
			}
			if (n >= sizeof tok) {
				snprintf(err, len, "item '%.*s...' is too long", 32, t);
				return ACCEL_EINVAL;
			}
			memcpy(tok, t, n);
			tok[n] = 0;
			if (!strcmp(tok, "auto")) {
				snprintf(err, len, "'auto' must stand alone, not in '%s'", list);
				return ACCEL_EINVAL;
			}
			core_engine_split(tok, name, sizeof name, variant, sizeof variant, dev, sizeof dev);
			if (pass && core_backend_index(ctx, name) < 0) {
				char names[512];
				accel_backend_names(ctx, ", ", names, sizeof names);
				snprintf(err, len, "unknown backend '%s'; backends here: auto, %s", name, names);
				return ACCEL_EINVAL;
			}
			t += n;
			if (!*t)
				break;
		}
	}
	return 0;
}

int accel_backend_count(const struct accel_ctx *ctx) { return ctx->nbackends; }

const struct accel_backend_status *accel_backend_status(const struct accel_ctx *ctx, int i)
{
	return i >= 0 && i < ctx->nbackends ? &ctx->backends[i] : NULL;
}

int accel_device_count(const struct accel_ctx *ctx) { return ctx->ndevices; }

const struct accel_device *accel_device_at(const struct accel_ctx *ctx, int i)
{
	return i >= 0 && i < ctx->ndevices ? &ctx->devices[i] : NULL;
}

int accel_engine_count(const struct accel_ctx *ctx) { return ctx->nengines; }

const struct accel_engine *accel_engine_at(const struct accel_ctx *ctx, int i)
{
	return i >= 0 && i < ctx->nengines ? &ctx->engines[i] : NULL;
}

const struct accel_engine *accel_cpu_engine(struct accel_ctx *ctx)
{
	accel_probe_backend(ctx, "cpu");
	for (int i = 0; i < ctx->nengines; i++)
		if (ctx->engines[i].backend == &accel_backend_cpu)
			return &ctx->engines[i];
	return NULL;
}

const struct accel_engine *accel_cpu_engine_for(struct accel_ctx *ctx, const struct accel_op *op)
{
	accel_probe_backend(ctx, "cpu");
	/* A backend that only finds GPUs and NPUs has no engine on the CPU
	 * device: its drivers are not started for --backend cpu. */
	unsigned dev = ACCEL_CLASS_BIT(ACCEL_CLASS_GPU) | ACCEL_CLASS_BIT(ACCEL_CLASS_NPU);
	pthread_mutex_lock(&ctx->lock);
	for (int i = 0; i < ctx->nbackends; i++) {
		const struct accel_backend *b = ctx->backends[i].backend;
		if (core_backend_offers(b, op->name) && !(b->classes && !(b->classes & ~dev)))
			probe_index(ctx, i);
	}
	pthread_mutex_unlock(&ctx->lock);
	const struct accel_engine *best = NULL;
	double best_mbps = 0;
	for (int i = 0; i < ctx->nengines; i++) {
		const struct accel_engine *e = &ctx->engines[i];
		if (ctx->devices[e->device].cls != ACCEL_CLASS_CPU || e->software ||
		    !core_backend_offers(e->backend, op->name))
			continue;
		char why[128];
		double prior = 0;
		if (e->backend->supports(e, op, &prior, why, sizeof why) < 0)
			continue;
		int builtin_cpu = e->backend == &accel_backend_cpu;
		if (!best || prior > best_mbps || (prior == best_mbps && builtin_cpu)) {
			best = e;
			best_mbps = prior;
		}
	}
	return best;
}

int accel_probe_add_device(struct accel_probe *p, const struct accel_device *d)
{
	struct accel_ctx *ctx = p->ctx;
	/* A device numbered among all of its class: the discovery backends
	 * of the class run first (device.c says why). */
	if (!d->id[0] && !(core_class_reserves(d->cls) && d->pci_address[0]))
		probe_classes(ctx, ACCEL_CLASS_BIT(d->cls), 1);
	/* Which view names a device found twice: a discovery backend's before
	 * one running operations, then the best priority. */
	const struct accel_backend *b = ctx->backends[p->backend].backend;
	int rank = b ? (b->ops && b->ops[0] ? 1 << 16 : 0) + b->priority : 1 << 17;
	for (int i = 0; i < ctx->ndevices; i++) {
		struct accel_device *o = &ctx->devices[i];
		/* A video engine belongs to the GPU on the same function. */
		if (d->pci_address[0] ? strcmp(o->pci_address, d->pci_address) ||
					(o->cls != d->cls && d->cls != ACCEL_CLASS_VIDEO) :
					!core_device_same(o, d))
			continue;
		if (o->cls == d->cls && rank < ctx->view_rank[i]) {
			ctx->view_rank[i] = rank;
			core_strlcpy(o->vendor, d->vendor, sizeof o->vendor);
			core_strlcpy(o->model, d->model, sizeof o->model);
			if (d->driver[0])
				core_strlcpy(o->driver, d->driver, sizeof o->driver);
		}
		for (int a = 0; a < d->napis; a++)
			accel_device_add_api(o, d->apis[a].name, d->apis[a].ok, d->apis[a].reason);
		for (int k = 0; k < d->nprops; k++)
			if (!accel_device_get(o, d->props[k].key))
				o->props[o->nprops < ACCEL_MAX_PROPS ? o->nprops++ : ACCEL_MAX_PROPS - 1] = d->props[k];
		if (!o->memory_bytes)
			o->memory_bytes = d->memory_bytes;
		/* The CPU's topology, read when an inventory asks for it
		 * (the cpu backend, probed again). */
		if (o->cls == ACCEL_CLASS_CPU && !o->threads && d->threads) {
			o->packages = d->packages;
			o->cores = d->cores;
			o->threads = d->threads;
			o->numa_nodes = d->numa_nodes;
			o->numa_node = d->numa_node;
			memcpy(o->cache_bytes, d->cache_bytes, sizeof o->cache_bytes);
		}
		if (!o->driver[0])
			core_strlcpy(o->driver, d->driver, sizeof o->driver);
		return i;
	}
	if (ctx->ndevices == CORE_MAX_DEVICES) {
		accel_probe_note(p, "device limit reached: libaccel holds at most %d devices; %s %s left out",
				 CORE_MAX_DEVICES, accel_class_name(d->cls), d->pci_address[0] ? d->pci_address : d->model);
		return ACCEL_ENOMEM;
	}
	int i = ctx->ndevices++;
	ctx->devices[i] = *d;
	ctx->fixed_id[i] = d->id[0] != 0;
	ctx->view_rank[i] = rank;
	if (!d->id[0])
		core_device_renumber(ctx, d->cls);
	return i;
}

struct accel_device *accel_probe_device(struct accel_probe *p, int i)
{
	return i >= 0 && i < p->ctx->ndevices ? &p->ctx->devices[i] : NULL;
}

/* Whether a variant name is 1 to 15 characters of [a-z0-9_-]. */
static int variant_ok(const char *v)
{
	size_t n = strlen(v);
	return n && n < sizeof ((struct accel_engine *)0)->variant && strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

int accel_probe_add_engine_variant(struct accel_probe *p, int device, const char *variant, void *data)
{
	struct accel_ctx *ctx = p->ctx;
	const struct accel_backend *b = ctx->backends[p->backend].backend;
	if (device < 0 || device >= ctx->ndevices || (variant && *variant && !variant_ok(variant)))
		return ACCEL_EINVAL;
	for (int i = 0; i < ctx->nengines; i++)
		if (ctx->engines[i].backend == b && ctx->engines[i].device == device &&
		    !strcmp(ctx->engines[i].variant, variant ? variant : "")) {
			/* Probed again for an inventory: the engine it added
			 * for the route is kept, its data too. */
			if (ctx->reprobing == p->backend) {
				if (data && data != ctx->engines[i].data && b->release) {
					struct accel_engine tmp = ctx->engines[i];
					tmp.data = data;
					b->release(&tmp);
				}
				return i;
			}
			return ACCEL_EINVAL;
		}
	if (ctx->nengines == CORE_MAX_ENGINES) {
		accel_probe_note(p, "engine limit reached: libaccel holds at most %d engines; %s%s%s on %s left out",
				 CORE_MAX_ENGINES, b->name, variant && *variant ? "." : "", variant ? variant : "",
				 ctx->devices[device].id);
		return ACCEL_EINVAL;
	}
	struct accel_engine *e = &ctx->engines[ctx->nengines++];
	memset(e, 0, sizeof *e);
	e->backend = b;
	e->device = device;
	e->software = ctx->devices[device].software;
	e->data = data;
	core_strlcpy(e->variant, variant ? variant : "", sizeof e->variant);
	core_engine_name(ctx, e);
	return ctx->nengines - 1;
}

int accel_probe_add_engine(struct accel_probe *p, int device, void *data)
{
	return accel_probe_add_engine_variant(p, device, NULL, data);
}

int accel_probe_cpu_device(struct accel_probe *p)
{
	struct accel_ctx *ctx = p->ctx;
	int cpu = core_backend_index(ctx, "cpu");
	/* The caller holds the context's lock (probes run under it): the CPU
	 * probe runs here, on this thread, with no other lock. */
	if (cpu >= 0 && cpu != p->backend) {
		int rc = probe_index(ctx, cpu);
		if (rc < 0)
			return rc;
	}
	for (int i = 0; i < ctx->ndevices; i++)
		if (ctx->devices[i].cls == ACCEL_CLASS_CPU)
			return i;
	return ACCEL_ENOTSUP;
}

int accel_probe_fail(struct accel_probe *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->reason, p->reason_len, fmt, ap);
	va_end(ap);
	return ACCEL_ENOTSUP;
}

void accel_probe_note(struct accel_probe *p, const char *fmt, ...)
{
	struct accel_backend_status *s = &p->ctx->backends[p->backend];
	if (s->nnotes == ACCEL_MAX_NOTES)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->notes[s->nnotes++], sizeof s->notes[0], fmt, ap);
	va_end(ap);
}

const char *accel_probe_sysroot(const struct accel_probe *p)
{
	return p->ctx->sysroot;
}

int accel_probe_companion(struct accel_probe *p, const char *file, char *path, size_t len, char *why,
			  size_t wlen)
{
	const struct accel_backend_status *s = &p->ctx->backends[p->backend];
	const char *slash = strrchr(s->origin, '/');
	if (!slash) {
		snprintf(why, wlen, "%s/%s not found: the %s backend is not a plugin", s->name, file, s->name);
		return -1;
	}
	int n = snprintf(path, len, "%.*s/%s/%s", (int)(slash - s->origin), s->origin, s->name, file);
	if (n < 0 || (size_t)n >= len || access(path, F_OK) < 0) {
		snprintf(why, wlen, "%s/%s not found", s->name, file);
		return -1;
	}
	return 0;
}

void *accel_companion_dlopen(const char *path, char *why, size_t len)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		/* dlerror names the companion's path first when the fault is in
		 * it, else the library it needs: only the latter is kept. */
		size_t n = strlen(path);
		if (e && !strncmp(e, path, n) && e[n] == ':')
			e += n + 1 + (e[n + 1] == ' ');
		/* NAME/FILE: the path's last two components. */
		const char *name = path + n;
		for (int k = 0; name > path && k < 2; k += *name == '/')
			name--;
		name += *name == '/';
		char limit[80];
		snprintf(why, len, "cannot load %s: %s%s", name, e ? e : "unknown error",
			 accel_address_limit(limit, sizeof limit));
	}
	return h;
}

void *accel_probe_dlopen(struct accel_probe *p, const char *file, char *why, size_t len)
{
	char path[PATH_MAX];
	if (accel_probe_companion(p, file, path, sizeof path, why, len) < 0)
		return NULL;
	return accel_companion_dlopen(path, why, len);
}

const char *accel_address_limit(char *buf, size_t len)
{
	struct rlimit r;
	if (getrlimit(RLIMIT_AS, &r) < 0 || r.rlim_cur == RLIM_INFINITY) {
		snprintf(buf, len, "%s", "");
		return buf;
	}
	char size[32];
	core_human_bytes(size, sizeof size, (double)r.rlim_cur);
	snprintf(buf, len, "; the address space is limited to %s (ulimit -v)", size);
	return buf;
}

void *accel_dlopen(const char *name, char *why, size_t len)
{
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (h)
		return h;
	const char *e = dlerror();
	char limit[80];
	/* "No such file" is the one error that means it is not installed;
	 * "failed to map segment" is memory, a missing symbol a mismatch. */
	if (!e || strstr(e, "No such file or directory"))
		snprintf(why, len, "%s not found", name);
	else
		snprintf(why, len, "cannot load %s: %s%s", name, e, accel_address_limit(limit, sizeof limit));
	return NULL;
}
