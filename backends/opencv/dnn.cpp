/*
 * dnn.cpp - OpenCV DNN behind the C interface of dnn.h: the only C++ of
 * the opencv backend. Every call catches OpenCV's exceptions and returns
 * their message (one line) instead.
 */
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <string>
#include <vector>
#include <pthread.h>
#include <CL/cl.h>
#include <opencv2/core.hpp>
#include <opencv2/core/ocl.hpp>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>
#include "dnn.h"

struct ocv_net {
	cv::dnn::Net net;
	bool cl;
	cv::ocl::OpenCLExecutionContext clctx;
	FILE *sink;              /* /dev/null, stdout while OpenCL kernels build */
};

/*
 * OpenCV 4.6 printf()s the log of an OpenCL program that fails to build to
 * stdout, then fflush(stdout)es it (core/src/ocl.cpp); OpenCV DNN builds
 * such programs on purpose, to test options: PoCL refuses
 * -cl-no-subgroup-ifp on every convolution. stdout carries the program's
 * output, so while the OpenCL target runs, the process's stdout stream
 * points at /dev/null. accel's programs write their output through file
 * descriptors (io.c), not through stdout, while a stream runs; the lock
 * keeps two OpenCL engines of this backend from swapping it at once.
 */
static pthread_mutex_t stdout_lock = PTHREAD_MUTEX_INITIALIZER;

struct quiet_stdout {
	FILE *saved;
	explicit quiet_stdout(FILE *sink) : saved(NULL)
	{
		if (!sink)
			return;
		pthread_mutex_lock(&stdout_lock);
		fflush(stdout);
		saved = stdout;
		stdout = sink;
	}
	~quiet_stdout()
	{
		if (!saved)
			return;
		fflush(stdout);
		stdout = saved;
		pthread_mutex_unlock(&stdout_lock);
	}
};

/* OpenCV's message of e on one line: the innermost error ("OpenCV(4.6.0)
 * FILE:LINE: error: (CODE:NAME) WHAT in function 'F'" and the details of a
 * failed check after it), after the ONNX node it concerns when the importer
 * names one; the source file and function left out. */
static void exc_msg(const cv::Exception &e, char *err, size_t len)
{
	std::string m = e.err, node, what, out;
	size_t k = m.find("Node [");
	if (k != std::string::npos) {
		size_t end = m.find(']', k);
		if (end != std::string::npos)
			node = m.substr(k, end - k + 1) + ": ";
	}
	what = m;
	k = m.rfind("error: (");
	if (k != std::string::npos && (k = m.find(") ", k)) != std::string::npos) {
		size_t code = m.rfind("error: (", k);
		if (m.compare(m.find(':', code + 8) + 1, 16, "Assertion failed") == 0)
			node += "assertion failed: ";
		what = m.substr(k + 2);
	}
	k = what.find("in function '");
	if (k != std::string::npos) {
		size_t end = what.find('\'', k + 13);
		what.erase(k, end == std::string::npos ? std::string::npos : end - k + 1);
	}
	/* Lines joined, OpenCV's "> " quoting and runs of blanks dropped. */
	what = node + what;
	bool bol = false;
	for (char c : what) {
		if (c == '\n' || c == '\r') {
			bol = true;
			c = ' ';
		} else if (bol && (c == '>' || c == ' ')) {
			continue;
		} else {
			bol = false;
		}
		if (c == '\t')
			c = ' ';
		if (c == ' ' && (out.empty() || out.back() == ' '))
			continue;
		out += c;
	}
	while (!out.empty() && out.back() == ' ')
		out.pop_back();
	std::snprintf(err, len, "%s", out.c_str());
}

static void ocv_init(void)
{
	cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
	/* Read on the first net set up (a function-local static in 4.6):
	 * without it OpenCV DNN runs its CPU path on an OpenCL CPU device. */
	setenv("OPENCV_DNN_OPENCL_ALLOW_ALL_DEVICES", "1", 0);
}

static const char *ocv_version(void)
{
	return CV_VERSION;
}

static int ocv_cl_devices(struct ocv_cl_device *d, int max)
{
	int n = 0;
	try {
		if (!cv::ocl::haveOpenCL())
			return -1;
		std::vector<cv::ocl::PlatformInfo> plats;
		cv::ocl::getPlatfomsInfo(plats);
		for (size_t p = 0; p < plats.size(); p++)
			for (int i = 0; i < plats[p].deviceNumber() && n < max; i++) {
				cv::ocl::Device dev;
				plats[p].getDevice(dev, i);
				struct ocv_cl_device *x = &d[n++];
				std::memset(x, 0, sizeof *x);
				x->platform = (int)p;
				x->index = i;
				std::snprintf(x->name, sizeof x->name, "%s", dev.name().c_str());
				std::snprintf(x->vendor, sizeof x->vendor, "%s", dev.vendorName().c_str());
				std::snprintf(x->platform_name, sizeof x->platform_name, "%s", plats[p].name().c_str());
				x->cpu = dev.type() == cv::ocl::Device::TYPE_CPU;
				x->memory = (uint64_t)dev.globalMemSize();
			}
	} catch (const cv::Exception &) {
		return n ? n : -1;
	}
	return n;
}

