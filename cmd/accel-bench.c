/*
 * accel-bench - measure the toolkit's operations on each engine, through
 * the libcore calls the programs make (accel_compress, accel_decompress,
 * accel_age_encrypt/decrypt, the hash stream, accel_fft_run, the onnx.run
 * stream) and the accel-transcode program, on inputs made from this
 * machine's files (tones and noise for FFTs, a real model's input, a
 * generated clip), and beside the peer tools (zstd, pigz, igzip, lz4,
 * sha256sum, age, FFTW called directly, ONNX Runtime driven directly,
 * ffmpeg) with --vs, and openssl speed as the reference of age and the
 * hashes.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "bench/bench.h"

#define JOB(field) ACCEL_AT(struct job, field)

/* --save[=FILE]: 0, or ACCEL_EINVAL after the usage line. */
static int opt_save(void *arg, const char *file)
{
	struct job *job = arg;
	if (file && !*file) {
		accel_msg_usage("--save: an empty file name");
		return ACCEL_EINVAL;
	}
	job->save = 1;
	job->save_path = file;
	return 0;
}

static const struct accel_option options[] = {
	{ 0, "size", "LIST", "sizes, joined by commas: bytes of input with K, M, G suffixes (default 16M, with --vs 64M), N, the samples per transform, for FFTs (default 1024), the batch for onnx.run and onnx.stream (default 1), WxH for the video stages (default 640x360)", ACCEL_STRING(JOB(sizes)) },
	{ 0, "level", "LIST", "compression levels of the codecs' cases, joined by commas, each a case (zstd 1-19, gzip 1-9, lz4 1-12; default: the format's default level)", ACCEL_STRING(JOB(levels)) },
	{ 0, "time", "S", "seconds of measured runs per case, at least 3 runs (default 1)", ACCEL_DOUBLE(JOB(time), 0.001, 86400, "a number of seconds from 0.001 to 86400") },
	{ 0, "repeat", "N", "exactly N measured runs per case (instead of --time)", ACCEL_INT(JOB(repeat), 1, MAX_SAMPLES, NULL) },
	{ 0, "warmup", "N", "runs before the measured ones, not counted (default 1)", ACCEL_INT(JOB(warmup), 0, 1000, NULL) },
	{ 0, "vs", NULL, "run our program and the peer tool (zstd, pigz, lz4, sha256sum ..., age, FFTW called directly, ONNX Runtime driven directly, ffmpeg) on the same input, interleaved with ours, and print program/peer ratios (onnx.run: ours/peer); openssl speed as the reference of age and the hashes", ACCEL_SET(JOB(vs), 1) },
	{ 0, "peer", "LIST", "with --vs, the peer tools to run where an operation has several (gzip: pigz, igzip, rapidgzip), joined by commas; default: the first installed", "pigz igzip rapidgzip", ACCEL_STRING(JOB(peer)) },
	{ 0, "save", "FILE", "write each case's median MB/s, where it ran on one engine, into the routing profile (FILE, else $ACCEL_PROFILE, else $XDG_CACHE_HOME/accel/profile.json), merged with its entries for this machine", "file", ACCEL_OPT_OPTIONAL, ACCEL_CALL(opt_save) },
	{ 0, "list", NULL, "print the operations and engines that would run, and run nothing", ACCEL_SET(JOB(list), 1) },
	{ 0, "json", NULL, "print the results as one JSON document (schema in accel-bench(1))", ACCEL_COMMON(ACCEL_OPT_JSON) },
	{ 0, "csv", NULL, "print the results as CSV, a header line and one row per case", ACCEL_SET(JOB(csv), 1) },
	{ 0, "compare", "FILE", "run the cases of FILE (a --json document) with its settings, print each case's change, and exit 5 when one regressed", "file", ACCEL_STRING(JOB(compare)) },
	{ 0, "against", "FILE", "with --compare: compare with the results in FILE (a --json document) instead of running", "file", ACCEL_STRING(JOB(against)) },
	{ 0, "max-regression", "P%", "with --compare: how far a case's median MB/s may fall before it counts, beyond the noise (default 10%)", ACCEL_CALL(regression_option) },
	{ 0, "plot", "FILE", "also draw the results into FILE.svg or FILE.png with gnuplot: MB/s against size per engine, one panel per operation, and with --vs the our/peer ratios", "file", ACCEL_STRING(JOB(plot)) },
	{ 'f', "force", NULL, "overwrite an existing --plot FILE", ACCEL_COMMON(ACCEL_OPT_FORCE) },
	{ 'b', "backend", "LIST", "engines to measure, joined by commas, each a case of its own (cpu+cufft: one case of two engines together); default: every engine that can run the operation", ACCEL_COMPLETE_BACKENDS, ACCEL_COMMON(ACCEL_OPT_BACKEND) },
	{ 'T', "threads", "N", "worker threads of ours, and of the peer where it has a setting (0 = all cores; default 0)", ACCEL_COMMON(ACCEL_OPT_THREADS) },
	{ 0, "progress", NULL, "show the case being measured on stderr (default: when stderr is a terminal)", ACCEL_COMMON(ACCEL_OPT_PROGRESS) },
	{ 0, "no-progress", NULL, "never show the case being measured", ACCEL_COMMON(ACCEL_OPT_NO_PROGRESS) },
	ACCEL_BASIC_OPTIONS,
	{ 0 },
};

