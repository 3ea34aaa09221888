/*
 * cpu.c - the CPU backend: always present, always last resort. Its one
 * engine ("cpu") runs the codecs of this folder on the host's cores.
 */
#include <stdlib.h>
#include <string.h>
#include <accel/context.h>
#include "cpu.h"

static const struct cpu_codec *const codecs[] = {
	&cpu_zstd_compress, &cpu_zstd_decompress,
	&cpu_gzip_compress, &cpu_gzip_decompress,
	&cpu_lz4_compress, &cpu_lz4_decompress,
};
#define NCODECS (sizeof codecs / sizeof codecs[0])

static const char *const cpu_ops[] = {
	"zstd.compress", "zstd.decompress", "gzip.compress", "gzip.decompress",
	"lz4.compress", "lz4.decompress", NULL,
};

struct cpu_ctx {
	const struct cpu_codec *codec;
	void *inner;
};

static const struct cpu_codec *find_codec(const char *op)
{
	for (size_t i = 0; i < NCODECS; i++)
		if (!strcmp(codecs[i]->op, op))
			return codecs[i];
	return NULL;
}

static int cpu_probe(struct accel_probe *p)
{
	struct accel_device d;
	memset(&d, 0, sizeof d);
	d.cls = ACCEL_CLASS_CPU;
	d.numa_node = -1;
	char why[256];
	int rc = cpu_topology(&d, accel_probe_sysroot(p), accel_probe_list_devices(p), why, sizeof why);
	if (rc < 0)
		return accel_probe_fail(p, "hwloc could not read the CPU topology");
	if (why[0])
		accel_probe_note(p, "hwloc: %s; the CPU's topology is unknown", why);
	int dev = accel_probe_add_device(p, &d);
	if (dev < 0)
		return dev;
	return accel_probe_add_engine(p, dev, NULL) < 0 ? ACCEL_ENOMEM : 0;
}

static int cpu_supports(const struct accel_engine *e, const struct accel_op *op,
			double *prior, char *reason, size_t len)
{
	(void)e;
	const struct cpu_codec *c = find_codec(op->name);
	if (!c) {
		snprintf(reason, len, "the CPU backend has no %s", op->name);
		return ACCEL_ENOTSUP;
	}
	if (c->load(op, reason, len) < 0)
		return ACCEL_ENOTSUP;
	const char *lib = c->library;
	double mbps = c->prior_mbps;
	if (c->describe)
		c->describe(op, &lib, &mbps);
	int n = accel_cpu_count();
	*prior = mbps * n;
	snprintf(reason, len, "%s on %d core%s", lib, n, n == 1 ? "" : "s");
	return 0;
}

static int cpu_open(const struct accel_engine *e, const struct accel_op *op, void **ctx)
{
	(void)e;
	const struct cpu_codec *c = find_codec(op->name);
	char why[256];
	if (!c || c->load(op, why, sizeof why) < 0)
		return ACCEL_ENOTSUP;
	struct cpu_ctx *x = calloc(1, sizeof *x);
	if (!x)
		return ACCEL_ENOMEM;
	x->codec = c;
	int rc = c->open(op, &x->inner);
	if (rc < 0) {
		free(x);
		return rc;
	}
	*ctx = x;
	return 0;
}

static int cpu_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	struct cpu_ctx *x = ctx;
	return x->codec->run(x->inner, u, err, len);
}

static int cpu_stream(void *ctx, struct accel_input *in, struct accel_output *out, char *err, size_t len)
{
	struct cpu_ctx *x = ctx;
	if (!x->codec->stream) {
		snprintf(err, len, "%s cannot run sequentially", x->codec->op);
		return ACCEL_ENOTSUP;
	}
	return x->codec->stream(x->inner, in, out, err, len);
}

static void cpu_close(void *ctx)
{
	struct cpu_ctx *x = ctx;
	if (!x)
		return;
	x->codec->close(x->inner);
	free(x);
}

static const struct accel_api_info cpu_apis[] = {
	{ "host", ACCEL_API_COMPUTE | ACCEL_API_COMPRESSION },
	{ NULL, 0 },
};

const struct accel_backend accel_backend_cpu = {
	.abi = ACCEL_BACKEND_ABI,
	.name = "cpu",
	.description = "host CPU: libzstd, ISA-L igzip, libdeflate, liblz4",
	.ops = cpu_ops,
	.probe = cpu_probe,
	.supports = cpu_supports,
	.open = cpu_open,
	.run = cpu_run,
	.stream = cpu_stream,
	.close = cpu_close,
	.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_CPU),
	.priority = 0,
	.apis = cpu_apis,
};
