/*
 * accel-infer - ONNX model inference on a stream of tensors (.npy arrays or
 * raw), with batching, timed flush and device routing: the model runs on
 * the engines that offer onnx.run (ONNX Runtime's providers, OpenCV DNN),
 * the first that can load it first.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "infer/infer.h"

struct job {
	const char *model, *labels_path, *crops_path;
	int info, batch, topk;
	int parallel;            /* runs at once on a CPU engine, 0: auto */
	int max_wait_ms;         /* -1: wait for a full batch */
	const char *decode;      /* "ctc", "db" or NULL */
	struct db_opts db;
	const char *shape, *dtype;
	const char *input_names[INFER_MAX_IO], *input_files[INFER_MAX_IO];
	int ninputs;
	const char *dim_names[INFER_MAX_IO];
	int64_t dim_values[INFER_MAX_IO];
	int ndims;
	const char *outputs[INFER_MAX_IO];
	int noutputs;
	struct image_opts image;
	struct accel_common common;   /* -o, -f, --json, -v ... */
	struct accel_report *report;  /* --json without --info: the -v report, on stderr at the end */
};
#define JOB(field) ACCEL_AT(struct job, field)

/* "0.5" (every channel) or "0.485,0.456,0.406" into v[3]. */
static int parse_triple(const char *s, float *v, int nonzero)
{
	for (int c = 0; c < 3; c++) {
		char *end;
		errno = 0;
		double x = strtod(s, &end);
		if (end == s || errno || !isfinite(x) || (nonzero && x == 0))
			return -1;
		v[c] = (float)x;
		if (*end == 0 && c == 0) {
			v[1] = v[2] = v[0];
			return 0;
		}
		if (c < 2 && *end != ',')
			return -1;
		if (c == 2 && *end)
			return -1;
		s = end + 1;
	}
	return 0;
}

/* Split "NAME=VALUE" at its '=' (NAME non-empty). */
static int split_pair(char *arg, const char **name, const char **value)
{
	char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		return -1;
	*eq = 0;
	*name = arg;
	*value = eq + 1;
	return 0;
}

static int dtype_option(void *v, const char *arg)
{
	if (accel_dtype_parse(arg) < 0) {
		accel_msg_usage("--dtype: '%s' is not a dtype (float32, uint8 ...)", arg);
		return ACCEL_EINVAL;
	}
	((struct job *)v)->dtype = arg;
	return 0;
}

static int resize_option(void *v, const char *arg)
{
	struct job *job = v;
	char *end;
	long w = strtol(arg, &end, 10), h = -1;
	if (end != arg && *end == 'x')
		h = strtol(end + 1, &end, 10);
	if (h < 0 || *end || w < 0 || w > 16384 || h > 16384 || !(w || h)) {
		accel_msg_usage("--resize: '%s' is not WxH (0 for one side keeps the ratio)", arg);
		return ACCEL_EINVAL;
	}
	job->image.width = (int)w;
	job->image.height = (int)h;
	return 0;
}

static int mean_option(void *v, const char *arg)
{
	if (parse_triple(arg, ((struct job *)v)->image.mean, 0) < 0) {
		accel_msg_usage("--mean: '%s' is not one number or three separated by commas", arg);
		return ACCEL_EINVAL;
	}
	return 0;
}

static int std_option(void *v, const char *arg)
{
	if (parse_triple(arg, ((struct job *)v)->image.std, 1) < 0) {
		accel_msg_usage("--std: '%s' is not one number or three separated by commas (not 0)", arg);
		return ACCEL_EINVAL;
	}
	return 0;
}

static int output_option(void *v, const char *arg)
{
	struct job *job = v;
	if (job->noutputs == INFER_MAX_IO) {
		accel_msg_usage("--output: at most %d", INFER_MAX_IO);
		return ACCEL_EINVAL;
	}
	job->outputs[job->noutputs++] = arg;
	return 0;
}

static int input_option(void *v, const char *arg)
{
	struct job *job = v;
	const char *name, *value;
	if (job->ninputs == INFER_MAX_IO || split_pair((char *)arg, &name, &value) < 0 || !*value) {
		accel_msg_usage("--input: '%s' is not NAME=FILE", arg);
		return ACCEL_EINVAL;
	}
	job->input_names[job->ninputs] = name;
	job->input_files[job->ninputs++] = value;
	return 0;
}

static int dim_option(void *v, const char *arg)
{
	struct job *job = v;
	const char *name, *value;
	int n;
	if (job->ndims == INFER_MAX_IO || split_pair((char *)arg, &name, &value) < 0 ||
	    accel_parse_int(value, 0, 1 << 30, &n) < 0) {
		accel_msg_usage("--dim: '%s' is not NAME=N", arg);
		return ACCEL_EINVAL;
	}
	job->dim_names[job->ndims] = name;
	job->dim_values[job->ndims++] = n;
	return 0;
}