static const int exit_statuses[] = {
	ACCEL_EXIT_OK, ACCEL_EXIT_FAILURE, ACCEL_EXIT_USAGE, ACCEL_EXIT_REGRESSION, -1,
};

const struct accel_cli cli = {
	"accel-bench", "[options] [OPERATION...]",
	"Measure the toolkit's operations on each engine, on real inputs, beside their peer tools.",
	options, exit_statuses, NULL,
	/* The operations of cmd/bench/ops.c (tests/bench.bats keeps the two
	 * lists the same). */
	"zstd.compress zstd.decompress gzip.compress gzip.decompress lz4.compress lz4.decompress age.encrypt "
	"age.decrypt sha256 sha512 sha3-256 blake2b512 sha1 md5 fft.c2c fft.r2c fft.c2r onnx.run onnx.stream h264.decode "
	"hevc.decode h264.encode hevc.encode av1.encode vp9.encode",
};

/* ------------------------------------------------------------------ main */

/* --size LIST into job->size: 0, or the usage exit status. */
static int parse_sizes(struct job *job)
{
	const char *s = job->sizes;
	while (s && *s) {
		size_t n = strcspn(s, ",");
		char word[64];
		uint64_t v;
		snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), s);
		int ok = size_word(word, &v) == 0;
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

/* --level LIST into job->level: 0, or the usage exit status. */
static int parse_levels(struct job *job)
{
	for (const char *s = job->levels; s && *s;) {
		size_t n = strcspn(s, ",");
		char word[32];
		int v;
		snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), s);
		if (job->nlevels == MAX_LEVELS || accel_parse_int(word, 1, 19, &v) < 0) {
			if (job->nlevels == MAX_LEVELS)
				accel_msg_usage("--level: at most %d levels", MAX_LEVELS);
			else
				accel_msg_usage("--level: '%s' is not a level (1-19)", word);
			return ACCEL_EXIT_USAGE;
		}
		job->level[job->nlevels++] = v;
		s += n + (s[n] == ',');
	}
	return 0;
}

/* The highest level of a codec's format that both we and its peer take. */
static int max_level(const char *format)
{
	return !strcmp(format, "gzip") ? 9 : !strcmp(format, "lz4") ? 12 : 19;
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
	for (int i = 0; i < r.nranked && n < max; i++) {
		/* Each is run: one whose check the route left to its first use
		 * (a fallback's) is checked now, as naming it does, and left
		 * out as the route would have left it. */
		struct accel_route one;
		struct accel_route_req named = { &o, r.entries[i].name, -1, NULL };
		if (r.entries[i].check && (accel_route(ctx, &named, &one) < 0 || !one.nranked))
			continue;
		snprintf(items[n++], 80, "%s", r.entries[i].name);
	}
	return n;
}

