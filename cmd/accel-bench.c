/*
 * accel-bench - measure the toolkit's operations on each engine, through
 * the libcore calls the programs make (accel_compress, accel_decompress,
 * accel_age_encrypt/decrypt, the hash stream, accel_fft_run, the onnx.run
 * stream) and the accel-transcode program, on inputs made from this
 * machine's files (tones and noise for FFTs, a real model's input, a
 * generated clip), and beside the peer tools (zstd, pigz, lz4, sha256sum,
 * age, ONNX Runtime driven directly, ffmpeg) with --vs.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench/bench.h"

#define JOB(field) ACCEL_AT(struct job, field)

static const struct accel_option options[] = {
	{ 0, "size", "LIST", "sizes, joined by commas: bytes of input with K, M, G suffixes (default 16M), N, the samples per transform, for FFTs (default 1024), the batch for onnx.run (default 1), WxH for the video stages (default 640x360)", ACCEL_STRING(JOB(sizes)) },
	{ 0, "time", "S", "seconds of measured runs per case, at least 3 runs (default 1)", ACCEL_DOUBLE(JOB(time), 0.001, 86400, "a number of seconds from 0.001 to 86400") },
	{ 0, "repeat", "N", "exactly N measured runs per case (instead of --time)", ACCEL_INT(JOB(repeat), 1, MAX_SAMPLES, NULL) },
	{ 0, "warmup", "N", "runs before the measured ones, not counted (default 1)", ACCEL_INT(JOB(warmup), 0, 1000, NULL) },
	{ 0, "vs", NULL, "run the peer tool (zstd, pigz, lz4, sha256sum ..., age, ONNX Runtime driven directly, ffmpeg) on the same input, interleaved with ours, and print our/peer ratios", ACCEL_SET(JOB(vs), 1) },
	{ 0, "list", NULL, "print the operations and engines that would run, and run nothing", ACCEL_SET(JOB(list), 1) },
	{ 0, "json", NULL, "print the results as one JSON document (schema in accel-bench(1))", ACCEL_COMMON(ACCEL_OPT_JSON) },
	{ 0, "csv", NULL, "print the results as CSV, a header line and one row per case", ACCEL_SET(JOB(csv), 1) },
	{ 'b', "backend", "LIST", "engines to measure, joined by commas, each a case of its own (cpu+cufft: one case of two engines together); default: every engine that can run the operation", ACCEL_COMPLETE_BACKENDS, ACCEL_COMMON(ACCEL_OPT_BACKEND) },
	{ 'T', "threads", "N", "worker threads of ours, and of the peer where it has a setting (0 = all cores; default 0)", ACCEL_COMMON(ACCEL_OPT_THREADS) },
	{ 0, "progress", NULL, "show the case being measured on stderr (default: when stderr is a terminal)", ACCEL_COMMON(ACCEL_OPT_PROGRESS) },
	{ 0, "no-progress", NULL, "never show the case being measured", ACCEL_COMMON(ACCEL_OPT_NO_PROGRESS) },
	ACCEL_BASIC_OPTIONS,
	{ 0 },
};

const struct accel_cli cli = {
	"accel-bench", "[options] [OPERATION...]",
	"Measure the toolkit's operations on each engine, on real inputs, beside their peer tools.",
	options, NULL, NULL,
};

/* ------------------------------------------------------------------ main */

/* --size LIST into job->size: 0, or the usage exit status. */
static int parse_sizes(struct job *job)
{
	const char *s = job->sizes;
	while (s && *s) {
		size_t n = strcspn(s, ",");
		char word[64], *end;
		uint64_t v;
		snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), s);
		/* WxH: a resolution, for the video stages (even sides). */
		long w = strtol(word, &end, 10), h = *end == 'x' ? strtol(end + 1, &end, 10) : 0;
		int ok;
		if (strchr(word, 'x')) {
			ok = !*end && w >= 16 && h >= 16 && w <= 8192 && h <= 8192 && !(w % 2) && !(h % 2);
			v = VIDEO_SIZE(w, h);
		} else {
			ok = accel_parse_size(word, &v) == 0 && v >= 1;
		}
		if (job->nsizes == MAX_SIZES || !ok) {
			if (job->nsizes == MAX_SIZES)
				accel_msg_usage("--size: at most %d sizes", MAX_SIZES);
			else
				accel_msg_usage("--size: '%s' is not a size (bytes with K, M, G suffixes, N for FFTs, a batch for onnx.run, or WxH of even sides from 16 to 8192 for video)", word);
			return ACCEL_EXIT_USAGE;
		}
		job->size[job->nsizes++] = v;
		s += n + (s[n] == ',');
	}
	return 0;
}

