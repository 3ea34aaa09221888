/*
 * engine.h - the openssl:cpu0 engine's functions (engine.c), for the
 * backend's table in openssl.c.
 */
#ifndef ACCEL_OPENSSL_ENGINE_H
#define ACCEL_OPENSSL_ENGINE_H

#include "accel.h"

extern const char *const openssl_engine_ops[];
int openssl_supports(const struct accel_engine *e, const struct accel_op *op, double *prior_mbps, char *reason,
		     size_t len);
int openssl_open(const struct accel_engine *e, const struct accel_op *op, void **ctx);
int openssl_run(void *ctx, struct accel_unit *u, char *err, size_t len);
void openssl_close(void *ctx);

#endif