static struct ocv_net *ocv_net_load(const char *path, const struct ocv_cl_device *cl, int threads, char *err,
					size_t len)
{
	struct ocv_net *n = new (std::nothrow) ocv_net();
	if (!n) {
		std::snprintf(err, len, "out of memory");
		return NULL;
	}
	try {
		if (threads > 0)
			cv::setNumThreads(threads);
		n->net = cv::dnn::readNetFromONNX(path);
		n->net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
		n->cl = cl != NULL;
		if (cl) {
			std::vector<cv::ocl::PlatformInfo> plats;
			cv::ocl::getPlatfomsInfo(plats);
			if (cl->platform >= (int)plats.size() || cl->index >= plats[cl->platform].deviceNumber()) {
				std::snprintf(err, len, "OpenCL device %s is gone", cl->name);
				delete n;
				return NULL;
			}
			cv::ocl::Device dev;
			plats[cl->platform].getDevice(dev, cl->index);
			/* A context of our own on that one device, handed to
			 * OpenCV (which takes its reference). */
			cl_device_id id = (cl_device_id)dev.ptr();
			cl_platform_id plat = NULL;
			cl_int rc = clGetDeviceInfo(id, CL_DEVICE_PLATFORM, sizeof plat, &plat, NULL);
			cl_context_properties props[] = { CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0 };
			cl_context ctx = rc == CL_SUCCESS ? clCreateContext(props, 1, &id, NULL, NULL, &rc) : NULL;
			if (!ctx) {
				std::snprintf(err, len, "clCreateContext on %s failed (OpenCL error %d)", cl->name, (int)rc);
				delete n;
				return NULL;
			}
			clRetainDevice(id);
			n->clctx = cv::ocl::OpenCLExecutionContext::create(plats[cl->platform].name(), plat, ctx, id);
			cv::ocl::setUseOpenCL(true);
			n->net.setPreferableTarget(cv::dnn::DNN_TARGET_OPENCL);
			if (!(n->sink = std::fopen("/dev/null", "we"))) {
				std::snprintf(err, len, "cannot open /dev/null");
				delete n;
				return NULL;
			}
		} else {
			n->net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
		}
		if (n->net.empty()) {
			std::snprintf(err, len, "OpenCV read no layer from it");
			delete n;
			return NULL;
		}
	} catch (const cv::Exception &e) {
		exc_msg(e, err, len);
		delete n;
		return NULL;
	} catch (const std::exception &e) {
		std::snprintf(err, len, "%s", e.what());
		delete n;
		return NULL;
	}
	return n;
}

static int ocv_net_run(struct ocv_net *n, int nin, const char *const *names, const struct ocv_tensor *in,
			   int nout, const char *const *outnames, struct ocv_tensor *out, char *err, size_t len)
{
	for (int i = 0; i < nout; i++)
		out[i].data = NULL;
	try {
		/* The device's context, on the thread that runs the net. */
		quiet_stdout quiet(n->cl ? n->sink : NULL);
		if (n->cl)
			n->clctx.bind();
		for (int i = 0; i < nin; i++) {
			int sizes[OCV_MAX_DIMS];
			for (int k = 0; k < in[i].ndim; k++)
				sizes[k] = (int)in[i].dims[k];
			int nd = in[i].ndim;
			if (nd == 0)
				sizes[nd++] = 1;
			cv::Mat m(nd, sizes, CV_32F, in[i].data);
			n->net.setInput(m, names[i]);
		}
		std::vector<cv::String> want(outnames, outnames + nout);
		std::vector<cv::Mat> res;
		n->net.forward(res, want);
		if ((int)res.size() != nout) {
			std::snprintf(err, len, "OpenCV gave %zu outputs for %d", res.size(), nout);
			return -1;
		}
		for (int i = 0; i < nout; i++) {
			cv::Mat m = res[i].isContinuous() ? res[i] : res[i].clone();
			if (m.type() != CV_32F || m.dims > OCV_MAX_DIMS) {
				std::snprintf(err, len, "output '%s' is not a float32 tensor of at most %d dims", outnames[i],
					      OCV_MAX_DIMS);
				return -1;
			}
			out[i].ndim = m.dims;
			for (int k = 0; k < m.dims; k++)
				out[i].dims[k] = m.size[k];
			size_t bytes = m.total() * sizeof(float);
			out[i].data = (float *)std::malloc(bytes ? bytes : 1);
			if (!out[i].data) {
				std::snprintf(err, len, "out of memory");
				return -1;
			}
			std::memcpy(out[i].data, m.ptr<float>(), bytes);
		}
	} catch (const cv::Exception &e) {
		exc_msg(e, err, len);
		return -1;
	} catch (const std::exception &e) {
		std::snprintf(err, len, "%s", e.what());
		return -1;
	}
	return 0;
}

static void ocv_net_free(struct ocv_net *n)
{
	if (n && n->sink)
		std::fclose(n->sink);
	delete n;
}

extern "C" const struct ocv_api ocv_api_dnn = {
	OCV_API_VERSION, ocv_init, ocv_version, ocv_cl_devices, ocv_net_load, ocv_net_run, ocv_net_free,
};
