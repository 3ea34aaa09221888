/*
 * opencv.c - the opencv backend: ONNX models run through OpenCV DNN
 * (Debian libopencv-dnn-dev), the engine used where ONNX Runtime is absent
 * or cannot run a model. Engines: opencv:cpu0 (DNN_BACKEND_OPENCV on
 * DNN_TARGET_CPU) and opencv.opencl:DEVICE (DNN_TARGET_OPENCL) on each
 * OpenCL device OpenCV reaches. OpenCL on a CPU device (PoCL) is far slower
 * than the CPU path: that device is software, so the router never prefers
 * it under auto; it runs when named with --backend.
 *
 * OpenCV's C++ stays in dnn.cpp behind dnn.h, built into the companion
 * opencv/dnn.so that the probe loads: the plugin itself links no OpenCV.
 * OpenCV DNN computes in float32: a model whose inputs or outputs are of another type is refused
 * with that reason (ONNX Runtime runs it). OpenCV cannot list a model's
 * inputs: libaccel reads them (accel_onnx_io_parse) from the file for onnx.info and for naming
 * the inputs of a run.
 *
 * Operations: onnx.run and onnx.info (struct accel_onnx_params, accel.h).
 * verify() has OpenCV read the model in a child process, where the engine
 * is used (the route's leader, a named engine, a fallback the stream turns
 * to), so a model OpenCV cannot load, or on which it crashes, is a reason
 * and the next engine is tried; open() loads it in the process only after
 * that, the net kept for the next open(), close() gives it back
 * (backends/common/onnx_cache.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include <accel/cli.h>
#include <accel/ops/tensor.h>
#include <accel/ops/onnx.h>
#include <opencv2/core/version.hpp>
#include "../common/onnx_cache.h"
#include "dnn.h"

static const char *const ocv_ops[] = { "onnx.run", "onnx.info", NULL };

/* The largest model file read for its inputs and outputs. */
#define MODEL_MAX_BYTES (4ull << 30)

/* An engine: the CPU path, or the OpenCL target on one device, and its
 * models. */
struct ocv_engine {
	int opencl;
	struct ocv_cl_device cl;
	struct onnx_cache cache;   /* sessions: struct ocv_net, infos: struct accel_onnx_io */
};

struct ocv_ctx {
	struct ocv_engine *eng;
	struct onnx_model *m;
	const struct accel_onnx_io *io;   /* m's inputs and outputs, as the file declares them */
	struct ocv_net *net;
	int info;
	int nout;
	const char *out_names[ACCEL_ONNX_MAX_IO];
	int out_idx[ACCEL_ONNX_MAX_IO];
};

/* The companion (dnn.h's table): its path from the first probe, and the
 * table once loaded, which maps OpenCV, OpenCL's ICD loader and the X11
 * libraries OpenCV links (4 ms and 10 MB here). A probe that scans OpenCL
 * loads it; else it is loaded where an engine is used (verify, open), so
 * a process that runs ONNX Runtime with OpenCV as its fallback maps none
 * of it. Under load_lock. */
static char dnn_path[4096];
static const struct ocv_api *dnn;
static char dnn_why[200];      /* why it did not load */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init(void)
{
	dnn->init();
}

/* The companion loaded (once; a failure is kept): 0, or -1 with the
 * reason in why[len]. */
static int load_dnn(char *why, size_t len)
{
	pthread_mutex_lock(&load_lock);
	if (!dnn && !dnn_why[0]) {
		void *h = accel_companion_dlopen(dnn_path, dnn_why, sizeof dnn_why);
		const struct ocv_api *t = h ? dlsym(h, "ocv_api_dnn") : NULL;
		if (t && t->version == OCV_API_VERSION)
			dnn = t;
		else if (h) {
			snprintf(dnn_why, sizeof dnn_why, "opencv/dnn.so is of another build of this plugin (%s)",
				 t ? "its table's version differs" : "no table");
			dlclose(h);
		}
	}
	int loaded = dnn != NULL;
	if (!loaded)
		snprintf(why, len, "%s", dnn_why);
	pthread_mutex_unlock(&load_lock);
	if (loaded)
		pthread_once(&init_once, init);
	return loaded ? 0 : -1;
}

/* --dim NAME=N: the symbolic dims named take their value, in the shapes
 * onnx.info reports (as ONNX Runtime's free dimension overrides do). */