static const struct accel_option options[] = {
	{ 'm', "model", "FILE", "the ONNX model to run (required)", "file", ACCEL_STRING(JOB(model)) },
	{ 0, "info", NULL, "print the model's inputs and outputs (names, dtypes, shapes) and exit", ACCEL_SET(JOB(info), 1) },
	{ 0, "json", NULL, "with --info: print JSON; else the -v report (route, devices, statistics, probes, exit status) as one JSON document on stderr", ACCEL_COMMON(ACCEL_OPT_JSON) },
	{ 'i', "input", "NAME=FILE", "read the model input NAME from FILE (.npy arrays; repeat for each input)", ACCEL_CALL(input_option) },
	{ 0, "shape", "DIMS", "the stream holds raw tensors of this shape (\"1,3,224,224\"; default the model's)", ACCEL_STRING(JOB(shape)) },
	{ 0, "dtype", "TYPE", "the stream holds raw tensors of this dtype (float32, uint8 ...; default the model's)", "float32 float64 float16 int8 uint8 int16 uint16 int32 uint32 int64 uint64 bool", ACCEL_CALL(dtype_option) },
	{ 0, "resize", "WxH", "images: scale to W by H pixels (0 for one side keeps the aspect ratio; default the image's size)", ACCEL_CALL(resize_option) },
	{ 0, "scale", "X", "images: multiply each pixel value (0-255) by X first (default 1/255)", ACCEL_DOUBLE(JOB(image.scale), 0, 0, "a number") },
	{ 0, "mean", "M[,M,M]", "images: subtract M (per channel R,G,B) after --scale (default 0)", ACCEL_CALL(mean_option) },
	{ 0, "std", "S[,S,S]", "images: then divide by S (per channel; default 1)", ACCEL_CALL(std_option) },
	{ 0, "layout", "LAYOUT", "images: nchw (1,3,H,W; the default) or nhwc (1,H,W,3)", "nchw nhwc", ACCEL_CHOICE(JOB(image.nhwc)) },
	{ 0, "bgr", NULL, "images: channels in B,G,R order (models trained with OpenCV)", ACCEL_SET(JOB(image.bgr), 1) },
	{ 0, "align", "N", "images: round each side, after --resize, to the nearest multiple of N (32 for PaddleOCR's detectors)", ACCEL_INT(JOB(image.align), 1, 4096, "a count from 1 to 4096") },
	{ 0, "crops", "FILE", "images: feed the model each box of FILE (JSON lines {\"input\":I,\"box\":[x0,y0,x1,y1]}, as --decode db writes; - for stdin) cut from image I, not the whole image", "file", ACCEL_STRING(JOB(crops_path)) },
	{ 0, "dim", "NAME=N", "set the model's symbolic dimension NAME to N (repeatable)", ACCEL_CALL(dim_option) },
	{ 0, "output", "NAME", "write only the model output NAME (repeatable; default all)", ACCEL_CALL(output_option) },
	{ 0, "batch", "N", "run up to N consecutive inputs at once (1-1024), where the model keeps them apart along axis 0", ACCEL_INT(JOB(batch), 1, 1024, "a count from 1 to 1024") },
	{ 0, "parallel", "N", "run up to N batches at once on a CPU engine, each on -T/N threads (0, the default: one per core for a stream of inputs, 1 for a lone input)", ACCEL_INT(JOB(parallel), 0, 4096, "a count from 0 to 4096") },
	{ 0, "max-wait", "MS", "send a partial batch when no input came for MS milliseconds (0: at once, with the inputs already there)", ACCEL_INT(JOB(max_wait_ms), 0, 3600000, "a number of milliseconds") },
	{ 0, "topk", "K", "print the K best classes of each input as JSON lines (1-256)", ACCEL_INT(JOB(topk), 1, 256, "a count from 1 to 256") },
	{ 0, "labels", "FILE", "class names, one a line, for --topk and --decode", "file", ACCEL_STRING(JOB(labels_path)) },
	{ 0, "decode", "ctc|db", "decode each input's output into JSON lines: ctc, text (greedy CTC; needs --labels); db, the boxes of text in a DB detector's probability map, in the image's pixels", "ctc db", ACCEL_WORD(JOB(decode)) },
	{ 0, "db-thresh", "P", "--decode db: a pixel is text above probability P (default 0.3)", ACCEL_DOUBLE(JOB(db.thresh), 0, 1, "a probability from 0 to 1") },
	{ 0, "db-box-thresh", "P", "--decode db: keep a box whose mean probability is at least P (default 0.6)", ACCEL_DOUBLE(JOB(db.box_thresh), 0, 1, "a probability from 0 to 1") },
	{ 0, "db-unclip", "R", "--decode db: grow each box by its area times R over its perimeter on every side (default 1.5)", ACCEL_DOUBLE(JOB(db.unclip), 0, 100, "a ratio from 0 to 100") },
	{ 'o', "output-file", "FILE", "write to FILE (complete or not at all) instead of stdout", "file", ACCEL_COMMON(ACCEL_OPT_OUTPUT) },
	ACCEL_FORCE_OPTION,
	ACCEL_BACKEND_OPTION_TEXT("engines to use, in order, joined by ,: auto (the default), onnxruntime (or its variants onnxruntime.cpu, onnxruntime.cuda, onnxruntime.tensorrt), opencv (the CPU), opencv.opencl (OpenCL GPUs); an engine on a software device by its full name, as accel-detect --routes onnx.run shows it: opencv.opencl:gpu1"),
	{ 0, "fallback", "POLICY", "when an engine fails on a batch: retry on cpu, on the next engine, or none (fail)", "cpu next none", ACCEL_COMMON(ACCEL_OPT_FALLBACK) },
	{ 'T', "threads", "N", "the threads of the runs together (intra-op; 0: all cores, or the engine's default for one run at a time); --parallel N gives each run T/N", ACCEL_COMMON(ACCEL_OPT_THREADS) },
	{ 0, "progress", NULL, "show the inputs run and inferences per second on stderr (default when stderr is a terminal and stdout is not)", ACCEL_COMMON(ACCEL_OPT_PROGRESS) },
	{ 0, "no-progress", NULL, "never show a progress meter", ACCEL_COMMON(ACCEL_OPT_NO_PROGRESS) },
	ACCEL_VERBOSE_OPTION_TEXT("say more on stderr: the route, why --batch runs items one by one, each input's engine statistics"),
	ACCEL_QUIET_HELP_OPTIONS,
	{ 0 },
};

