/*
 * vkfft_opencl.c - VkFFT's OpenCL backend (VKFFT_BACKEND 3, the stock
 * Debian header): the OpenCL devices, and per worker a context, a queue,
 * the chain's buffers and kernels (vkfft.h; OpenCL C built at open) and a
 * VkFFT application for the job's N and batch.
 */
#define VKFFT_BACKEND 3
#include <stdlib.h>
#include <string.h>
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <vkFFT.h>
#include "vkfft.h"

#define MAX_DEVICES 16

struct vkfft_cl_dev {
	cl_platform_id platform;
	cl_device_id device;
};

struct cl_found {
	int n;
	struct vkfft_cl_dev dev[MAX_DEVICES];
	char name[MAX_DEVICES][128], vendor[MAX_DEVICES][64], platform[MAX_DEVICES][64], pci[MAX_DEVICES][16];
	cl_device_type type[MAX_DEVICES];
	cl_ulong memory[MAX_DEVICES];
};

/* The platforms' devices (run bounded: a driver may hang). */
static int scan(void *arg)
{
	struct cl_found *s = arg;
	cl_platform_id plats[8];
	cl_uint np = 0;
	if (clGetPlatformIDs(8, plats, &np) != CL_SUCCESS)
		np = 0;
	for (cl_uint i = 0; i < np && i < 8; i++) {
		cl_device_id ids[MAX_DEVICES];
		cl_uint nd = 0;
		if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, MAX_DEVICES, ids, &nd) != CL_SUCCESS)
			continue;
		char pname[64] = "";
		clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
		for (cl_uint k = 0; k < nd && k < MAX_DEVICES && s->n < MAX_DEVICES; k++) {
			int j = s->n++;
			s->dev[j].platform = plats[i];
			s->dev[j].device = ids[k];
			memcpy(s->platform[j], pname, sizeof pname);
			clGetDeviceInfo(ids[k], CL_DEVICE_NAME, sizeof s->name[j], s->name[j], NULL);
			clGetDeviceInfo(ids[k], CL_DEVICE_VENDOR, sizeof s->vendor[j], s->vendor[j], NULL);
			clGetDeviceInfo(ids[k], CL_DEVICE_TYPE, sizeof s->type[j], &s->type[j], NULL);
			clGetDeviceInfo(ids[k], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof s->memory[j], &s->memory[j], NULL);
			char ext[4096] = "";
			cl_device_pci_bus_info_khr bi;
			if (clGetDeviceInfo(ids[k], CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL) == CL_SUCCESS &&
			    strstr(ext, "cl_khr_pci_bus_info") &&
			    clGetDeviceInfo(ids[k], CL_DEVICE_PCI_BUS_INFO_KHR, sizeof bi, &bi, NULL) == CL_SUCCESS)
				snprintf(s->pci[j], sizeof s->pci[j], "%04x:%02x:%02x.%x", bi.pci_domain & 0xffff,
					 bi.pci_bus & 0xff, bi.pci_device & 0x1f, bi.pci_function & 7);
		}
	}
	return 0;
}

/* The device the opencl backend added for device j, if it was probed: the
 * same PCI address, or for a device without one the same model and
 * platform. -1 when none. */
static int find_device(struct accel_probe *p, const struct cl_found *s, int j)
{
	const struct accel_device *d;
	for (int i = 0; (d = accel_probe_device(p, i)) != NULL; i++) {
		int has_cl = 0;
		for (int a = 0; a < d->napis; a++)
			has_cl |= !strcmp(d->apis[a].name, "opencl");
		if (!has_cl)
			continue;
		if (s->pci[j][0] ? !strcmp(d->pci_address, s->pci[j]) :
		    !d->pci_address[0] && !strcmp(d->model, s->name[j]) && !strcmp(d->driver, s->platform[j]))
			return i;
	}
	return -1;
}

