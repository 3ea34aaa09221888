/*
 * device.c - the device model: classes, properties, APIs and CPU feature
 * flags (named as the kernel names them in /proc/cpuinfo); which devices the
 * probes found are one, and their ids.
 *
 * A device id (cpu0, gpu1, crypto0) names the same device whichever probes
 * ran and in whatever order:
 * - Probes that find one device add to one entry: the same PCI function
 *   (a video engine joins the GPU on its function), or without a PCI
 *   address the same class and the same UUID (Vulkan's deviceUUID, OpenCL's
 *   cl_khr_device_uuid: the same for one device through either API), or,
 *   where either view has no UUID, the same API and model (and driver where
 *   both name one).
 * - A GPU or NPU on the PCI bus takes its rank in bus order among the PCI
 *   functions of its class (read from sysfs once).
 * - Every other device is numbered after those, among all the devices of
 *   its class: before such a device is numbered the backends that only
 *   discover (they offer no operation) and find its class are probed
 *   (discover.c), so the set numbered is the one accel-detect lists. The
 *   order: PCI address, then hardware before software devices, then model,
 *   UUID, vendor and driver, then the order found.
 * A device that only a backend running operations finds (no discovery
 * backend sees it) comes after those, and its number may then depend on
 * which of those backends ran.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <accel/cli.h>
#include "core.h"

static const char *const class_names[ACCEL_CLASS_COUNT] = {
	"cpu", "gpu", "crypto", "video", "nic", "npu", "other",
};

const char *accel_class_name(enum accel_device_class c)
{
	return (unsigned)c < ACCEL_CLASS_COUNT ? class_names[c] : "other";
}

int accel_class_parse(const char *name)
{
	for (int i = 0; i < ACCEL_CLASS_COUNT; i++)
		if (!strcmp(name, class_names[i]))
			return i;
	return -1;
}

static const struct { uint64_t bit; const char *name; } cpu_flags[] = {
	{ ACCEL_CPU_SSE42, "sse4_2" }, { ACCEL_CPU_PCLMUL, "pclmulqdq" },
	{ ACCEL_CPU_AES, "aes" }, { ACCEL_CPU_VAES, "vaes" },
	{ ACCEL_CPU_VPCLMULQDQ, "vpclmulqdq" }, { ACCEL_CPU_SHA_NI, "sha_ni" },
	{ ACCEL_CPU_AVX, "avx" }, { ACCEL_CPU_AVX2, "avx2" }, { ACCEL_CPU_BMI2, "bmi2" },
	{ ACCEL_CPU_AVX512F, "avx512f" }, { ACCEL_CPU_AVX512BW, "avx512bw" },
	{ ACCEL_CPU_AVX512VL, "avx512vl" }, { ACCEL_CPU_AVX512DQ, "avx512dq" },
	{ ACCEL_CPU_AVX512VNNI, "avx512_vnni" }, { ACCEL_CPU_AVX512BF16, "avx512_bf16" },
	{ ACCEL_CPU_AVX512FP16, "avx512_fp16" }, { ACCEL_CPU_AVX512IFMA, "avx512ifma" },
	{ ACCEL_CPU_AVX512VBMI, "avx512vbmi" }, { ACCEL_CPU_AMX_TILE, "amx_tile" },
	{ ACCEL_CPU_AMX_INT8, "amx_int8" }, { ACCEL_CPU_AMX_BF16, "amx_bf16" },
	{ ACCEL_CPU_GFNI, "gfni" }, { ACCEL_CPU_AVX_VNNI, "avx_vnni" },
};

const char *accel_cpu_flag_name(uint64_t bit)
{
	for (size_t i = 0; i < sizeof cpu_flags / sizeof cpu_flags[0]; i++)
		if (cpu_flags[i].bit == bit)
			return cpu_flags[i].name;
	return NULL;
}

uint64_t accel_cpu_flags_parse(const char *line)
{
	uint64_t flags = 0;
	const char *p = strchr(line, ':');
	p = p ? p + 1 : line;
	while (*p) {
		while (*p == ' ' || *p == '\t')
			p++;
		size_t n = strcspn(p, " \t\n");
		for (size_t i = 0; n && i < sizeof cpu_flags / sizeof cpu_flags[0]; i++)
			if (strlen(cpu_flags[i].name) == n && !strncmp(p, cpu_flags[i].name, n))
				flags |= cpu_flags[i].bit;
		p += n;
		if (*p == '\n')
			break;
	}
	return flags;
}

static struct accel_prop *prop_slot(struct accel_device *d, const char *key)
{
	for (int i = 0; i < d->nprops; i++)
		if (!strcmp(d->props[i].key, key))
			return &d->props[i];
	if (d->nprops == ACCEL_MAX_PROPS)
		return NULL;
	struct accel_prop *p = &d->props[d->nprops++];
	core_strlcpy(p->key, key, sizeof p->key);
	return p;
}

int accel_device_set(struct accel_device *d, const char *key, const char *value)
{
	struct accel_prop *p = prop_slot(d, key);
	if (!p)
		return ACCEL_ENOMEM;
	core_strlcpy(p->value, value, sizeof p->value);
	p->numeric = 0;
	return 0;
}

int accel_device_set_num(struct accel_device *d, const char *key, double value)
{
	struct accel_prop *p = prop_slot(d, key);
	if (!p)
		return ACCEL_ENOMEM;
	snprintf(p->value, sizeof p->value, "%.15g", value);
	p->numeric = 1;
	return 0;
}

int accel_device_set_uuid(struct accel_device *d, const uint8_t uuid[16])
{
	char s[40];
	size_t k = 0, zero = 0;
	for (int i = 0; i < 16; i++) {
		zero += !uuid[i];
		k += (size_t)snprintf(s + k, sizeof s - k, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "",
				      uuid[i]);
	}
	return zero == 16 ? 0 : accel_device_set(d, "uuid", s);
}

const char *accel_device_get(const struct accel_device *d, const char *key)
{
	for (int i = 0; i < d->nprops; i++)
		if (!strcmp(d->props[i].key, key))
			return d->props[i].value;
	return NULL;
}

void accel_device_add_api(struct accel_device *d, const char *name, int ok, const char *reason)
{
	struct accel_api *a = NULL;
	for (int i = 0; i < d->napis; i++)
		if (!strcmp(d->apis[i].name, name))
			a = &d->apis[i];
	if (!a) {
		if (d->napis == ACCEL_MAX_APIS)
			return;
		a = &d->apis[d->napis++];
		core_strlcpy(a->name, name, sizeof a->name);
	}
	a->ok = ok;
	core_strlcpy(a->reason, reason ? reason : "", sizeof a->reason);
}

void accel_text_sanitize(char *s)
{
	unsigned char *r = (unsigned char *)s, *w = r;
	while (*r) {
		unsigned c = *r;
		size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 :
			   c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		uint32_t cp = n == 1 ? c : c & (0x7f >> n);
		size_t i = 1;
		/* A NUL stops the loop: it is no continuation byte. */
		for (; i < n && (r[i] & 0xc0) == 0x80; i++)
			cp = cp << 6 | (r[i] & 0x3f);
		if (!n || i < n || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff)) {
			*w++ = '?';     /* one byte that starts no valid sequence */
			r++;
			continue;
		}
		if (cp == '\t')
			*w++ = ' ';
		else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || cp == 0x2028 || cp == 0x2029 ||
			 (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
			*w++ = '?';     /* controls, line separators, direction overrides */
		else {
			memmove(w, r, n);
			w += n;
		}
		r += n;
	}
	*w = 0;
}