static void set_dims(struct accel_onnx_io *io, const struct accel_onnx_params *p)
{
	for (int o = 0; o < 2; o++)
		for (int i = 0; i < (o ? io->nout : io->nin); i++) {
			struct accel_onnx_value *x = o ? &io->out[i] : &io->in[i];
			for (int d = 0; d < x->ndim; d++)
				for (int k = 0; k < p->ndims; k++)
					if (x->dims[d] < 0 && x->sym[d][0] && !strcmp(x->sym[d], p->dim_names[k])) {
						x->dims[d] = p->dim_values[k];
						x->sym[d][0] = 0;
					}
		}
}

/* The inputs and outputs of the model file at path. */
static int read_io(const char *path, struct accel_onnx_io *io, char *reason, size_t len)
{
	struct accel_input in;
	if (accel_input_open(&in, path) < 0) {
		snprintf(reason, len, "cannot read the model: %s", strerror(errno));
		return ACCEL_EIO;
	}
	struct accel_buf b = { 0 };
	int rc = 0;
	for (;;) {
		if (b.len >= MODEL_MAX_BYTES) {
			snprintf(reason, len, "the model is over %llu bytes", MODEL_MAX_BYTES);
			rc = ACCEL_ENOTSUP;
			break;
		}
		if ((rc = accel_buf_reserve(&b, b.len + (1 << 20))) < 0) {
			snprintf(reason, len, "out of memory");
			break;
		}
		ssize_t n = accel_input_read(&in, b.data + b.len, b.cap - b.len);
		if (n < 0) {
			snprintf(reason, len, "cannot read the model: %s", strerror(errno));
			rc = ACCEL_EIO;
			break;
		}
		if (n == 0)
			break;
		b.len += (size_t)n;
	}
	accel_input_close(&in);
	char why[160];
	if (!rc && accel_onnx_io_parse(b.data, b.len, io, why, sizeof why) < 0) {
		snprintf(reason, len, "cannot load the model: %s", why);
		rc = ACCEL_ENOTSUP;
	}
	accel_buf_free(&b);
	return rc;
}

/* 0 when OpenCV DNN (float32 only) can run these inputs and outputs, else
 * ACCEL_ENOTSUP with the reason in reason[len]. */
static int check_types(const struct accel_onnx_io *io, char *reason, size_t len)
{
	for (int o = 0; o < 2; o++)
		for (int i = 0; i < (o ? io->nout : io->nin); i++) {
			const struct accel_onnx_value *x = o ? &io->out[i] : &io->in[i];
			if (x->elem_type != 1) {
				snprintf(reason, len, "OpenCV DNN runs float32 tensors only: %s '%.60s' is %s",
					 o ? "output" : "input", x->name,
					 x->elem_type ? "of another type (ONNX type " : "not a tensor");
				if (x->elem_type) {
					size_t k = strlen(reason);
					snprintf(reason + k, len - k, "%d)", x->elem_type);
				}
				return ACCEL_ENOTSUP;
			}
			if (x->ndim > OCV_MAX_DIMS) {
				snprintf(reason, len, "%s '%.60s' has over %d dims", o ? "output" : "input", x->name,
					 OCV_MAX_DIMS);
				return ACCEL_ENOTSUP;
			}
		}
	return 0;
}

static void free_net(void *session)
{
	dnn->net_free(session);
}

/* The cache's loader: p->model as a net for the engine and, on the first
 * load, the inputs and outputs the file declares (which OpenCV must be
 * able to run). */
static int load_model(void *owner, const struct accel_onnx_params *p, void **session, void **info, char *reason,
		      size_t len)
{
	struct ocv_engine *eng = owner;
	struct accel_onnx_io *io = NULL;
	if (info) {
		int rc = ACCEL_ENOMEM;
		if (!(io = calloc(1, sizeof *io)))
			snprintf(reason, len, "out of memory");
		else if ((rc = read_io(p->model, io, reason, len)) == 0)
			set_dims(io, p);
		if (rc == 0)
			rc = check_types(io, reason, len);
		if (rc < 0) {
			free(io);
			return rc;
		}
	}
	char why[200];
	struct ocv_net *n = dnn->net_load(p->model, eng->opencl ? &eng->cl : NULL, p->intra_threads, why, sizeof why);
	if (!n) {
		accel_text_sanitize(why);
		snprintf(reason, len, "OpenCV %s cannot load the model: %.190s", CV_VERSION, why);
		free(io);
		return ACCEL_ENOTSUP;
	}
	*session = n;
	if (info)
		*info = io;
	return 0;
}