static int bench(int argc, char **argv)
{
	/* time 0, warmup -1: not given (--compare takes the baseline's). */
	struct job job = { .warmup = -1, .max_regression = -1 };
	int rc = accel_parse(&cli, argc, argv, &job, &job.common);
	if (rc)
		return rc < 0 ? 0 : rc;
	if ((rc = parse_sizes(&job)) || (rc = parse_levels(&job)))
		return rc;
	char bad[64];
	if (job.peer && peer_list_check(job.peer, bad, sizeof bad) < 0) {
		accel_msg_usage("--peer: '%s' is not the peer of an operation (gzip's: pigz, igzip, rapidgzip)", bad);
		return ACCEL_EXIT_USAGE;
	}
	if (job.list + job.csv + job.common.json > 1) {
		accel_msg_usage("--list, --json and --csv are each a format of their own: give one");
		return ACCEL_EXIT_USAGE;
	}
	if ((rc = compare_usage(&job)))
		return rc;
	if (job.against)
		return compare_files(&job);
	if (job.save && job.list) {
		accel_msg_usage("--save: --list measures nothing to save");
		return ACCEL_EXIT_USAGE;
	}
	if (job.plot && !job.list && (rc = plot_check(&job)))
		return rc;
	struct bench b = { .job = &job };
	if (job.save && profile_target(&b) < 0)
		return ACCEL_EXIT_FAILURE;
	if (!(b.ctx = accel_common_ctx(&job.common))) {
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
	cJSON *base = NULL;
	if (job.compare && !(base = compare_load(&job, &rc))) {
		accel_ctx_free(b.ctx);
		return rc;
	}
	job.time = job.time ? job.time : 1;
	job.warmup = job.warmup < 0 ? 1 : job.warmup;
	b.threads = job.common.threads ? job.common.threads : accel_cpu_count();
	const char *skipped[MAX_NAMES];
	int nskipped = 0, ncases = 0, cap = 0, status = 0, unrun = 0;
	struct kase *cs = NULL;
	for (int i = 0; i < nnames && !base; i++) {
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
			 engines_for(b.ctx, job.common.backend, op_lib(op), op_ext(&b, op), items, 16);
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
				IS_VIDEO(op->fam) ? DEFAULT_VIDEO : job.vs ? DEFAULT_VS_BYTES : DEFAULT_BYTES;
		uint64_t sizes[MAX_SIZES];
		int nsz = 0, codec = op->fam == FAM_COMPRESS || op->fam == FAM_DECOMPRESS;
		for (int s = 0; s < job.nsizes; s++)
			if (IS_VIDEO(op->fam) == IS_VIDEO_SIZE(job.size[s]))
				sizes[nsz++] = job.size[s];
		if (!nsz)
			sizes[nsz++] = dflt;
		int nlv = codec && job.nlevels ? job.nlevels : 1;
		for (int l = 0; codec && l < job.nlevels; l++)
			if (job.level[l] > max_level(op->format)) {
				accel_msg_usage("--level: %d is not a %s level (1-%d)", job.level[l], op->format,
						max_level(op->format));
				free(cs);
				accel_ctx_free(b.ctx);
				return ACCEL_EXIT_USAGE;
			}
		for (int e = 0; e < ne; e++)
			for (int s = 0; s < nsz * nlv; s++) {
				uint64_t size = sizes[s / nlv];
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
				if (codec)
					c->level = job.nlevels ? job.level[s % nlv] : accel_compress_default_level(op->format);
				snprintf(c->engine, sizeof c->engine, "%.79s", items[e]);
			}
	}
	if (job.list) {
		accel_ctx_free(b.ctx);
		return fflush(stdout) ? ACCEL_EXIT_FAILURE : 0;
	}
	if (base && (rc = compare_cases(&b, base, &cs, &ncases))) {
		free(cs);
		cJSON_Delete(base);
		accel_ctx_free(b.ctx);
		return rc;
	}
	if (!ncases && !base) {
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
		cJSON_Delete(base);
		accel_ctx_free(b.ctx);
		return ACCEL_EXIT_FAILURE;
	}
	catch_signals(&b);
	b.progress = job.common.progress < 0 ? isatty(2) && !job.common.quiet : job.common.progress;
	for (size_t i = 0; i < sizeof b.age_key; i++)
		b.age_key[i] = (uint8_t)(i * 37 + 11);
	ssize_t len = readlink("/proc/self/exe", b.bindir, sizeof b.bindir - 1);
	if (len > 0 && strrchr(b.bindir, '/')) {
		b.bindir[len] = 0;
		*strrchr(b.bindir, '/') = 0;
	} else {
		b.bindir[0] = 0;
	}
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
	if (!base && (job.common.json || (!job.csv && !job.common.quiet))) {
		if (b.progress)
			fprintf(stderr, "\r\033[K%s: the machine's ceiling: memcpy", cli.prog);
		measure_ceiling(&b);
	}
	clear_progress(&b);
	if (base)
		rc = compare_run(&b, base, cs, ncases, skipped, nskipped);
	else if (job.common.json)
		rc = print_json(&b, cs, ncases, skipped, nskipped);
	else if (job.csv)
		print_csv(cs, ncases);
	else if (!job.common.quiet)
		print_table(&b, cs, ncases);
	if (rc < 0) {
		accel_msg_error("out of memory");
		status = ACCEL_EXIT_FAILURE;
	}
	if (job.save && save_profile(&b, cs, ncases) < 0)
		status = ACCEL_EXIT_FAILURE;
	if (job.plot && plot(&b, cs, ncases) < 0)
		status = ACCEL_EXIT_FAILURE;
	if (rc == ACCEL_EXIT_REGRESSION)
		status = rc;
	cleanup(&b);
	for (int i = 0; i < ncases; i++) {
		free(cs[i].ours.t);
		free(cs[i].peer.t);
		free(cs[i].prog.t);
		for (int k = 0; cs[i].peer_argv[k]; k++)
			free(cs[i].peer_argv[k]);
		for (int k = 0; cs[i].prog_argv[k]; k++)
			free(cs[i].prog_argv[k]);
	}
	free(cs);
	cJSON_Delete(base);
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
	/* It runs every operation: the codecs' libraries and every plugin's. */
	accel_cli_libraries("zstd lz4 xxhash isa-l libdeflate hwloc cjson @all", NULL);
	accel_exit(bench(argc, argv));
}
