/*
 * onnx_graph.c - whether the items of a batch stay apart through a model: the
 * nodes of the .onnx file's main graph (ModelProto.graph, onnx/onnx.proto),
 * read from its protobuf encoding, each an operator known to work item by
 * item along axis 0 with the attributes and constant inputs it has. Ranks
 * come from the graph's declared inputs, outputs and value_info, and are
 * carried through the nodes that keep or set them; an axis that counts from
 * the end needs one. Anything not known to keep items apart (another
 * operator or domain, a subgraph, an axis 0, a constant that broadcasts
 * along axis 0) says why, and accel-infer runs items one by one.
 *
 * The model, its values' declared types and its tensors are read by
 * onnx.c (onnx_read.h); the nodes here. Field numbers (onnx/onnx.proto):
 * GraphProto node 1, initializer 5, input 11, output 12, value_info 13;
 * NodeProto input 1, output 2, name 3, op_type 4, attribute 5, domain 7;
 * AttributeProto name 1, i 3, t 5, g 6, ints 8, graphs 11; TensorProto
 * data_type 6 int32, 7 int64.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "onnx_read.h"

static int str_is(const struct accel_onnx_pb *s, const char *w)
{
	size_t n = strlen(w);
	return (size_t)(s->end - s->p) == n && !memcmp(s->p, w, n);
}

/* ------------------------------------------------ what is known of a value */

#define MAX_VALS 16

struct info {
	const uint8_t *name;
	size_t len;
	int rank;                 /* -1 unknown */
	int is_const;             /* an initializer or a Constant's output */
	int64_t dim0;             /* constants: dims[0], or -1 */
	int nvals;                /* constants of at most MAX_VALS ints: their values, */
	size_t at;                /* at vals[at] of the table */
};

/* Open addressing, sized for every name the graph can define. */
struct table {
	struct info *v;
	size_t cap, n;
	int64_t *vals;
	size_t nvals, cap_vals;
};

/* Room for n more values; their index, or -1. */
static long vals_room(struct table *t, size_t n)
{
	if (t->nvals + n > t->cap_vals) {
		size_t cap = (t->cap_vals + n) * 2;
		int64_t *v = realloc(t->vals, cap * sizeof *v);
		if (!v)
			return -1;
		t->vals = v;
		t->cap_vals = cap;
	}
	t->nvals += n;
	return (long)(t->nvals - n);
}

static size_t hash(const uint8_t *p, size_t n)
{
	size_t h = 1469598103934665603u;
	while (n--)
		h = (h ^ *p++) * 1099511628211u;
	return h;
}

static struct info *lookup(struct table *t, const struct accel_onnx_pb *name, int add)
{
	size_t n = (size_t)(name->end - name->p);
	if (!t->cap)
		return NULL;
	for (size_t i = hash(name->p, n) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		struct info *x = &t->v[i];
		if (!x->name) {
			if (!add || t->n * 2 >= t->cap)
				return NULL;
			t->n++;
			x->name = name->p;
			x->len = n;
			x->rank = -1;
			x->dim0 = -1;
			return x;
		}
		if (x->len == n && !memcmp(x->name, name->p, n))
			return x;
	}
}

/* A TensorProto (an initializer, or a Constant's value kept under the
 * name given) into the table. */
static int read_tensor(struct accel_onnx_pb b, struct table *t, const struct accel_onnx_pb *name_given)
{
	struct onnx_tensor tp;
	if (onnx_tensor_read(b, &tp) < 0)
		return -1;
	if (!name_given && !tp.name.p)
		return 0;
	struct info *x = lookup(t, name_given ? name_given : &tp.name, 1);
	if (!x)
		return -1;
	x->rank = tp.rank;
	x->is_const = 1;
	x->dim0 = tp.dim0;
	x->nvals = 0;
	if ((tp.data_type != 6 && tp.data_type != 7) || tp.count > MAX_VALS || tp.count == 0)
		return 0;
	int count = (int)tp.count, got = 0, wide = tp.data_type == 7;
	long at = vals_room(t, (size_t)count);
	if (at < 0)
		return -1;
	int64_t *out = t->vals + at;
	if (tp.raw.p && (size_t)(tp.raw.end - tp.raw.p) == (size_t)count * (wide ? 8 : 4)) {
		for (int i = 0; i < count; i++) {
			int32_t e32;
			if (wide) {
				memcpy(&out[got++], tp.raw.p + 8 * i, 8);
			} else {
				memcpy(&e32, tp.raw.p + 4 * i, 4);
				out[got++] = e32;
			}
		}
	} else if (tp.ints.p && tp.ints_field == (wide ? 7 : 5)) {
		uint64_t v;
		while (tp.ints.p < tp.ints.end && got < count) {
			if (accel_onnx_pb_varint(&tp.ints, &v) < 0)
				return -1;
			out[got++] = wide ? (int64_t)v : (int64_t)(int32_t)v;
		}
		if (tp.ints.p != tp.ints.end)
			got = 0;
	}
	if (got == count) {
		x->nvals = got;
		x->at = (size_t)at;
	}
	return 0;
}

