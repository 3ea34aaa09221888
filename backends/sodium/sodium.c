/*
 * sodium.c - the "sodium" backend: file hashes of blake2b512 (BLAKE2b,
 * RFC 7693, unkeyed, 64-byte digest: b2sum's and OpenSSL's BLAKE2B-512) on
 * the CPU device, through libsodium's crypto_generichash, whose AVX2 and
 * SSE4.1 code sodium_init picks for this CPU (OpenSSL 3's BLAKE2b is plain
 * C: 0.62 GB/s a core against libsodium's 0.86 GB/s on a 2-core EPYC VM,
 * but 1.12 against 0.56 on a Zen 5 one: the route's order is timed, see
 * measure_prior).
 * libsodium.so.23 is loaded by the first probe. In the process it starts
 * no thread and installs no signal handler; sodium_init asks getrandom(2)
 * for 16 bytes once (where getrandom is missing it opens /dev/urandom and
 * keeps it open).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include <accel/backend.h>
#include <accel/ops/age.h>

#define DIGEST crypto_generichash_BYTES_MAX   /* 64: BLAKE2b-512 */

static const char *const sodium_ops[] = { "blake2b512", NULL };

/* libsodium's entry points, from libsodium.so.23 loaded by the first probe
 * (under load_lock); engines exist only after it. */
#define SODIUM_FN(name) __typeof__(name) *name
static struct {
	SODIUM_FN(sodium_init);
	SODIUM_FN(sodium_version_string);
	SODIUM_FN(sodium_runtime_has_avx2);
	SODIUM_FN(crypto_generichash_statebytes);
	SODIUM_FN(crypto_generichash_init);
	SODIUM_FN(crypto_generichash_update);
	SODIUM_FN(crypto_generichash_final);
} na;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int loaded;            /* 1: na is set and sodium_init ran; -1: failed (load_why) */
static char load_why[200];

/* Load libsodium and start it once: 0, or -1 with load_why set. */
static int load_sodium(void)
{
	pthread_mutex_lock(&load_lock);
	if (!loaded) {
		void *lib = accel_dlopen("libsodium.so.23", load_why, sizeof load_why);
		int missing = 0;
#define SYM(name) (missing |= !(*(void **)&na.name = dlsym(lib, #name)))
		if (lib) {
			SYM(sodium_init);
			SYM(sodium_version_string);
			SYM(sodium_runtime_has_avx2);
			SYM(crypto_generichash_statebytes);
			SYM(crypto_generichash_init);
			SYM(crypto_generichash_update);
			SYM(crypto_generichash_final);
		}
#undef SYM
		if (lib && missing)
			snprintf(load_why, sizeof load_why, "libsodium.so.23 lacks an entry point this plugin uses");
		else if (lib && na.sodium_init() < 0)
			snprintf(load_why, sizeof load_why, "sodium_init failed"), missing = 1;
		if (lib && missing)
			dlclose(lib);
		loaded = lib && !missing ? 1 : -1;
	}
	int rc = loaded > 0 ? 0 : -1;
	pthread_mutex_unlock(&load_lock);
	return rc;
}

static int sodium_probe(struct accel_probe *p)
{
	if (load_sodium() < 0)
		return accel_probe_fail(p, "%s", load_why);
	int cpu = accel_probe_cpu_device(p);
	if (cpu < 0)
		return accel_probe_fail(p, "no CPU device");
	accel_probe_note(p, "libsodium %s (BLAKE2b: %s)", na.sodium_version_string(),
			 na.sodium_runtime_has_avx2() ? "AVX2" : "SSE");
	if (accel_probe_add_engine(p, cpu, NULL) < 0)
		return accel_probe_fail(p, "cannot add the sodium engine");
	return 0;
}

/* The most MB/s sodium_supports sets: BLAKE2b's fastest single-core code
 * (AVX-512) runs at about 2 GB/s; a timing above 4 GB/s is taken as this. */
#define PRIOR_MAX 4000

static const struct accel_prior_bound sodium_bounds[] = {
	{ "blake2b512", PRIOR_MAX },
	{ NULL, 0 },
};

/* A worker's context: the BLAKE2b state (64-byte aligned, as libsodium's
 * crypto_generichash_state asks) and the read buffer. */
struct sodium_ctx {
	const struct accel_op *op;
	crypto_generichash_state *st;
	uint8_t *buf;
};

static void sodium_close(void *ctx)
{
	struct sodium_ctx *c = ctx;
	if (!c)
		return;
	free(c->st);
	free(c->buf);
	free(c);
}