static const int exit_statuses[] = {
	ACCEL_EXIT_OK, ACCEL_EXIT_FAILURE, ACCEL_EXIT_USAGE, ACCEL_EXIT_DATA, -1,
};

static const struct accel_cli cli = {
	"accel-infer", "-m MODEL.onnx [options] [FILE...]",
	"Run an ONNX model on each tensor of FILEs (or stdin): .npy arrays in, .npy arrays or JSON lines out.",
	options, exit_statuses, NULL, NULL,
};

/* The options into job: 0, -1 (exit 0) or the exit status. */
static int parse_args(int argc, char **argv, struct job *job)
{
	memset(job, 0, sizeof *job);
	job->batch = 1;
	job->max_wait_ms = -1;
	job->image.scale = 1.0f / 255;
	job->image.std[0] = job->image.std[1] = job->image.std[2] = 1;
	/* PaddleOCR's det_db_thresh, det_db_box_thresh, det_db_unclip_ratio. */
	job->db = (struct db_opts){ 0.3, 0.6, 1.5 };
	int rc = accel_parse(&cli, argc, argv, job, &job->common);
	if (rc)
		return rc;
	if (!job->model) {
		accel_msg_usage("no model: give -m MODEL.onnx");
		return ACCEL_EXIT_USAGE;
	}
	if (job->decode && !strcmp(job->decode, "ctc") && !job->labels_path) {
		accel_msg_usage("--decode ctc needs --labels FILE");
		return ACCEL_EXIT_USAGE;
	}
	if (job->decode && job->topk) {
		accel_msg_usage("--topk and --decode cannot be used together");
		return ACCEL_EXIT_USAGE;
	}
	char why[320];
	if (job->decode && !strcmp(job->decode, "db") && db_ready(why, sizeof why)) {
		accel_msg_error("--decode db: %s", why);
		return ACCEL_EXIT_FAILURE;
	}
	if (job->crops_path && (job->shape || job->dtype)) {
		accel_msg_usage("--crops cuts images: not with --shape or --dtype");
		return ACCEL_EXIT_USAGE;
	}
	if (job->crops_path && !strcmp(job->crops_path, "-") && !job->common.noperands) {
		accel_msg_usage("--crops - reads the boxes from stdin: give the images as FILEs");
		return ACCEL_EXIT_USAGE;
	}
	return 0;
}

/* ------------------------------------------------- one unit into memory */

static int one_unit(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	int *done = user;
	if (*done)
		return 0;
	*done = 1;
	u->in.len = 0;
	u->offset = 0;
	u->last = 1;
	return 1;
}

/* Route `op` (-v: the route) and report a failure; the exit status. */
static int route(struct accel_ctx *ctx, const struct job *job, const struct accel_op *op, struct accel_route *r)
{
	struct accel_route_req req = { op, job->common.backend, -1, NULL };
	int rc = accel_route(ctx, &req, r);
	if (job->report) {
		if (accel_report_route(job->report, r) < 0 || accel_report_route_devices(job->report, ctx, r) < 0) {
			accel_msg_error("out of memory");
			return ACCEL_EXIT_FAILURE;
		}
	} else if (job->common.verbose) {
		accel_route_print(r, stderr);
	}
	if (rc == ACCEL_EINVAL) {
		accel_msg_usage("--backend: malformed list '%s'", job->common.backend ? job->common.backend : "");
		return ACCEL_EXIT_USAGE;
	}
	if (rc < 0) {
		/* The first engine left out that offers the operation says
		 * why: the model it could not load, the library missing. */
		const struct accel_route_entry *why = NULL;
		for (int i = r->nranked; i < r->n && !why; i++)
			if (strncmp(r->entries[i].reason, "does not offer", 14))
				why = &r->entries[i];
		if (r->no_engine[0])
			accel_msg_error("%s", r->no_engine);
		else if (why && !job->common.verbose)
			accel_msg_error("%s: no engine can run the model: %s: %s", job->model, why->name, why->reason);
		else
			accel_msg_error("%s: no engine can run the model%s", job->model,
					job->common.verbose ? "" : " (try -v for the reasons)");
		return ACCEL_EXIT_FAILURE;
	}
	return 0;
}

static struct accel_stream_config stream_config(const struct job *job)
{
	struct accel_stream_config cfg = {
		/* One worker per engine: one session, its threads set by -T. */
		.threads = 1,
		.fallback = job->common.fallback,
		.total_size = -1,
		.prog = cli.prog,
		.verbose = job->common.quiet ? -1 : job->common.verbose,
	};
	return cfg;
}

