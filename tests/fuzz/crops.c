/*
 * crops.c - fuzz target for the reader of accel-infer's --crops lines
 * (crop_parse, cmd/infer/crops.c): no read past the bytes given (copied to
 * a buffer of their exact size, so ASan sees one), an answer of 0 with a
 * box that is not empty, or ACCEL_EDATA with a one-line reason, and the
 * same answer from a second reading.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../cmd/infer/infer.h"
#include "fuzz.h"

static void fail(const char *what, int rc, const char *why)
{
	fprintf(stderr, "fuzz: crops: %s (answer %d: '%s')\n", what, rc, why);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256] = "", why2[256] = "";
	struct crop c, c2;
	char *line = malloc(size ? size : 1);
	if (!line)
		abort();
	memcpy(line, data, size);
	memset(&c, 0, sizeof c);
	memset(&c2, 0, sizeof c2);
	int rc = crop_parse(line, size, &c, why, sizeof why);
	int rc2 = crop_parse(line, size, &c2, why2, sizeof why2);
	free(line);
	if (rc != 0 && rc != ACCEL_EDATA)
		fail("an answer other than 0 or ACCEL_EDATA", rc, why);
	if (rc != rc2 || strcmp(why, why2) || (!rc && memcmp(&c, &c2, sizeof c)))
		fail("a second reading answered otherwise", rc2, why2);
	if (rc && (!why[0] || strchr(why, '\n')))
		fail("a refusal without its one-line reason", rc, why);
	if (!rc && (c.box[0] >= c.box[2] || c.box[1] >= c.box[3]))
		fail("an empty box accepted", rc, why);
	return 0;
}
