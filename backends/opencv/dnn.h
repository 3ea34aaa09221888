/*
 * dnn.h - the C interface of dnn.cpp, the one file of the opencv backend
 * written in C++ (OpenCV DNN's API is C++ only). Nothing here throws: every
 * OpenCV exception is caught in dnn.cpp and comes back as an error message.
 */
#ifndef ACCEL_OPENCV_DNN_H
#define ACCEL_OPENCV_DNN_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

#define OCV_MAX_DIMS 8
#define OCV_MAX_CL 16

/* A float32 tensor, C order. */
struct ocv_tensor {
	int ndim;
	int64_t dims[OCV_MAX_DIMS];
	float *data;             /* inputs: the caller's; outputs: malloc'd, the caller frees */
};

/* An OpenCL device as OpenCV sees it. */
struct ocv_cl_device {
	int platform, index;     /* OpenCV's platform and device numbers */
	char name[128], vendor[64], platform_name[64];
	int cpu;                 /* CL_DEVICE_TYPE_CPU: a software device (PoCL) */
	uint64_t memory;
};

struct ocv_net;

/*
 * dnn.cpp is built into the plugin's companion object opencv/dnn.so, linked
 * to OpenCV (and libstdc++), which the probe loads (accel_probe_dlopen): a
 * program that never probes opencv maps none of OpenCV. It exports only
 * this table, as ocv_api_dnn.
 */
#define OCV_API_VERSION 1
struct ocv_api {
	unsigned version;    /* OCV_API_VERSION: the plugin and the companion are of one build */
	/* Once per process, before anything else: OpenCV's logging silenced
	 * (stderr is the program's), and OpenCV DNN allowed to use OpenCL
	 * devices that are not GPUs (it otherwise falls back to its CPU path
	 * without a word). */
	void (*init)(void);
	/* OpenCV's version string ("4.6.0"). */
	const char *(*version_string)(void);
	/* The OpenCL devices OpenCV reaches (at most max), or -1 when OpenCV
	 * has no OpenCL. Calls into the OpenCL driver: run it bounded. */
	int (*cl_devices)(struct ocv_cl_device *d, int max);
	/* Load the ONNX model at path for OpenCV's CPU path (cl NULL) or for
	 * the OpenCL target on device cl. threads > 0: OpenCV's threads
	 * (process-wide). NULL with the reason in err[len] when OpenCV cannot
	 * load it. */
	struct ocv_net *(*net_load)(const char *path, const struct ocv_cl_device *cl, int threads, char *err,
				    size_t len);
	/* Run the net: inputs in[nin] named names[nin]; outputs outnames[nout]
	 * into out[nout] (data malloc'd). 0, or -1 with OpenCV's message. One
	 * thread at a time per net. */
	int (*net_run)(struct ocv_net *n, int nin, const char *const *names, const struct ocv_tensor *in, int nout,
		       const char *const *outnames, struct ocv_tensor *out, char *err, size_t len);
	void (*net_free)(struct ocv_net *n);
};
extern __attribute__((visibility("default"))) const struct ocv_api ocv_api_dnn;

#ifdef __cplusplus
}
#endif
#endif