/* Learn the model's inputs and outputs through onnx.info. */
static int model_info(struct accel_ctx *ctx, const struct job *job, struct accel_op *op, struct model_info *m,
		      char **json_out)
{
	op->name = "onnx.info";
	struct accel_route r;
	int st = route(ctx, job, op, &r);
	if (st)
		return st;
	int fd = memfd_create("accel-infer-info", MFD_CLOEXEC);
	struct accel_output out;
	if (fd < 0 || accel_output_fd(&out, fd) < 0) {
		accel_msg_error("cannot create a memory file: %s", strerror(errno));
		return ACCEL_EXIT_FAILURE;
	}
	struct accel_input in;
	accel_input_mem(&in, "", 0, job->model);
	int done = 0;
	struct accel_stream_ops ops = { one_unit, NULL, NULL, NULL };
	struct accel_stream_config cfg = stream_config(job);
	char err[512] = "";
	int rc = accel_stream_run(ctx, &cfg, &r, op, &ops, &done, &in, &out, NULL, err, sizeof err);
	accel_input_close(&in);
	accel_output_commit(&out);
	if (rc < 0) {
		close(fd);
		accel_msg_error("%s: %s", job->model, err[0] ? err : accel_strerror(rc));
		return accel_exit_status(rc) == ACCEL_EXIT_USAGE ? ACCEL_EXIT_FAILURE : accel_exit_status(rc);
	}
	off_t size = lseek(fd, 0, SEEK_END);
	char *json = size > 0 ? malloc((size_t)size + 1) : NULL;
	if (!json || pread(fd, json, (size_t)size, 0) != size) {
		close(fd);
		free(json);
		accel_msg_error("%s: cannot read the model's description", job->model);
		return ACCEL_EXIT_FAILURE;
	}
	close(fd);
	json[size] = 0;
	if (model_info_parse(json, (size_t)size, m, err, sizeof err) < 0) {
		free(json);
		accel_msg_error("%s: %s", job->model, err);
		return ACCEL_EXIT_FAILURE;
	}
	*json_out = json;
	return 0;
}

static int print_info(const struct job *job, const struct model_info *m, const char *json, const char *engine)
{
	if (job->common.json) {
		cJSON *root = cJSON_Parse(json);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "schema_version", 1);
		cJSON_AddStringToObject(o, "model", job->model);
		cJSON_AddStringToObject(o, "engine", engine);
		cJSON_AddItemToObject(o, "inputs", cJSON_DetachItemFromObject(root, "inputs"));
		cJSON_AddItemToObject(o, "outputs", cJSON_DetachItemFromObject(root, "outputs"));
		cJSON_Delete(root);
		char *text = cJSON_Print(o);
		cJSON_Delete(o);
		if (!text)
			return ACCEL_EXIT_FAILURE;
		printf("%s\n", text);
		free(text);
	} else {
		printf("model: %s\nengine: %s\n", job->model, engine);
		for (int k = 0; k < 2; k++) {
			const struct io_desc *d = k ? m->out : m->in;
			int n = k ? m->nout : m->nin;
			printf("%s:\n", k ? "outputs" : "inputs");
			for (int i = 0; i < n; i++) {
				char desc[512];
				io_desc_str(&d[i], desc, sizeof desc);
				printf("  %-24s %s\n", d[i].name, desc);
			}
		}
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno == EPIPE)
			return 0;
		accel_msg_error("cannot write stdout: %s", strerror(errno));
		return ACCEL_EXIT_FAILURE;
	}
	return 0;
}

/* Index of the model input (or output) named `name`, or -1. */
static int find_io(const struct io_desc *d, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(d[i].name, name))
			return i;
	return -1;
}

/* Parse --shape "1,3,224,224" into t (dtype set apart). */
static int parse_shape(const char *s, struct accel_tensor *t)
{
	t->ndim = 0;
	while (*s) {
		char *end;
		errno = 0;
		long long v = strtoll(s, &end, 10);
		if (end == s || errno || v < 0 || v > (1LL << 40) || t->ndim == ACCEL_TENSOR_MAX_DIMS)
			return -1;
		t->dims[t->ndim++] = v;
		s = end;
		if (*s == ',' || *s == 'x')
			s++;
		else if (*s)
			return -1;
	}
	return t->ndim ? 0 : -1;
}

/*
 * Whether the model declares axis 0 the batch axis of every input and of
 * every output written: a free first dim (not set by --dim), the same
 * symbol where they name one. 0, or 1 with the reason in why.
 */