static int vkfft_cl_probe(struct accel_probe *p)
{
	if (accel_probe_sysroot(p)[0])
		return ACCEL_ENOTSUP;
	/* A driver call of another probe that did not return in time (the
	 * opencl backend's, say) may still be inside the ICD loader or PoCL,
	 * whose start-up is not safe to run twice at once. */
	if (accel_abandoned_calls() > 0) {
		accel_probe_note(p, "opencl: not run: an earlier driver call did not return in time (ACCEL_PROBE_TIMEOUT)");
		return ACCEL_ENOTSUP;
	}
	/* Never freed when abandoned: the scan may still write to it. */
	struct cl_found *s = calloc(1, sizeof *s);
	if (!s)
		return ACCEL_ENOMEM;
	/* The driver may abort the process (PoCL does when /sys is masked):
	 * it starts here only where it survived in a child process. */
	char why[96];
	if (accel_api_survives("opencl", scan, s, why, sizeof why) < 0) {
		accel_probe_note(p, "opencl: not run: the OpenCL driver %s in a child process", why);
		free(s);
		return ACCEL_ENOTSUP;
	}
	if (accel_call_bounded(scan, s, 0) == ACCEL_EDEVICE) {
		accel_probe_note(p, "opencl: the driver did not answer in time (ACCEL_PROBE_TIMEOUT)");
		return ACCEL_ENOTSUP;
	}
	int added = 0;
	for (int j = 0; j < s->n; j++) {
		int i = find_device(p, s, j);
		if (i < 0) {
			struct accel_device d;
			memset(&d, 0, sizeof d);
			d.cls = s->type[j] & CL_DEVICE_TYPE_ACCELERATOR ? ACCEL_CLASS_NPU : ACCEL_CLASS_GPU;
			d.numa_node = -1;
			snprintf(d.vendor, sizeof d.vendor, "%s", s->vendor[j]);
			snprintf(d.model, sizeof d.model, "%s", s->name[j]);
			snprintf(d.driver, sizeof d.driver, "%s", s->platform[j]);
			snprintf(d.pci_address, sizeof d.pci_address, "%s", s->pci[j]);
			d.software = (s->type[j] & CL_DEVICE_TYPE_CPU) != 0;
			d.memory_bytes = s->memory[j];
			accel_device_add_api(&d, "opencl", 1, NULL);
			accel_pci_locality(&d, accel_probe_sysroot(p));
			i = accel_probe_add_device(p, &d);
		}
		struct vkfft_cl_dev *dev = malloc(sizeof *dev);
		if (i < 0 || !dev) {
			free(dev);
			continue;
		}
		*dev = s->dev[j];
		if (accel_probe_add_engine_variant(p, i, "opencl", dev) < 0)
			free(dev);
		else
			added++;
		accel_probe_note(p, "opencl: %s (%s)", s->name[j], s->platform[j]);
	}
	free(s);
	return added ? 0 : ACCEL_ENOTSUP;
}

static void vkfft_cl_release(void *data)
{
	free(data);
}

/*
 * The kernels of the chain (vkfft.h), built per context with the job's
 * constants as -D options: T_name (the sample type, accel_sample_name: T_cf32,
 * T_ci16_be), SB (its bytes), CPLX, N, HOP, BINS, ROT, AVG, OUT (enum
 * accel_fft_out). Integers are scaled as accel.h says, in the same float
 * operations as the host's loader.
 */