/* A ValueInfoProto's rank, when it declares a tensor's shape. */
static int read_value_info(struct accel_onnx_pb b, struct table *t)
{
	struct onnx_value_info vi;
	if (onnx_value_info_read(b, &vi) < 0)
		return -1;
	if (!vi.name.p)
		return 0;
	struct info *x = lookup(t, &vi.name, 1);
	if (!x)
		return -1;
	if (vi.rank >= 0 && !x->is_const)
		x->rank = vi.rank;
	return 0;
}

/* ------------------------------------------------------------ one node */

struct node {
	struct accel_onnx_pb op, domain, name;
	struct accel_onnx_pb in[8], out[4];
	int nin, nout, more_in;
	/* Attributes read: */
	int has_axis, has_axes, has_perm, subgraph;
	int64_t axis, training, keepdims, noop_empty, trans_a, layout;
	int naxes, nperm;
	int64_t axes[MAX_VALS], perm[MAX_VALS];
};

static void read_ints(struct accel_onnx_pb s, int wt, uint64_t v, int64_t *a, int *n)
{
	if (wt == 0) {
		if (*n < MAX_VALS)
			a[(*n)++] = (int64_t)v;
		return;
	}
	while (s.p < s.end && *n < MAX_VALS && accel_onnx_pb_varint(&s, &v) == 0)
		a[(*n)++] = (int64_t)v;
}

static int read_attribute(struct accel_onnx_pb b, struct node *n, struct table *t)
{
	uint32_t f;
	int wt, r;
	uint64_t v, i = 0;
	struct accel_onnx_pb s, name = { NULL, NULL }, ints[MAX_VALS], tensor = { NULL, NULL };
	int nints = 0, ints_wt[MAX_VALS], has_i = 0;
	uint64_t ints_v[MAX_VALS];
	while ((r = accel_onnx_pb_next(&b, &f, &wt, &v, &s)) > 0) {
		if (f == 1 && wt == 2) {
			name = s;
		} else if (f == 3 && wt == 0) {
			i = v;
			has_i = 1;
		} else if (f == 5 && wt == 2) {
			tensor = s;
		} else if ((f == 6 || f == 11) && wt == 2) {
			n->subgraph = 1;
		} else if (f == 8 && (wt == 0 || wt == 2) && nints < MAX_VALS) {
			ints[nints] = s;
			ints_wt[nints] = wt;
			ints_v[nints++] = v;
		}
	}
	if (r < 0 || !name.p)
		return r < 0 ? -1 : 0;
	int64_t *list = NULL;
	int *count = NULL;
	if (str_is(&name, "axes")) {
		list = n->axes;
		count = &n->naxes;
		n->has_axes = 1;
	} else if (str_is(&name, "perm")) {
		list = n->perm;
		count = &n->nperm;
		n->has_perm = 1;
	}
	for (int k = 0; list && k < nints; k++)
		read_ints(ints[k], ints_wt[k], ints_v[k], list, count);
	if (has_i && str_is(&name, "axis")) {
		n->has_axis = 1;
		n->axis = (int64_t)i;
	}
	if (has_i && str_is(&name, "training_mode"))
		n->training = (int64_t)i;
	if (has_i && str_is(&name, "keepdims"))
		n->keepdims = (int64_t)i;
	if (has_i && str_is(&name, "noop_with_empty_axes"))
		n->noop_empty = (int64_t)i;
	if (has_i && str_is(&name, "transA"))
		n->trans_a = (int64_t)i;
	if (has_i && str_is(&name, "layout"))
		n->layout = (int64_t)i;
	/* Constant: its value, kept under the node's output name. */
	if (tensor.p && str_is(&name, "value") && n->nout == 1 && read_tensor(tensor, t, &n->out[0]) < 0)
		return -1;
	return 0;
}

