/*
 * onnx.c - onnx.run: a real model that `make deps` fetched (PaddleOCR's
 * text orientation classifier, under ACCEL_BENCH_MODELS, else deps/models
 * beside accel-bench) run on a batch of pseudo-random items, one unit a
 * run, through the stream engine as accel-infer runs it; and its peer, ONNX
 * Runtime's C API driven directly (libexec/infer-direct --serve beside
 * accel-bench, or ACCEL_BENCH_INFER_DIRECT), started once per case and
 * asked for one run at a time, so that its model load stays apart. Each
 * side's run reads the batch's .npy file, runs it and writes the output to
 * /dev/null; ours runs on the calling thread (inline_units), as a thread
 * that stays runs accel-infer's inputs one after another.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

extern char **environ;

/* The model, under the models folder, and the shape of one of its items
 * (a 48 by 192 text line, as PaddleOCR feeds it); the batch comes first. */
static const char model_file[] = "ocr/ch_ppocr_mobile_v2.0_cls_infer.onnx";
static const int64_t item_dims[] = { 3, 48, 192 };
#define ITEM_DIMS (sizeof item_dims / sizeof item_dims[0])

static struct {
	int looked;                      /* 1: model[] was looked for */
	char model[4096];                /* "" when it is not here */
	struct accel_onnx_params params;
	struct accel_ctx *ctx;           /* the case's own: its model loads in its set-up run */
	struct accel_route route;        /* ctx's route of the case, made by its set-up run */
	int routed;                      /* 1: route is made */
	int sink;                        /* /dev/null for our runs' outputs, 0: not open yet */
	pid_t pid;                       /* the peer, 0: none running */
	FILE *peer;                      /* its socket, both ways */
	uint64_t array_bytes;            /* onnx.stream: one batch's .npy array (its input holds
	                                  * STREAM_BATCHES of them) */
	int runs;                        /* onnx.stream: runs at once (the stream's workers) */
} onnx;

static const char *model_path(void)
{
	if (onnx.looked)
		return onnx.model[0] ? onnx.model : NULL;
	onnx.looked = 1;
	const char *dir = getenv("ACCEL_BENCH_MODELS");
	char rel[256];
	snprintf(rel, sizeof rel, "deps/models/%s", model_file);
	if (dir && *dir)
		snprintf(onnx.model, sizeof onnx.model, "%s/%s", dir, model_file);
	else if (sibling(rel, onnx.model, sizeof onnx.model) < 0)
		onnx.model[0] = 0;
	if (onnx.model[0] && access(onnx.model, R_OK) < 0)
		onnx.model[0] = 0;
	return onnx.model[0] ? onnx.model : NULL;
}

void *op_ext(struct bench *b, const struct opdef *op)
{
	if (!op || op->fam != FAM_ONNX || !model_path())
		return NULL;
	onnx.params.model = onnx.model;
	/* onnx.stream: a run a thread, as accel-infer runs a stream. */
	onnx.runs = b->threads > 0 ? b->threads : accel_cpu_count();
	onnx.params.intra_threads = op_stream(op) && onnx.runs > 1 ? 1 : b->threads;
	return &onnx.params;
}

/* The items of a batch: the peer's pseudo-random values (infer_direct.c),
 * `batch` items of item_dims as a float32 .npy array, `copies` times one
 * after another (as numpy.save writes arrays to one file) in path. 0, or
 * -1 after the message. */