static int batch_axis(const struct model_info *m, const struct job *job, char *why, size_t len)
{
	const char *sym = NULL, *sym_of = NULL;
	for (int i = 0; i < m->nin + m->nout; i++) {
		int out = i >= m->nin;
		const struct io_desc *d = out ? &m->out[i - m->nin] : &m->in[i];
		if (out && job->noutputs) {
			int asked = 0;
			for (int k = 0; k < job->noutputs && !asked; k++)
				asked = !strcmp(job->outputs[k], d->name);
			if (!asked)
				continue;
		}
		int fixed = d->ndim < 1 || d->dims[0] >= 0;
		for (int k = 0; !fixed && k < job->ndims; k++)
			fixed = !strcmp(job->dim_names[k], d->sym[0]);
		char desc[256];
		io_desc_str(d, desc, sizeof desc);
		if (fixed) {
			snprintf(why, len, "%s '%s' has no free first dim: %s", out ? "output" : "input", d->name, desc);
			return 1;
		}
		if (d->sym[0][0] && sym && strcmp(sym, d->sym[0])) {
			snprintf(why, len, "the first dims of '%s' and '%s' are not one symbol: %s, %s", sym_of, d->name,
				 sym, d->sym[0]);
			return 1;
		}
		if (d->sym[0][0] && !sym) {
			sym = d->sym[0];
			sym_of = d->name;
		}
	}
	return 0;
}

/* The jobs: one per FILE operand, each with the reader as its user. */
struct run {
	struct job *job;
	char **files;
	struct reader *reader;
	struct accel_output *out;
	struct accel_input in;
	int open;
	int status;
};

static int job_start(void *arg, size_t k, struct accel_input **in, struct accel_output **out, void **user, char *err,
		     size_t len)
{
	struct run *r = arg;
	if (accel_input_open(&r->in, r->files[k]) < 0) {
		accel_msg_error("cannot read %s: %s", r->files[k], strerror(errno));
		r->status = ACCEL_EXIT_FAILURE;
		return ACCEL_EIO;
	}
	if (r->in.fd == 0 && isatty(0) && !r->job->common.force) {
		accel_msg_error("stdin is a terminal; give a FILE, a pipe or -f");
		accel_input_close(&r->in);
		r->status = ACCEL_EXIT_FAILURE;
		return ACCEL_EIO;
	}
	r->open = 1;
	r->reader->finished = 0;
	*in = &r->in;
	*out = r->out;
	*user = r->reader;
	return 0;
}

static void job_finish(void *arg, size_t k, int rc, const struct accel_stream_stats *stats, const char *err)
{
	struct run *r = arg;
	if (r->job->report) {
		accel_report_run(r->job->report, r->in.name, stats);
	} else if (r->job->common.verbose) {
		fprintf(stderr, "%s: %s: ", cli.prog, r->in.name);
		accel_stream_stats_print(stats, stderr);
	}
	if (rc < 0 && rc != ACCEL_EPIPE && !r->status) {
		/* The reader's lines name their input already. */
		int named = !strncmp(err, r->in.name, strlen(r->in.name));
		accel_msg_error("%s%s%s", named ? "" : r->in.name, named ? "" : ": ", err[0] ? err : accel_strerror(rc));
		r->status = accel_exit_status(rc) == ACCEL_EXIT_USAGE ? ACCEL_EXIT_FAILURE : accel_exit_status(rc);
	}
	accel_input_close(&r->in);
	r->open = 0;
}

/* Whether the job is one run of the model, as far as can be told before it
 * starts: one FILE (or standard input), a regular file holding one input:
 * an image (no .npy magic) or a .npy array that ends where the file does.
 * Pipes, several FILEs, --crops and raw tensors count as streams. */
static int lone_input(const struct job *job)
{
	if (job->crops_path || job->common.noperands > 1 || job->shape || job->dtype)
		return 0;
	const char *path = job->common.noperands ? job->common.operands[0] : "-";
	struct stat sb;
	/* Only a regular file is opened here: opening a FIFO would wait for
	 * its writer, and closing it could leave the writer without a reader. */
	if (strcmp(path, "-") && (stat(path, &sb) < 0 || !S_ISREG(sb.st_mode)))
		return 0;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) : 0;
	uint8_t head[4096];
	ssize_t n = -1;
	off_t at = 0;
	if (fd >= 0 && !fstat(fd, &sb) && S_ISREG(sb.st_mode) && (at = lseek(fd, 0, SEEK_CUR)) >= 0)
		n = pread(fd, head, sizeof head, at);
	if (fd > 0)
		close(fd);
	if (n <= 0)
		return 0;
	if (n < 6 || memcmp(head, "\x93NUMPY", 6))
		return 1;
	struct accel_tensor t;
	size_t hl = 0;
	uint64_t bytes = 0;
	char err[256];
	if (accel_npy_header_parse(head, (size_t)n, 0, &t, &hl, err, sizeof err) != 0 ||
	    accel_tensor_size(&t, 0, NULL, &bytes) < 0)
		return 0;
	/* The first array reaches the end (a header's sizes may lie: no sum
	 * that could wrap). */
	uint64_t left = (uint64_t)(sb.st_size - at);
	return hl >= left || bytes >= left - hl;
}

