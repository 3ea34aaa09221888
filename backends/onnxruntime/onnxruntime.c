/*
 * onnxruntime.c - the onnxruntime backend: ONNX models run through ONNX
 * Runtime's C API (OrtGetApiBase). libonnxruntime.so.1 is dlopen'ed at probe
 * time, so programs run (and say why) without it. Each execution provider it
 * offers is an engine variant: onnxruntime.cpu:cpu0 always, and
 * onnxruntime.cuda:gpuN / onnxruntime.tensorrt:gpuN when the library lists
 * the provider, its provider library loads and the CUDA driver names GPUs.
 *
 * Operations: onnx.run and onnx.info (struct accel_onnx_params, accel.h).
 * supports() loads the model into a session, so an engine that cannot load
 * it is left out with ONNX Runtime's reason; the session is kept and handed
 * to open(), and close() gives it back (backends/common/onnx_cache.h), so a
 * model is loaded once per engine however many routes and runs ask for it.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include <onnxruntime_c_api.h>
#include <accel/cli.h>
#include <accel/ops/tensor.h>
#include "../common/cuda_driver.h"
#include "../common/onnx_cache.h"

/* The backend's name; the tests build it a second time as "ortwin". */
#ifndef ORT_BACKEND
#define ORT_BACKEND onnxruntime
#endif
#define ORT_CAT2(a, b) a##b
#define ORT_CAT(a, b) ORT_CAT2(a, b)
#define ORT_STR2(a) #a
#define ORT_STR(a) ORT_STR2(a)

static const char *const ort_ops[] = { "onnx.run", "onnx.info", NULL };

/* The library, loaded once per process; its environment is created only
 * when a model is first loaded (probing creates none). */
static struct {
	pthread_once_t once, env_once;
	void *handle;
	const OrtApi *api;
	OrtEnv *env;
	char path[512];
	char version[32];
	char reason[768];
	char env_reason[240];
} lib = { .once = PTHREAD_ONCE_INIT, .env_once = PTHREAD_ONCE_INIT };

/* What the cache keeps of a model: the names of its inputs and outputs. */
struct ort_io {
	size_t nin, nout;
	char **in_names, **out_names;
};

/* An engine: one execution provider on one device, and its models. */
struct ort_engine {
	const char *provider;      /* "CPUExecutionProvider" ... */
	int device_id;             /* CUDA ordinal, 0 for the CPU */
	struct onnx_cache cache;   /* sessions: OrtSession, infos: struct ort_io */
};

/* What one open() holds: a session and the outputs asked for. */
struct ort_ctx {
	struct ort_engine *eng;
	struct onnx_model *m;
	const struct ort_io *io;   /* m's */
	OrtSession *session;
	OrtMemoryInfo *mem;
	int info;                  /* onnx.info */
	size_t nout;
	const char **out_names;
};

static void load_lib(void)
{
	/* The library's telemetry (the 1DS SDK of its builds) opens
	 * /tmp/mat-debug-PID.log and /tmp/.ses, following links, and a cache
	 * under $HOME in every process that creates an environment, unless
	 * this is set when the environment is created. Set here, in the
	 * probe, under the context's lock: no other probe (the threads that
	 * call into drivers) reads the environment meanwhile. */
	const char *off = getenv("ORT_DISABLE_TELEMETRY");
	if (!off || strcmp(off, "1"))
		setenv("ORT_DISABLE_TELEMETRY", "1", 1);
	/* By name, the plugin's RUNPATH (backend.mk) is searched before the
	 * standard places: the ONNX Runtime it was built against. */
	const char *env = getenv("ACCEL_ONNXRUNTIME_LIB");
	const char *name = env && *env ? env : "libonnxruntime.so.1";
	char first[200] = "";
	lib.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!lib.handle)
		snprintf(first, sizeof first, "%s", dlerror());
	struct link_map *map = NULL;
	if (lib.handle && !dlinfo(lib.handle, RTLD_DI_LINKMAP, &map) && map && map->l_name[0])
		name = map->l_name;
	snprintf(lib.path, sizeof lib.path, "%s", name);
	if (!lib.handle) {
		char limit[80] = "";
		if (!strstr(first, "No such file or directory"))
			accel_address_limit(limit, sizeof limit);
		snprintf(lib.reason, sizeof lib.reason, "cannot load libonnxruntime.so.1: %s%s", first, limit);
		return;
	}
	const OrtApiBase *(*get_base)(void) = (const OrtApiBase *(*)(void))dlsym(lib.handle, "OrtGetApiBase");
	const OrtApiBase *base = get_base ? get_base() : NULL;
	if (!base) {
		snprintf(lib.reason, sizeof lib.reason, "%s has no OrtGetApiBase", lib.path);
		return;
	}
	snprintf(lib.version, sizeof lib.version, "%s", base->GetVersionString());
	/* The plugin was built against ORT_API_VERSION; a library that offers
	 * less returns NULL (and prints nothing: stderr stays ours). */
	lib.api = base->GetApi(ORT_API_VERSION);
	if (!lib.api) {
		snprintf(lib.reason, sizeof lib.reason,
			 "%s is ONNX Runtime %s, which does not offer API version %d (this plugin was built for it)",
			 lib.path, lib.version, ORT_API_VERSION);
		return;
	}
}

