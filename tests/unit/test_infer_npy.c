/*
 * test_infer_npy.c - tensors and the .npy format (libcore/ops/npy.c), as
 * accel-infer reads and writes them: numpy's own headers parse, the writer's
 * headers are what numpy writes, sizes are checked before any allocation,
 * and a stream of arrays reads one by one to its end or to one error.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include <accel/ops/tensor.h>
#include "core.h"

/* np.save(f, np.arange(6, dtype='<f4').reshape(2, 3)), header only: 128 bytes. */
static const char numpy_hdr[] = "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
				"                                                          \n";

static void parses_numpy_header(void **state)
{
	struct accel_tensor t;
	size_t hlen = 0;
	char err[256];
	assert_int_equal(sizeof numpy_hdr - 1, 128);
	assert_int_equal(accel_npy_header_parse((const uint8_t *)numpy_hdr, 128, 0, &t, &hlen, err, sizeof err), 0);
	assert_int_equal(hlen, 128);
	assert_int_equal(t.dtype, ACCEL_DTYPE_FLOAT32);
	assert_int_equal(t.ndim, 2);
	assert_int_equal(t.dims[0], 2);
	assert_int_equal(t.dims[1], 3);
	/* Too short to decide: the bytes needed. */
	assert_int_equal(accel_npy_header_parse((const uint8_t *)numpy_hdr, 4, 0, &t, &hlen, err, sizeof err), 10);
	assert_int_equal(accel_npy_header_parse((const uint8_t *)numpy_hdr, 60, 0, &t, &hlen, err, sizeof err), 128);
	/* The writer writes the same bytes as numpy. */
	uint8_t out[ACCEL_NPY_HEADER_MAX];
	assert_int_equal(accel_npy_header_write(&t, out, sizeof out), 128);
	assert_memory_equal(out, numpy_hdr, 128);
	assert_int_equal(accel_npy_header_write(&t, out, 100), ACCEL_EINVAL);
}

static void refuses_bad_headers(void **state)
{
	struct accel_tensor t;
	size_t hlen;
	char err[256], h[200];
	const char *cases[][2] = {
		{ "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", "unsupported dtype '>f4' (big-endian)" },
		{ "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", "fortran_order arrays are not supported" },
		{ "{'descr': '<f4', 'shape': (2,), }", "header lacks 'fortran_order'" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }", "'shape' holds a negative size" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }",
		  "shape (1000000, 1000000) of float32 is 4000000000000 bytes, over the limit of 1073741824" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775807, 9), }",
		  "shape (9223372036854775807, 9) overflows" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t n = strlen(cases[i][0]);
		memcpy(h, "\x93NUMPY\x01\x00", 8);
		h[8] = (char)(n + 1);
		h[9] = 0;
		memcpy(h + 10, cases[i][0], n);
		h[10 + n] = '\n';
		assert_int_equal(accel_npy_header_parse((uint8_t *)h, n + 11, 1u << 30, &t, &hlen, err, sizeof err),
				 ACCEL_EDATA);
		assert_string_equal(err, cases[i][1]);
	}
	assert_int_equal(accel_npy_header_parse((const uint8_t *)"PK\x03\x04", 4, 0, &t, &hlen, err, sizeof err),
			 ACCEL_EDATA);
	assert_string_equal(err, "not a .npy array (bad magic)");
}

/* Headers as numpy 1.24's np.load reads them (each verdict checked with
 * it; tests/infer/npyref.py compares the two over the fuzz corpus and
 * mutated headers): a Python literal read by ast.literal_eval. */