static const struct onnx_loader ocv_loader = { load_model, free_net, free, 0 };

/* A new engine, on the CPU path (cl NULL) or the OpenCL target of cl;
 * NULL: out of memory. */
static struct ocv_engine *new_engine(const struct ocv_cl_device *cl)
{
	struct ocv_engine *eng = calloc(1, sizeof *eng);
	if (!eng)
		return NULL;
	eng->opencl = cl != NULL;
	if (cl)
		eng->cl = *cl;
	onnx_cache_init(&eng->cache, &ocv_loader, eng);
	return eng;
}

/* Free an engine: its models and their idle nets. */
static void free_engine(struct ocv_engine *eng)
{
	onnx_cache_free(&eng->cache);
	free(eng);
}

static void ocv_release(const struct accel_engine *e)
{
	free_engine(e->data);
}

/* The OpenCL scan, run in a child process (a driver may hang or abort):
 * the devices are plain data, and OpenCL starts in this process only when
 * an engine of them loads a model. */
struct cl_scan {
	int n;
	struct ocv_cl_device d[OCV_MAX_CL];
};

static int cl_scan(void *arg)
{
	struct cl_scan *s = arg;
	s->n = dnn->cl_devices(s->d, OCV_MAX_CL);
	return 0;
}

/* The device the opencl backend (or another) added for OpenCL device d:
 * one with the opencl API, the same model and platform. -1 when none. */
static int find_device(struct accel_probe *p, const struct ocv_cl_device *cl)
{
	const struct accel_device *d;
	for (int i = 0; (d = accel_probe_device(p, i)) != NULL; i++)
		for (int a = 0; a < d->napis; a++)
			if (!strcmp(d->apis[a].name, "opencl") && !strcmp(d->model, cl->name) &&
			    (!strcmp(d->driver, cl->platform_name) || d->pci_address[0]))
				return i;
	return -1;
}

static void add_cl_engines(struct accel_probe *p)
{
	if (accel_probe_sysroot(p)[0]) {
		accel_probe_note(p, "opencv: no OpenCL engines: ACCEL_SYSROOT is set");
		return;
	}
	if (!accel_probe_software_devices(p)) {
		accel_probe_note(p, "opencv: OpenCL not scanned: no GPU or NPU on this machine, only software devices could be found (name opencv.opencl with --backend to use them)");
		return;
	}
	struct cl_scan *s = calloc(1, sizeof *s);
	if (!s)
		return;
	char why[96];
	int rc;
	if (accel_call_isolated("opencl", cl_scan, s, sizeof *s, &rc, why, sizeof why, NULL, 0) < 0) {
		accel_probe_note(p, "opencv: no OpenCL engines: the OpenCL driver %s in a child process", why);
		free(s);
		return;
	}
	if (s->n < 0)
		accel_probe_note(p, "opencv: no OpenCL engines: OpenCV finds no OpenCL platform");
	for (int j = 0; j < s->n; j++) {
		int i = find_device(p, &s->d[j]);
		if (i < 0) {
			struct accel_device d;
			memset(&d, 0, sizeof d);
			d.cls = ACCEL_CLASS_GPU;
			d.numa_node = -1;
			snprintf(d.vendor, sizeof d.vendor, "%s", s->d[j].vendor);
			snprintf(d.model, sizeof d.model, "%s", s->d[j].name);
			snprintf(d.driver, sizeof d.driver, "%s", s->d[j].platform_name);
			d.software = s->d[j].cpu;
			d.memory_bytes = s->d[j].memory;
			accel_device_add_api(&d, "opencl", 1, NULL);
			i = accel_probe_add_device(p, &d);
		}
		struct ocv_engine *eng = i >= 0 ? new_engine(&s->d[j]) : NULL;
		if (!eng)
			continue;
		if (accel_probe_add_engine_variant(p, i, "opencl", eng) < 0) {
			free_engine(eng);
			continue;
		}
		accel_probe_note(p, "opencv: OpenCL %s (%s)%s", s->d[j].name, s->d[j].platform_name,
				 s->d[j].cpu ? ", a CPU device: used only when named" : "");
	}
	free(s);
}

