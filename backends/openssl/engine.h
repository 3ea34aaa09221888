/*
 * engine.h - what the openssl plugin (openssl.c) and its companion object
 * openssl/crypto.so share. The companion (providers.c, the probe; engine.c,
 * the openssl:cpu0 engine) links libcrypto; the plugin does not, and its
 * probe loads the companion (accel_probe_dlopen), so that a program that
 * never probes openssl maps no libcrypto. The companion exports only
 * openssl_api_crypto.
 */
#ifndef ACCEL_OPENSSL_ENGINE_H
#define ACCEL_OPENSSL_ENGINE_H

#include <accel/backend.h>

#define ACCEL_OPENSSL_API_VERSION 1
/* The backend's functions but its table (struct accel_backend's). */
struct openssl_api {
	unsigned version;    /* ACCEL_OPENSSL_API_VERSION: the plugin and the companion are of one build */
	int (*probe)(struct accel_probe *p);
	int (*supports)(const struct accel_engine *e, const struct accel_op *op, double *prior_mbps, char *reason,
			size_t len);
	int (*open)(const struct accel_engine *e, const struct accel_op *op, void **ctx);
	int (*run)(void *ctx, struct accel_unit *u, char *err, size_t len);
	void (*close)(void *ctx);
};
extern __attribute__((visibility("default"))) const struct openssl_api openssl_api_crypto;

/* The probe (providers.c). */
int openssl_providers_probe(struct accel_probe *p);

#endif