static const char cl_source[] =
	"#if defined(T_cf64) || defined(T_f64)\n"
	"#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
	"#endif\n"
	/* Types read as OpenCL vectors. */
	"#if defined(T_cf32)\n"
	"typedef float2 raw_t;\n"
	"#define GET(r, s) (r[s])\n"
	"#elif defined(T_ci16)\n"
	"typedef short2 raw_t;\n"
	"#define GET(r, s) (convert_float2(r[s]) * (1.0f / 32768))\n"
	"#elif defined(T_ci8)\n"
	"typedef char2 raw_t;\n"
	"#define GET(r, s) (convert_float2(r[s]) * (1.0f / 128))\n"
	"#elif defined(T_cu8)\n"
	"typedef uchar2 raw_t;\n"
	"#define GET(r, s) ((convert_float2(r[s]) - 128.0f) * (1.0f / 128))\n"
	"#elif defined(T_f32)\n"
	"typedef float raw_t;\n"
	"#define GET(r, s) ((float2)(r[s], 0.0f))\n"
	"#elif defined(T_i16)\n"
	"typedef short raw_t;\n"
	"#define GET(r, s) ((float2)((float)r[s] * (1.0f / 32768), 0.0f))\n"
	"#elif defined(T_u8)\n"
	"typedef uchar raw_t;\n"
	"#define GET(r, s) ((float2)(((float)r[s] - 128.0f) * (1.0f / 128), 0.0f))\n"
	"#elif defined(T_i8)\n"
	"typedef char raw_t;\n"
	"#define GET(r, s) ((float2)((float)r[s] * (1.0f / 128), 0.0f))\n"
	"#elif defined(T_cf64)\n"
	"typedef double2 raw_t;\n"
	"#define GET(r, s) convert_float2(r[s])\n"
	"#elif defined(T_f64)\n"
	"typedef double raw_t;\n"
	"#define GET(r, s) ((float2)((float)r[s], 0.0f))\n"
	"#else\n"
	/* The others assembled from their bytes: SB bytes a sample, CPLX. */
	"typedef uchar raw_t;\n"
	"#define B(i) ((uint)p[i])\n"
	"float val(__global const uchar *p)\n"
	"{\n"
	"#if defined(T_ci32) || defined(T_i32)\n"
	"	return (float)as_int(B(0) | B(1) << 8 | B(2) << 16 | B(3) << 24) * (1.0f / 2147483648.0f);\n"
	"#elif defined(T_ci24) || defined(T_i24)\n"
	"	return (float)(as_int(B(0) << 8 | B(1) << 16 | B(2) << 24) >> 8) * (1.0f / 8388608.0f);\n"
	"#elif defined(T_cf32_be) || defined(T_f32_be)\n"
	"	return as_float(B(3) | B(2) << 8 | B(1) << 16 | B(0) << 24);\n"
	"#elif defined(T_ci16_be) || defined(T_i16_be)\n"
	"	return (float)as_short((ushort)(B(1) | B(0) << 8)) * (1.0f / 32768);\n"
	"#else\n"
	"	return (float)as_int(B(3) | B(2) << 8 | B(1) << 16 | B(0) << 24) * (1.0f / 2147483648.0f);\n"
	"#endif\n"
	"}\n"
	"float2 get(__global const uchar *raw, ulong s)\n"
	"{\n"
	"	__global const uchar *p = raw + s * SB;\n"
	"	return (float2)(val(p), CPLX ? val(p + SB / 2) : 0.0f);\n"
	"}\n"
	"#define GET(r, s) get(r, s)\n"
	"#endif\n"
	/* Element g of the kept frames: frame k = g / N, sample i = g % N. */
	"__kernel void load(__global const raw_t *raw, __global const uint *idx, __global const float *win,\n"
	"		   __global float2 *spec, ulong avail)\n"
	"{\n"
	"	size_t g = get_global_id(0), k = g / N, i = g % N;\n"
	"	ulong s = (ulong)idx[k] * HOP + i;\n"
	"	float2 v = s < avail ? GET(raw, s) : (float2)(0.0f, 0.0f);\n"
	"	spec[g] = v * win[i];\n"
	"}\n"
	/* Value j of row r. */
	"__kernel void reduce(__global const float2 *spec, __global float *rows, uint kept, float scale,\n"
	"		     float scale2, float db_offset)\n"
	"{\n"
	"	size_t g = get_global_id(0), r = g / BINS, j = g % BINS, c = j + ROT;\n"
	"	if (c >= BINS)\n"
	"		c -= BINS;\n"
	"#if OUT == 0\n"
	"	float2 x = spec[r * N + c] * scale;\n"
	"	rows[2 * g] = x.x;\n"
	"	rows[2 * g + 1] = x.y;\n"
	"#else\n"
	"	size_t k0 = r * AVG, k1 = k0 + AVG < kept ? k0 + AVG : kept;\n"
	"	float acc = 0.0f;\n"
	"	for (size_t k = k0; k < k1; k++) {\n"
	"		float2 x = spec[k * N + c];\n"
	"		float p = x.x * x.x + x.y * x.y;\n"
	"#if OUT == 1\n"
	"		acc += sqrt(p);\n"
	"#else\n"
	"		acc += p;\n"
	"#endif\n"
	"	}\n"
	"	float v = acc / (float)(k1 - k0);\n"
	"#if OUT == 1\n"
	"	rows[g] = v * scale;\n"
	"#elif OUT == 2\n"
	"	rows[g] = v * scale2;\n"
	"#else\n"
	"	rows[g] = 10.0f * log10(v * scale2) + db_offset;\n"
	"#endif\n"
	"#endif\n"
	"}\n";

struct cl_ctx {
	const struct accel_fft *f;
	struct vkfft_chain ch;
	struct vkfft_shape shape;     /* what it was made for (vkfft_cl_adopt) */
	int host_f64;                 /* vkfft_chain_init's: the device has no doubles */
	cl_device_id device;
	cl_context context;
	cl_command_queue queue;
	cl_mem raw, idx, win, buffer, rows;
	uint64_t bytes;               /* of buffer: the batch's complex frames */
	cl_program program;
	cl_kernel load, reduce;
	float *out;                   /* the rows of a unit, downloaded */
	VkFFTApplication app;
	int app_ok;
};