static int read_node(struct accel_onnx_pb b, struct node *n, struct table *t)
{
	uint32_t f;
	int wt, r;
	uint64_t v;
	struct accel_onnx_pb s, attrs[64];
	int nattrs = 0, many_attrs = 0;
	memset(n, 0, sizeof *n);
	n->keepdims = 1;
	while ((r = accel_onnx_pb_next(&b, &f, &wt, &v, &s)) > 0) {
		if (f == 1 && wt == 2) {
			if (n->nin < 8)
				n->in[n->nin++] = s;
			else
				n->more_in = 1;
		} else if (f == 2 && wt == 2 && n->nout < 4) {
			n->out[n->nout++] = s;
		} else if (f == 3 && wt == 2) {
			n->name = s;
		} else if (f == 4 && wt == 2) {
			n->op = s;
		} else if (f == 7 && wt == 2) {
			n->domain = s;
		} else if (f == 5 && wt == 2) {
			if (nattrs < 64)
				attrs[nattrs++] = s;
			else
				many_attrs = 1;
		}
	}
	if (r < 0 || many_attrs)
		return -1;
	/* Outputs first: a Constant's value is stored under its output. */
	for (int k = 0; k < nattrs; k++)
		if (read_attribute(attrs[k], n, t) < 0)
			return -1;
	return 0;
}

static int in_list(const struct accel_onnx_pb *op, const char *const *list)
{
	for (; *list; list++)
		if (str_is(op, *list))
			return 1;
	return 0;
}

/* Operators that work element by element: axis 0 stays each item's. */
static const char *const unary[] = {
	"Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Cast", "Ceil", "Celu", "Cos", "Cosh", "Elu", "Erf",
	"Exp", "Floor", "Gelu", "HardSigmoid", "HardSwish", "Identity", "IsInf", "IsNaN", "LeakyRelu", "Log", "Mish",
	"Neg", "Not", "Reciprocal", "Relu", "Round", "Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Softplus",
	"Softsign", "Sqrt", "Tan", "Tanh", "ThresholdedRelu", "BitwiseNot", "Dropout", "Clip", NULL,
};
/* Element by element over inputs that broadcast (numpy's rules). */
static const char *const nary[] = {
	"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "And", "Or", "Xor", "Equal", "Greater",
	"GreaterOrEqual", "Less", "LessOrEqual", "Where", "PRelu", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
	"CastLike", NULL,
};
/* Each item on its own (axis 0 is N of NCHW or of (N, ...)). */
static const char *const per_item[] = {
	"Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool",
	"GlobalLpPool", "InstanceNormalization", "LRN", "DepthToSpace", "SpaceToDepth", "GroupNormalization",
	"BatchNormalization", NULL,
};
static const char *const reduce[] = {
	"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
	"ReduceLogSumExp", "ReduceSumSquare", NULL,
};

/* Whether axis a (counting from the end when negative) of a rank-r value
 * is axis 0: 1, 0, or -1 when r is needed and unknown. */
static int is_axis0(int64_t a, int r)
{
	if (a >= 0)
		return a == 0;
	return r < 0 ? -1 : a + r == 0;
}

struct check {
	struct table t;
	int opset;                /* of the default domain */
	char *why;
	size_t len;
};

