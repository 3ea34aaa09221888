/*
 * npy.c - tensors and the NumPy .npy format (numpy.lib.format, versions
 * 1.0 to 3.0) for accel-infer and the inference backends: a header parser
 * that checks every size before anything is allocated, a header writer,
 * and a reader of one array from a stream of concatenated arrays.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core.h"

static const struct {
	const char *name, *code;   /* "float32", "f4" */
	size_t size;
} dtypes[ACCEL_DTYPE_COUNT] = {
	[ACCEL_DTYPE_NONE] = { "none", "", 0 },
	[ACCEL_DTYPE_FLOAT32] = { "float32", "f4", 4 },
	[ACCEL_DTYPE_FLOAT64] = { "float64", "f8", 8 },
	[ACCEL_DTYPE_FLOAT16] = { "float16", "f2", 2 },
	[ACCEL_DTYPE_INT8] = { "int8", "i1", 1 },
	[ACCEL_DTYPE_UINT8] = { "uint8", "u1", 1 },
	[ACCEL_DTYPE_INT16] = { "int16", "i2", 2 },
	[ACCEL_DTYPE_UINT16] = { "uint16", "u2", 2 },
	[ACCEL_DTYPE_INT32] = { "int32", "i4", 4 },
	[ACCEL_DTYPE_UINT32] = { "uint32", "u4", 4 },
	[ACCEL_DTYPE_INT64] = { "int64", "i8", 8 },
	[ACCEL_DTYPE_UINT64] = { "uint64", "u8", 8 },
	[ACCEL_DTYPE_BOOL] = { "bool", "b1", 1 },
};

const char *accel_dtype_name(enum accel_dtype t)
{
	return (unsigned)t < ACCEL_DTYPE_COUNT ? dtypes[t].name : "none";
}

int accel_dtype_parse(const char *name)
{
	for (int i = 1; name && i < ACCEL_DTYPE_COUNT; i++)
		if (!strcmp(name, dtypes[i].name) || !strcmp(name, dtypes[i].code))
			return i;
	return ACCEL_EINVAL;
}

size_t accel_dtype_size(enum accel_dtype t)
{
	return (unsigned)t < ACCEL_DTYPE_COUNT ? dtypes[t].size : 0;
}

int accel_tensor_size(const struct accel_tensor *t, uint64_t max, uint64_t *count, uint64_t *bytes)
{
	size_t esize = accel_dtype_size(t->dtype);
	if (!esize || t->ndim < 0 || t->ndim > ACCEL_TENSOR_MAX_DIMS)
		return ACCEL_EDATA;
	uint64_t n = 1;
	int zero = 0;
	for (int i = 0; i < t->ndim; i++) {
		if (t->dims[i] < 0)
			return ACCEL_EDATA;
		if (t->dims[i] == 0)
			zero = 1;
		else if (!zero && __builtin_mul_overflow(n, (uint64_t)t->dims[i], &n))
			return ACCEL_EDATA;
	}
	if (zero)
		n = 0;
	uint64_t b;
	if (__builtin_mul_overflow(n, (uint64_t)esize, &b) || (max && b > max))
		return ACCEL_EDATA;
	if (count)
		*count = n;
	if (bytes)
		*bytes = b;
	return 0;
}

