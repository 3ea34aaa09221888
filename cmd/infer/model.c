/*
 * model.c - the model's inputs and outputs, as the onnx.info operation
 * describes them in JSON.
 */
#include <stdio.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "infer.h"

static int parse_list(const cJSON *arr, struct io_desc *d, int *n, char *err, size_t len)
{
	*n = 0;
	if (!cJSON_IsArray(arr)) {
		snprintf(err, len, "the engine's model description lacks a list");
		return ACCEL_EDATA;
	}
	const cJSON *o;
	cJSON_ArrayForEach(o, arr) {
		if (*n >= INFER_MAX_IO) {
			snprintf(err, len, "more than %d inputs or outputs", INFER_MAX_IO);
			return ACCEL_EDATA;
		}
		struct io_desc *x = &d[(*n)++];
		memset(x, 0, sizeof *x);
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
		const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(o, "dtype");
		const cJSON *shape = cJSON_GetObjectItemCaseSensitive(o, "shape");
		snprintf(x->name, sizeof x->name, "%s", cJSON_IsString(name) ? name->valuestring : "?");
		int dt = cJSON_IsString(dtype) ? accel_dtype_parse(dtype->valuestring) : -1;
		x->dtype = dt > 0 ? (enum accel_dtype)dt : ACCEL_DTYPE_NONE;
		x->ndim = -1;
		if (!cJSON_IsArray(shape))
			continue;
		x->ndim = 0;
		const cJSON *dim;
		cJSON_ArrayForEach(dim, shape) {
			if (x->ndim >= ACCEL_TENSOR_MAX_DIMS) {
				x->ndim = -1;
				break;
			}
			int i = x->ndim++;
			x->dims[i] = cJSON_IsNumber(dim) ? (int64_t)dim->valuedouble : -1;
			if (cJSON_IsString(dim))
				snprintf(x->sym[i], sizeof x->sym[i], "%s", dim->valuestring);
		}
	}
	return 0;
}

int model_info_parse(const char *json, size_t n, struct model_info *m, char *err, size_t len)
{
	memset(m, 0, sizeof *m);
	cJSON *root = cJSON_ParseWithLength(json, n);
	if (!root) {
		snprintf(err, len, "the engine's model description is not JSON");
		return ACCEL_EDATA;
	}
	int rc = parse_list(cJSON_GetObjectItemCaseSensitive(root, "inputs"), m->in, &m->nin, err, len);
	if (!rc)
		rc = parse_list(cJSON_GetObjectItemCaseSensitive(root, "outputs"), m->out, &m->nout, err, len);
	cJSON_Delete(root);
	return rc;
}

void io_desc_str(const struct io_desc *d, char *buf, size_t len)
{
	size_t k = (size_t)snprintf(buf, len, "%s ", accel_dtype_name(d->dtype));
	if (d->ndim < 0) {
		snprintf(buf + k, k < len ? len - k : 0, "(unknown shape)");
		return;
	}
	for (int i = 0; i < d->ndim && k < len; i++) {
		if (d->dims[i] >= 0)
			k += (size_t)snprintf(buf + k, len - k, "%s%lld", i ? ", " : "(", (long long)d->dims[i]);
		else
			k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : "(", d->sym[i][0] ? d->sym[i] : "?");
	}
	if (k < len)
		snprintf(buf + k, len - k, "%s%s", d->ndim == 0 ? "(" : "", d->ndim == 1 ? ",)" : ")");
}