static void vkfft_cl_close(void *ctx)
{
	struct cl_ctx *c = ctx;
	if (!c)
		return;
	if (c->app_ok)
		deleteVkFFT(&c->app);
	if (c->load)
		clReleaseKernel(c->load);
	if (c->reduce)
		clReleaseKernel(c->reduce);
	if (c->program)
		clReleaseProgram(c->program);
	cl_mem *mems[] = { &c->raw, &c->idx, &c->win, &c->buffer, &c->rows };
	for (size_t i = 0; i < sizeof mems / sizeof *mems; i++)
		if (*mems[i])
			clReleaseMemObject(*mems[i]);
	if (c->queue)
		clReleaseCommandQueue(c->queue);
	if (c->context)
		clReleaseContext(c->context);
	vkfft_chain_free(&c->ch);
	vkfft_shape_free(&c->shape);
	free(c->out);
	free(c);
}

static int vkfft_cl_adopt(void *ctx, const struct accel_fft *f)
{
	struct cl_ctx *c = ctx;
	struct vkfft_shape s;
	int same = vkfft_shape_init(&s, f, c->host_f64) == 0 && vkfft_shape_equal(&s, &c->shape);
	vkfft_shape_free(&s);
	if (same)
		c->f = f;
	return same;
}

/* The buffers, the window uploaded, and the kernels built for job f. */
static int cl_chain_open(struct cl_ctx *c, const struct accel_fft *f)
{
	cl_int err;
	size_t rows_bytes = c->ch.rows * c->ch.vals * sizeof(float);
	c->raw = clCreateBuffer(c->context, CL_MEM_READ_ONLY, c->ch.in_bytes, NULL, &err);
	c->idx = c->raw ? clCreateBuffer(c->context, CL_MEM_READ_ONLY, c->ch.frames * 4, NULL, &err) : NULL;
	c->win = c->idx ? clCreateBuffer(c->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, f->n * sizeof(float),
					 f->win, &err) : NULL;
	c->rows = c->win ? clCreateBuffer(c->context, CL_MEM_WRITE_ONLY, rows_bytes, NULL, &err) : NULL;
	c->out = malloc(rows_bytes);
	if (!c->rows || !c->out)
		return ACCEL_EDEVICE;
	const char *src = cl_source;
	c->program = clCreateProgramWithSource(c->context, 1, &src, NULL, &err);
	if (!c->program)
		return ACCEL_EDEVICE;
	char opts[256];
	snprintf(opts, sizeof opts, "-DT_%s -DSB=%zu -DCPLX=%d -DN=%zu -DHOP=%zu -DBINS=%zu -DROT=%zu -DAVG=%u -DOUT=%d",
		 accel_sample_name(c->ch.type), c->ch.sample_bytes, accel_sample_is_complex(c->ch.type), f->n, f->hop, f->bins, c->ch.rot, f->average, (int)f->out);
	if (clBuildProgram(c->program, 1, &c->device, opts, NULL, NULL) != CL_SUCCESS)
		return ACCEL_EDEVICE;
	c->load = clCreateKernel(c->program, "load", &err);
	c->reduce = c->load ? clCreateKernel(c->program, "reduce", &err) : NULL;
	if (!c->reduce)
		return ACCEL_EDEVICE;
	float db = (float)f->db_offset;
	if (clSetKernelArg(c->load, 0, sizeof c->raw, &c->raw) || clSetKernelArg(c->load, 1, sizeof c->idx, &c->idx) ||
	    clSetKernelArg(c->load, 2, sizeof c->win, &c->win) ||
	    clSetKernelArg(c->load, 3, sizeof c->buffer, &c->buffer) ||
	    clSetKernelArg(c->reduce, 0, sizeof c->buffer, &c->buffer) ||
	    clSetKernelArg(c->reduce, 1, sizeof c->rows, &c->rows) ||
	    clSetKernelArg(c->reduce, 3, sizeof(float), &c->ch.scale) ||
	    clSetKernelArg(c->reduce, 4, sizeof(float), &c->ch.scale2) ||
	    clSetKernelArg(c->reduce, 5, sizeof(float), &db))
		return ACCEL_EDEVICE;
	return 0;
}

