/*
 * test_onnx.c - the ONNX reader (libcore/ops/onnx.c, onnx_graph.c) on models
 * written byte by byte: a graph's declared inputs and outputs, its
 * initializers as the batch check reads them, and sizes
 * that lie (a varint cut short or too long, a length past the end, a
 * nested message longer than its parent) refused as malformed, never read
 * past; the batch check run from two threads at once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <accel/ops/onnx.h>

struct msg {
	uint8_t b[512];
	size_t n;
};

static void put_varint(struct msg *m, uint64_t v)
{
	do {
		assert_true(m->n < sizeof m->b);
		m->b[m->n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static void put_int(struct msg *m, uint32_t field, uint64_t v)
{
	put_varint(m, (uint64_t)field << 3);
	put_varint(m, v);
}

static void put_bytes(struct msg *m, uint32_t field, const void *p, size_t n)
{
	put_varint(m, (uint64_t)field << 3 | 2);
	put_varint(m, n);
	assert_true(m->n + n <= sizeof m->b);
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

static void put_msg(struct msg *m, uint32_t field, const struct msg *sub)
{
	put_bytes(m, field, sub->b, sub->n);
}

/* ValueInfoProto name, TypeProto.tensor_type { elem_type 1 (float), shape
 * { dim { dim_param "N" } dim { dim_value 3 } } }. */
static void value_info(struct msg *vi, const char *name)
{
	struct msg d1 = { 0 }, d2 = { 0 }, shape = { 0 }, tensor = { 0 }, type = { 0 };
	put_bytes(&d1, 2, "N", 1);
	put_int(&d2, 1, 3);
	put_msg(&shape, 1, &d1);
	put_msg(&shape, 1, &d2);
	put_int(&tensor, 1, 1);
	put_msg(&tensor, 2, &shape);
	put_msg(&type, 1, &tensor);
	memset(vi, 0, sizeof *vi);
	put_bytes(vi, 1, name, strlen(name));
	put_msg(vi, 2, &type);
}

/* ModelProto { ir_version 7, graph { node `name` (op) x -> y, input x,
 * output y } }. */
static void model_of(struct msg *m, const char *name, const char *op)
{
	struct msg in, out, node = { 0 }, graph = { 0 };
	value_info(&in, "x");
	value_info(&out, "y");
	put_bytes(&node, 1, "x", 1);
	put_bytes(&node, 2, "y", 1);
	put_bytes(&node, 3, name, strlen(name));
	put_bytes(&node, 4, op, strlen(op));
	put_msg(&graph, 1, &node);
	put_msg(&graph, 11, &in);
	put_msg(&graph, 12, &out);
	memset(m, 0, sizeof *m);
	put_int(m, 1, 7);
	put_msg(m, 7, &graph);
}

static void model(struct msg *m)
{
	model_of(m, "r", "Relu");
}

static void io_of_a_model(void **state)
{
	struct msg m;
	model(&m);
	static struct accel_onnx_io io;
	char err[160] = "";
	assert_int_equal(accel_onnx_io_parse(m.b, m.n, &io, err, sizeof err), 0);
	assert_int_equal(io.nin, 1);
	assert_int_equal(io.nout, 1);
	assert_string_equal(io.in[0].name, "x");
	assert_string_equal(io.out[0].name, "y");
	assert_int_equal(io.in[0].elem_type, 1);
	assert_int_equal(io.in[0].ndim, 2);
	assert_int_equal(io.in[0].dims[0], -1);
	assert_string_equal(io.in[0].sym[0], "N");
	assert_int_equal(io.in[0].dims[1], 3);
	char why[160] = "";
	assert_int_equal(accel_onnx_batch_check_mem(m.b, m.n, "m", why, sizeof why), 0);
}

/* A model of IR version 3 whose initializer w is also listed as an input:
 * graph { node op(x, w) -> y, input x, input w, output y, initializer w }. */
static void model_with(struct msg *m, const char *op, const struct msg *w)
{
	struct msg x, win, y, node = { 0 }, graph = { 0 };
	value_info(&x, "x");
	value_info(&win, "w");
	value_info(&y, "y");
	put_bytes(&node, 1, "x", 1);
	put_bytes(&node, 1, "w", 1);
	put_bytes(&node, 2, "y", 1);
	put_bytes(&node, 3, "n", 1);
	put_bytes(&node, 4, op, strlen(op));
	put_msg(&graph, 1, &node);
	put_msg(&graph, 11, &x);
	put_msg(&graph, 11, &win);
	put_msg(&graph, 12, &y);
	put_msg(&graph, 5, w);
	memset(m, 0, sizeof *m);
	put_int(m, 1, 3);
	put_msg(m, 7, &graph);
}