static int ocv_probe(struct accel_probe *p)
{
	char why[200] = "";
	pthread_mutex_lock(&load_lock);
	int found = dnn_path[0] || accel_probe_companion(p, "dnn.so", dnn_path, sizeof dnn_path, why, sizeof why) == 0;
	pthread_mutex_unlock(&load_lock);
	if (!found)
		return accel_probe_fail(p, "%s", why);
	/* Loaded now where OpenCL is scanned (a GPU may be here, opencv is
	 * named, an inventory); else where an engine is used. */
	int now = accel_probe_software_devices(p);
	if (now && load_dnn(why, sizeof why) < 0)
		return accel_probe_fail(p, "%s", why);
	accel_probe_note(p, "opencv: OpenCV %s DNN%s", CV_VERSION, now ? "" : " (loaded where an engine is used)");
	int cpu = accel_probe_cpu_device(p);
	if (cpu < 0)
		return accel_probe_fail(p, "no CPU device");
	struct ocv_engine *eng = new_engine(NULL);
	if (!eng)
		return accel_probe_fail(p, "out of memory");
	if (accel_probe_add_engine(p, cpu, eng) < 0) {
		free_engine(eng);
		return accel_probe_fail(p, "cannot add the CPU engine");
	}
	add_cl_engines(p);
	return 0;
}

static int ocv_supports(const struct accel_engine *e, const struct accel_op *op, double *prior_mbps, char *reason,
			size_t len)
{
	const struct accel_onnx_params *p = onnx_op_params(op, reason, len);
	if (!p)
		return ACCEL_ENOTSUP;
	/* OpenCV DNN takes each run's shapes as they come; --dim values only
	 * fix what onnx.info reports, within OpenCV's int dims. */
	for (int i = 0; i < p->ndims; i++)
		if (p->dim_values[i] <= 0 || p->dim_values[i] > INT32_MAX) {
			snprintf(reason, len, "--dim %s=%lld is out of OpenCV's range", p->dim_names[i],
				 (long long)p->dim_values[i]);
			return ACCEL_ENOTSUP;
		}
	struct ocv_engine *eng = e->data;
	/* Whether OpenCV can read the model is ocv_verify's question, asked
	 * where the engine is used. After ONNX Runtime's CPU provider (100):
	 * it is faster. */
	*prior_mbps = eng->opencl ? (e->software ? 5 : 300) : 40;
	snprintf(reason, len, "OpenCV %s DNN %s", CV_VERSION, eng->opencl ? "OpenCL target" : "CPU target");
	return 0;
}

/* The model read by OpenCV in a child first: its importer may crash on a
 * model it cannot read (a Gather along axis -1). That costs a load of the
 * whole model (35 ms for 0.6 MB, 70 ms for 10 MB), so the route asks it
 * only where OpenCV runs first or is named; behind ONNX Runtime, only if
 * the stream falls back to OpenCV. The answer is kept per model. */
static int ocv_verify(const struct accel_engine *e, const struct accel_op *op, char *reason, size_t len)
{
	const struct accel_onnx_params *p = onnx_op_params(op, reason, len);
	if (!p)
		return ACCEL_ENOTSUP;
	if (load_dnn(reason, len) < 0)
		return ACCEL_ENOTSUP;
	struct ocv_engine *eng = e->data;
	return onnx_cache_check_isolated(&eng->cache, p, "OpenCV", reason, len);
}

static void ocv_close(void *vctx)
{
	struct ocv_ctx *c = vctx;
	if (!c)
		return;
	onnx_cache_give(&c->eng->cache, c->m, c->net);
	free(c);
}

static int ocv_open(const struct accel_engine *e, const struct accel_op *op, void **vctx)
{
	*vctx = NULL;
	char why[80];
	const struct accel_onnx_params *p = onnx_op_params(op, why, sizeof why);
	if (!p)
		return ACCEL_ENOTSUP;
	struct ocv_ctx *c = calloc(1, sizeof *c);
	if (!c)
		return ACCEL_ENOMEM;
	c->eng = e->data;
	c->info = !strcmp(op->name, "onnx.info");
	void *net = NULL;
	/* Never loaded here before a child read it: the stream checks first
	 * (kept per model, so this costs a lookup); a caller that did not is
	 * refused the same way. */
	char reason[200];
	int rc = ocv_verify(e, op, reason, sizeof reason) < 0 ? ACCEL_ENOTSUP :
		 onnx_cache_take(&c->eng->cache, p, &c->m, &net);
	c->net = net;
	const struct accel_onnx_io *io = rc ? NULL : c->m->info;
	c->io = io;
	/* The outputs asked for; all when none is named (onnx.info describes
	 * the whole model, whatever is asked). */
	int asked = c->info ? 0 : p->noutputs;
	if (!rc) {
		c->nout = asked ? asked : io->nout;
		if (c->nout > ACCEL_ONNX_MAX_IO)
			rc = ACCEL_EINVAL;
	}
	for (int i = 0; !rc && i < c->nout; i++) {
		c->out_names[i] = asked ? p->outputs[i] : io->out[i].name;
		int k = 0;
		while (k < io->nout && strcmp(io->out[k].name, c->out_names[i]))
			k++;
		if (k == io->nout)
			rc = ACCEL_EINVAL;
		c->out_idx[i] = k;
	}
	if (rc) {
		ocv_close(c);
		return rc;
	}
	*vctx = c;
	return 0;
}

