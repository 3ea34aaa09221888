/*
 * onnxgraph.c - fuzz target for accel-infer's reading of a model's graph
 * for --batch (libcore/ops/onnx_graph.c): no read past the bytes given (copied to
 * a buffer of their exact size, so ASan sees one), an answer of 0 (items
 * stay apart), 1 or an error, each but 0 with its one-line reason, and the
 * same answer from a second reading.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <accel/ops/onnx.h>
#include "fuzz.h"

static void fail(const char *what, int rc, const char *why)
{
	fprintf(stderr, "fuzz: onnxgraph: %s (answer %d: '%s')\n", what, rc, why);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[512], why2[512];
	uint8_t *c = malloc(size ? size : 1);
	if (!c)
		abort();
	memcpy(c, data, size);
	why[0] = why2[0] = 0;
	int rc = accel_onnx_batch_check_mem(c, size, "fuzz", why, sizeof why);
	int rc2 = accel_onnx_batch_check_mem(c, size, "fuzz", why2, sizeof why2);
	free(c);
	if (rc != rc2 || strcmp(why, why2))
		fail("two answers for one input", rc, why);
	if (rc != 0 && rc != 1 && rc != ACCEL_EDATA && rc != ACCEL_ENOMEM)
		fail("an answer out of range", rc, why);
	if (rc != 0 && (!why[0] || strchr(why, '\n')))
		fail("an answer without its one-line reason", rc, why);
	return 0;
}