/* The environment, created when the first model is loaded. */
static void create_env(void)
{
	OrtStatus *st = lib.api->CreateEnv(ORT_LOGGING_LEVEL_FATAL, "accel", &lib.env);
	if (!st)
		st = lib.api->DisableTelemetryEvents(lib.env);
	if (st) {
		snprintf(lib.env_reason, sizeof lib.env_reason, "CreateEnv: %.200s", lib.api->GetErrorMessage(st));
		lib.api->ReleaseStatus(st);
		accel_text_sanitize(lib.env_reason);
	}
}

/* ONNX Runtime's message of a failed status (one line, sanitised), which
 * it releases. Returns the status's code. */
static int status_msg(OrtStatus *st, char *buf, size_t len)
{
	int code = (int)lib.api->GetErrorCode(st);
	snprintf(buf, len, "%s", lib.api->GetErrorMessage(st));
	lib.api->ReleaseStatus(st);
	for (char *c = buf; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	accel_text_sanitize(buf);
	return code;
}

static enum accel_dtype from_ort(ONNXTensorElementDataType t)
{
	switch (t) {
	case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return ACCEL_DTYPE_FLOAT32;
	case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: return ACCEL_DTYPE_FLOAT64;
	case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: return ACCEL_DTYPE_FLOAT16;
	case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8: return ACCEL_DTYPE_INT8;
	case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8: return ACCEL_DTYPE_UINT8;
	case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16: return ACCEL_DTYPE_INT16;
	case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16: return ACCEL_DTYPE_UINT16;
	case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: return ACCEL_DTYPE_INT32;
	case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32: return ACCEL_DTYPE_UINT32;
	case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: return ACCEL_DTYPE_INT64;
	case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64: return ACCEL_DTYPE_UINT64;
	case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: return ACCEL_DTYPE_BOOL;
	default: return ACCEL_DTYPE_NONE;
	}
}

static ONNXTensorElementDataType to_ort(enum accel_dtype t)
{
	static const ONNXTensorElementDataType map[ACCEL_DTYPE_COUNT] = {
		[ACCEL_DTYPE_FLOAT32] = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
		[ACCEL_DTYPE_FLOAT64] = ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE,
		[ACCEL_DTYPE_FLOAT16] = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
		[ACCEL_DTYPE_INT8] = ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8,
		[ACCEL_DTYPE_UINT8] = ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8,
		[ACCEL_DTYPE_INT16] = ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16,
		[ACCEL_DTYPE_UINT16] = ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16,
		[ACCEL_DTYPE_INT32] = ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32,
		[ACCEL_DTYPE_UINT32] = ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32,
		[ACCEL_DTYPE_INT64] = ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64,
		[ACCEL_DTYPE_UINT64] = ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64,
		[ACCEL_DTYPE_BOOL] = ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL,
	};
	return (unsigned)t < ACCEL_DTYPE_COUNT ? map[t] : ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
}

/* Append the engine's provider to the session options. */
static OrtStatus *append_provider(const struct ort_engine *eng, OrtSessionOptions *so)
{
	const OrtApi *a = lib.api;
	char id[16];
	snprintf(id, sizeof id, "%d", eng->device_id);
	const char *keys[] = { "device_id" }, *vals[] = { id };
	OrtStatus *st = NULL;
	if (!strcmp(eng->provider, "CUDAExecutionProvider")) {
		OrtCUDAProviderOptionsV2 *o = NULL;
		if (!(st = a->CreateCUDAProviderOptions(&o)) && !(st = a->UpdateCUDAProviderOptions(o, keys, vals, 1)))
			st = a->SessionOptionsAppendExecutionProvider_CUDA_V2(so, o);
		if (o)
			a->ReleaseCUDAProviderOptions(o);
	} else if (!strcmp(eng->provider, "TensorrtExecutionProvider")) {
		OrtTensorRTProviderOptionsV2 *o = NULL;
		if (!(st = a->CreateTensorRTProviderOptions(&o)) && !(st = a->UpdateTensorRTProviderOptions(o, keys, vals, 1)))
			st = a->SessionOptionsAppendExecutionProvider_TensorRT_V2(so, o);
		if (o)
			a->ReleaseTensorRTProviderOptions(o);
	}
	return st;
}

/* Load p->model into a new session with the engine's provider. */
static int new_session(const struct ort_engine *eng, const struct accel_onnx_params *p, OrtSession **out,
		       char *reason, size_t len)
{
	const OrtApi *a = lib.api;
	pthread_once(&lib.env_once, create_env);
	if (!lib.env || lib.env_reason[0]) {
		snprintf(reason, len, "%s", lib.env_reason);
		return ACCEL_ENOTSUP;
	}
	OrtSessionOptions *so = NULL;
	OrtStatus *st = a->CreateSessionOptions(&so);
	if (!st && p->intra_threads > 0)
		st = a->SetIntraOpNumThreads(so, p->intra_threads);
	if (!st)
		st = a->SetInterOpNumThreads(so, 1);
	if (!st)
		st = a->SetSessionGraphOptimizationLevel(so, ORT_ENABLE_ALL);
	/* Threads that spin between runs take the cores the stream's reader
	 * and writer need. */
	if (!st)
		st = a->AddSessionConfigEntry(so, "session.intra_op.allow_spinning", "0");
	for (int i = 0; !st && i < p->ndims; i++)
		st = a->AddFreeDimensionOverrideByName(so, p->dim_names[i], p->dim_values[i]);
	if (!st)
		st = append_provider(eng, so);
	if (!st)
		st = a->CreateSession(lib.env, p->model, so, out);
	if (so)
		a->ReleaseSessionOptions(so);
	if (st) {
		char msg[400];
		int code = status_msg(st, msg, sizeof msg);
		/* ONNX Runtime names the file again: "Load model from PATH
		 * failed:REASON"; the reason is what is worth its room. */
		const char *why = msg, *f = strstr(msg, " failed:");
		if (!strncmp(msg, "Load model from ", 16) && f)
			why = f + 8;
		snprintf(reason, len, "cannot load the model: %.200s", why);
		return code == ORT_NO_MODEL || code == ORT_NO_SUCHFILE ? ACCEL_EIO : ACCEL_ENOTSUP;
	}
	return 0;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

/* The names of a session's inputs (output = 0) or outputs, malloc'd. */
static int session_names(OrtSession *s, int output, char ***names, size_t *n)
{
	const OrtApi *a = lib.api;
	OrtAllocator *al;
	*names = NULL;
	*n = 0;
	OrtStatus *st = a->GetAllocatorWithDefaultOptions(&al);
	size_t count = 0;
	if (!st)
		st = output ? a->SessionGetOutputCount(s, &count) : a->SessionGetInputCount(s, &count);
	if (st) {
		lib.api->ReleaseStatus(st);
		return ACCEL_EDEVICE;
	}
	char **v = calloc(count ? count : 1, sizeof *v);
	if (!v)
		return ACCEL_ENOMEM;
	for (size_t i = 0; i < count; i++) {
		char *name = NULL;
		st = output ? a->SessionGetOutputName(s, i, al, &name) : a->SessionGetInputName(s, i, al, &name);
		if (st) {
			lib.api->ReleaseStatus(st);
			free_names(v, count);
			return ACCEL_EDEVICE;
		}
		v[i] = strdup(name);
		if ((st = a->AllocatorFree(al, name)))
			a->ReleaseStatus(st);
		if (!v[i]) {
			free_names(v, count);
			return ACCEL_ENOMEM;
		}
	}
	*names = v;
	*n = count;
	return 0;
}

static void free_io(void *info)
{
	struct ort_io *io = info;
	free_names(io->in_names, io->nin);
	free_names(io->out_names, io->nout);
	free(io);
}

static void free_session(void *session)
{
	lib.api->ReleaseSession(session);
}

/* The cache's loader: a session of p->model on the engine and, on the
 * first load, the names of the model's inputs and outputs. */
static int load_model(void *owner, const struct accel_onnx_params *p, void **session, void **info, char *reason,
		      size_t len)
{
	OrtSession *s = NULL;
	int rc = new_session(owner, p, &s, reason, len);
	if (rc < 0 || !info) {
		*session = s;
		return rc;
	}
	struct ort_io *io = calloc(1, sizeof *io);
	if (!io || session_names(s, 0, &io->in_names, &io->nin) < 0 ||
	    session_names(s, 1, &io->out_names, &io->nout) < 0) {
		snprintf(reason, len, "cannot read the inputs and outputs of %s", p->model);
		if (io)
			free_io(io);
		lib.api->ReleaseSession(s);
		return ACCEL_ENOTSUP;
	}
	*session = s;
	*info = io;
	return 0;
}

static const struct onnx_loader ort_loader = { load_model, free_session, free_io, 1 };

/* A new engine of `provider` on device `device_id`; NULL: out of memory. */
static struct ort_engine *new_engine(const char *provider, int device_id)
{
	struct ort_engine *eng = calloc(1, sizeof *eng);
	if (!eng)
		return NULL;
	eng->provider = provider;
	eng->device_id = device_id;
	onnx_cache_init(&eng->cache, &ort_loader, eng);
	return eng;
}

/* Free an engine: its models and their idle sessions. */
static void free_engine(struct ort_engine *eng)
{
	onnx_cache_free(&eng->cache);
	free(eng);
}

static void ort_release(const struct accel_engine *e)
{
	free_engine(e->data);
}

/* Whether the provider library `name` loads from the folder of the ONNX
 * Runtime library (it needs the CUDA runtime, cuBLAS, cuDNN ...). */
static int provider_loads(struct accel_probe *p, const char *provider, const char *name)
{
	char path[600];
	const char *slash = strrchr(lib.path, '/');
	snprintf(path, sizeof path, "%.*s%s", slash ? (int)(slash - lib.path + 1) : 0, lib.path, name);
	if (dlopen(path, RTLD_NOW | RTLD_LOCAL))
		return 1;
	accel_probe_note(p, "onnxruntime: %s is listed, but %s does not load: %s", provider, name, dlerror());
	return 0;
}

/* One engine per provider on each CUDA GPU (device ids = CUDA ordinals);
 * the GPU is added by PCI address, so it merges with what the cuda and pci
 * backends found. */
static void add_gpu_engines(struct accel_probe *p, int want_cuda, int want_trt)
{
	want_cuda = want_cuda && provider_loads(p, "CUDAExecutionProvider", "libonnxruntime_providers_cuda.so");
	want_trt = want_trt && provider_loads(p, "TensorrtExecutionProvider", "libonnxruntime_providers_tensorrt.so");
	if (!want_cuda && !want_trt)
		return;
	if (accel_probe_sysroot(p)[0]) {
		accel_probe_note(p, "onnxruntime: no GPU engines: ACCEL_SYSROOT is set");
		return;
	}
	char why[300];
	const struct cu_driver *cu = cu_driver_load(why, sizeof why);
	struct cu_scan *s = NULL;
	if (!cu || cu_driver_scan(&s, why, sizeof why) < 0) {
		accel_probe_note(p, "onnxruntime: no GPU engines: %s", why);
		return;
	}
	for (int i = 0; i < s->n; i++) {
		struct accel_device d;
		cu_gpu_describe(&s->gpu[i], &d);
		accel_pci_locality(&d, accel_probe_sysroot(p));
		int k = accel_probe_add_device(p, &d);
		for (int v = 0; k >= 0 && v < 2; v++) {
			if (!(v ? want_trt : want_cuda))
				continue;
			struct ort_engine *eng = new_engine(v ? "TensorrtExecutionProvider" : "CUDAExecutionProvider",
							    s->gpu[i].dev);
			if (eng && accel_probe_add_engine_variant(p, k, v ? "tensorrt" : "cuda", eng) < 0)
				free_engine(eng);
		}
	}
	free(s);
}

static int ort_probe(struct accel_probe *p)
{
	pthread_once(&lib.once, load_lib);
	if (!lib.api)
		return accel_probe_fail(p, "%s", lib.reason);
	accel_probe_note(p, "onnxruntime: %s, ONNX Runtime %s, API %d", lib.path, lib.version, ORT_API_VERSION);
	char **providers = NULL;
	int n = 0;
	OrtStatus *st = lib.api->GetAvailableProviders(&providers, &n);
	if (st) {
		char msg[200];
		status_msg(st, msg, sizeof msg);
		return accel_probe_fail(p, "GetAvailableProviders: %s", msg);
	}
	int cpu_ok = 0, cuda = 0, trt = 0;
	for (int i = 0; i < n; i++) {
		accel_probe_note(p, "onnxruntime provider %s", providers[i]);
		cpu_ok |= !strcmp(providers[i], "CPUExecutionProvider");
		cuda |= !strcmp(providers[i], "CUDAExecutionProvider");
		trt |= !strcmp(providers[i], "TensorrtExecutionProvider");
	}
	if ((st = lib.api->ReleaseAvailableProviders(providers, n)))
		lib.api->ReleaseStatus(st);
	if (!cpu_ok)
		return accel_probe_fail(p, "ONNX Runtime %s lists no CPUExecutionProvider", lib.version);
	int cpu = accel_probe_cpu_device(p);
	if (cpu < 0)
		return accel_probe_fail(p, "no CPU device");
	struct ort_engine *eng = new_engine("CPUExecutionProvider", 0);
	if (!eng)
		return accel_probe_fail(p, "out of memory");
	if (accel_probe_add_engine_variant(p, cpu, "cpu", eng) < 0) {
		free_engine(eng);
		return accel_probe_fail(p, "cannot add the CPU engine");
	}
	add_gpu_engines(p, cuda, trt);
	return 0;
}

static int ort_supports(const struct accel_engine *e, const struct accel_op *op, double *prior_mbps, char *reason,
			size_t len)
{
	const struct accel_onnx_params *p = onnx_op_params(op, reason, len);
	if (!p)
		return ACCEL_ENOTSUP;
	struct ort_engine *eng = e->data;
	int rc = onnx_cache_check(&eng->cache, p, reason, len);
	if (rc)
		return rc;
	*prior_mbps = !strcmp(e->variant, "cpu") ? 100 : !strcmp(e->variant, "cuda") ? 1000 : 1500;
	snprintf(reason, len, "ONNX Runtime %s %s", lib.version, eng->provider);
	return 0;
}

static void ort_close(void *vctx)
{
	struct ort_ctx *c = vctx;
	if (!c)
		return;
	onnx_cache_give(&c->eng->cache, c->m, c->session);
	if (c->mem)
		lib.api->ReleaseMemoryInfo(c->mem);
	free(c->out_names);
	free(c);
}

static int ort_open(const struct accel_engine *e, const struct accel_op *op, void **vctx)
{
	*vctx = NULL;
	char why[80];
	const struct accel_onnx_params *p = onnx_op_params(op, why, sizeof why);
	if (!p)
		return ACCEL_ENOTSUP;
	struct ort_ctx *c = calloc(1, sizeof *c);
	if (!c)
		return ACCEL_ENOMEM;
	c->eng = e->data;
	c->info = !strcmp(op->name, "onnx.info");
	void *session = NULL;
	int rc = onnx_cache_take(&c->eng->cache, p, &c->m, &session);
	c->session = session;
	if (!rc) {
		c->io = c->m->info;
		/* The outputs asked for, by name; all when none is named
		 * (onnx.info describes the whole model, whatever is asked). */
		int asked = c->info ? 0 : p->noutputs;
		c->nout = asked ? (size_t)asked : c->io->nout;
		c->out_names = calloc(c->nout ? c->nout : 1, sizeof *c->out_names);
		if (!c->out_names)
			rc = ACCEL_ENOMEM;
		for (size_t i = 0; !rc && i < c->nout; i++) {
			c->out_names[i] = asked ? p->outputs[i] : c->io->out_names[i];
			size_t k = 0;
			while (k < c->io->nout && strcmp(c->io->out_names[k], c->out_names[i]))
				k++;
			if (k == c->io->nout)
				rc = ACCEL_EINVAL;
		}
	}
	OrtStatus *st;
	if (!rc && (st = lib.api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &c->mem))) {
		lib.api->ReleaseStatus(st);
		rc = ACCEL_ENOMEM;
	}
	if (rc) {
		ort_close(c);
		return rc;
	}
	*vctx = c;
	return 0;
}

/* Shape and dtype of a type info as a JSON object {name, dtype, shape}. */
static cJSON *type_json(const char *name, OrtTypeInfo *ti)
{
	const OrtApi *a = lib.api;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", name);
	const OrtTensorTypeAndShapeInfo *tsi = NULL;
	OrtStatus *st = a->CastTypeInfoToTensorInfo(ti, &tsi);
	if (st || !tsi) {
		if (st)
			a->ReleaseStatus(st);
		cJSON_AddStringToObject(o, "dtype", "none");
		cJSON_AddNullToObject(o, "shape");
		return o;
	}
	ONNXTensorElementDataType et = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
	size_t nd = 0;
	if ((st = a->GetTensorElementType(tsi, &et)) || (st = a->GetDimensionsCount(tsi, &nd)))
		a->ReleaseStatus(st);
	cJSON_AddStringToObject(o, "dtype", accel_dtype_name(from_ort(et)));
	int64_t dims[ACCEL_TENSOR_MAX_DIMS];
	const char *sym[ACCEL_TENSOR_MAX_DIMS];
	cJSON *shape = cJSON_AddArrayToObject(o, "shape");
	if (nd > ACCEL_TENSOR_MAX_DIMS)
		nd = ACCEL_TENSOR_MAX_DIMS;
	if ((st = a->GetDimensions(tsi, dims, nd)) || (st = a->GetSymbolicDimensions(tsi, sym, nd))) {
		a->ReleaseStatus(st);
		return o;
	}
	for (size_t i = 0; i < nd; i++) {
		if (dims[i] >= 0)
			cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)dims[i]));
		else if (sym[i] && sym[i][0])
			cJSON_AddItemToArray(shape, cJSON_CreateString(sym[i]));
		else
			cJSON_AddItemToArray(shape, cJSON_CreateNull());
	}
	return o;
}

