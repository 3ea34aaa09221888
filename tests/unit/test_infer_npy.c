/*
 * test_infer_npy.c - tensors and the .npy format (libcore/npy.c), as
 * accel-infer reads and writes them: numpy's own headers parse, the writer's
 * headers are what numpy writes, sizes are checked before any allocation,
 * and a stream of arrays reads one by one to its end or to one error.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
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
		{ "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", "unsupported dtype '>f4'" },
		{ "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", "fortran_order arrays are not supported" },
		{ "{'descr': '<f4', 'shape': (2,), }", "header lacks 'fortran_order'" },
		{ "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }", "'shape' holds something other than sizes" },
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
		cmocka_unit_test(reads_a_stream),
		cmocka_unit_test(dtypes_and_shapes),
	};
	return cmocka_run_group_tests_name("infer_npy", tests, NULL, NULL);
}
