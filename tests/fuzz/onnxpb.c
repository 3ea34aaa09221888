/*
 * onnxpb.c - fuzz target for the opencv backend's reader of a .onnx file's
 * inputs and outputs (libcore/ops/onnx.c): no read past the bytes
 * given (the input is copied to a buffer of its exact size, so ASan sees
 * one), and a result that keeps its own limits: counts within
 * ACCEL_ONNX_MAX_IO, ranks within -1..ACCEL_ONNX_MAX_DIMS, names NUL-terminated,
 * and the same answer from a second parse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <accel/ops/onnx.h>
#include "fuzz.h"

static void fail(const char *what)
{
	fprintf(stderr, "fuzz: onnxpb: %s\n", what);
	abort();
}

static void check_value(const struct accel_onnx_value *x)
{
	if (!memchr(x->name, 0, sizeof x->name))
		fail("a name without its NUL");
	if (x->ndim < -1 || x->ndim > ACCEL_ONNX_MAX_DIMS)
		fail("a rank out of range");
	for (int i = 0; i < x->ndim; i++)
		if (x->dims[i] < -1 || !memchr(x->sym[i], 0, sizeof x->sym[i]))
			fail("a bad dim");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct accel_onnx_io a, b;
	char err[160], err2[160];
	uint8_t *c = malloc(size ? size : 1);
	if (!c)
		abort();
	memcpy(c, data, size);
	int rc = accel_onnx_io_parse(c, size, &a, err, sizeof err);
	int rc2 = accel_onnx_io_parse(c, size, &b, err2, sizeof err2);
	free(c);
	if (rc != rc2)
		fail("two answers for one input");
	if (rc < 0) {
		if (!err[0] || strcmp(err, err2))
			fail("a failure without its reason");
		return 0;
	}
	if (a.nin < 0 || a.nin > ACCEL_ONNX_MAX_IO || a.nout < 0 || a.nout > ACCEL_ONNX_MAX_IO)
		fail("a count out of range");
	for (int i = 0; i < a.nin; i++)
		check_value(&a.in[i]);
	for (int i = 0; i < a.nout; i++)
		check_value(&a.out[i]);
	if (memcmp(&a, &b, sizeof a))
		fail("two results for one input");
	return 0;
}
