/*
 * npy.c - fuzz target for the .npy reader (libcore/ops/npy.c): a stream of
 * arrays read one after another from memory must give, for each array, a
 * header that parses the same on its own and round-trips through the
 * writer, data of exactly the size its shape says, never more than the
 * limit given (checked from the header, before allocating), and an end
 * that is either the end of the input or one error line. With
 * FUZZ_NPY_VERDICT set in the environment, it prints what it read on
 * stdout for tests/infer/npyref.py to compare with numpy: a line "ok DTYPE
 * SHAPE" per array, then "end" or "refused: REASON".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "accel.h"
#include "fuzz.h"

#define LIMIT ((uint64_t)1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int verdict = -1;
	if (verdict < 0)
		verdict = getenv("FUZZ_NPY_VERDICT") != NULL;
	struct accel_input in;
	if (accel_input_mem(&in, data, size, "fuzz") < 0)
		fuzz_fail("out of memory");
	struct accel_buf buf = { 0 };
	for (int n = 0;; n++) {
		struct accel_tensor t, t2;
		char err[512] = "";
		uint64_t start = in.offset;
		buf.len = 0;
		int rc = accel_npy_read(&in, LIMIT, &t, &buf, err, sizeof err);
		if (rc == 0) {
			if (start != size)
				fuzz_fail("end of input reported at %llu of %zu", (unsigned long long)start, size);
			if (verdict)
				printf("end\n");
			break;
		}
		if (rc < 0) {
			if (rc != ACCEL_EDATA || !err[0] || strchr(err, '\n'))
				fuzz_fail("array %d: error %d without one line: '%s'", n, rc, err);
			if (verdict)
				printf("refused: %s\n", err);
			break;
		}
		if (verdict) {
			char shape[256];
			accel_tensor_shape_str(&t, shape, sizeof shape);
			printf("ok %s %s\n", accel_dtype_name(t.dtype), shape);
		}
		uint64_t bytes;
		if (accel_tensor_size(&t, LIMIT, NULL, &bytes) < 0 || bytes != buf.len)
			fuzz_fail("array %d: %zu bytes of data for its shape", n, buf.len);
		size_t hlen;
		size_t avail = size - (size_t)start;
		if (accel_npy_header_parse(data + start, avail, LIMIT, &t2, &hlen, err, sizeof err) != 0 ||
		    memcmp(&t, &t2, sizeof t) || start + hlen + bytes != in.offset)
			fuzz_fail("array %d: the header does not parse the same on its own", n);
		uint8_t h[ACCEL_NPY_HEADER_MAX];
		int w = accel_npy_header_write(&t, h, sizeof h);
		if (w < 0 || w % 64 || accel_npy_header_parse(h, (size_t)w, 0, &t2, &hlen, err, sizeof err) != 0 ||
		    hlen != (size_t)w || memcmp(&t, &t2, sizeof t))
			fuzz_fail("array %d: the header does not round-trip through the writer", n);
	}
	accel_buf_free(&buf);
	accel_input_close(&in);
	return 0;
}
