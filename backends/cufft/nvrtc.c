/*
 * nvrtc.c - NVRTC, dlopen'ed at run time, and the chain's kernels
 * (chain.cu) compiled by it to PTX for a device, which the driver then
 * loads (cuModuleLoadData) and compiles for the GPU.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cufft_chain.h"

int cufft_nvrtc_load(struct nvrtc_lib *n, char *err, size_t len)
{
	static const char *const names[] = { "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so" };
	static const char *const dirs[] = { "", "/usr/local/cuda/lib64/" };
	void *lib = NULL;
	for (size_t d = 0; d < sizeof dirs / sizeof *dirs && !lib; d++) {
		for (size_t i = 0; i < sizeof names / sizeof *names && !lib; i++) {
			char path[128];
			snprintf(path, sizeof path, "%s%s", dirs[d], names[i]);
			lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		}
	}
	if (!lib) {
		snprintf(err, len, "libnvrtc not found");
		return -1;
	}
	memset(n, 0, sizeof *n);
	n->version = (nvrtc_version_fn)dlsym(lib, "nvrtcVersion");
	n->create = (nvrtc_create_program_fn)dlsym(lib, "nvrtcCreateProgram");
	n->compile = (nvrtc_compile_program_fn)dlsym(lib, "nvrtcCompileProgram");
	n->ptx_size = (nvrtc_get_ptx_size_fn)dlsym(lib, "nvrtcGetPTXSize");
	n->ptx = (nvrtc_get_ptx_fn)dlsym(lib, "nvrtcGetPTX");
	n->log_size = (nvrtc_get_program_log_size_fn)dlsym(lib, "nvrtcGetProgramLogSize");
	n->log = (nvrtc_get_program_log_fn)dlsym(lib, "nvrtcGetProgramLog");
	n->destroy = (nvrtc_destroy_program_fn)dlsym(lib, "nvrtcDestroyProgram");
	n->error_string = (nvrtc_get_error_string_fn)dlsym(lib, "nvrtcGetErrorString");
	n->num_archs = (nvrtc_get_num_supported_archs_fn)dlsym(lib, "nvrtcGetNumSupportedArchs");
	n->archs = (nvrtc_get_supported_archs_fn)dlsym(lib, "nvrtcGetSupportedArchs");
	if (!n->version || !n->create || !n->compile || !n->ptx_size || !n->ptx || !n->log_size || !n->log ||
	    !n->destroy || !n->error_string) {
		snprintf(err, len, "the NVRTC library found lacks nvrtcCompileProgram or its companions");
		return -1;
	}
	return 0;
}

/* The architecture to compile for: the device's, or the newest one NVRTC
 * supports below it (the driver compiles PTX for newer GPUs). */
static int pick_arch(const struct nvrtc_lib *n, int want)
{
	int count = 0, best = want;
	if (!n->num_archs || !n->archs || n->num_archs(&count) || count <= 0 || count > 256)
		return want;
	int *a = malloc((size_t)count * sizeof *a);
	if (!a || n->archs(a)) {
		free(a);
		return want;
	}
	best = 0;
	for (int i = 0; i < count; i++)
		if (a[i] <= want && a[i] > best)
			best = a[i];
	free(a);
	return best ? best : want;
}

int cufft_nvrtc_compile(const struct nvrtc_lib *n, int major, int minor, char **ptx, char *err, size_t len)
{
	nvrtc_program prog = NULL;
	char arch[48];
	snprintf(arch, sizeof arch, "--gpu-architecture=compute_%d", pick_arch(n, major * 10 + minor));
	const char *opts[] = { arch };
	nvrtc_result r = n->create(&prog, cufft_chain_source, "chain.cu", 0, NULL, NULL);
	if (r) {
		snprintf(err, len, "nvrtcCreateProgram failed: %s", n->error_string(r));
		return -1;
	}
	r = n->compile(prog, 1, opts);
	if (r) {
		char line[160] = "";
		size_t ls = 0;
		if (!n->log_size(prog, &ls) && ls > 1) {
			char *log = malloc(ls);
			if (log && !n->log(prog, log)) {
				log[strcspn(log, "\n")] = 0;
				snprintf(line, sizeof line, ": %s", log);
			}
			free(log);
		}
		snprintf(err, len, "nvrtcCompileProgram (%s) failed: %s%s", arch + 2, n->error_string(r), line);
		n->destroy(&prog);
		return -1;
	}
	size_t size = 0;
	char *p = NULL;
	if (!n->ptx_size(prog, &size) && size)
		p = malloc(size + 1);
	if (!p || n->ptx(prog, p)) {
		snprintf(err, len, "nvrtcGetPTX failed");
		free(p);
		n->destroy(&prog);
		return -1;
	}
	p[size] = 0;
	n->destroy(&prog);
	*ptx = p;
	return 0;
}