static int run_info(struct ort_ctx *c, struct accel_unit *u, char *err, size_t len)
{
	const OrtApi *a = lib.api;
	cJSON *root = cJSON_CreateObject();
	cJSON *ins = cJSON_AddArrayToObject(root, "inputs");
	cJSON *outs = cJSON_AddArrayToObject(root, "outputs");
	for (int o = 0; o < 2; o++) {
		size_t n = o ? c->io->nout : c->io->nin;
		for (size_t i = 0; i < n; i++) {
			OrtTypeInfo *ti = NULL;
			OrtStatus *st = o ? a->SessionGetOutputTypeInfo(c->session, i, &ti)
					  : a->SessionGetInputTypeInfo(c->session, i, &ti);
			if (st) {
				status_msg(st, err, len);
				cJSON_Delete(root);
				return ACCEL_EDEVICE;
			}
			cJSON_AddItemToArray(o ? outs : ins, type_json(o ? c->io->out_names[i] : c->io->in_names[i], ti));
			a->ReleaseTypeInfo(ti);
		}
	}
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

/* Append output value v as a .npy array to u->out. */
static int put_output(struct accel_unit *u, const char *name, OrtValue *v, char *err, size_t len)
{
	const OrtApi *a = lib.api;
	OrtTensorTypeAndShapeInfo *info = NULL;
	struct accel_tensor t = { 0 };
	size_t nd = 0;
	ONNXTensorElementDataType et = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
	OrtStatus *st = a->GetTensorTypeAndShape(v, &info);
	if (!st && !(st = a->GetTensorElementType(info, &et)) && !(st = a->GetDimensionsCount(info, &nd)) &&
	    nd <= ACCEL_TENSOR_MAX_DIMS)
		st = a->GetDimensions(info, t.dims, nd);
	if (info)
		a->ReleaseTensorTypeAndShapeInfo(info);
	if (st) {
		status_msg(st, err, len);
		return ACCEL_EDEVICE;
	}
	t.dtype = from_ort(et);
	t.ndim = (int)nd;
	uint64_t bytes;
	if (t.dtype == ACCEL_DTYPE_NONE || nd > ACCEL_TENSOR_MAX_DIMS || accel_tensor_size(&t, 0, NULL, &bytes) < 0) {
		snprintf(err, len, "output '%s' is not a numeric tensor of at most %d dims", name, ACCEL_TENSOR_MAX_DIMS);
		return ACCEL_ENOTSUP;
	}
	void *data = NULL;
	if ((st = a->GetTensorMutableData(v, &data))) {
		status_msg(st, err, len);
		return ACCEL_EDEVICE;
	}
	if (accel_buf_reserve(&u->out, u->out.len + ACCEL_NPY_HEADER_MAX + (size_t)bytes) < 0)
		return ACCEL_ENOMEM;
	int h = accel_npy_header_write(&t, u->out.data + u->out.len, ACCEL_NPY_HEADER_MAX);
	if (h < 0)
		return ACCEL_EINVAL;
	u->out.len += (size_t)h;
	if (bytes)
		memcpy(u->out.data + u->out.len, data, (size_t)bytes);
	u->out.len += (size_t)bytes;
	return 0;
}

static int ort_run(void *vctx, struct accel_unit *u, char *err, size_t len)
{
	struct ort_ctx *c = vctx;
	const OrtApi *a = lib.api;
	if (c->info)
		return run_info(c, u, err, len);
	size_t nin = c->io->nin, off = 0;
	OrtValue **in = calloc(nin ? nin : 1, sizeof *in);
	OrtValue **out = calloc(c->nout ? c->nout : 1, sizeof *out);
	int rc = in && out ? 0 : ACCEL_ENOMEM;
	for (size_t i = 0; !rc && i < nin; i++) {
		struct accel_tensor t;
		size_t hlen;
		char why[200];
		int r = accel_npy_header_parse(u->in.data + off, u->in.len - off, u->in.len - off, &t, &hlen, why, sizeof why);
		uint64_t bytes = 0;
		if (r == 0)
			accel_tensor_size(&t, 0, NULL, &bytes);
		if (r != 0 || bytes > u->in.len - off - hlen) {
			snprintf(err, len, "input '%s': %s", c->io->in_names[i], r < 0 ? why : "truncated");
			rc = ACCEL_EDATA;
			break;
		}
		OrtStatus *st = a->CreateTensorWithDataAsOrtValue(c->mem, u->in.data + off + hlen, (size_t)bytes, t.dims,
								  (size_t)t.ndim, to_ort(t.dtype), &in[i]);
		if (st) {
			status_msg(st, err, len);
			rc = ACCEL_EDATA;
		}
		off += hlen + (size_t)bytes;
	}
	if (!rc) {
		OrtStatus *st = a->Run(c->session, NULL, (const char *const *)c->io->in_names, (const OrtValue *const *)in,
				       nin, c->out_names, c->nout, out);
		if (st) {
			char msg[240];
			int code = status_msg(st, msg, sizeof msg);
			snprintf(err, len, "%s", msg);
			/* Bad shapes and types are the input's fault; anything
			 * else is the engine's, and another may succeed. */
			rc = code == ORT_INVALID_ARGUMENT ? ACCEL_EDATA : ACCEL_EDEVICE;
		}
	}
	for (size_t i = 0; !rc && i < c->nout; i++)
		rc = put_output(u, c->out_names[i], out[i], err, len);
	for (size_t i = 0; in && i < nin; i++)
		if (in[i])
			a->ReleaseValue(in[i]);
	for (size_t i = 0; out && i < c->nout; i++)
		if (out[i])
			a->ReleaseValue(out[i]);
	free(in);
	free(out);
	return rc;
}

/* --version: the library's GetVersionString, asked without an
 * environment. */
static void ort_versions(char *buf, size_t len)
{
	pthread_once(&lib.once, load_lib);
	if (lib.version[0])
		snprintf(buf, len, "onnxruntime %s\n", lib.version);
	else
		snprintf(buf, len, "onnxruntime (%s)\n", lib.reason);
}

ACCEL_PLUGIN_EXPORT const struct accel_backend ORT_CAT(accel_backend_, ORT_BACKEND) = {
	.abi = ACCEL_BACKEND_ABI,
	.name = ORT_STR(ORT_BACKEND),
	.description = "ONNX Runtime (C API, dlopen'ed): ONNX models on its CPU, CUDA and TensorRT providers",
	.ops = ort_ops,
	.probe = ort_probe,
	.supports = ort_supports,
	.open = ort_open,
	.run = ort_run,
	.close = ort_close,
	/* Its CPU engine is on the device the cpu backend finds; the GPUs of
	 * its CUDA engines it adds only when ONNX Runtime has the providers,
	 * found when an operation it offers is routed: no class probes it. */
	.classes = 0,
	.priority = 60,
	.release = ort_release,
	.versions = ort_versions,
};