size_t accel_tensor_shape_str(const struct accel_tensor *t, char *buf, size_t len)
{
	char tmp[ACCEL_TENSOR_MAX_DIMS * 22 + 4];
	size_t k = 0;
	tmp[k++] = '(';
	for (int i = 0; i < t->ndim && i < ACCEL_TENSOR_MAX_DIMS; i++)
		k += (size_t)snprintf(tmp + k, sizeof tmp - k, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
	if (t->ndim == 1)
		tmp[k++] = ',';
	tmp[k++] = ')';
	tmp[k] = 0;
	if (len)
		snprintf(buf, len, "%s", tmp);
	return k;
}

/* ------------------------------------------------------------ header parse */

struct lex {
	const char *p, *end;
};

static void skip_blank(struct lex *l)
{
	while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' || *l->p == '\r'))
		l->p++;
}

static int eat(struct lex *l, char c)
{
	skip_blank(l);
	if (l->p < l->end && *l->p == c) {
		l->p++;
		return 1;
	}
	return 0;
}

/* A Python string literal in ' or " quotes, without escapes, into buf. */
static int lex_string(struct lex *l, char *buf, size_t len)
{
	skip_blank(l);
	if (l->p >= l->end || (*l->p != '\'' && *l->p != '"'))
		return -1;
	char q = *l->p++;
	size_t k = 0;
	while (l->p < l->end && *l->p != q) {
		if (*l->p == '\\' || k + 1 >= len)
			return -1;
		buf[k++] = *l->p++;
	}
	if (l->p >= l->end)
		return -1;
	l->p++;
	buf[k] = 0;
	return 0;
}

/* A non-negative decimal integer (Python 2 headers may end it with L). */
static int lex_int(struct lex *l, int64_t *out)
{
	skip_blank(l);
	int64_t v = 0;
	const char *s = l->p;
	while (l->p < l->end && *l->p >= '0' && *l->p <= '9') {
		int digit = *l->p++ - '0';
		if (v > (INT64_MAX - digit) / 10)
			return -1;
		v = v * 10 + digit;
	}
	if (l->p == s)
		return -1;
	if (l->p < l->end && *l->p == 'L')
		l->p++;
	*out = v;
	return 0;
}

static int lex_word(struct lex *l, const char *w)
{
	skip_blank(l);
	size_t n = strlen(w);
	if ((size_t)(l->end - l->p) >= n && !memcmp(l->p, w, n)) {
		l->p += n;
		return 1;
	}
	return 0;
}

/* The dict of a header: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } */
static int parse_dict(const char *s, size_t n, struct accel_tensor *t, char *err, size_t len)
{
	struct lex l = { s, s + n };
	int have_descr = 0, have_order = 0, have_shape = 0;
	if (!eat(&l, '{')) {
		snprintf(err, len, "header is not a dict");
		return ACCEL_EDATA;
	}
	memset(t, 0, sizeof *t);
	while (!eat(&l, '}')) {
		char key[32], val[32];
		if (lex_string(&l, key, sizeof key) < 0 || !eat(&l, ':')) {
			snprintf(err, len, "malformed header dict");
			return ACCEL_EDATA;
		}
		if (!strcmp(key, "descr")) {
			if (lex_string(&l, val, sizeof val) < 0) {
				snprintf(err, len, "'descr' is not a simple dtype string");
				return ACCEL_EDATA;
			}
			int dt = -1;
			/* Byte order: '<' little, '|' not applicable, '=' native
			 * (little on the hosts we build for); '>' is refused. */
			if ((val[0] == '<' || val[0] == '|' || val[0] == '=') && (dt = accel_dtype_parse(val + 1)) > 0 &&
			    (val[0] != '|' || accel_dtype_size(dt) == 1))
				t->dtype = dt;
			else {
				snprintf(err, len, "unsupported dtype '%s'", val);
				return ACCEL_EDATA;
			}
			have_descr = 1;
		} else if (!strcmp(key, "fortran_order")) {
			if (lex_word(&l, "False")) {
				have_order = 1;
			} else if (lex_word(&l, "True")) {
				snprintf(err, len, "fortran_order arrays are not supported");
				return ACCEL_EDATA;
			} else {
				snprintf(err, len, "'fortran_order' is not True or False");
				return ACCEL_EDATA;
			}
		} else if (!strcmp(key, "shape")) {
			if (!eat(&l, '(')) {
				snprintf(err, len, "'shape' is not a tuple");
				return ACCEL_EDATA;
			}
			while (!eat(&l, ')')) {
				int64_t d;
				if (t->ndim >= ACCEL_TENSOR_MAX_DIMS) {
					snprintf(err, len, "more than %d dimensions", ACCEL_TENSOR_MAX_DIMS);
					return ACCEL_EDATA;
				}
				if (lex_int(&l, &d) < 0) {
					snprintf(err, len, "'shape' holds something other than sizes");
					return ACCEL_EDATA;
				}
				t->dims[t->ndim++] = d;
				if (!eat(&l, ',')) {
					if (!eat(&l, ')')) {
						snprintf(err, len, "malformed 'shape' tuple");
						return ACCEL_EDATA;
					}
					break;
				}
			}
			have_shape = 1;
		} else {
			snprintf(err, len, "unknown key '%s' in the header", key);
			return ACCEL_EDATA;
		}
		if (!eat(&l, ',')) {
			if (!eat(&l, '}')) {
				snprintf(err, len, "malformed header dict");
				return ACCEL_EDATA;
			}
			break;
		}
	}
	skip_blank(&l);
	if (l.p != l.end) {
		snprintf(err, len, "bytes after the header dict");
		return ACCEL_EDATA;
	}
	if (!have_descr || !have_order || !have_shape) {
		snprintf(err, len, "header lacks '%s'", !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
		return ACCEL_EDATA;
	}
	return 0;
}

int accel_npy_header_parse(const uint8_t *p, size_t n, uint64_t max_bytes, struct accel_tensor *t,
			   size_t *header_len, char *err, size_t len)
{
	static const uint8_t magic[6] = { 0x93, 'N', 'U', 'M', 'P', 'Y' };
	if (memcmp(p, magic, n < 6 ? n : 6)) {
		snprintf(err, len, "not a .npy array (bad magic)");
		return ACCEL_EDATA;
	}
	if (n < 10)
		return 10;
	unsigned major = p[6];
	size_t hlen, start;
	if (major == 1) {
		hlen = (size_t)p[8] | (size_t)p[9] << 8;
		start = 10;
	} else if (major == 2 || major == 3) {
		if (n < 12)
			return 12;
		hlen = (size_t)p[8] | (size_t)p[9] << 8 | (size_t)p[10] << 16 | (size_t)p[11] << 24;
		start = 12;
	} else {
		snprintf(err, len, "unsupported .npy format version %u.%u", major, p[7]);
		return ACCEL_EDATA;
	}
	if (hlen > ACCEL_NPY_HEADER_LIMIT) {
		snprintf(err, len, "header of %zu bytes is over the limit of %d", hlen, ACCEL_NPY_HEADER_LIMIT);
		return ACCEL_EDATA;
	}
	if (n < start + hlen)
		return (int)(start + hlen);
	int rc = parse_dict((const char *)p + start, hlen, t, err, len);
	if (rc < 0)
		return rc;
	uint64_t bytes;
	if (accel_tensor_size(t, 0, NULL, &bytes) < 0) {
		char shape[256];
		accel_tensor_shape_str(t, shape, sizeof shape);
		snprintf(err, len, "shape %s overflows", shape);
		return ACCEL_EDATA;
	}
	if (max_bytes && bytes > max_bytes) {
		char shape[256];
		accel_tensor_shape_str(t, shape, sizeof shape);
		snprintf(err, len, "shape %s of %s is %llu bytes, over the limit of %llu", shape,
			 accel_dtype_name(t->dtype), (unsigned long long)bytes, (unsigned long long)max_bytes);
		return ACCEL_EDATA;
	}
	*header_len = start + hlen;
	return 0;
}

int accel_npy_header_write(const struct accel_tensor *t, uint8_t *buf, size_t len)
{
	if (t->dtype <= ACCEL_DTYPE_NONE || t->dtype >= ACCEL_DTYPE_COUNT || t->ndim < 0 ||
	    t->ndim > ACCEL_TENSOR_MAX_DIMS)
		return ACCEL_EINVAL;
	char dict[ACCEL_NPY_HEADER_MAX], shape[ACCEL_TENSOR_MAX_DIMS * 22 + 4];
	accel_tensor_shape_str(t, shape, sizeof shape);
	int k = snprintf(dict, sizeof dict, "{'descr': '%c%s', 'fortran_order': False, 'shape': %s, }",
			 accel_dtype_size(t->dtype) == 1 ? '|' : '<', dtypes[t->dtype].code, shape);
	/* Pad with spaces and a final newline to a multiple of 64 bytes. */
	size_t total = (10 + (size_t)k + 1 + 63) / 64 * 64;
	if (total > len || total > ACCEL_NPY_HEADER_MAX)
		return ACCEL_EINVAL;
	size_t hlen = total - 10;
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (uint8_t)(hlen & 0xff);
	buf[9] = (uint8_t)(hlen >> 8);
	memcpy(buf + 10, dict, (size_t)k);
	memset(buf + 10 + k, ' ', hlen - (size_t)k - 1);
	buf[total - 1] = '\n';
	return (int)total;
}

int accel_npy_read(struct accel_input *in, uint64_t max_bytes, struct accel_tensor *t, struct accel_buf *data,
		   char *err, size_t len)
{
	uint64_t off = in->offset;
	const uint8_t *p;
	size_t need = 10, hlen = 0;
	for (;;) {
		ssize_t got = accel_input_peek(in, need, &p);
		if (got < 0) {
			snprintf(err, len, "cannot read: %s", strerror(errno));
			return (int)got;
		}
		if (got == 0 && need == 10)
			return 0;
		char why[200] = "";
		int rc = accel_npy_header_parse(p, (size_t)got, max_bytes, t, &hlen, why, sizeof why);
		if (rc < 0) {
			snprintf(err, len, "bad .npy array at byte offset %llu: %s", (unsigned long long)off, why);
			return rc;
		}
		if (rc == 0)
			break;
		if ((size_t)got < need || (size_t)rc <= (size_t)got) {
			snprintf(err, len, "truncated .npy array at byte offset %llu: the header ends early",
				 (unsigned long long)off);
			return ACCEL_EDATA;
		}
		need = (size_t)rc;
	}
	accel_input_consume(in, hlen);
	uint64_t bytes;
	accel_tensor_size(t, 0, NULL, &bytes);
	if (bytes > SIZE_MAX - data->len || accel_buf_reserve(data, data->len + (size_t)bytes) < 0)
		return ACCEL_ENOMEM;
	ssize_t r = accel_input_read(in, data->data + data->len, (size_t)bytes);
	if (r < 0) {
		snprintf(err, len, "cannot read: %s", strerror(errno));
		return (int)r;
	}
	if ((uint64_t)r < bytes) {
		char shape[256];
		accel_tensor_shape_str(t, shape, sizeof shape);
		snprintf(err, len, "truncated .npy array at byte offset %llu: shape %s of %s needs %llu bytes of data, got %zd",
			 (unsigned long long)off, shape, accel_dtype_name(t->dtype), (unsigned long long)bytes, r);
		return ACCEL_EDATA;
	}
	data->len += (size_t)bytes;
	return 1;
}