/* The -b items of the case list for op (its route's parameters in ext),
 * or every engine that can run it: into items (names of 80 bytes). Returns
 * their number. */
static int engines_for(struct accel_ctx *ctx, const char *list, const char *op, void *ext, char (*items)[80], int max)
{
	int n = 0;
	struct accel_op o = { .name = op, .checksum = 1, .ext = ext };
	struct accel_route r;
	if (list && strcmp(list, "auto")) {
		for (const char *s = list; *s && n < max;) {
			size_t l = strcspn(s, ",");
			snprintf(items[n], 80, "%.*s", (int)l, s);
			struct accel_route_req req = { &o, items[n], -1, NULL };
			if (accel_route(ctx, &req, &r) == 0 && r.nranked > 0)
				n++;
			s += l + (s[l] == ',');
		}
		return n;
	}
	accel_discover(ctx, op);
	struct accel_route_req req = { &o, "auto", -1, NULL };
	if (accel_route(ctx, &req, &r) < 0)
		return 0;
	for (int i = 0; i < r.nranked && n < max; i++)
		snprintf(items[n++], 80, "%s", r.entries[i].name);
	return n;
}

static int bench(int argc, char **argv)
{
	struct job job = { .time = 1, .warmup = 1 };
	int rc = accel_parse(&cli, argc, argv, &job, &job.common);
	if (rc)
		return rc < 0 ? 0 : rc;
	if ((rc = parse_sizes(&job)))
		return rc;
	if (job.list + job.csv + job.common.json > 1) {
		accel_msg_usage("--list, --json and --csv are each a format of their own: give one");
		return ACCEL_EXIT_USAGE;
	}
	struct bench b = { .job = &job };
	if (!(b.ctx = accel_ctx_new())) {
		accel_msg_error("out of memory");
		return ACCEL_EXIT_FAILURE;
	}
	char err[512];
	if (job.common.backend && accel_backend_list_check(b.ctx, job.common.backend, err, sizeof err) < 0) {
		accel_msg_usage("--backend: %s", err);
		accel_ctx_free(b.ctx);
		return ACCEL_EXIT_USAGE;
	}
	/* The operations asked for, in the toolkit's order. */
	const char *names[MAX_NAMES];
	int nnames = all_ops(b.ctx, names), chosen[MAX_NAMES] = { 0 };
	for (int k = 0; k < job.common.noperands; k++) {
		int hit = 0;
		for (int i = 0; i < nnames; i++)
			if (!fnmatch(job.common.operands[k], names[i], 0))
				chosen[i] = hit = 1;
		if (!hit) {
			char all[1024];
			size_t used = 0;
			for (int i = 0; i < nnames && used < sizeof all; i++)
				used += (size_t)snprintf(all + used, sizeof all - used, "%s%s", i ? ", " : "", names[i]);
			accel_msg_error("no operation matches '%s' (operations: %s)", job.common.operands[k], all);
			accel_ctx_free(b.ctx);
			return ACCEL_EXIT_USAGE;
		}
	}
	b.threads = job.common.threads ? job.common.threads : accel_cpu_count();
	const char *skipped[MAX_NAMES];
	int nskipped = 0, ncases = 0, cap = 0, status = 0, unrun = 0;
	struct kase *cs = NULL;
	for (int i = 0; i < nnames; i++) {
		if (job.common.noperands && !chosen[i])
			continue;
		const struct opdef *op = opdef(names[i]);
		if (!op) {
			skipped[nskipped++] = names[i];
			if (job.list)
				printf("%-16s not measured yet\n", names[i]);
			continue;
		}
		char items[16][80];
		int ne = IS_VIDEO(op->fam) ? video_engines(&b, job.common.backend, items, 16) :
			 engines_for(b.ctx, job.common.backend, op->name, op_ext(&b, op), items, 16);
		if (job.list) {
			printf("%-16s ", op->name);
			for (int e = 0; e < ne; e++)
				printf("%s%s", e ? ", " : "", items[e]);
			puts(ne ? "" : job.common.backend ? "no engine of --backend can run it" : "no engine here");
			continue;
		}
		unrun += !ne;
		/* The sizes of the op's kind: resolutions for video, numbers
		 * for the others; none given, its default. */
		uint64_t dflt = op->fam == FAM_FFT ? DEFAULT_N : op->fam == FAM_ONNX ? DEFAULT_BATCH :
				IS_VIDEO(op->fam) ? DEFAULT_VIDEO : DEFAULT_BYTES, sizes[MAX_SIZES];
		int nsz = 0;
		for (int s = 0; s < job.nsizes; s++)
			if (!!IS_VIDEO(op->fam) == (job.size[s] > 0xffffffffu))
				sizes[nsz++] = job.size[s];
		if (!nsz)
			sizes[nsz++] = dflt;
		for (int e = 0; e < ne; e++)
			for (int s = 0; s < nsz; s++) {
				uint64_t size = sizes[s];
				if ((op->fam == FAM_FFT && (size < 2 || size > (1u << 26))) ||
				    (op->fam == FAM_ONNX && size > MAX_BATCH)) {
					if (op->fam == FAM_FFT)
						accel_msg_usage("--size: %llu is not an FFT size for %s (N from 2 to 2^26)",
								(unsigned long long)size, op->name);
					else
						accel_msg_usage("--size: %llu is not a batch for %s (1 to %d)",
								(unsigned long long)size, op->name, MAX_BATCH);
					free(cs);
					accel_ctx_free(b.ctx);
					return ACCEL_EXIT_USAGE;
				}
				if (ncases == cap) {
					struct kase *n = realloc(cs, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *n);
					if (!n) {
						accel_msg_error("out of memory");
						free(cs);
						accel_ctx_free(b.ctx);
						return ACCEL_EXIT_FAILURE;
					}
					cs = n;
				}
				struct kase *c = &cs[ncases++];
				memset(c, 0, sizeof *c);
				c->op = op;
				c->size = size;
				snprintf(c->engine, sizeof c->engine, "%.79s", items[e]);
			}
	}
	if (job.list) {
		accel_ctx_free(b.ctx);
		return fflush(stdout) ? ACCEL_EXIT_FAILURE : 0;
	}
	if (!ncases) {
		accel_msg_error("nothing to measure: %s", job.common.backend ? "no engine of --backend can run the operations" :
				unrun ? "no engine here can run the operations" : "the operations are not measured yet");
		accel_ctx_free(b.ctx);
		return ACCEL_EXIT_FAILURE;
	}
	const char *tmp = getenv("TMPDIR");
	snprintf(b.dir, sizeof b.dir, "%s/accel-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(b.dir)) {
		accel_msg_error("cannot make a temporary folder %s: %s", b.dir, strerror(errno));
		free(cs);
		accel_ctx_free(b.ctx);
		return ACCEL_EXIT_FAILURE;
	}
	catch_signals(&b);
	b.progress = job.common.progress < 0 ? isatty(2) && !job.common.quiet : job.common.progress;
	for (size_t i = 0; i < sizeof b.age_key; i++)
		b.age_key[i] = (uint8_t)(i * 37 + 11);
	for (int i = 0; i < ncases; i++) {
		if (b.progress) {
			char sz[32];
			size_text(&cs[i], sz, sizeof sz);
			fprintf(stderr, "\r\033[K%s: case %d of %d: %s on %s, %s", cli.prog, i + 1, ncases, cs[i].op->name,
				cs[i].engine, sz);
		}
		if (measure(&b, &cs[i]) < 0) {
			cs[i].failed = 1;
			status = ACCEL_EXIT_FAILURE;
		}
	}
	clear_progress(&b);
	cleanup(&b);
	if (job.common.json)
		rc = print_json(&b, cs, ncases, skipped, nskipped);
	else if (job.csv)
		print_csv(cs, ncases);
	else if (!job.common.quiet)
		print_table(cs, ncases);
	if (rc < 0) {
		accel_msg_error("out of memory");
		status = ACCEL_EXIT_FAILURE;
	}
	for (int i = 0; i < ncases; i++) {
		free(cs[i].ours.t);
		free(cs[i].peer.t);
		for (int k = 0; cs[i].peer_argv[k]; k++)
			free(cs[i].peer_argv[k]);
	}
	free(cs);
	accel_ctx_free(b.ctx);
	if ((fflush(stdout) != 0 || ferror(stdout)) && errno != EPIPE) {
		accel_msg_error("cannot write stdout: %s", strerror(errno ? errno : EIO));
		status = ACCEL_EXIT_FAILURE;
	}
	return status;
}

/* A probe that timed out may have left a thread in a driver: accel_exit
 * then ends the process without running exit handlers. */
int main(int argc, char **argv)
{
	accel_exit(bench(argc, argv));
}