static int vkfft_cl_open(const struct accel_engine *e, const struct accel_fft *f, void **ctx)
{
	const struct vkfft_cl_dev *dev = e->data;
	struct cl_ctx *c = calloc(1, sizeof *c);
	if (!c)
		return ACCEL_ENOMEM;
	c->f = f;
	c->device = dev->device;
	/* Doubles on the device when it has them; else converted on the host. */
	cl_device_fp_config fp64 = 0;
	if (clGetDeviceInfo(c->device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL) != CL_SUCCESS)
		fp64 = 0;
	c->host_f64 = fp64 == 0;
	if (vkfft_chain_init(&c->ch, f, c->host_f64) < 0 || vkfft_shape_init(&c->shape, f, c->host_f64) < 0) {
		vkfft_chain_free(&c->ch);
		vkfft_shape_free(&c->shape);
		free(c);
		return ACCEL_ENOMEM;
	}
	c->bytes = (uint64_t)c->ch.batch * f->n * 8;
	cl_int err;
	c->context = clCreateContext(NULL, 1, &c->device, NULL, NULL, &err);
	if (c->context)
		c->queue = clCreateCommandQueue(c->context, c->device, 0, &err);
	if (c->queue)
		c->buffer = clCreateBuffer(c->context, CL_MEM_READ_WRITE, c->bytes, NULL, &err);
	if (!c->buffer || cl_chain_open(c, f) < 0) {
		vkfft_cl_close(c);
		return ACCEL_EDEVICE;
	}
	VkFFTConfiguration cfg = { 0 };
	cfg.FFTdim = 1;
	cfg.size[0] = f->n;
	cfg.numberBatches = c->ch.batch;
	cfg.device = &c->device;
	cfg.context = &c->context;
	cfg.bufferSize = &c->bytes;
	cfg.buffer = &c->buffer;
	if (initializeVkFFT(&c->app, cfg) != VKFFT_SUCCESS) {
		vkfft_cl_close(c);
		return ACCEL_EDEVICE;
	}
	c->app_ok = 1;
	*ctx = c;
	return 0;
}

/* One unit: the raw samples and frame numbers up, load, FFT, reduce, the
 * rows down, all enqueued without blocking and waited for once. */
static int vkfft_cl_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	struct cl_ctx *c = ctx;
	const struct accel_fft *f = c->f;
	const void *raw;
	size_t bytes, avail;
	size_t kept = vkfft_chain_unit(&c->ch, f, u, &raw, &bytes, &avail);
	if (!kept)
		return 0;
	size_t rows = accel_fft_rows(f, kept), out_vals = rows * c->ch.vals;
	size_t gl = kept * f->n, gr = rows * f->bins;
	cl_ulong av = avail;
	cl_uint k = (cl_uint)kept;
	const char *what = "clEnqueueWriteBuffer";
	cl_int rc = clEnqueueWriteBuffer(c->queue, c->raw, CL_FALSE, 0, bytes, raw, 0, NULL, NULL);
	if (rc == CL_SUCCESS)
		rc = clEnqueueWriteBuffer(c->queue, c->idx, CL_FALSE, 0, kept * 4, c->ch.idx, 0, NULL, NULL);
	if (rc == CL_SUCCESS) {
		what = "the load kernel";
		rc = clSetKernelArg(c->load, 4, sizeof av, &av);
	}
	if (rc == CL_SUCCESS)
		rc = clEnqueueNDRangeKernel(c->queue, c->load, 1, NULL, &gl, NULL, 0, NULL, NULL);
	if (rc != CL_SUCCESS) {
		snprintf(err, len, "%s failed: %d", what, rc);
		return ACCEL_EDEVICE;
	}
	VkFFTLaunchParams lp = { 0 };
	lp.commandQueue = &c->queue;
	lp.buffer = &c->buffer;
	VkFFTResult vr = VkFFTAppend(&c->app, f->inverse ? 1 : -1, &lp);
	if (vr != VKFFT_SUCCESS) {
		clFinish(c->queue);
		snprintf(err, len, "VkFFTAppend failed: error %d", (int)vr);
		return ACCEL_EDEVICE;
	}
	what = "the reduce kernel";
	rc = clSetKernelArg(c->reduce, 2, sizeof k, &k);
	if (rc == CL_SUCCESS)
		rc = clEnqueueNDRangeKernel(c->queue, c->reduce, 1, NULL, &gr, NULL, 0, NULL, NULL);
	if (rc == CL_SUCCESS) {
		what = "clEnqueueReadBuffer";
		rc = clEnqueueReadBuffer(c->queue, c->rows, CL_TRUE, 0, out_vals * sizeof(float), c->out, 0, NULL, NULL);
	}
	if (rc != CL_SUCCESS) {
		clFinish(c->queue);
		snprintf(err, len, "%s failed: %d", what, rc);
		return ACCEL_EDEVICE;
	}
	return accel_fft_put_rows(f, c->out, rows, &u->out);
}

const struct vkfft_api vkfft_api_opencl = {
	.version = VKFFT_API_VERSION,
	.probe = vkfft_cl_probe,
	.open = vkfft_cl_open,
	.run = vkfft_cl_run,
	.close = vkfft_cl_close,
	.adopt = vkfft_cl_adopt,
	.release = vkfft_cl_release,
};
