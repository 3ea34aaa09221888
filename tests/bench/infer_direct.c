/*
 * infer_direct.c - ONNX Runtime driven directly through its C API, the
 * yardstick of tests/bench/infer.sh: load MODEL with T intra-op threads
 * (time apart), then run its one float input of shape DIMS (batch first)
 * N times at batch 1 and at batch 8 with fixed pseudo-random data, and
 * print, per batch size, latency percentiles (ms per run), throughput
 * (inputs per second) and the process's CPU time per input.
 *
 *   infer_direct MODEL THREADS N D1,D2,...   (D1 is the batch dim, set per run)
 *
 * With --serve it is accel-bench's peer of onnx.run (--vs): it loads MODEL,
 * prints "load SECONDS", then runs its input of shape DIMS (the batch
 * first, as given) once per line read on stdin and answers each with a line
 * "WALL CPU": the seconds of that run and the CPU seconds of the process
 * during it; it ends at the end of stdin. With NPY, each run reads its
 * input from that .npy file (version 1 or 2, float32 of shape DIMS), as
 * accel-bench's side reads it, and writes its output to /dev/null, as
 * accel-bench's side does; without, it runs values made once in memory.
 *
 *   infer_direct --serve MODEL THREADS D1,D2,... [NPY]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <onnxruntime_c_api.h>

static const OrtApi *api;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void check(OrtStatus *st)
{
	if (st) {
		fprintf(stderr, "infer_direct: %s\n", api->GetErrorMessage(st));
		exit(1);
	}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The same pseudo-random values as accel-bench's input of onnx.run. */
static float *make_input(size_t count)
{
	float *x = malloc(count * sizeof *x);
	unsigned r = 1;
	for (size_t i = 0; x && i < count; i++) {
		r = r * 1103515245u + 12345u;
		x[i] = (float)((r >> 8) & 0xffff) / 65536.0f - 0.5f;
	}
	return x;
}

/* Read the .npy file `path` into buf[cap] and make *in, a float tensor of
 * shape dims over its data (`bytes` of it). The header's length is the
 * little-endian uint16 at byte 8 (format version 1) or uint32 (version 2)
 * after the 6-byte magic and the 2 version bytes (NumPy's format spec,
 * numpy.lib.format). 0, or -1 after a message. */
static int read_npy(const char *path, unsigned char *buf, size_t cap, size_t bytes, const OrtMemoryInfo *mem,
		    const int64_t *dims, int nd, OrtValue **in)
{
	FILE *f = fopen(path, "re");
	size_t n = f ? fread(buf, 1, cap, f) : 0;
	if (f)
		fclose(f);
	size_t head = n >= 12 ? (buf[6] == 1 ? 10 + (buf[8] | (size_t)buf[9] << 8) :
				10 + 2 + (buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24)) : 0;
	if (!head || n < head + bytes) {
		fprintf(stderr, "infer_direct: %s: not a .npy of %zu bytes of data\n", path, bytes);
		return -1;
	}
	check(api->CreateTensorWithDataAsOrtValue(mem, buf + head, bytes, dims, (size_t)nd,
						  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, in));
	return 0;
}