static void reads_headers_as_numpy_does(void **state)
{
	static const struct {
		int major, minor;
		const char *dict;
		const char *want;     /* "DTYPE SHAPE", or the error */
	} cases[] = {
		/* A key given twice: the last value counts. */
		{ 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (1, 3)}", "float32 (1, 3)" },
		{ 3, 0, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), 'descr': '<i2', 'fortran_order': False}",
		  "int16 (2, 2)" },
		/* Only versions 1.0, 2.0 and 3.0. */
		{ 1, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
		  "unsupported .npy format version 1.1 (numpy reads 1.0, 2.0 and 3.0)" },
		{ 4, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
		  "unsupported .npy format version 4.0 (numpy reads 1.0, 2.0 and 3.0)" },
		/* Python 2's L after an int: dropped before version 3.0. */
		{ 2, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3 L)}", "float32 (2, 3)" },
		{ 3, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L,)}", "malformed header dict" },
		/* Python's ints, strings, blanks, comments, parentheses. */
		{ 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (0x2, 1_0, 0o1, +0b1, -0)}",
		  "float32 (2, 10, 1, 1, 0)" },
		{ 1, 0, "{'descr': '<' \"f\" u'''4''', 'fortran_order': (False), 'shape': ((2),)}", "float32 (2,)" },
		{ 1, 0, "{'descr': '\\x3cf\\064', # comment\n 'fortran_order' : False,\\\n'shape':(2,)\n}", "float32 (2,)" },
		{ 3, 0, "\n# a comment line\n{'descr':'float32','fortran_order':False,'shape':()}  \n", "float32 ()" },
		{ 1, 0, "{'descr': '?', 'fortran_order': False, 'shape': (2,)}", "bool (2,)" },
		{ 1, 0, "{'descr': 'l', 'fortran_order': False, 'shape': (2,)}", "int64 (2,)" },
		{ 1, 0, "{'descr': '>u1', 'fortran_order': False, 'shape': (2,)}", "uint8 (2,)" },
		/* Fortran order of one dim over 1 is C order. */
		{ 1, 0, "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 5, 1)}", "float32 (1, 5, 1)" },
		/* What numpy refuses. */
		{ 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (True,)}", "'shape' holds something other than ints" },
		{ 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (02,)}", "malformed header dict" },
		{ 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (--1,)}", "malformed header dict" },
		{ 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", "malformed header dict" },
		{ 1, 0, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", "'fortran_order' is not True or False" },
		{ 1, 0, "{'descr': '<f4 ', 'fortran_order': False, 'shape': (2,)}", "unsupported dtype '<f4 '" },
		{ 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
		  "the header has a key other than 'descr', 'fortran_order' and 'shape'" },
		{ 1, 0, "{'descr': '<f4', 'fortran_order': False, 'sh\\ape': (2,)}",
		  "the header has a key other than 'descr', 'fortran_order' and 'shape'" },
		{ 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}\v", "bytes after the header dict" },
		{ 3, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}\n ", "bytes after the header dict" },
		{ 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} \\", "bytes after the header dict" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint8_t h[512];
		size_t n = strlen(cases[i].dict), start = cases[i].major == 1 ? 10 : 12, hlen;
		memcpy(h, "\x93NUMPY", 6);
		h[6] = (uint8_t)cases[i].major;
		h[7] = (uint8_t)cases[i].minor;
		memset(h + 8, 0, 4);
		h[8] = (uint8_t)n;
		memcpy(h + start, cases[i].dict, n);
		struct accel_tensor t;
		char err[256] = "", got[256];
		int rc = accel_npy_header_parse(h, start + n, 0, &t, &hlen, err, sizeof err);
		if (rc == 0) {
			char shape[128];
			accel_tensor_shape_str(&t, shape, sizeof shape);
			snprintf(got, sizeof got, "%s %s", accel_dtype_name(t.dtype), shape);
			assert_int_equal(hlen, start + n);
		} else {
			assert_int_equal(rc, ACCEL_EDATA);
			snprintf(got, sizeof got, "%s", err);
		}
		if (strcmp(got, cases[i].want))
			fail_msg("case %zu: %s: got '%s', want '%s'", i, cases[i].dict, got, cases[i].want);
	}
	/* The header's length: at most numpy's 10000 characters (version 3.0
	 * in UTF-8: characters, not bytes), in valid UTF-8, without a NUL. */
	static uint8_t big[12 + 10002];
	const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} #";
	size_t n = strlen(dict);
	memcpy(big, "\x93NUMPY\x03\x00", 8);
	memcpy(big + 12, dict, n);
	memset(big + 12 + n, 'x', 10002 - n);
	struct accel_tensor t;
	size_t hlen;
	char err[256];
	big[8] = 10000 & 0xff;
	big[9] = 10000 >> 8;
	assert_int_equal(accel_npy_header_parse(big, 12 + 10000, 0, &t, &hlen, err, sizeof err), 0);
	big[8] = 10001 & 0xff;
	big[9] = 10001 >> 8;
	assert_int_equal(accel_npy_header_parse(big, 12 + 10001, 0, &t, &hlen, err, sizeof err), ACCEL_EDATA);
	assert_string_equal(err, "header of 10001 characters is over the limit of 10000");
	memcpy(big + 12 + 9000, "\xc3\xa9", 2);
	assert_int_equal(accel_npy_header_parse(big, 12 + 10001, 0, &t, &hlen, err, sizeof err), 0);
	big[12 + 9001] = 'x';
	assert_int_equal(accel_npy_header_parse(big, 12 + 10001, 0, &t, &hlen, err, sizeof err), ACCEL_EDATA);
	assert_string_equal(err, "header is not UTF-8 (format version 3.0)");
	big[12 + 9000] = 0;
	big[8] = 10000 & 0xff;
	big[9] = 10000 >> 8;
	assert_int_equal(accel_npy_header_parse(big, 12 + 10000, 0, &t, &hlen, err, sizeof err), ACCEL_EDATA);
	assert_string_equal(err, "header holds a NUL byte");
}