static int make_batch(const char *path, uint64_t batch, int copies)
{
	struct accel_tensor t = { .dtype = ACCEL_DTYPE_FLOAT32, .ndim = 1 + (int)ITEM_DIMS, .dims = { (int64_t)batch } };
	uint64_t count = batch;
	for (size_t i = 0; i < ITEM_DIMS; i++)
		count *= (uint64_t)(t.dims[i + 1] = item_dims[i]);
	uint8_t head[ACCEL_NPY_HEADER_MAX];
	int h = accel_npy_header_write(&t, head, sizeof head);
	FILE *f = fopen(path, "we");
	if (!f || h < 0) {
		accel_msg_error("cannot write %s: %s", path, strerror(f ? EINVAL : errno));
		if (f)
			fclose(f);
		return -1;
	}
	for (int k = 0; k < copies; k++) {
		fwrite(head, 1, (size_t)h, f);
		unsigned r = 1;
		for (uint64_t i = 0; i < count; i++) {
			r = r * 1103515245u + 12345u;
			float x = (float)((r >> 8) & 0xffff) / 65536.0f - 0.5f;
			fwrite(&x, sizeof x, 1, f);
		}
	}
	if (ferror(f) | (fclose(f) != 0)) {
		accel_msg_error("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Case c's inputs (a batch of its size, and one item for the set-up run)
 * and a context of its own. 0, or -1 after the message. */
int onnx_prepare(struct bench *b, struct kase *c)
{
	char *in = temp_path(b, "onnx-%llu.npy", (unsigned long long)c->size), *one = temp_path(b, "onnx-1.npy");
	if (!in || !one) {
		accel_msg_error("out of memory");
		return -1;
	}
	if ((file_size(in) < 0 && make_batch(in, c->size, 1) < 0) || (file_size(one) < 0 && make_batch(one, 1, 1) < 0))
		return -1;
	accel_ctx_free(onnx.ctx);
	if (!(onnx.ctx = accel_ctx_new())) {
		accel_msg_error("out of memory");
		return -1;
	}
	accel_discover(onnx.ctx, "onnx.run");
	onnx.routed = 0;
	c->input = in;
	c->tiny = one;
	c->in_bytes = (uint64_t)file_size(in);
	c->bytes = c->size * sizeof(float) * (uint64_t)(item_dims[0] * item_dims[1] * item_dims[2]);
	c->units = (double)c->size;
	if (op_stream(c->op)) {
		/* onnx.stream: STREAM_BATCHES of the batch's array, one after
		 * another, as numpy.save writes them to one file. */
		char *stream = temp_path(b, "onnx-stream-%llu.npy", (unsigned long long)c->size);
		if (!stream) {
			accel_msg_error("out of memory");
			return -1;
		}
		onnx.array_bytes = c->in_bytes;
		if (file_size(stream) < 0 && make_batch(stream, c->size, STREAM_BATCHES) < 0)
			return -1;
		c->input = stream;
		c->in_bytes *= STREAM_BATCHES;
		c->bytes *= STREAM_BATCHES;
		c->units *= STREAM_BATCHES;
	}
	return 0;
}

/* onnx.stream's units: one batch's array each. */
static int next_array(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	return accel_read_chunk(in, u, (size_t)onnx.array_bytes);
}

/* The stream's one unit: the whole input, the batch as one .npy array,
 * read straight into a buffer of the file's size (and a byte, for the read
 * that finds its end), at least 1 MiB (reads of a quarter of it or less
 * would go through the input's own buffer): no growing, so no copy of what
 * was read, as the peer reads it into its buffer. */
static int whole_input(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	int *sent = user;
	if (*sent)
		return 0;
	u->in.len = 0;
	u->offset = 0;
	size_t want = in->size >= 1 << 20 ? (size_t)in->size + 1 : 1 << 20;
	for (;;) {
		if (u->in.len == u->in.cap && accel_buf_reserve(&u->in, u->in.len + want) < 0)
			return ACCEL_ENOMEM;
		want = 1 << 20;
		ssize_t n = accel_input_read(in, u->in.data + u->in.len, u->in.cap - u->in.len);
		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		u->in.len += (size_t)n;
	}
	u->last = *sent = 1;
	u->out_hint = 0;
	return 1;
}

/* One run: the batch in `in` as one unit on case c's engine, its outputs
 * to `out`. The model is routed to the engine once per case, by its set-up
 * run (which loads it), as accel-infer routes once for all its inputs. 0,
 * or a negative ACCEL_E* code with its line in err[len]. */
int onnx_run(struct bench *b, const struct kase *c, struct accel_input *in, struct accel_output *out,
	     struct accel_stream_stats *st, char *err, size_t len)
{
	struct accel_op op = { .name = op_lib(c->op), .ext = op_ext(b, c->op) };
	struct accel_route *r = &onnx.route;
	if (!onnx.routed) {
		struct accel_route_req req = { &op, c->engine, -1, NULL };
		int rc = accel_route(onnx.ctx, &req, r);
		if (rc < 0 || !r->nranked) {
			for (int i = r->nranked; i < r->n; i++)
				if (strncmp(r->entries[i].reason, "does not offer", 14)) {
					snprintf(err, len, "%s: %s", r->entries[i].name, r->entries[i].reason);
					break;
				}
			return rc < 0 ? rc : ACCEL_ENOTSUP;
		}
		onnx.routed = 1;
	}
	struct accel_stream_config cfg = {
		/* One worker, one session: its threads are the model's. */
		.threads = 1,
		.fallback = ACCEL_FALLBACK_NONE,
		.total_size = -1,
		.prog = cli.prog,
		.verbose = b->job->common.quiet ? -1 : 0,
		/* As accel-infer runs arrays: on this thread, no hand-offs. */
		.inline_units = 1,
	};
	struct accel_stream_ops sops = { whole_input, NULL, NULL, NULL };
	if (op_stream(c->op) && (uint64_t)in->size == onnx.array_bytes * STREAM_BATCHES) {
		/* onnx.stream: an array a unit, several at once. */
		cfg.threads = onnx.runs;
		cfg.inline_units = 0;
		sops.next = next_array;
	}
	int sent = 0;
	return accel_stream_run(onnx.ctx, &cfg, r, &op, &sops, &sent, in, out, st, err, len);
}

int onnx_sink(void)
{
	if (onnx.sink <= 0)
		onnx.sink = open("/dev/null", O_WRONLY | O_CLOEXEC);
	return onnx.sink;
}

/* The peer of case c: infer-direct --serve, on engines of ONNX Runtime's
 * CPU provider (what it drives). 0, or -1 when there is none here. */
int onnx_peer_command(struct bench *b, struct kase *c)
{
	char prog[4096], threads[16], dims[96];
	const char *env = getenv("ACCEL_BENCH_INFER_DIRECT");
	if (strncmp(c->engine, "onnxruntime.cpu", 15) || (c->engine[15] && c->engine[15] != ':') || !model_path())
		return -1;
	if (env && *env)
		snprintf(prog, sizeof prog, "%s", env);
	else if (sibling("libexec/infer-direct", prog, sizeof prog) < 0 || access(prog, X_OK) < 0)
		/* Installed: where make install puts it. */
		snprintf(prog, sizeof prog, "%s/infer-direct", ACCEL_BENCH_LIBEXEC);
	if (access(prog, X_OK) < 0)
		return -1;
	snprintf(threads, sizeof threads, "%d", b->threads);
	size_t used = (size_t)snprintf(dims, sizeof dims, "%llu", (unsigned long long)c->size);
	for (size_t i = 0; i < ITEM_DIMS && used < sizeof dims; i++)
		used += (size_t)snprintf(dims + used, sizeof dims - used, ",%lld", (long long)item_dims[i]);
	/* It reads the batch's file on every run and writes its output to
	 * /dev/null, as our side does (onnx.stream: STREAM_BATCHES runs one
	 * after another, onnx_peer_run). */
	const char *batch = op_stream(c->op) ? temp_path(b, "onnx-%llu.npy", (unsigned long long)c->size) : c->input;
	if (!batch)
		return -1;
	const char *argv[] = { prog, "--serve", onnx.model, threads, dims, batch };
	for (size_t i = 0; i < sizeof argv / sizeof argv[0]; i++)
		if (!(c->peer_argv[i] = strdup(argv[i])))
			return -1;
	snprintf(c->peer_cmd, sizeof c->peer_cmd, "infer-direct --serve -T %d", b->threads);
	return 0;
}

int onnx_peer_start(struct kase *c)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	int rc = posix_spawn(&onnx.pid, c->peer_argv[0], &fa, NULL, c->peer_argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(sv[1]);
	if (rc) {
		onnx.pid = 0;
		close(sv[0]);
		return -1;
	}
	char line[128];
	double load;
	if (!(onnx.peer = fdopen(sv[0], "r+")) || !fgets(line, sizeof line, onnx.peer) ||
	    sscanf(line, "load %lf", &load) != 1) {
		if (!onnx.peer)
			close(sv[0]);
		onnx_peer_close();
		return -1;
	}
	c->peer.start = load;
	return 0;
}

/* One run of the peer: its seconds into *dt, its CPU seconds into *cpu.
 * 0, or -1 when it failed. */
int onnx_peer_run(struct kase *c, double *dt, double *cpu)
{
	char line[128];
	*dt = *cpu = 0;
	for (int i = 0; i < (op_stream(c->op) ? STREAM_BATCHES : 1); i++) {
		double t, u;
		if (!onnx.peer || send(fileno(onnx.peer), "run\n", 4, MSG_NOSIGNAL) != 4 ||
		    !fgets(line, sizeof line, onnx.peer) || sscanf(line, "%lf %lf", &t, &u) != 2)
			return -1;
		*dt += t;
		*cpu += u;
	}
	return 0;
}

/* End the peer (the end of its input). */
void onnx_peer_close(void)
{
	if (onnx.peer)
		fclose(onnx.peer);
	onnx.peer = NULL;
	if (onnx.pid > 0)
		while (waitpid(onnx.pid, NULL, 0) < 0 && errno == EINTR)
			;
	onnx.pid = 0;
}

void onnx_end(void)
{
	onnx_peer_close();
	accel_ctx_free(onnx.ctx);
	onnx.ctx = NULL;
	if (onnx.sink > 0)
		close(onnx.sink);
	onnx.sink = 0;
}