int main(int argc, char **argv)
{
	int serve = (argc == 5 || argc == 6) && !strcmp(argv[1], "--serve");
	if (argc != 5 && !serve)
		return 2;
	const char *npy = argc == 6 ? argv[5] : NULL;
	argv += serve;
	api = OrtGetApiBase()->GetApi(ORT_API_VERSION);
	int threads = atoi(argv[2]), n = serve ? 0 : atoi(argv[3]);
	int64_t dims[8];
	int nd = 0;
	for (char *s = argv[serve ? 3 : 4]; *s && nd < 8; s++) {
		dims[nd++] = strtoll(s, &s, 10);
		if (!*s)
			break;
	}
	OrtEnv *env;
	check(api->CreateEnv(ORT_LOGGING_LEVEL_FATAL, "bench", &env));
	OrtSessionOptions *so;
	check(api->CreateSessionOptions(&so));
	if (threads > 0)
		check(api->SetIntraOpNumThreads(so, threads));
	check(api->SetInterOpNumThreads(so, 1));
	check(api->SetSessionGraphOptimizationLevel(so, ORT_ENABLE_ALL));
	/* As the onnxruntime backend sets it; INFER_DIRECT_SPIN=1 keeps ONNX
	 * Runtime's default (threads spin between parallel sections). */
	const char *spin = getenv("INFER_DIRECT_SPIN");
	if (!spin || strcmp(spin, "1"))
		check(api->AddSessionConfigEntry(so, "session.intra_op.allow_spinning", "0"));
	double t0 = now();
	OrtSession *s;
	check(api->CreateSession(env, argv[1], so, &s));
	double load = now() - t0;
	OrtAllocator *al;
	check(api->GetAllocatorWithDefaultOptions(&al));
	char *in_name, *out_name;
	check(api->SessionGetInputName(s, 0, al, &in_name));
	check(api->SessionGetOutputName(s, 0, al, &out_name));
	OrtMemoryInfo *mem;
	check(api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &mem));
	if (serve) {
		size_t count = 1;
		for (int i = 0; i < nd; i++)
			count *= (size_t)dims[i];
		float *x = make_input(count);
		OrtValue *in, *out;
		check(api->CreateTensorWithDataAsOrtValue(mem, x, count * sizeof *x, dims, (size_t)nd,
							  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &in));
		if (npy)
			api->ReleaseValue(in);
		printf("load %.9f\n", load);
		fflush(stdout);
		char line[64];
		FILE *sink = npy ? fopen("/dev/null", "we") : NULL;
		size_t cap = count * sizeof *x + 65536;
		unsigned char *buf = npy ? malloc(cap) : NULL;
		if (npy && (!sink || !buf))
			return 1;
		while (fgets(line, sizeof line, stdin)) {
			double a = now(), c = cpu_now();
			if (npy && read_npy(npy, buf, cap, count * sizeof *x, mem, dims, nd, &in) < 0)
				return 1;
			out = NULL;
			check(api->Run(s, NULL, (const char *const *)&in_name, (const OrtValue *const *)&in, 1,
				       (const char *const *)&out_name, 1, &out));
			if (sink) {
				void *y;
				OrtTensorTypeAndShapeInfo *info;
				size_t nel;
				check(api->GetTensorMutableData(out, &y));
				check(api->GetTensorTypeAndShape(out, &info));
				check(api->GetTensorShapeElementCount(info, &nel));
				api->ReleaseTensorTypeAndShapeInfo(info);
				if (fwrite(y, sizeof(float), nel, sink) != nel || fflush(sink))
					return 1;
				api->ReleaseValue(in);
			}
			api->ReleaseValue(out);
			printf("%.9f %.9f\n", now() - a, cpu_now() - c);
			if (fflush(stdout))
				return 1;
		}
		return 0;
	}
	printf("direct load %.3f s\n", load);
	for (int batch = 1; batch <= 8; batch += 7) {
		dims[0] = batch;
		size_t count = 1;
		for (int i = 0; i < nd; i++)
			count *= (size_t)dims[i];
		float *x = make_input(count);
		OrtValue *in;
		check(api->CreateTensorWithDataAsOrtValue(mem, x, count * sizeof *x, dims, (size_t)nd,
							  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &in));
		int runs = n / batch > 4 ? n / batch : 4;
		double *lat = malloc((size_t)runs * sizeof *lat);
		/* One run to warm up, as accel-infer's first batch does. */
		OrtValue *out = NULL;
		check(api->Run(s, NULL, (const char *const *)&in_name, (const OrtValue *const *)&in, 1,
			       (const char *const *)&out_name, 1, &out));
		api->ReleaseValue(out);
		double t1 = now(), c1 = cpu_now();
		for (int k = 0; k < runs; k++) {
			double a = now();
			out = NULL;
			check(api->Run(s, NULL, (const char *const *)&in_name, (const OrtValue *const *)&in, 1,
				       (const char *const *)&out_name, 1, &out));
			api->ReleaseValue(out);
			lat[k] = (now() - a) * 1000;
		}
		double total = now() - t1, cpu = cpu_now() - c1;
		qsort(lat, (size_t)runs, sizeof *lat, cmp);
		printf("direct batch %d: p50 %.2f ms p90 %.2f ms p99 %.2f ms, %.1f inputs/s, %.3f ms CPU/input\n", batch,
		       lat[runs / 2], lat[runs * 9 / 10], lat[(runs * 99) / 100], runs * batch / total,
		       cpu * 1000 / (runs * batch));
		api->ReleaseValue(in);
		free(lat);
		free(x);
	}
	return 0;
}