static int sodium_open(const struct accel_engine *e, const struct accel_op *op, void **ctx)
{
	(void)e;
	if (!op->ext)
		return ACCEL_EINVAL;   /* the file hashing callbacks are required */
	struct sodium_ctx *c = calloc(1, sizeof *c);
	if (!c)
		return ACCEL_ENOMEM;
	c->op = op;
	size_t sb = (na.crypto_generichash_statebytes() + 63) & ~(size_t)63;
	c->st = aligned_alloc(64, sb);
	c->buf = malloc(ACCEL_HASH_READ);
	if (!c->st || !c->buf) {
		sodium_close(c);
		return ACCEL_ENOMEM;
	}
	*ctx = c;
	return 0;
}

/* BLAKE2b-512 of a file (accel_hash_run_unit's functions). */
static int b2_init(void *arg)
{
	struct sodium_ctx *c = arg;
	return na.crypto_generichash_init(c->st, NULL, 0, DIGEST) != 0;
}

static int b2_update(void *arg, const uint8_t *data, size_t n)
{
	struct sodium_ctx *c = arg;
	return na.crypto_generichash_update(c->st, data, n) != 0;
}

static int b2_final(void *arg, uint8_t digest[ACCEL_HASH_MAX_DIGEST], size_t *dlen)
{
	struct sodium_ctx *c = arg;
	if (na.crypto_generichash_final(c->st, digest, DIGEST) != 0)
		return 1;
	*dlen = DIGEST;
	return 0;
}

static const struct accel_hash_digest blake2b = { b2_init, b2_update, b2_final };

/* The prior of blake2b512, this CPU's: libsodium's AVX2 (or SSE4.1) code
 * against OpenSSL's scalar C, which also times itself (engine.c), is
 * faster on one x86 and half as fast on another (accel_hash_measure). The
 * first sodium_supports times it, once a process (0.1-0.2 ms). */
static pthread_once_t measure_once = PTHREAD_ONCE_INIT;
static double measured_mbps;   /* 0: the timing failed */

static void measure_prior(void)
{
	struct sodium_ctx c = { 0 };
	c.st = aligned_alloc(64, (na.crypto_generichash_statebytes() + 63) & ~(size_t)63);
	c.buf = malloc(ACCEL_HASH_MEASURE);
	if (c.st && c.buf)
		measured_mbps = accel_hash_measure(&blake2b, &c, c.buf, ACCEL_HASH_MEASURE);
	free(c.st);
	free(c.buf);
}

/* blake2b512's prior: the measured MB/s of one core (at most PRIOR_MAX),
 * or, when the timing failed, a recent x86's: 1100 with AVX2, 850 without. */
static int sodium_supports(const struct accel_engine *e, const struct accel_op *op, double *prior_mbps,
			   char *reason, size_t len)
{
	(void)e;
	if (strcmp(op->name, "blake2b512") != 0) {
		snprintf(reason, len, "sodium does not implement %s", op->name);
		return ACCEL_ENOTSUP;
	}
	pthread_once(&measure_once, measure_prior);
	if (measured_mbps > 0) {
		*prior_mbps = measured_mbps < PRIOR_MAX ? measured_mbps : PRIOR_MAX;
		snprintf(reason, len, "%s", ACCEL_HASH_MEASURED);
	} else {
		*prior_mbps = na.sodium_runtime_has_avx2() ? 1100 : 850;
	}
	return 0;
}

static int sodium_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	(void)err;
	(void)len;
	struct sodium_ctx *c = ctx;
	return accel_hash_run_unit(c->op, u, c->buf, ACCEL_HASH_READ, &blake2b, c);
}

/* --version: sodium_version_string of the library the probe loads. */
static void sodium_versions(char *buf, size_t len)
{
	char why[200];
	void *h = accel_dlopen("libsodium.so.23", why, sizeof why);
	const char *(*v)(void) = h ? (const char *(*)(void))dlsym(h, "sodium_version_string") : NULL;
	if (v)
		snprintf(buf, len, "libsodium %s\n", v());
	else
		snprintf(buf, len, "libsodium (%s)\n", h ? "libsodium.so.23 has no sodium_version_string" : why);
}

ACCEL_PLUGIN_EXPORT const struct accel_backend accel_backend_sodium = {
	.abi = ACCEL_BACKEND_ABI,
	.name = "sodium",
	.description = "libsodium: BLAKE2b file hashes on the CPU (its AVX2 code where the CPU has it)",
	.ops = sodium_ops,
	.probe = sodium_probe,
	.supports = sodium_supports,
	.open = sodium_open,
	.run = sodium_run,
	.close = sodium_close,
	.priority = 61,
	.versions = sodium_versions,
	.prior_bounds = sodium_bounds,
};