static int no(struct check *c, const struct node *n, const char *what)
{
	int nl = (int)(n->name.end - n->name.p), ol = (int)(n->op.end - n->op.p);
	if (nl)
		snprintf(c->why, c->len, "its node '%.*s' (%.*s) %s", nl, n->name.p, ol, n->op.p, what);
	else
		snprintf(c->why, c->len, "its %.*s node %s", ol, n->op.p, what);
	/* Names from the file: one line, whatever they hold. */
	for (char *p = c->why; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return 1;
}

static struct info *in_info(struct check *c, const struct node *n, int k)
{
	return k < n->nin && n->in[k].end > n->in[k].p ? lookup(&c->t, &n->in[k], 0) : NULL;
}

static int in_rank(struct check *c, const struct node *n, int k)
{
	struct info *x = in_info(c, n, k);
	return x ? x->rank : -1;
}

static int in_const(struct check *c, const struct node *n, int k)
{
	struct info *x = in_info(c, n, k);
	return x && x->is_const;
}

/* The ints of constant input k (an axes, perm or shape input): their count,
 * or -1 when it is not a constant of known values. An empty one has no
 * room in the table (which may not be allocated): *vals is then `none`. */
static int in_ints(struct check *c, const struct node *n, int k, const int64_t **vals)
{
	static const int64_t none[1];
	struct info *x = in_info(c, n, k);
	if (!x || !x->is_const || (x->nvals == 0 && x->dim0 != 0))
		return -1;
	*vals = x->nvals ? c->t.vals + x->at : none;
	return x->nvals;
}

/* Whether an axis list (from `axes` or an input) holds axis 0 of rank r:
 * 1, 0, -1 unknown. */
static int axes_hold0(const int64_t *a, int n, int r)
{
	int unknown = 0;
	for (int i = 0; i < n; i++) {
		int z = is_axis0(a[i], r);
		if (z == 1)
			return 1;
		unknown |= z < 0;
	}
	return unknown ? -1 : 0;
}

/* The rank of the node's first output, where the operator says. */
static int out_rank(struct check *c, const struct node *n, int r0)
{
	const struct accel_onnx_pb *op = &n->op;
	if (in_list(op, unary) || in_list(op, per_item) || str_is(op, "Softmax") || str_is(op, "LogSoftmax") ||
	    str_is(op, "Hardmax") || str_is(op, "CumSum") || str_is(op, "Transpose") || str_is(op, "Concat") ||
	    str_is(op, "LayerNormalization") || str_is(op, "Split") || str_is(op, "TopK"))
		return r0;
	if (in_list(op, nary)) {
		int r = -1;
		for (int k = 0; k < n->nin; k++) {
			int rk = in_rank(c, n, k);
			if (rk < 0)
				return -1;
			r = rk > r ? rk : r;
		}
		return r;
	}
	if (str_is(op, "MatMul")) {
		int r1 = in_rank(c, n, 1);
		return r0 >= 2 && r1 >= 2 ? (r0 > r1 ? r0 : r1) : -1;
	}
	if (str_is(op, "Gemm") || str_is(op, "Flatten"))
		return 2;
	if ((in_list(op, reduce) || str_is(op, "ArgMax") || str_is(op, "ArgMin")) && r0 >= 0)
		return n->keepdims ? r0 : -1;
	const int64_t *vals;
	int nv;
	if (str_is(op, "Reshape"))
		return in_ints(c, n, 1, &vals);
	if (str_is(op, "Unsqueeze") || str_is(op, "Squeeze")) {
		nv = n->has_axes ? n->naxes : in_ints(c, n, 1, &vals);
		return r0 < 0 || nv < 0 ? -1 : str_is(op, "Unsqueeze") ? r0 + nv : r0 - nv;
	}
	if (str_is(op, "Gather")) {
		int r1 = in_rank(c, n, 1);
		return r0 < 1 || r1 < 0 ? -1 : r0 - 1 + r1;
	}
	return -1;
}

/* Whether the node keeps items apart along axis 0: 0 yes, 1 no (why set). */
static int node_check(struct check *c, const struct node *n)
{
	const struct accel_onnx_pb *op = &n->op;
	int r0 = in_rank(c, n, 0), z;
	const int64_t *vals;
	int nv;
	if (n->domain.end > n->domain.p && !str_is(&n->domain, "ai.onnx"))
		return no(c, n, "is of another domain than ONNX's");
	if (n->subgraph)
		return no(c, n, "has a subgraph");
	if (n->more_in)
		return no(c, n, "has more inputs than the check reads");
	if (str_is(op, "Constant"))
		return 0;
	if (in_list(op, unary))
		return 0;
	if (in_list(op, nary)) {
		/* Constants may broadcast along the items' other axes only. */
		int rmax = -1, unknown = 0;
		for (int k = 0; k < n->nin; k++) {
			if (in_const(c, n, k))
				continue;
			int rk = in_rank(c, n, k);
			if (rk < 0 || (rmax >= 0 && rk != rmax))
				unknown = 1;
			rmax = rk > rmax ? rk : rmax;
		}
		if (unknown)
			return no(c, n, "mixes values whose ranks are not known to be equal");
		/* A constant of the items' rank with a first dim over 1, or of
		 * more dims, would spread along axis 0 or move it. */
		for (int k = 0; rmax >= 0 && k < n->nin; k++) {
			struct info *x = in_info(c, n, k);
			if (x && x->is_const && (x->rank > rmax || (x->rank == rmax && x->dim0 != 1)))
				return no(c, n, "broadcasts a constant along axis 0");
		}
		return 0;
	}
	if (in_list(op, per_item)) {
		if (str_is(op, "BatchNormalization") && n->training)
			return no(c, n, "runs in training mode (statistics over the batch)");
		if (str_is(op, "MaxPool") && n->nout > 1)
			return no(c, n, "gives indices counted over the whole batch");
		return 0;
	}
	if (str_is(op, "MatMul")) {
		int r1 = in_rank(c, n, 1);
		/* Items times a matrix, or batched products of equal ranks. */
		if (in_const(c, n, 0) || r0 < 2 || (!in_const(c, n, 1) && (r1 != r0 || r0 < 3)) ||
		    (in_const(c, n, 1) && r1 > 2))
			return no(c, n, "may multiply along axis 0");
		return 0;
	}
	if (str_is(op, "Gemm")) {
		struct info *bias = in_info(c, n, 2);
		if (n->trans_a || in_const(c, n, 0) || !in_const(c, n, 1) ||
		    (n->nin > 2 && (!bias || !bias->is_const || (bias->rank == 2 && bias->dim0 != 1))))
			return no(c, n, "may multiply along axis 0");
		return 0;
	}
	if (str_is(op, "Softmax") || str_is(op, "LogSoftmax") || str_is(op, "Hardmax")) {
		/* Before opset 13: over all axes from `axis` (default 1). */
		int64_t a = n->has_axis ? n->axis : c->opset >= 13 ? -1 : 1;
		z = is_axis0(a, r0);
		if (z != 0)
			return no(c, n, z > 0 ? "runs along axis 0" : "runs along an axis of unknown rank");
		return 0;
	}
	if (str_is(op, "LayerNormalization") || str_is(op, "ArgMax") || str_is(op, "ArgMin") ||
	    str_is(op, "Concat") || str_is(op, "Split") || str_is(op, "Flatten") || str_is(op, "TopK")) {
		int64_t a = n->has_axis ? n->axis : str_is(op, "LayerNormalization") || str_is(op, "TopK") ? -1 :
			    str_is(op, "Flatten") ? 1 : 0;
		if (str_is(op, "Flatten") && a != 1 && !(a < 0 && r0 >= 0 && a + r0 == 1))
			return no(c, n, "does not keep axis 0 as it is");
		z = is_axis0(a, r0);
		if (z != 0)
			return no(c, n, z > 0 ? "runs along axis 0" : "runs along an axis of unknown rank");
		if (str_is(op, "Concat"))
			for (int k = 0; k < n->nin; k++)
				if (in_const(c, n, k))
					return no(c, n, "joins a constant to the items");
		return 0;
	}
	if (in_list(op, reduce)) {
		/* Axes from the attribute, or (opset 18, ReduceSum 13) an input. */
		int64_t axes[MAX_VALS];
		int na = n->naxes;
		memcpy(axes, n->axes, sizeof axes);
		if (!n->has_axes && n->nin > 1) {
			if ((nv = in_ints(c, n, 1, &vals)) < 0)
				return no(c, n, "has axes that are not constant");
			na = nv;
			memcpy(axes, vals, (size_t)nv * sizeof *vals);
		}
		if (na == 0)
			return n->noop_empty ? 0 : no(c, n, "runs over every axis, axis 0 too");
		z = axes_hold0(axes, na, r0);
		if (z != 0)
			return no(c, n, z > 0 ? "runs along axis 0" : "runs along an axis of unknown rank");
		return 0;
	}
	if (str_is(op, "CumSum")) {
		if ((nv = in_ints(c, n, 1, &vals)) != 1)
			return no(c, n, "has an axis that is not constant");
		z = is_axis0(vals[0], r0);
		if (z != 0)
			return no(c, n, z > 0 ? "runs along axis 0" : "runs along an axis of unknown rank");
		return 0;
	}
	if (str_is(op, "Transpose")) {
		if (!n->has_perm || n->nperm < 1 || n->perm[0] != 0)
			return no(c, n, "moves axis 0");
		return 0;
	}
	if (str_is(op, "Unsqueeze") || str_is(op, "Squeeze")) {
		const int64_t *a = n->axes;
		int na = n->naxes;
		if (!n->has_axes && (na = in_ints(c, n, 1, &a)) < 0)
			return no(c, n, "has axes that are not constant");
		/* Unsqueeze's axes count in the output's rank. */
		int r = str_is(op, "Unsqueeze") && r0 >= 0 ? r0 + na : r0;
		z = na ? axes_hold0(a, na, r) : 1;
		if (z != 0)
			return no(c, n, z > 0 ? "changes axis 0" : "changes an axis of unknown rank");
		return 0;
	}
	if (str_is(op, "Gather")) {
		int64_t a = n->has_axis ? n->axis : 0;
		/* A table looked up by the items (an embedding), or the items'
		 * values picked along another axis by constant indices. */
		if (in_const(c, n, 0) && !in_const(c, n, 1) && a == 0)
			return 0;
		z = is_axis0(a, r0);
		if (z != 0 || !in_const(c, n, 1))
			return no(c, n, z != 0 ? "picks along axis 0" : "picks by indices from the items");
		return 0;
	}
	if (str_is(op, "Reshape")) {
		if ((nv = in_ints(c, n, 1, &vals)) < 1 || vals[0] != 0)
			return no(c, n, "does not keep axis 0 as it is (its shape does not begin with 0)");
		return 0;
	}
	if (str_is(op, "LSTM") || str_is(op, "GRU") || str_is(op, "RNN")) {
		if (n->layout != 1)
			return no(c, n, "has its batch on axis 1 (layout 0)");
		return 0;
	}
	return no(c, n, "is not known to keep the items of a batch apart");
}

static int walk(struct check *c, struct accel_onnx_pb g)
{
	uint32_t f;
	int wt, r;
	uint64_t v;
	struct accel_onnx_pb s, gi = g;
	/* Declared ranks and constants first, then the nodes in order (a
	 * graph's nodes are sorted: inputs before use). */
	while ((r = accel_onnx_pb_next(&gi, &f, &wt, &v, &s)) > 0) {
		if (f == 5 && wt == 2 && read_tensor(s, &c->t, NULL) < 0)
			return -1;
		if ((f == 11 || f == 12 || f == 13) && wt == 2 && read_value_info(s, &c->t) < 0)
			return -1;
	}
	if (r < 0)
		return -1;
	gi = g;
	struct node n;
	while ((r = accel_onnx_pb_next(&gi, &f, &wt, &v, &s)) > 0) {
		if (f != 1 || wt != 2)
			continue;
		if (read_node(s, &n, &c->t) < 0)
			return -1;
		if (node_check(c, &n))
			return 1;
		/* What the node's outputs are known to be. */
		int rk = out_rank(c, &n, in_rank(c, &n, 0));
		for (int k = 0; k < n.nout && rk >= 0; k++) {
			struct info *x = lookup(&c->t, &n.out[k], 1);
			if (!x)
				return -1;
			if (x->rank < 0 && !x->is_const)
				x->rank = rk;
		}
	}
	return r < 0 ? -1 : 0;
}

int accel_onnx_batch_check_mem(const uint8_t *buf, size_t size, const char *name, char *why, size_t len)
{
	struct accel_onnx_pb g, s;
	uint32_t f;
	int wt;
	uint64_t v;
	struct check c = { .why = why, .len = len };
	if (onnx_model_read(buf, size, &g, &c.opset) < 0 || !g.p) {
		snprintf(why, len, "%s is not an ONNX model the batch check can read", name);
		return ACCEL_EDATA;
	}
	/* Room for every name the graph defines: initializers, declared
	 * values, node outputs (at most 4 kept per node). */
	size_t names = 0, cap = 64;
	struct accel_onnx_pb gi = g;
	while (accel_onnx_pb_next(&gi, &f, &wt, &v, &s) > 0)
		names += f == 1 ? 4 : f == 5 || f == 11 || f == 12 || f == 13;
	while (cap < names * 2 + 16)
		cap *= 2;
	c.t.cap = cap;
	c.t.v = calloc(cap, sizeof *c.t.v);
	int rc = c.t.v ? walk(&c, g) : ACCEL_ENOMEM;
	if (rc == -1) {
		snprintf(why, len, "%s: the batch check cannot read its graph", name);
		rc = ACCEL_EDATA;
	} else if (rc == ACCEL_ENOMEM) {
		snprintf(why, len, "%s: out of memory", name);
	}
	free(c.t.v);
	free(c.t.vals);
	return rc;
}

int accel_onnx_batch_check(const char *path, char *why, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size <= 0) {
		snprintf(why, len, "cannot read %s: %s", path, fd < 0 || st.st_size ? strerror(errno) : "empty");
		if (fd >= 0)
			close(fd);
		return ACCEL_EIO;
	}
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		snprintf(why, len, "cannot map %s: %s", path, strerror(errno));
		return ACCEL_EIO;
	}
	int rc = accel_onnx_batch_check_mem(map, (size_t)st.st_size, path, why, len);
	munmap(map, (size_t)st.st_size);
	return rc;
}