/* Run the parsed job on ctx: the exit status, after the message. */
static int infer_run(struct accel_ctx *ctx, const struct job *jp)
{
	struct job job = *jp;
	int st;
	if (access(job.model, R_OK) < 0) {
		accel_msg_error("%s: cannot read: %s", job.model, strerror(errno));
		return ACCEL_EXIT_FAILURE;
	}
	/* Runs at once on a CPU engine (the stream's workers, sharing the
	 * engine's session) and the threads of each: a small model gains
	 * little from threads within a run, and a stream of inputs keeps
	 * every core busy with runs of one thread each. */
	int cpus = job.common.threads > 0 ? job.common.threads : accel_cpu_count();
	int runs = job.parallel ? job.parallel : lone_input(&job) ? 1 : cpus;
	int intra = runs == 1 ? job.common.threads : cpus / runs > 1 ? cpus / runs : 1;
	struct accel_onnx_params params = {
		.model = job.model,
		.intra_threads = intra,
		.ndims = job.ndims,
		.dim_names = job.dim_names,
		.dim_values = job.dim_values,
		.noutputs = job.noutputs,
		.outputs = job.outputs,
	};
	struct accel_op op = { .ext = &params };
	char err[512];
	if (accel_fault_check(ctx, err, sizeof err) < 0) {
		accel_msg_error("%s", err);
		return ACCEL_EXIT_USAGE;
	}
	static struct model_info m;
	char *json = NULL;
	st = model_info(ctx, &job, &op, &m, &json);
	if (st) {
		return st;
	}
	if (job.info) {
		struct accel_route r;
		struct accel_route_req req = { &op, job.common.backend, -1, NULL };
		accel_route(ctx, &req, &r);
		st = print_info(&job, &m, json, r.nranked ? r.entries[0].name : "?");
		free(json);
		return st;
	}
	free(json);

	/* Check the names given against the model. */
	for (int i = 0; i < job.noutputs; i++)
		if (find_io(m.out, m.nout, job.outputs[i]) < 0) {
			accel_msg_usage("--output: the model has no output '%s'", job.outputs[i]);
			return ACCEL_EXIT_USAGE;
		}
	static struct reader rd;
	memset(&rd, 0, sizeof rd);
	rd.m = &m;
	rd.batch = job.batch;
	rd.max_wait = job.max_wait_ms < 0 ? -1 : job.max_wait_ms / 1000.0;
	rd.dim_names = job.dim_names;
	rd.dim_values = job.dim_values;
	rd.ndims = job.ndims;
	rd.main_input = -1;
	rd.image = &job.image;
	struct accel_input extra[INFER_MAX_IO];
	int given[INFER_MAX_IO] = { 0 }, nextra = 0;
	st = 0;
	for (int i = 0; i < job.ninputs && !st; i++) {
		int k = find_io(m.in, m.nin, job.input_names[i]);
		if (k < 0 || given[k]) {
			accel_msg_usage("--input: the model has %s input '%s'", k < 0 ? "no" : "a second", job.input_names[i]);
			st = ACCEL_EXIT_USAGE;
		}
		if (!st) {
			given[k] = 1;
			rd.src[k].label = job.input_files[i];
		}
	}
	for (int i = 0; i < m.nin && !st; i++)
		if (!given[i]) {
			if (rd.main_input >= 0) {
				accel_msg_usage("the model has several inputs: give all but one with --input NAME=FILE");
				st = ACCEL_EXIT_USAGE;
			}
			rd.main_input = i;
		}
	char *stdin_only[] = { "-" };
	char **files = job.common.noperands ? job.common.operands : stdin_only;
	int nfiles = job.common.noperands ? job.common.noperands : 1;
	if (!st && rd.main_input < 0) {
		/* Every input named: the first --input file is the stream. */
		if (job.common.noperands) {
			accel_msg_usage("every model input is given with --input: no FILE operand is read");
			st = ACCEL_EXIT_USAGE;
		}
		rd.main_input = find_io(m.in, m.nin, job.input_names[0]);
		files = (char **)&job.input_files[0];
		nfiles = 1;
	}
	if (!st && nfiles > 1 && m.nin > 1) {
		accel_msg_usage("several FILEs are read only for a model of one input");
		st = ACCEL_EXIT_USAGE;
	}
	if (!st && (job.shape || job.dtype)) {
		struct accel_tensor *t = &rd.src[rd.main_input].shape;
		const struct io_desc *d = &m.in[rd.main_input];
		rd.src[rd.main_input].raw = 1;
		t->dtype = job.dtype ? (enum accel_dtype)accel_dtype_parse(job.dtype) : d->dtype;
		if (job.shape && parse_shape(job.shape, t) < 0) {
			accel_msg_usage("--shape: '%s' is not a list of sizes such as 1,3,224,224", job.shape);
			st = ACCEL_EXIT_USAGE;
		} else if (!job.shape) {
			t->ndim = d->ndim < 0 ? 0 : d->ndim;
			for (int j = 0; j < t->ndim && !st; j++) {
				t->dims[j] = d->dims[j];
				for (int k = 0; d->dims[j] < 0 && k < job.ndims; k++)
					if (!strcmp(job.dim_names[k], d->sym[j]))
						t->dims[j] = job.dim_values[k];
				if (t->dims[j] < 0) {
					accel_msg_usage("input '%s' has a free dim: give --shape or --dim", d->name);
					st = ACCEL_EXIT_USAGE;
				}
			}
		}
		if (!st && (accel_tensor_size(t, INFER_MAX_ARRAY, NULL, NULL) < 0 || t->dtype == ACCEL_DTYPE_NONE)) {
			accel_msg_usage("--shape: '%s' is over %llu bytes", job.shape ? job.shape : "", (unsigned long long)INFER_MAX_ARRAY);
			st = ACCEL_EXIT_USAGE;
		}
		/* A tensor of no bytes would be read forever from no input. */
		for (int j = 0; j < t->ndim && !st; j++) {
			if (t->dims[j])
				continue;
			char shape[256];
			accel_tensor_shape_str(t, shape, sizeof shape);
			if (job.shape)
				accel_msg_usage("--shape: '%s' has a zero dimension: raw tensors of no bytes would read no input",
						job.shape);
			else
				accel_msg_usage("input '%s' would be raw tensors of shape %s (--dim): no bytes, so no input would be read",
						d->name, shape);
			st = ACCEL_EXIT_USAGE;
		}
	}
	if (!st && job.batch > 1) {
		char why[512];
		if (batch_axis(&m, &job, why, sizeof why) || accel_onnx_batch_check(job.model, why, sizeof why)) {
			if (job.common.verbose) {
				accel_text_sanitize(why);
				fprintf(stderr, "%s: --batch %d: items run one by one: %s\n", cli.prog, job.batch, why);
			}
			job.batch = 1;
			rd.batch = 1;
		}
	}
	int score_output = 0;
	if (!st && (job.topk || job.decode) && (job.noutputs ? job.noutputs : m.nout) != 1) {
		accel_msg_usage("--%s reads one output: name it with --output", job.topk ? "topk" : "decode");
		st = ACCEL_EXIT_USAGE;
	}
	struct crop *crops = NULL;
	size_t ncrops = 0;
	if (!st && job.crops_path) {
		int rc = crops_load(job.crops_path, &crops, &ncrops, err, sizeof err);
		if (rc == ACCEL_EDATA)
			accel_msg_error("%s", err);
		else if (rc < 0)
			accel_msg_error("cannot read %s: %s", job.crops_path, rc == ACCEL_ENOMEM ? accel_strerror(rc) : strerror(errno));
		st = rc == ACCEL_EDATA ? ACCEL_EXIT_DATA : rc < 0 ? ACCEL_EXIT_FAILURE : 0;
		rd.crops = crops;
		rd.ncrops = ncrops;
	}
	char **labels = NULL;
	int nlabels = 0;
	if (!st && job.labels_path && labels_load(job.labels_path, &labels, &nlabels) < 0) {
		accel_msg_error("cannot read %s: %s", job.labels_path, strerror(errno));
		st = ACCEL_EXIT_FAILURE;
	}
	/* The --input files, opened once for the whole run. */
	for (int i = 0; i < m.nin && !st; i++) {
		if (i == rd.main_input || !given[i])
			continue;
		if (accel_input_open(&extra[nextra], rd.src[i].label) < 0) {
			accel_msg_error("cannot read %s: %s", rd.src[i].label, strerror(errno));
			st = ACCEL_EXIT_FAILURE;
			break;
		}
		rd.src[i].in = &extra[nextra++];
	}
	struct accel_route r;
	if (!st) {
		op.name = "onnx.run";
		st = route(ctx, &job, &op, &r);
	}
	struct accel_output out;
	int json_out = job.topk || job.decode;
	if (!st && accel_output_open(&out, job.common.output, job.common.force, !json_out) < 0) {
		int e = errno;
		if (e == EEXIST || (job.common.output && !access(job.common.output, F_OK) && !job.common.force))
			accel_msg_error("%s already exists; use -f to overwrite it", job.common.output);
		else if (!job.common.output && isatty(1))
			accel_msg_error("refusing to write .npy arrays to a terminal; use -o FILE, a pipe or -f");
		else
			accel_msg_error("cannot write %s: %s", job.common.output ? job.common.output : "stdout", strerror(e));
		st = ACCEL_EXIT_FAILURE;
	}
	/* Arrays: a stream, or what -o FILE.npy / FILE.npz asks for (one
	 * array per output, joined along the batch axis; a .npz of them). */
	struct accel_npy_pack pack = { .cur = -1 };
	enum accel_npy_form form = json_out ? ACCEL_NPY_STREAM : accel_npy_form_of(job.common.output);
	if (!st) {
		const char *names[INFER_MAX_IO];
		int nout = job.noutputs ? job.noutputs : m.nout;
		for (int i = 0; i < nout; i++)
			names[i] = job.noutputs ? job.outputs[i] : m.out[i].name;
		int rc = accel_npy_pack_open(&pack, &out, form, ACCEL_NPY_CONCAT, nout, names, err, sizeof err);
		if (rc < 0) {
			accel_msg_error("%s: %s", job.common.output, rc == ACCEL_ENOMEM ? accel_strerror(rc) : err);
			accel_output_abort(&out);
			accel_npy_pack_free(&pack);
			st = rc == ACCEL_EINVAL && form == ACCEL_NPY_ONE ? ACCEL_EXIT_USAGE : ACCEL_EXIT_FAILURE;
		}
	}
	if (st) {
		for (int i = 0; i < nextra; i++)
			accel_input_close(&extra[i]);
		free(crops);
		return st;
	}

	/* Post-processing (batches cut into items, top-k, CTC, DB) runs on a
	 * thread of its own behind a pipe; plain single-item units of a stream are
	 * written as the engine made them. */
	int need_post = job.batch > 1 || json_out || form != ACCEL_NPY_STREAM;
	struct batch_fifo fifo;
	struct post ps = { 0 };
	pthread_t post_thread;
	struct accel_output pipe_out;
	int pfd[2] = { -1, -1 };
	if (need_post) {
		fifo_init(&fifo);
		rd.fifo = &fifo;
		if (pipe2(pfd, O_CLOEXEC) < 0 || accel_output_fd(&pipe_out, pfd[1]) < 0) {
			accel_msg_error("cannot create a pipe: %s", strerror(errno));
			accel_output_abort(&out);
			return ACCEL_EXIT_FAILURE;
		}
		/* A larger pipe: fewer switches between the writer and the
		 * post-processing thread (the default limit allows 1 MiB). */
		fcntl(pfd[1], F_SETPIPE_SZ, 1 << 20);
		ps.mode = job.topk ? POST_TOPK : !job.decode ? POST_NPY : !strcmp(job.decode, "db") ? POST_DB : POST_CTC;
		ps.db = job.db;
		ps.nout = job.noutputs ? job.noutputs : m.nout;
		ps.score_output = score_output;
		ps.topk = job.topk;
		ps.labels = labels;
		ps.nlabels = nlabels;
		ps.fifo = &fifo;
		ps.fd = pfd[0];
		ps.out = &out;
		ps.pack = &pack;
		pthread_create(&post_thread, NULL, post_main, &ps);
	}
	struct run run = { .job = &job, .files = files, .reader = &rd, .out = need_post ? &pipe_out : &out };
	struct accel_stream_ops ops = { reader_next, NULL, NULL, NULL };
	struct accel_stream_jobs jobs = { (size_t)nfiles, &run, job_start, job_finish };
	struct accel_stream_config cfg = stream_config(&job);
	cfg.threads = runs;
	if (job.common.verbose > 0 && !job.report)
		fprintf(stderr, "%s: up to %d run%s at once on a CPU engine, %d thread%s each\n", cli.prog, runs,
			runs == 1 ? "" : "s", intra ? intra : cpus, (intra ? intra : cpus) == 1 ? "" : "s");
	err[0] = 0;
	/* Counted as the reader takes each input in (at most a few batches
	 * ahead of the engine); on a terminal it would mix with stdout. */
	if (job.common.progress > 0 || (job.common.progress < 0 && isatty(2) && !isatty(1) && !job.common.quiet))
		rd.meter = accel_progress_new_unit(op.name, "inferences", 1, 0);
	int rc = accel_stream_run_jobs(ctx, &cfg, &r, &op, &ops, &jobs, err, sizeof err);
	accel_progress_end(rd.meter);
	if (need_post) {
		close(pfd[1]);
		fifo_close(&fifo);
		pthread_join(post_thread, NULL);
		fifo_free(&fifo);
		if (!run.status && ps.rc < 0 && ps.rc != ACCEL_EPIPE) {
			accel_msg_error("%s", ps.err[0] ? ps.err : accel_strerror(ps.rc));
			run.status = accel_exit_status(ps.rc) == ACCEL_EXIT_USAGE ? ACCEL_EXIT_FAILURE : accel_exit_status(ps.rc);
		}
	}
	if (!run.status && rc < 0 && rc != ACCEL_EPIPE) {
		accel_msg_error("%s", err[0] ? err : accel_strerror(rc));
		run.status = accel_exit_status(rc) == ACCEL_EXIT_USAGE ? ACCEL_EXIT_FAILURE : accel_exit_status(rc);
	}
	st = run.status;
	if (!st && !out.broken && accel_npy_pack_finish(&pack, err, sizeof err) < 0) {
		accel_msg_error("%s: %s", job.common.output ? job.common.output : "stdout", err);
		st = ACCEL_EXIT_FAILURE;
	}
	accel_npy_pack_free(&pack);
	if (st || out.broken)
		accel_output_abort(&out);
	else if (accel_output_commit(&out) < 0) {
		accel_msg_error("cannot write %s: %s", job.common.output ? job.common.output : "stdout",
				strerror(out.error ? out.error : errno));
		st = ACCEL_EXIT_FAILURE;
	}
	for (int i = 0; i < nextra; i++)
		accel_input_close(&extra[i]);
	for (int i = 0; i < nlabels; i++)
		free(labels[i]);
	free(labels);
	free(crops);
	reader_free(&rd);
	return st;
}

static int infer(int argc, char **argv)
{
	struct job job;
	int st = parse_args(argc, argv, &job);
	if (st)
		return st < 0 ? 0 : st;
	struct accel_ctx *ctx = accel_common_ctx(&job.common);
	if (!ctx || (job.common.json && !job.info && !(job.report = accel_report_run_start(ctx, cli.prog, accel_now())))) {
		accel_msg_error("out of memory");
		accel_ctx_free(ctx);
		return ACCEL_EXIT_FAILURE;
	}
	st = infer_run(ctx, &job);
	/* After any error line: the route and its reasons say why. */
	st = accel_report_run_end(job.report, ctx, st);
	accel_ctx_free(ctx);
	return st;
}

/* --version: the FFmpeg images are read with, the Leptonica of --decode db. */
static void versions(char *buf, size_t len)
{
	image_versions(buf, len);
	size_t n = strlen(buf);
	db_versions(buf + n, len - n);
}

int main(int argc, char **argv)
{
	accel_cli_libraries("@onnx.run hwloc cjson minizip", versions);
	accel_exit(infer(argc, argv));
}
