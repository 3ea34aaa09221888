/*
 * vkfft_opencl.c - VkFFT's OpenCL backend (VKFFT_BACKEND 3, the stock
 * Debian header): the OpenCL devices, and per worker a context, a queue, a
 * device buffer and a VkFFT application for the job's N and batch.
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

int vkfft_cl_probe(struct accel_probe *p)
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

struct cl_ctx {
	struct accel_fft lf;          /* the job, loaded as complex frames */
	const struct accel_fft *f;
	size_t batch;                 /* frames of one dispatch */
	cl_device_id device;
	cl_context context;
	cl_command_queue queue;
	cl_mem buffer;
	uint64_t bytes;
	float *host;                  /* batch complex frames */
	float *half;                  /* r2c: the half spectra, compacted */
	VkFFTApplication app;
	int app_ok;
};

void vkfft_cl_close(void *ctx)
{
	struct cl_ctx *c = ctx;
	if (!c)
		return;
	if (c->app_ok)
		deleteVkFFT(&c->app);
	if (c->buffer)
		clReleaseMemObject(c->buffer);
	if (c->queue)
		clReleaseCommandQueue(c->queue);
	if (c->context)
		clReleaseContext(c->context);
	free(c->host);
	free(c->half);
	free(c);
}

int vkfft_cl_open(const struct accel_engine *e, const struct accel_fft *f, void **ctx)
{
	const struct vkfft_cl_dev *dev = e->data;
	struct cl_ctx *c = calloc(1, sizeof *c);
	if (!c)
		return ACCEL_ENOMEM;
	c->f = f;
	c->lf = *f;
	c->lf.r2c = 0;
	c->batch = accel_fft_kept_frames(f, 0, f->unit_frames);
	c->device = dev->device;
	c->bytes = (uint64_t)c->batch * f->n * 8;
	c->host = malloc(c->bytes);
	c->half = f->r2c ? malloc((size_t)c->batch * f->bins * 8) : NULL;
	cl_int err;
	c->context = c->host && (!f->r2c || c->half) ? clCreateContext(NULL, 1, &c->device, NULL, NULL, &err) : NULL;
	if (c->context)
		c->queue = clCreateCommandQueue(c->context, c->device, 0, &err);
	if (c->queue)
		c->buffer = clCreateBuffer(c->context, CL_MEM_READ_WRITE, c->bytes, NULL, &err);
	if (!c->buffer) {
		vkfft_cl_close(c);
		return ACCEL_EDEVICE;
	}
	VkFFTConfiguration cfg = { 0 };
	cfg.FFTdim = 1;
	cfg.size[0] = f->n;
	cfg.numberBatches = c->batch;
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

int vkfft_cl_run(void *ctx, struct accel_unit *u, char *err, size_t len)
{
	struct cl_ctx *c = ctx;
	const struct accel_fft *f = c->f;
	size_t frames = accel_fft_unit_frames(f, u->in.len);
	size_t kept = accel_fft_load(&c->lf, u->seq, u->in.data, u->in.len, frames, 0, c->batch, c->host);
	if (!kept)
		return 0;
	size_t bytes = kept * f->n * 8;
	cl_int rc = clEnqueueWriteBuffer(c->queue, c->buffer, CL_FALSE, 0, bytes, c->host, 0, NULL, NULL);
	if (rc != CL_SUCCESS) {
		snprintf(err, len, "clEnqueueWriteBuffer failed: %d", rc);
		return ACCEL_EDEVICE;
	}
	VkFFTLaunchParams lp = { 0 };
	lp.commandQueue = &c->queue;
	lp.buffer = &c->buffer;
	VkFFTResult vr = VkFFTAppend(&c->app, f->inverse ? 1 : -1, &lp);
	if (vr != VKFFT_SUCCESS) {
		snprintf(err, len, "VkFFTAppend failed: error %d", (int)vr);
		return ACCEL_EDEVICE;
	}
	rc = clEnqueueReadBuffer(c->queue, c->buffer, CL_TRUE, 0, bytes, c->host, 0, NULL, NULL);
	if (rc != CL_SUCCESS) {
		snprintf(err, len, "clEnqueueReadBuffer failed: %d", rc);
		return ACCEL_EDEVICE;
	}
	const float *spec = c->host;
	if (f->r2c) {
		for (size_t j = 0; j < kept; j++)
			memcpy(c->half + j * f->bins * 2, c->host + j * f->n * 2, f->bins * 8);
		spec = c->half;
	}
	return accel_fft_emit(f, spec, kept, &u->out);
}