static cJSON *value_json(const struct accel_onnx_value *x)
{
	/* TensorProto.DataType (onnx.proto) to our dtypes. */
	static const enum accel_dtype types[] = {
		[1] = ACCEL_DTYPE_FLOAT32, [2] = ACCEL_DTYPE_UINT8, [3] = ACCEL_DTYPE_INT8, [4] = ACCEL_DTYPE_UINT16,
		[5] = ACCEL_DTYPE_INT16, [6] = ACCEL_DTYPE_INT32, [7] = ACCEL_DTYPE_INT64, [9] = ACCEL_DTYPE_BOOL,
		[10] = ACCEL_DTYPE_FLOAT16, [11] = ACCEL_DTYPE_FLOAT64, [12] = ACCEL_DTYPE_UINT32, [13] = ACCEL_DTYPE_UINT64,
	};
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", x->name);
	enum accel_dtype t = x->elem_type > 0 && x->elem_type < (int)(sizeof types / sizeof types[0]) ?
				     types[x->elem_type] : ACCEL_DTYPE_NONE;
	cJSON_AddStringToObject(o, "dtype", t != ACCEL_DTYPE_NONE ? accel_dtype_name(t) : "none");
	if (x->ndim < 0) {
		cJSON_AddNullToObject(o, "shape");
		return o;
	}
	cJSON *shape = cJSON_AddArrayToObject(o, "shape");
	for (int i = 0; i < x->ndim; i++) {
		if (x->dims[i] >= 0)
			cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)x->dims[i]));
		else if (x->sym[i][0])
			cJSON_AddItemToArray(shape, cJSON_CreateString(x->sym[i]));
		else
			cJSON_AddItemToArray(shape, cJSON_CreateNull());
	}
	return o;
}

static int run_info(struct ocv_ctx *c, struct accel_unit *u)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *ins = cJSON_AddArrayToObject(root, "inputs");
	cJSON *outs = cJSON_AddArrayToObject(root, "outputs");
	for (int i = 0; i < c->io->nin; i++)
		cJSON_AddItemToArray(ins, value_json(&c->io->in[i]));
	for (int i = 0; i < c->io->nout; i++)
		cJSON_AddItemToArray(outs, value_json(&c->io->out[i]));
	char *text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!text)
		return ACCEL_ENOMEM;
	size_t n = strlen(text);
	int rc = accel_buf_reserve(&u->out, n + 1);
	if (!rc) {
		memcpy(u->out.data, text, n);
		u->out.len = n;
	}
	free(text);
	return rc;
}

/* OpenCV's shape of an output as the model declares it: OpenCV keeps at
 * least 2 dims (a vector comes back as 1 x N). The declared rank wins when
 * the element count allows it, an unknown dim taking what is left. */
static void declared_shape(const struct accel_onnx_value *x, struct accel_tensor *t, uint64_t count)
{
	if (x->ndim < 0 || x->ndim == t->ndim || x->ndim > ACCEL_TENSOR_MAX_DIMS)
		return;
	uint64_t known = 1;
	int unknown = -1;
	for (int i = 0; i < x->ndim; i++) {
		if (x->dims[i] >= 0)
			known *= (uint64_t)x->dims[i];
		else if (unknown >= 0)
			return;
		else
			unknown = i;
	}
	if (unknown < 0 ? known != count : !known || count % known)
		return;
	for (int i = 0; i < x->ndim; i++)
		t->dims[i] = x->dims[i] >= 0 ? x->dims[i] : (int64_t)(count / known);
	t->ndim = x->ndim;
}

