/*
 * ours.c - our runs: one run of an operation through the libcore call the
 * program makes (accel_compress, accel_age_encrypt, the hash stream ...);
 * for the video stages, a run of accel-transcode (video.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "bench.h"

static struct accel_stream_config stream_cfg(const struct bench *b, int64_t size)
{
	return (struct accel_stream_config){
		.threads = b->job->common.threads,
		/* A failing engine fails its case: nothing else is measured in
		 * its name. */
		.fallback = ACCEL_FALLBACK_NONE,
		.total_size = size,
		.prog = cli.prog,
		.verbose = b->job->common.quiet ? -1 : 0,
	};
}

/* The hash stream: one unit, the file's name; the digest is dropped. */
struct hash_file {
	const char *path;
	int sent, errnum;
};

static int hash_next(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	struct hash_file *h = user;
	if (h->sent)
		return 0;
	size_t l = strlen(h->path) + 1;
	if (accel_buf_reserve(&u->in, l))
		return ACCEL_ENOMEM;
	memcpy(u->in.data, h->path, l);
	u->in.len = l;
	u->last = h->sent = 1;
	u->out_hint = 64;
	return 1;
}

static int hash_done(void *arg, const struct accel_unit *u, const uint8_t *digest, size_t dlen, int errnum,
		     struct accel_buf *out)
{
	struct hash_file *h = arg;
	h->errnum = errnum;
	out->len = 0;
	return digest ? 0 : ACCEL_EIO;
}

static int run_hash(struct bench *b, const struct kase *c, const char *path, struct accel_output *out,
		    struct accel_stream_stats *st, char *err, size_t len)
{
	struct hash_file h = { path, 0, 0 };
	struct accel_hash_files hf = { hash_done, &h };
	struct accel_op op = { .name = c->op->name, .ext = &hf };
	struct accel_route_req req = { &op, c->engine, file_size(path), NULL };
	struct accel_route route;
	int rc = accel_route_job(b->ctx, &req, 0, NULL, &route, err, len);
	if (rc < 0)
		return rc;
	struct accel_input none;
	if ((rc = accel_input_mem(&none, "", 0, "files")) < 0)
		return rc;
	struct accel_stream_ops sops = { hash_next, NULL, NULL, NULL };
	struct accel_stream_config cfg = stream_cfg(b, -1);
	rc = accel_stream_run(b->ctx, &cfg, &route, &op, &sops, &h, &none, out, st, err, len);
	accel_input_close(&none);
	if (rc == ACCEL_EIO && h.errnum)
		snprintf(err, len, "cannot read %s: %s", path, strerror(h.errnum));
	return rc;
}

static int run_fft(struct bench *b, const struct kase *c, struct accel_input *in, struct accel_output *out,
		   struct accel_stream_stats *st, char *err, size_t len)
{
	struct accel_fft f = {
		.n = (size_t)c->size,
		.type = c->op->fft == FFT_R2C ? ACCEL_SAMPLE_F32 : ACCEL_SAMPLE_CF32,
		.inverse = c->op->fft == FFT_C2R,
		.real = c->op->fft == FFT_C2R,
		.plan = ACCEL_PLAN_MEASURE,
		.input_bytes = in->size,
	};
	int rc = accel_fft_setup(&f, err, len);
	if (rc == 0) {
		struct accel_fft_cfg cfg = { .backend = c->engine, .stream = stream_cfg(b, in->size), .data_size = -1 };
		rc = accel_fft_run(b->ctx, &cfg, &f, in, out, st, err, len);
	}
	accel_fft_free(&f);
	return rc;
}

/* One run of case c's operation on `engine` over the file `path`, to
 * `dest` (NULL: /dev/null), through the call the program makes. Returns 0
 * or a negative ACCEL_E* code with its line in err[len]; *written: bytes
 * of output. */
int run_op(struct bench *b, const struct kase *c, const char *path, const char *dest,
		  struct accel_stream_stats *st, uint64_t *written, char *err, size_t len)
{
	struct accel_input in;
	struct accel_output out;
	err[0] = 0;
	if (IS_VIDEO(c->op->fam))
		return video_run(b, c, path, st, written, err, len);
	if (accel_input_open(&in, path) < 0) {
		snprintf(err, len, "cannot read %s: %s", path, strerror(errno));
		return ACCEL_EIO;
	}
	/* onnx.run writes into a /dev/null held open for all its runs, as
	 * its peer does and as accel-infer opens its output once for all its
	 * inputs. */
	int sink = c->op->fam == FAM_ONNX && !dest ? onnx_sink() : -1;
	if (sink >= 0 ? accel_output_fd(&out, sink) < 0 : accel_output_open(&out, dest ? dest : "/dev/null", 1, 1) < 0) {
		snprintf(err, len, "cannot write %s: %s", dest ? dest : "/dev/null", strerror(errno));
		accel_input_close(&in);
		return ACCEL_EIO;
	}
	int rc;
	const struct opdef *op = c->op;
	if (op->fam == FAM_COMPRESS) {
		struct accel_compress_cfg cfg = { .backend = c->engine, .stream = stream_cfg(b, in.size),
						  .format = op->format, .level = c->level, .checksum = 1 };
		rc = accel_compress(b->ctx, &cfg, &in, &out, st, err, len);
	} else if (op->fam == FAM_DECOMPRESS) {
		struct accel_decompress_cfg cfg = { .backend = c->engine, .stream = stream_cfg(b, in.size) };
		rc = accel_decompress(b->ctx, &cfg, &in, &out, st, err, len);
	} else if (op->fam == FAM_AGE_ENCRYPT || op->fam == FAM_AGE_DECRYPT) {
		struct accel_age_cfg cfg = { .backend = c->engine, .stream = stream_cfg(b, in.size), .key = b->age_key };
		rc = op->fam == FAM_AGE_ENCRYPT ? accel_age_encrypt(b->ctx, &cfg, &in, &out, st, err, len) :
		     accel_age_decrypt(b->ctx, &cfg, &in, &out, st, err, len);
	} else if (op->fam == FAM_HASH) {
		rc = run_hash(b, c, path, &out, st, err, len);
	} else if (op->fam == FAM_ONNX) {
		rc = onnx_run(b, c, &in, &out, st, err, len);
	} else {
		rc = run_fft(b, c, &in, &out, st, err, len);
	}
	accel_input_close(&in);
	*written = out.written;
	if (rc < 0) {
		accel_output_abort(&out);
		return rc;
	}
	if (accel_output_commit(&out) < 0) {
		snprintf(err, len, "cannot write %s: %s", dest ? dest : "/dev/null", strerror(out.error));
		return ACCEL_EIO;
	}
	return 0;
}