void core_device_sanitize(struct accel_device *d)
{
	accel_text_sanitize(d->id);
	accel_text_sanitize(d->vendor);
	accel_text_sanitize(d->model);
	accel_text_sanitize(d->driver);
	accel_text_sanitize(d->pci_address);
	for (int i = 0; i < d->napis; i++) {
		accel_text_sanitize(d->apis[i].name);
		accel_text_sanitize(d->apis[i].reason);
	}
	for (int i = 0; i < d->nprops; i++) {
		accel_text_sanitize(d->props[i].key);
		accel_text_sanitize(d->props[i].value);
	}
}

int accel_pci_classify(const char *root, const char *addr, unsigned *pci_class, unsigned *vendor)
{
	char v[64];
	unsigned cls = 0, ven = 0;
	if (accel_sysfs_read(root, v, sizeof v, "/sys/bus/pci/devices/%s/class", addr) > 0)
		cls = (unsigned)strtoul(v, NULL, 16);
	if (accel_sysfs_read(root, v, sizeof v, "/sys/bus/pci/devices/%s/vendor", addr) > 0)
		ven = (unsigned)strtoul(v, NULL, 16);
	if (pci_class)
		*pci_class = cls;
	if (vendor)
		*vendor = ven;
	/* A 3D controller or a GPU vendor's display is a GPU; a BMC's or a
	 * virtual machine's VGA function is only a display. */
	if (cls >> 16 == 0x12)
		return ACCEL_CLASS_NPU;
	if (cls >> 16 != 0x03)
		return -1;
	if (cls >> 8 == 0x0302 || ven == 0x10de || ven == 0x1002 || ven == 0x8086)
		return ACCEL_CLASS_GPU;
	return ACCEL_CLASS_OTHER;
}

static int pci_addr_sort(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int core_pci_scan(const char *root, struct core_pci_fn *out, int max)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/sys/bus/pci/devices", root);
	struct dirent **list;
	int n = scandir(dir, &list, NULL, pci_addr_sort), k = 0;
	for (int i = 0; i < n; i++) {
		const char *a = list[i]->d_name;
		int cls;
		/* An address cut to fit would match no device: left out. */
		if (a[0] != '.' && k < max && strlen(a) < sizeof out[0].addr &&
		    (cls = accel_pci_classify(root, a, NULL, NULL)) >= 0) {
			core_strlcpy(out[k].addr, a, sizeof out[k].addr);
			out[k++].cls = cls;
		}
		free(list[i]);
	}
	if (n >= 0)
		free(list);
	return k;
}