static int put_output(struct accel_unit *u, const struct accel_onnx_value *x, const struct ocv_tensor *o)
{
	struct accel_tensor t = { 0 };
	t.dtype = ACCEL_DTYPE_FLOAT32;
	t.ndim = o->ndim;
	uint64_t count = 1;
	for (int i = 0; i < o->ndim; i++) {
		t.dims[i] = o->dims[i];
		count *= (uint64_t)o->dims[i];
	}
	declared_shape(x, &t, count);
	uint64_t bytes = count * sizeof(float);
	if (accel_buf_reserve(&u->out, u->out.len + ACCEL_NPY_HEADER_MAX + (size_t)bytes) < 0)
		return ACCEL_ENOMEM;
	int h = accel_npy_header_write(&t, u->out.data + u->out.len, ACCEL_NPY_HEADER_MAX);
	if (h < 0)
		return ACCEL_EINVAL;
	u->out.len += (size_t)h;
	if (bytes)
		memcpy(u->out.data + u->out.len, o->data, (size_t)bytes);
	u->out.len += (size_t)bytes;
	return 0;
}

static int ocv_run(void *vctx, struct accel_unit *u, char *err, size_t len)
{
	struct ocv_ctx *c = vctx;
	if (c->info)
		return run_info(c, u);
	const struct accel_onnx_io *io = c->io;
	struct ocv_tensor in[ACCEL_ONNX_MAX_IO], out[ACCEL_ONNX_MAX_IO];
	const char *names[ACCEL_ONNX_MAX_IO];
	size_t off = 0;
	for (int i = 0; i < io->nin; i++) {
		struct accel_tensor t;
		size_t hlen;
		char why[200];
		names[i] = io->in[i].name;
		int r = accel_npy_header_parse(u->in.data + off, u->in.len - off, u->in.len - off, &t, &hlen, why, sizeof why);
		uint64_t bytes = 0;
		if (r == 0)
			accel_tensor_size(&t, 0, NULL, &bytes);
		if (r != 0 || bytes > u->in.len - off - hlen) {
			snprintf(err, len, "input '%s': %s", names[i], r < 0 ? why : "truncated");
			return ACCEL_EDATA;
		}
		if (t.dtype != ACCEL_DTYPE_FLOAT32 || t.ndim > OCV_MAX_DIMS) {
			snprintf(err, len, "input '%s': OpenCV DNN takes float32 tensors of at most %d dims, not %s",
				 names[i], OCV_MAX_DIMS, accel_dtype_name(t.dtype));
			return ACCEL_EDATA;
		}
		in[i].ndim = t.ndim;
		for (int k = 0; k < t.ndim; k++) {
			if (t.dims[k] > INT32_MAX) {
				snprintf(err, len, "input '%s': dim %d is over OpenCV's range", names[i], k);
				return ACCEL_EDATA;
			}
			in[i].dims[k] = t.dims[k];
		}
		in[i].data = (float *)(u->in.data + off + hlen);
		off += hlen + (size_t)bytes;
	}
	int rc = 0;
	if (dnn->net_run(c->net, io->nin, names, in, c->nout, c->out_names, out, err, len) < 0) {
		accel_text_sanitize(err);
		rc = ACCEL_EDEVICE;
	}
	for (int i = 0; !rc && i < c->nout; i++)
		rc = put_output(u, &io->out[c->out_idx[i]], &out[i]);
	for (int i = 0; i < c->nout; i++)
		free(out[i].data);
	return rc;
}

static const struct accel_api_info ocv_apis[] = {
	{ "opencl", ACCEL_API_COMPUTE },
	{ NULL, 0 },
};

ACCEL_PLUGIN_EXPORT const struct accel_backend accel_backend_opencv = {
	.abi = ACCEL_BACKEND_ABI,
	.name = "opencv",
	.description = "OpenCV DNN: ONNX models (float32) on its CPU path and its OpenCL target",
	.ops = ocv_ops,
	.probe = ocv_probe,
	.supports = ocv_supports,
	.verify = ocv_verify,
	.open = ocv_open,
	.run = ocv_run,
	.close = ocv_close,
	/* Its CPU engine is on the cpu backend's device; its OpenCL devices
	 * it finds when an operation it offers is routed. */
	.classes = 0,
	/* After the opencl backend (30), whose devices it joins. */
	.priority = 65,
	.apis = ocv_apis,
	.release = ocv_release,
};
