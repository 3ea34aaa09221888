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
#include <accel/ops/tensor.h>
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

/*
 * numpy reads the header as a Python literal (numpy/lib/format.py,
 * _read_array_header: ast.literal_eval, after dropping an L after an int in
 * versions 1.0 and 2.0), then wants a dict of exactly the keys 'descr',
 * 'fortran_order' and 'shape' (a key given twice: its last value), a tuple
 * of ints for the shape and a bool for the order. This reader takes the
 * part of Python's grammar such a dict is written in, with the meaning
 * Python gives it: blanks, comments and backslash continuations between
 * tokens; strings in either quote, triple-quoted, with a u or r prefix,
 * escapes and implicit concatenation; ints in decimal, hex, octal or
 * binary with underscores and one sign; True, False, None; tuples and
 * parentheses. Anything else (a list, a float, bytes, \N{...}) is refused,
 * as is what numpy refuses.
 */

#define PY_MAX_DEPTH 64
/* Python refuses decimal int literals of more digits (int_max_str_digits). */
#define PY_MAX_DIGITS 4300

struct lex {
	const char *p, *end;
	int drop_l;               /* versions 1.0 and 2.0: an L after an int is dropped */
};

/* A value of the dict: only what a header's values can be is kept. */
enum py_kind { PY_STR, PY_INT, PY_BOOL, PY_NONE, PY_TUPLE };
struct py_val {
	enum py_kind kind;
	int signed_;              /* PY_INT: written with a sign */
	int ok;                   /* PY_STR: printable ASCII, under 32 bytes; PY_TUPLE: ints >= 0 that fit, at most
				   * ACCEL_TENSOR_MAX_DIMS */
	const char *why;          /* PY_TUPLE, !ok: why it is not a shape (NULL: too many dims) */
	char s[32];               /* PY_STR */
	size_t slen;
	int64_t i;                /* PY_INT (when it fits), PY_BOOL */
	int neg, big;             /* PY_INT: below 0; beyond int64 */
	int n;                    /* PY_TUPLE */
	int64_t dims[ACCEL_TENSOR_MAX_DIMS];
};