/* Whether d reaches the API named `name`. */
static int has_api(const struct accel_device *d, const char *name)
{
	for (int i = 0; i < d->napis; i++)
		if (!strcmp(d->apis[i].name, name))
			return 1;
	return 0;
}

int core_device_same(const struct accel_device *a, const struct accel_device *b)
{
	if (a->cls != b->cls || a->pci_address[0] || b->pci_address[0])
		return 0;
	const char *ua = accel_device_get(a, "uuid"), *ub = accel_device_get(b, "uuid");
	if (ua && ub)
		return !strcmp(ua, ub);
	if (strcmp(a->model, b->model) || (a->driver[0] && b->driver[0] && strcmp(a->driver, b->driver)))
		return 0;
	for (int i = 0; i < b->napis; i++)
		if (has_api(a, b->apis[i].name))
			return 1;
	return 0;
}

void core_engine_name(struct accel_ctx *ctx, struct accel_engine *e)
{
	if (e->backend == &accel_backend_cpu && !e->variant[0]) {
		core_strlcpy(e->name, "cpu", sizeof e->name);
		return;
	}
	char id[sizeof ctx->devices[0].id];
	core_strlcpy(id, ctx->devices[e->device].id, sizeof id);
	snprintf(e->name, sizeof e->name, "%s%s%s:%s", e->backend->name, e->variant[0] ? "." : "", e->variant, id);
}

/* The order of the devices of a class that hold no reserved id, as the
 * header says: nothing in it depends on which backend found a device. */
static int device_cmp(const struct accel_ctx *ctx, int a, int b)
{
	const struct accel_device *x = &ctx->devices[a], *y = &ctx->devices[b];
	const char *ux = accel_device_get(x, "uuid"), *uy = accel_device_get(y, "uuid");
	int c;
	if (!x->pci_address[0] != !y->pci_address[0])
		return !x->pci_address[0] - !y->pci_address[0];
	if (x->software != y->software)
		return x->software - y->software;
	if ((c = strcmp(x->pci_address, y->pci_address)) || (c = strcmp(x->model, y->model)) ||
	    (c = strcmp(ux ? ux : "", uy ? uy : "")) || (c = strcmp(x->vendor, y->vendor)) ||
	    (c = strcmp(x->driver, y->driver)))
		return c;
	return a - b;
}

int core_class_reserves(enum accel_device_class cls)
{
	return cls == ACCEL_CLASS_GPU || cls == ACCEL_CLASS_NPU;
}

/* Whether a probe chose `id` for a device. */
static int id_fixed(const struct accel_ctx *ctx, const char *id)
{
	for (int i = 0; i < ctx->ndevices; i++)
		if (ctx->fixed_id[i] && !strcmp(ctx->devices[i].id, id))
			return 1;
	return 0;
}

void core_device_renumber(struct accel_ctx *ctx, enum accel_device_class cls)
{
	int idx[CORE_MAX_DEVICES], n = 0, nres = 0, reserves = core_class_reserves(cls);
	char id[sizeof ctx->devices[0].id];
	if (reserves && !ctx->pci_scanned) {
		ctx->npci = core_pci_scan(ctx->sysroot, ctx->pci, CORE_MAX_DEVICES);
		ctx->pci_scanned = 1;
	}
	for (int r = 0; r < ctx->npci; r++)
		nres += reserves && ctx->pci[r].cls == cls;
	for (int i = 0; i < ctx->ndevices; i++) {
		struct accel_device *d = &ctx->devices[i];
		if (d->cls != cls || ctx->fixed_id[i])
			continue;
		int rank = -1;
		for (int r = 0, k = 0; reserves && d->pci_address[0] && r < ctx->npci; r++) {
			if (ctx->pci[r].cls != cls)
				continue;
			if (!strcmp(ctx->pci[r].addr, d->pci_address)) {
				rank = k;
				break;
			}
			k++;
		}
		if (rank >= 0) {
			snprintf(id, sizeof id, "%s%d", accel_class_name(cls), rank);
			if (!id_fixed(ctx, id)) {
				core_strlcpy(d->id, id, sizeof id);
				continue;
			}
		}
		int k = n++;
		for (; k > 0 && device_cmp(ctx, idx[k - 1], i) > 0; k--)
			idx[k] = idx[k - 1];
		idx[k] = i;
	}
	int num = nres;
	for (int k = 0; k < n; k++) {
		do
			snprintf(id, sizeof id, "%s%d", accel_class_name(cls), num++);
		while (id_fixed(ctx, id));
		core_strlcpy(ctx->devices[idx[k]].id, id, sizeof id);
	}
	for (int i = 0; i < ctx->nengines; i++)
		if (ctx->devices[ctx->engines[i].device].cls == cls)
			core_engine_name(ctx, &ctx->engines[i]);
}