static void reads_a_stream(void **state)
{
	/* Two arrays, then the first again cut inside its data. */
	uint8_t s[3 * 152];
	memcpy(s, numpy_hdr, 128);
	for (int i = 0; i < 6; i++) {
		float f = (float)i;
		memcpy(s + 128 + 4 * i, &f, 4);
	}
	memcpy(s + 152, s, 152);
	memcpy(s + 304, s, 152);
	struct accel_input in;
	assert_int_equal(accel_input_mem(&in, s, 304 + 140, "mem"), 0);
	struct accel_buf b = { 0 };
	struct accel_tensor t;
	char err[256];
	assert_int_equal(accel_npy_read(&in, 0, &t, &b, err, sizeof err), 1);
	assert_int_equal(accel_npy_read(&in, 0, &t, &b, err, sizeof err), 1);
	assert_int_equal(b.len, 48);
	float f;
	memcpy(&f, b.data + 44, 4);
	assert_true(f == 5.0f);
	assert_int_equal(accel_npy_read(&in, 0, &t, &b, err, sizeof err), ACCEL_EDATA);
	assert_string_equal(err, "truncated .npy array at byte offset 304: shape (2, 3) of float32 needs 24 bytes of data, got 12");
	accel_input_close(&in);
	/* The limit applies before the data is read. */
	assert_int_equal(accel_input_mem(&in, s, 152, "mem"), 0);
	assert_int_equal(accel_npy_read(&in, 16, &t, &b, err, sizeof err), ACCEL_EDATA);
	assert_string_equal(err, "bad .npy array at byte offset 0: shape (2, 3) of float32 is 24 bytes, over the limit of 16");
	accel_input_close(&in);
	/* An empty input is the end of the stream. */
	assert_int_equal(accel_input_mem(&in, s, 0, "mem"), 0);
	assert_int_equal(accel_npy_read(&in, 0, &t, &b, err, sizeof err), 0);
	accel_input_close(&in);
	accel_buf_free(&b);
}

static void dtypes_and_shapes(void **state)
{
	assert_int_equal(accel_dtype_parse("float32"), ACCEL_DTYPE_FLOAT32);
	assert_int_equal(accel_dtype_parse("u1"), ACCEL_DTYPE_UINT8);
	assert_int_equal(accel_dtype_parse("complex64"), ACCEL_EINVAL);
	assert_string_equal(accel_dtype_name(ACCEL_DTYPE_BOOL), "bool");
	assert_int_equal(accel_dtype_size(ACCEL_DTYPE_FLOAT16), 2);
	struct accel_tensor t = { ACCEL_DTYPE_INT64, 1, { 5 } };
	char buf[64];
	accel_tensor_shape_str(&t, buf, sizeof buf);
	assert_string_equal(buf, "(5,)");
	t.ndim = 0;
	accel_tensor_shape_str(&t, buf, sizeof buf);
	assert_string_equal(buf, "()");
	uint64_t n, bytes;
	assert_int_equal(accel_tensor_size(&t, 0, &n, &bytes), 0);
	assert_int_equal(n, 1);
	assert_int_equal(bytes, 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_numpy_header),
		cmocka_unit_test(refuses_bad_headers),
		cmocka_unit_test(reads_headers_as_numpy_does),
		cmocka_unit_test(reads_a_stream),
		cmocka_unit_test(dtypes_and_shapes),
	};
	return cmocka_run_group_tests_name("infer_npy", tests, NULL, NULL);
}
