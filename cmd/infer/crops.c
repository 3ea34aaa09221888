/*
 * crops.c - the boxes of --crops: JSON lines such as --decode db writes,
 * {"input": 0, "box": [x0, y0, x1, y1], ...}, each naming a rectangle of
 * an image that becomes one input of the model.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "infer.h"

int crop_parse(const char *line, size_t n, struct crop *c, char *err, size_t len)
{
	cJSON *o = cJSON_ParseWithLength(line, n);
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		snprintf(err, len, "not a JSON object");
		return ACCEL_EDATA;
	}
	int rc = 0;
	const cJSON *box = cJSON_GetObjectItemCaseSensitive(o, "box");
	const cJSON *input = cJSON_GetObjectItemCaseSensitive(o, "input");
	c->image = 0;
	if (input) {
		double v = cJSON_IsNumber(input) ? input->valuedouble : -1;
		if (!(v >= 0 && v <= 9007199254740992.0 && v == floor(v))) {
			snprintf(err, len, "\"input\" is not a count");
			rc = ACCEL_EDATA;
		} else {
			c->image = (uint64_t)v;
		}
	}
	if (!rc && (!cJSON_IsArray(box) || cJSON_GetArraySize(box) != 4)) {
		snprintf(err, len, "no \"box\": [x0, y0, x1, y1]");
		rc = ACCEL_EDATA;
	}
	for (int i = 0; !rc && i < 4; i++) {
		const cJSON *v = cJSON_GetArrayItem(box, i);
		double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
		if (!(x >= -(1 << 20) && x <= (1 << 20) && x == floor(x))) {
			snprintf(err, len, "\"box\" holds a value that is not a pixel coordinate");
			rc = ACCEL_EDATA;
		} else {
			c->box[i] = (int)x;
		}
	}
	if (!rc && (c->box[0] >= c->box[2] || c->box[1] >= c->box[3])) {
		snprintf(err, len, "\"box\" [%d, %d, %d, %d] is empty: x0 < x1 and y0 < y1 are needed", c->box[0],
			 c->box[1], c->box[2], c->box[3]);
		rc = ACCEL_EDATA;
	}
	cJSON_Delete(o);
	return rc;
}

int crops_load(const char *path, struct crop **crops, size_t *n, char *err, size_t len)
{
	int std_in = !strcmp(path, "-");
	FILE *f = std_in ? stdin : fopen(path, "re");
	if (!f)
		return ACCEL_EIO;
	struct crop *v = NULL;
	char *line = NULL, why[256];
	size_t cap = 0, k = 0, count = 0;
	unsigned long lineno = 0;
	ssize_t got;
	int rc = 0;
	while (!rc && (got = getline(&line, &cap, f)) >= 0) {
		lineno++;
		while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
			line[--got] = 0;
		if (count == k) {
			k = k ? k * 2 : 64;
			struct crop *nv = realloc(v, k * sizeof *v);
			if (!nv) {
				rc = ACCEL_ENOMEM;
				break;
			}
			v = nv;
		}
		if (crop_parse(line, (size_t)got, &v[count], why, sizeof why) < 0) {
			snprintf(err, len, "%s:%lu: %s", std_in ? "stdin" : path, lineno, why);
			rc = ACCEL_EDATA;
		}
		count++;
	}
	if (!rc && ferror(f))
		rc = ACCEL_EIO;
	/* No boxes is a list all the same: no input for the model. */
	if (!rc && !v && !(v = malloc(sizeof *v)))
		rc = ACCEL_ENOMEM;
	int e = errno;
	free(line);
	if (!std_in)
		fclose(f);
	if (rc) {
		free(v);
		errno = e;
		return rc;
	}
	*crops = v;
	*n = count;
	return 0;
}