static void skip_blank(struct lex *l)
{
	while (l->p < l->end) {
		char c = *l->p;
		if (c == ' ' || c == '\t' || c == '\f' || c == '\n' || c == '\r') {
			l->p++;
		} else if (c == '#') {
			while (l->p < l->end && *l->p != '\n' && *l->p != '\r')
				l->p++;
		} else if (c == '\\' && l->end - l->p >= 2 && (l->p[1] == '\n' || l->p[1] == '\r')) {
			l->p += 2;
			if (l->p[-1] == '\r' && l->p < l->end && *l->p == '\n')
				l->p++;
		} else {
			break;
		}
	}
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

static int is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       (unsigned char)c >= 0x80;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* At a string literal: a quote, or u, U, r, R and a quote. */
static int at_string(const struct lex *l)
{
	const char *p = l->p;
	if (p < l->end && strchr("uUrR", *p) && *p)
		p++;
	return p < l->end && (*p == '\'' || *p == '"');
}

/* Keys and dtypes are printable ASCII: anything else (which the error
 * lines would echo) marks the string as neither. */
static void str_put(struct py_val *v, uint32_t c)
{
	if (c < 0x20 || c >= 0x7f || v->slen + 1 >= sizeof v->s)
		v->ok = 0;
	else
		v->s[v->slen++] = (char)c;
	v->s[v->slen] = 0;
}

/* One escape after a backslash (not raw): the code point, or -1 for a
 * continuation (nothing), -2 malformed or unsupported (\N{...}). */
static int64_t lex_escape(struct lex *l)
{
	char e = *l->p++;
	int64_t c = 0;
	int n = 0;
	switch (e) {
	case '\n': return -1;
	case '\r':
		if (l->p < l->end && *l->p == '\n')
			l->p++;
		return -1;
	case '\\': case '\'': case '"': return e;
	case 'a': return 7;
	case 'b': return 8;
	case 'f': return 12;
	case 'n': return 10;
	case 'r': return 13;
	case 't': return 9;
	case 'v': return 11;
	case 'x': n = 2; break;
	case 'u': n = 4; break;
	case 'U': n = 8; break;
	default:
		if (e >= '0' && e <= '7') {
			c = e - '0';
			for (int k = 0; k < 2 && l->p < l->end && *l->p >= '0' && *l->p <= '7'; k++)
				c = c * 8 + (*l->p++ - '0');
			return c;
		}
		if (e == 'N')
			return -2;
		/* An unknown escape keeps its backslash. */
		l->p--;
		return '\\';
	}
	for (int k = 0; k < n; k++) {
		int h = l->p < l->end ? hexval(*l->p) : -1;
		if (h < 0)
			return -2;
		c = c * 16 + h;
		l->p++;
	}
	return c > 0x10ffff ? -2 : c;
}

/* Adjacent string literals into v. 0 or -1. */
static int lex_string(struct lex *l, struct py_val *v)
{
	v->kind = PY_STR;
	v->ok = 1;
	v->slen = 0;
	v->s[0] = 0;
	do {
		int raw = *l->p == 'r' || *l->p == 'R';
		if (*l->p != '\'' && *l->p != '"')
			l->p++;
		char q = *l->p++;
		int triple = l->end - l->p >= 2 && l->p[0] == q && l->p[1] == q;
		if (triple)
			l->p += 2;
		for (;;) {
			if (l->p >= l->end)
				return -1;
			char c = *l->p;
			if (c == q && (!triple || (l->end - l->p >= 3 && l->p[1] == q && l->p[2] == q))) {
				l->p += triple ? 3 : 1;
				break;
			}
			if (!triple && (c == '\n' || c == '\r'))
				return -1;
			l->p++;
			if (c != '\\') {
				str_put(v, (unsigned char)c);
				continue;
			}
			if (l->p >= l->end)
				return -1;
			if (raw) {
				/* A raw string keeps the backslash and what follows. */
				str_put(v, '\\');
				str_put(v, (unsigned char)*l->p++);
				continue;
			}
			int64_t e = lex_escape(l);
			if (e == -2)
				return -1;
			if (e >= 0)
				str_put(v, (uint32_t)e);
		}
		skip_blank(l);
	} while (at_string(l));
	return 0;
}

/* An int literal (no sign) into v. 0 or -1. */
static int lex_int(struct lex *l, struct py_val *v)
{
	int base = 10, digits = 0;
	const char *p = l->p;
	v->kind = PY_INT;
	v->i = 0;
	v->big = v->neg = v->signed_ = 0;
	if (p[0] == '0' && l->end - p >= 2 && strchr("xXoObB", p[1]) && p[1]) {
		base = p[1] == 'x' || p[1] == 'X' ? 16 : p[1] == 'o' || p[1] == 'O' ? 8 : 2;
		p += 2;
	}
	int first_nonzero = 0;
	for (;;) {
		/* One underscore between digits (and after a base prefix). */
		if (p < l->end && *p == '_' && (digits || base != 10) && l->end - p >= 2 && hexval(p[1]) >= 0)
			p++;
		int d = p < l->end ? hexval(*p) : -1;
		if (d < 0 || d >= base)
			break;
		if (base == 10 && digits == 0)
			first_nonzero = d != 0;
		else if (base == 10 && !first_nonzero && d != 0)
			return -1;        /* leading zeros: 01 */
		if (!v->big && (v->i > (INT64_MAX - d) / base))
			v->big = 1;
		if (!v->big)
			v->i = v->i * base + d;
		digits++;
		p++;
	}
	if (!digits || (base == 10 && digits > PY_MAX_DIGITS))
		return -1;
	l->p = p;
	if (l->drop_l) {
		/* numpy's _filter_header: a NAME token L right after a NUMBER. */
		const char *s = p;
		while (s < l->end && (*s == ' ' || *s == '\t' || *s == '\f' ||
				      (*s == '\\' && l->end - s >= 2 && (s[1] == '\n' || s[1] == '\r'))))
			s += *s == '\\' ? (s[1] == '\r' && l->end - s >= 3 && s[2] == '\n' ? 3 : 2) : 1;
		if (s < l->end && *s == 'L' && (l->end - s < 2 || !is_ident(s[1])))
			l->p = s + 1;
	}
	return l->p < l->end && (is_ident(*l->p) || *l->p == '.') ? -1 : 0;
}

static int lex_value(struct lex *l, struct py_val *v, int depth);

/* A parenthesized value or a tuple, after its '('. */
static int lex_paren(struct lex *l, struct py_val *v, int depth)
{
	static struct py_val none;
	struct py_val e;
	*v = none;
	v->kind = PY_TUPLE;
	v->ok = 1;
	if (eat(l, ')'))
		return 0;
	for (int k = 0;; k++) {
		if (lex_value(l, &e, depth + 1) < 0)
			return -1;
		if (k == 0 && eat(l, ')')) {
			*v = e;       /* (x): x itself */
			return 0;
		}
		if (v->ok && e.kind != PY_INT) {
			v->ok = 0;
			v->why = "holds something other than ints";
		} else if (v->ok && (e.neg || e.big)) {
			v->ok = 0;
			v->why = e.neg ? "holds a negative size" : "holds a size over 2^63";
		} else if (v->ok && v->n == ACCEL_TENSOR_MAX_DIMS) {
			v->ok = 0;
			v->why = NULL;    /* too many dims */
		} else if (v->ok) {
			v->dims[v->n++] = e.i;
		}
		if (!eat(l, ','))
			return eat(l, ')') ? 0 : -1;
		if (eat(l, ')'))
			return 0;
	}
}

/* One value. 0 or -1 (malformed, or a form this reader does not take). */
static int lex_value(struct lex *l, struct py_val *v, int depth)
{
	skip_blank(l);
	if (l->p >= l->end || depth > PY_MAX_DEPTH)
		return -1;
	char c = *l->p;
	if (c == '(') {
		l->p++;
		return lex_paren(l, v, depth);
	}
	if (c == '+' || c == '-') {
		/* One sign, on an int (parenthesized or not). */
		l->p++;
		if (lex_value(l, v, depth + 1) < 0 || v->kind != PY_INT || v->signed_)
			return -1;
		v->signed_ = 1;
		v->neg = c == '-' && (v->i || v->big);
		return 0;
	}
	if (at_string(l))
		return lex_string(l, v);
	if (c >= '0' && c <= '9')
		return lex_int(l, v);
	const char *s = l->p;
	while (l->p < l->end && is_ident(*l->p))
		l->p++;
	size_t n = (size_t)(l->p - s);
	v->i = n == 4 && !memcmp(s, "True", 4);
	v->kind = n == 4 && !memcmp(s, "None", 4) ? PY_NONE : PY_BOOL;
	return v->i || v->kind == PY_NONE || (n == 5 && !memcmp(s, "False", 5)) ? 0 : -1;
}

/* numpy.dtype(descr) for the descr strings that give one of our dtypes on
 * a little-endian LP64 host: a type code or kind and size after an
 * optional byte order, or (without one) a type's name. */
static int descr_dtype(const char *d, int *big_endian)
{
	static const struct {
		const char *s;
		enum accel_dtype t;
	} codes[] = {
		{ "?", ACCEL_DTYPE_BOOL }, { "b1", ACCEL_DTYPE_BOOL },
		{ "b", ACCEL_DTYPE_INT8 }, { "i1", ACCEL_DTYPE_INT8 },
		{ "B", ACCEL_DTYPE_UINT8 }, { "u1", ACCEL_DTYPE_UINT8 },
		{ "h", ACCEL_DTYPE_INT16 }, { "i2", ACCEL_DTYPE_INT16 },
		{ "H", ACCEL_DTYPE_UINT16 }, { "u2", ACCEL_DTYPE_UINT16 },
		{ "i", ACCEL_DTYPE_INT32 }, { "i4", ACCEL_DTYPE_INT32 },
		{ "I", ACCEL_DTYPE_UINT32 }, { "u4", ACCEL_DTYPE_UINT32 },
		{ "l", ACCEL_DTYPE_INT64 }, { "q", ACCEL_DTYPE_INT64 }, { "p", ACCEL_DTYPE_INT64 },
		{ "i8", ACCEL_DTYPE_INT64 },
		{ "L", ACCEL_DTYPE_UINT64 }, { "Q", ACCEL_DTYPE_UINT64 }, { "P", ACCEL_DTYPE_UINT64 },
		{ "u8", ACCEL_DTYPE_UINT64 },
		{ "e", ACCEL_DTYPE_FLOAT16 }, { "f2", ACCEL_DTYPE_FLOAT16 },
		{ "f", ACCEL_DTYPE_FLOAT32 }, { "f4", ACCEL_DTYPE_FLOAT32 },
		{ "d", ACCEL_DTYPE_FLOAT64 }, { "f8", ACCEL_DTYPE_FLOAT64 },
	}, names[] = {
		{ "bool", ACCEL_DTYPE_BOOL }, { "bool8", ACCEL_DTYPE_BOOL }, { "bool_", ACCEL_DTYPE_BOOL },
		{ "byte", ACCEL_DTYPE_INT8 }, { "int8", ACCEL_DTYPE_INT8 },
		{ "ubyte", ACCEL_DTYPE_UINT8 }, { "uint8", ACCEL_DTYPE_UINT8 },
		{ "short", ACCEL_DTYPE_INT16 }, { "int16", ACCEL_DTYPE_INT16 },
		{ "ushort", ACCEL_DTYPE_UINT16 }, { "uint16", ACCEL_DTYPE_UINT16 },
		{ "intc", ACCEL_DTYPE_INT32 }, { "int32", ACCEL_DTYPE_INT32 },
		{ "uintc", ACCEL_DTYPE_UINT32 }, { "uint32", ACCEL_DTYPE_UINT32 },
		{ "int", ACCEL_DTYPE_INT64 }, { "int_", ACCEL_DTYPE_INT64 }, { "int0", ACCEL_DTYPE_INT64 },
		{ "intp", ACCEL_DTYPE_INT64 }, { "long", ACCEL_DTYPE_INT64 }, { "longlong", ACCEL_DTYPE_INT64 },
		{ "int64", ACCEL_DTYPE_INT64 },
		{ "uint", ACCEL_DTYPE_UINT64 }, { "uint0", ACCEL_DTYPE_UINT64 }, { "uintp", ACCEL_DTYPE_UINT64 },
		{ "ulong", ACCEL_DTYPE_UINT64 }, { "ulonglong", ACCEL_DTYPE_UINT64 }, { "uint64", ACCEL_DTYPE_UINT64 },
		{ "half", ACCEL_DTYPE_FLOAT16 }, { "float16", ACCEL_DTYPE_FLOAT16 },
		{ "single", ACCEL_DTYPE_FLOAT32 }, { "float32", ACCEL_DTYPE_FLOAT32 },
		{ "double", ACCEL_DTYPE_FLOAT64 }, { "float", ACCEL_DTYPE_FLOAT64 }, { "float_", ACCEL_DTYPE_FLOAT64 },
		{ "float64", ACCEL_DTYPE_FLOAT64 },
	};
	char order = strchr("<>=|", d[0]) && d[0] ? d[0] : 0;
	const char *body = d + (order != 0);
	*big_endian = 0;
	for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
		if (!strcmp(body, codes[i].s)) {
			*big_endian = order == '>' && dtypes[codes[i].t].size > 1;
			return codes[i].t;
		}
	for (size_t i = 0; !order && i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(d, names[i].s))
			return names[i].t;
	return -1;
}

/* At a newline ("\n", "\r\n" or "\r"): its length, else 0. */
static int newline(const struct lex *l, const char *p)
{
	return p < l->end && *p == '\r' ? 1 + (l->end - p >= 2 && p[1] == '\n') : p < l->end && *p == '\n';
}

/*
 * What may come before and after the dict, outside its brackets, where
 * Python's tokenizer counts indentation (and versions 1.0 and 2.0 go first
 * through numpy's _filter_header, which reads lines otherwise). Before it:
 * spaces and tabs (literal_eval strips them), or blank and comment lines
 * ended by "\n", then the dict in column 0; other text there, which the
 * format versions read differently, is refused. After it: blanks,
 * comments, backslash continuations not at the end, and lines of blanks
 * that end in a newline or leave column 0.
 */
static int dict_starts(struct lex *l)
{
	const char *s = l->p;
	while (l->p < l->end && (*l->p == ' ' || *l->p == '\t'))
		l->p++;
	if (l->p < l->end && *l->p == '{')
		return 1;
	for (l->p = s; l->p < l->end && *l->p != '{';) {
		while (l->p < l->end && (*l->p == ' ' || *l->p == '\t'))
			l->p++;
		if (l->p < l->end && *l->p == '#')
			while (l->p < l->end && *l->p != '\n' && *l->p != '\r' && *l->p != '\f')
				l->p++;
		if (l->p == l->end || *l->p != '\n')
			return 0;
		l->p++;
	}
	return l->p < l->end;
}

static int dict_ends(struct lex *l)
{
	int bol = 0, n;
	for (;;) {
		int col = 0, cont_col = 0;
		for (; l->p < l->end; l->p++) {
			char c = *l->p;
			if (c == ' ' || c == '\t' || c == '\f') {
				col = c == '\f' ? 0 : c == ' ' ? col + 1 : (col / 8 + 1) * 8;
			} else if (c == '\\' && (n = newline(l, l->p + 1))) {
				/* A continuation, never at the end; at the start
				 * of a line, the first in a column over 0 sets
				 * the line's indentation. */
				l->p += n;
				if (l->p + 1 == l->end)
					return 0;
				if (!cont_col)
					cont_col = col;
			} else {
				break;
			}
		}
		if (l->p < l->end && *l->p == '#')
			while (l->p < l->end && !newline(l, l->p))
				l->p++;
		else if (l->p == l->end)
			return !bol || (cont_col ? cont_col : col) == 0;
		if (l->p == l->end)
			return 1;
		if (!(n = newline(l, l->p)))
			return 0;
		l->p += n;
		bol = 1;
	}
}

/* The header dict into *t. */
static int parse_dict(struct lex *l, struct accel_tensor *t, char *err, size_t len)
{
	static const char *const keys[3] = { "descr", "fortran_order", "shape" };
	struct py_val key, val[3];
	int have[3] = { 0, 0, 0 };
	if (!dict_starts(l)) {
		snprintf(err, len, "header does not begin with its dict");
		return ACCEL_EDATA;
	}
	l->p++;
	while (!eat(l, '}')) {
		struct py_val v;
		if (lex_value(l, &key, 0) < 0 || !eat(l, ':') || lex_value(l, &v, 0) < 0) {
			snprintf(err, len, "malformed header dict");
			return ACCEL_EDATA;
		}
		int k = 0;
		while (k < 3 && !(key.kind == PY_STR && key.ok && !strcmp(key.s, keys[k])))
			k++;
		if (k == 3) {
			snprintf(err, len, "the header has a key other than 'descr', 'fortran_order' and 'shape'");
			return ACCEL_EDATA;
		}
		/* A key given again: its last value counts, as in Python. */
		val[k] = v;
		have[k] = 1;
		if (!eat(l, ',')) {
			if (!eat(l, '}')) {
				snprintf(err, len, "malformed header dict");
				return ACCEL_EDATA;
			}
			break;
		}
	}
	if (!dict_ends(l)) {
		snprintf(err, len, "bytes after the header dict");
		return ACCEL_EDATA;
	}
	for (int k = 0; k < 3; k++)
		if (!have[k]) {
			snprintf(err, len, "header lacks '%s'", keys[k]);
			return ACCEL_EDATA;
		}
	memset(t, 0, sizeof *t);
	const struct py_val *d = &val[0], *o = &val[1], *s = &val[2];
	if (s->kind != PY_TUPLE || !s->ok) {
		if (s->kind == PY_TUPLE && !s->why)
			snprintf(err, len, "more than %d dimensions", ACCEL_TENSOR_MAX_DIMS);
		else
			snprintf(err, len, "'shape' %s", s->kind != PY_TUPLE ? "is not a tuple" : s->why);
		return ACCEL_EDATA;
	}
	t->ndim = s->n;
	memcpy(t->dims, s->dims, sizeof s->dims);
	if (o->kind != PY_BOOL) {
		snprintf(err, len, "'fortran_order' is not True or False");
		return ACCEL_EDATA;
	}
	/* Fortran order is C order when no two dims are over 1. */
	int over1 = 0;
	for (int i = 0; i < t->ndim; i++)
		over1 += t->dims[i] > 1;
	if (o->i && over1 > 1) {
		snprintf(err, len, "fortran_order arrays are not supported");
		return ACCEL_EDATA;
	}
	int big = 0, dt = d->kind == PY_STR && d->ok ? descr_dtype(d->s, &big) : -1;
	if (dt < 0 || big) {
		snprintf(err, len, "unsupported dtype '%s'%s", d->kind == PY_STR && d->ok ? d->s : "?",
			 big ? " (big-endian)" : "");
		return ACCEL_EDATA;
	}
	t->dtype = (enum accel_dtype)dt;
	return 0;
}

/* Characters of the UTF-8 text p[0..n), or -1 where Python's decoder
 * refuses it (a bad sequence, an overlong form, a surrogate, past
 * U+10FFFF). */
static long utf8_chars(const uint8_t *p, size_t n)
{
	long chars = 0;
	for (size_t i = 0; i < n; chars++) {
		uint8_t c = p[i];
		size_t k = c < 0x80 ? 0 : c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2
			 : c >= 0xf0 && c <= 0xf4 ? 3 : 4;
		if (k == 4 || n - i - 1 < k)
			return -1;
		for (size_t j = 1; j <= k; j++)
			if ((p[i + j] & 0xc0) != 0x80)
				return -1;
		if ((c == 0xe0 && p[i + 1] < 0xa0) || (c == 0xed && p[i + 1] >= 0xa0) ||
		    (c == 0xf0 && p[i + 1] < 0x90) || (c == 0xf4 && p[i + 1] >= 0x90))
			return -1;
		i += k + 1;
	}
	return chars;
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
	unsigned major = p[6], minor = p[7];
	size_t hlen, start;
	if (minor != 0 || major < 1 || major > 3) {
		snprintf(err, len, "unsupported .npy format version %u.%u (numpy reads 1.0, 2.0 and 3.0)", major, minor);
		return ACCEL_EDATA;
	}
	if (major == 1) {
		hlen = (size_t)p[8] | (size_t)p[9] << 8;
		start = 10;
	} else {
		if (n < 12)
			return 12;
		hlen = (size_t)p[8] | (size_t)p[9] << 8 | (size_t)p[10] << 16 | (size_t)p[11] << 24;
		start = 12;
	}
	/* numpy counts characters: version 3.0 is UTF-8, up to 4 bytes each. */
	if (hlen > (major == 3 ? 4 : 1) * (size_t)ACCEL_NPY_HEADER_LIMIT) {
		snprintf(err, len, "header of %zu bytes is over the limit of %d characters", hlen, ACCEL_NPY_HEADER_LIMIT);
		return ACCEL_EDATA;
	}
	if (n < start + hlen)
		return (int)(start + hlen);
	const uint8_t *h = p + start;
	long chars = major == 3 ? utf8_chars(h, hlen) : (long)hlen;
	if (chars < 0) {
		snprintf(err, len, "header is not UTF-8 (format version 3.0)");
		return ACCEL_EDATA;
	}
	if (chars > ACCEL_NPY_HEADER_LIMIT) {
		snprintf(err, len, "header of %ld characters is over the limit of %d", chars, ACCEL_NPY_HEADER_LIMIT);
		return ACCEL_EDATA;
	}
	if (memchr(h, 0, hlen)) {
		snprintf(err, len, "header holds a NUL byte");
		return ACCEL_EDATA;
	}
	struct lex l = { (const char *)h, (const char *)h + hlen, major < 3 };
	int rc = parse_dict(&l, t, err, len);
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
	if (!bytes)
		return 1;
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