static int batch_answer(const struct msg *m, char *why, size_t len)
{
	why[0] = 0;
	return accel_onnx_batch_check_mem(m->b, m->n, "m", why, len);
}

/* Initializers: not inputs a run gives; their shapes (dims one by one or
 * packed) and integer values (raw_data or packed int64_data) decide the
 * batch check. */
static void initializers(void **state)
{
	struct msg w, m;
	static struct accel_onnx_io io;
	char err[160], why[160];
	/* TensorProto w: dims 2, 3 one by one, float: spreads along axis 0 */
	memset(&w, 0, sizeof w);
	put_int(&w, 1, 2);
	put_int(&w, 1, 3);
	put_int(&w, 2, 1);
	put_bytes(&w, 8, "w", 1);
	model_with(&m, "Add", &w);
	assert_int_equal(accel_onnx_io_parse(m.b, m.n, &io, err, sizeof err), 0);
	assert_int_equal(io.nin, 1);
	assert_string_equal(io.in[0].name, "x");
	assert_int_equal(batch_answer(&m, why, sizeof why), 1);
	assert_string_equal(why, "its node 'n' (Add) broadcasts a constant along axis 0");
	/* dims 1, 3 packed: one row for every item */
	static const uint8_t dims13[] = { 1, 3 };
	memset(&w, 0, sizeof w);
	put_bytes(&w, 1, dims13, sizeof dims13);
	put_int(&w, 2, 1);
	put_bytes(&w, 8, "w", 1);
	model_with(&m, "Add", &w);
	assert_int_equal(batch_answer(&m, why, sizeof why), 0);
	/* Reshape to int64 [0, -1] in raw_data keeps axis 0 */
	static const uint8_t shape0[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	memset(&w, 0, sizeof w);
	put_int(&w, 1, 2);
	put_int(&w, 2, 7);
	put_bytes(&w, 8, "w", 1);
	put_bytes(&w, 9, shape0, sizeof shape0);
	model_with(&m, "Reshape", &w);
	assert_int_equal(batch_answer(&m, why, sizeof why), 0);
	/* and [3, -1] as packed int64_data does not */
	static const uint8_t shape3[] = { 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	memset(&w, 0, sizeof w);
	put_int(&w, 1, 2);
	put_int(&w, 2, 7);
	put_bytes(&w, 7, shape3, sizeof shape3);
	put_bytes(&w, 8, "w", 1);
	model_with(&m, "Reshape", &w);
	assert_int_equal(batch_answer(&m, why, sizeof why), 1);
	assert_string_equal(why, "its node 'n' (Reshape) does not keep axis 0 as it is (its shape does not begin with 0)");
	/* packed dims whose varint is cut short: a malformed initializer */
	static const uint8_t cut[] = { 0x80 };
	memset(&w, 0, sizeof w);
	put_bytes(&w, 1, cut, sizeof cut);
	put_bytes(&w, 8, "w", 1);
	model_with(&m, "Add", &w);
	assert_int_equal(accel_onnx_io_parse(m.b, m.n, &io, err, sizeof err), ACCEL_EDATA);
	assert_string_equal(err, "not an ONNX model (malformed initializer)");
	assert_int_equal(batch_answer(&m, why, sizeof why), ACCEL_EDATA);
	assert_string_equal(why, "m: the batch check cannot read its graph");
}

/* Every cut of the model is read within its bytes (each is copied to a
 * buffer of its exact size, so ASan sees a read past it): a parse or a
 * malformed model, never anything else. */
static void every_cut_stays_within_its_bytes(void **state)
{
	struct msg m;
	model(&m);
	static struct accel_onnx_io io;
	for (size_t n = 0; n < m.n; n++) {
		uint8_t *cut = malloc(n ? n : 1);
		assert_non_null(cut);
		memcpy(cut, m.b, n);
		char err[160], why[160];
		int rc = accel_onnx_io_parse(cut, n, &io, err, sizeof err);
		assert_true(rc == 0 || rc == ACCEL_EDATA);
		rc = accel_onnx_batch_check_mem(cut, n, "cut", why, sizeof why);
		assert_true(rc == 0 || rc == 1 || rc == ACCEL_EDATA);
		free(cut);
	}
}

static void sizes_that_lie(void **state)
{
	static struct accel_onnx_io io;
	char err[160];
	/* graph (field 7, type 2) whose length varint never ends */
	static const uint8_t cut_varint[] = { 0x3a, 0x80, 0x80 };
	assert_int_equal(accel_onnx_io_parse(cut_varint, sizeof cut_varint, &io, err, sizeof err), ACCEL_EDATA);
	assert_string_equal(err, "not an ONNX model (malformed protobuf)");
	/* a graph of 5 bytes with 1 left */
	static const uint8_t past_end[] = { 0x3a, 0x05, 0x00 };
	assert_int_equal(accel_onnx_io_parse(past_end, sizeof past_end, &io, err, sizeof err), ACCEL_EDATA);
	/* a graph of 4 bytes holding an input (field 11) said to be 10 long,
	 * with the bytes there in the buffer after the graph */
	static const uint8_t nested[] = { 0x3a, 0x04, 0x5a, 0x0a, 0x0a, 0x01, 'x', 0, 0, 0, 0, 0, 0, 0, 0 };
	assert_int_equal(accel_onnx_io_parse(nested, sizeof nested, &io, err, sizeof err), ACCEL_EDATA);
	char why[160];
	assert_int_equal(accel_onnx_batch_check_mem(nested, sizeof nested, "nested", why, sizeof why), ACCEL_EDATA);
	assert_non_null(strstr(why, "nested"));
	assert_null(strchr(why, '\n'));

	/* The walker itself: an 11-byte varint, a fixed64 cut short, wire type 7. */
	static const uint8_t long_varint[] = { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	struct accel_onnx_pb b = { long_varint, long_varint + sizeof long_varint }, sub;
	uint32_t field;
	int wt;
	uint64_t v;
	assert_int_equal(accel_onnx_pb_next(&b, &field, &wt, &v, &sub), ACCEL_EDATA);
	static const uint8_t short_fixed[] = { 0x09, 1, 2, 3 };
	b = (struct accel_onnx_pb){ short_fixed, short_fixed + sizeof short_fixed };
	assert_int_equal(accel_onnx_pb_next(&b, &field, &wt, &v, &sub), ACCEL_EDATA);
	static const uint8_t bad_type[] = { 0x0f };
	b = (struct accel_onnx_pb){ bad_type, bad_type + 1 };
	assert_int_equal(accel_onnx_pb_next(&b, &field, &wt, &v, &sub), ACCEL_EDATA);
	/* and a good field: 150 in field 1 (protobuf's own example) */
	static const uint8_t good[] = { 0x08, 0x96, 0x01 };
	b = (struct accel_onnx_pb){ good, good + sizeof good };
	assert_int_equal(accel_onnx_pb_next(&b, &field, &wt, &v, &sub), 1);
	assert_int_equal(field, 1);
	assert_int_equal(wt, 0);
	assert_int_equal(v, 150);
	assert_int_equal(accel_onnx_pb_next(&b, &field, &wt, &v, &sub), 0);
}

/* Two threads checking two models at once each get their own answer
 * (libaccel keeps no state of a check between calls). */
struct checker {
	struct msg m;
	int want;
	const char *why;
	int wrong;
};

static void *check_many(void *arg)
{
	struct checker *k = arg;
	char why[160];
	for (int i = 0; i < 20000; i++) {
		why[0] = 0;
		int rc = accel_onnx_batch_check_mem(k->m.b, k->m.n, "m", why, sizeof why);
		k->wrong += rc != k->want || strcmp(why, k->why);
	}
	return NULL;
}

static void checks_in_two_threads(void **state)
{
	static struct checker k[2];
	model_of(&k[0].m, "c", "CumSum");
	k[0].want = 1;
	k[0].why = "its node 'c' (CumSum) has an axis that is not constant";
	model_of(&k[1].m, "r", "Relu");
	k[1].want = 0;
	k[1].why = "";
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, check_many, &k[i]), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_int_equal(k[0].wrong, 0);
	assert_int_equal(k[1].wrong, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(io_of_a_model),
		cmocka_unit_test(initializers),
		cmocka_unit_test(every_cut_stays_within_its_bytes),
		cmocka_unit_test(sizes_that_lie),
		cmocka_unit_test(checks_in_two_threads),
	};
	return cmocka_run_group_tests_name("onnx", tests, NULL, NULL);
}
