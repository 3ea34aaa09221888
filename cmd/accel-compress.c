/*
 * accel-compress - zstd, gzip and lz4 compression and decompression, parallel
 * over chunks both ways, with output the standard tools read.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "accel.h"

struct job {
	int decompress, list, test, ultra, checksum, level;
	int window_log;          /* --long=N, 0: default */
	const char *format;
	uint64_t chunk;
	struct accel_common common;   /* -o, -f, --memory, --json, -v ... */
	struct accel_report *report;  /* --json: the -v report, on stderr at the end */
	int garbage;         /* a FILE's gzip data ended in trailing garbage */
	int seekable;        /* --seekable */
	int range;           /* --range OFFSET:LENGTH given */
	uint64_t range_offset, range_length;
};
#define JOB(field) ACCEL_AT(struct job, field)

static int level_option(void *job, const char *arg)
{
	if (accel_parse_int(arg, 1, 22, &((struct job *)job)->level) < 0) {
		accel_msg_usage("level -%s is out of range (1-19, 20-22 with --ultra)", arg);
		return ACCEL_EINVAL;
	}
	return 0;
}

static int stdout_option(void *job, const char *arg)
{
	((struct job *)job)->common.output = NULL;
	return 0;
}

static int test_option(void *job, const char *arg)
{
	((struct job *)job)->test = ((struct job *)job)->decompress = 1;
	return 0;
}

/* --range OFFSET:LENGTH, sizes as -B takes them; no LENGTH: to the end. */
static int range_option(void *job, const char *arg)
{
	struct job *j = job;
	const char *colon = strchr(arg, ':');
	char off[64];
	if (colon && (size_t)(colon - arg) < sizeof off) {
		memcpy(off, arg, (size_t)(colon - arg));
		off[colon - arg] = 0;
		j->range_length = UINT64_MAX;
		if (accel_parse_size(off, &j->range_offset) == 0 &&
		    (!colon[1] || accel_parse_size(colon + 1, &j->range_length) == 0)) {
			j->range = 1;
			return 0;
		}
	}
	accel_msg_usage("--range: '%s' is not OFFSET:LENGTH (sizes such as 0, 4K, 64M; no LENGTH: to the end)", arg);
	return ACCEL_EINVAL;
}

static const struct accel_option options[] = {
	{ 'd', "decompress", NULL, "decompress (the format is found from the magic bytes)", ACCEL_SET(JOB(decompress), 1) },
	{ 'z', "compress", NULL, "compress (the default)", ACCEL_SET(JOB(decompress), 0) },
	{ 0, NULL, "LEVEL", "compression level 1-19, gzip 1-12 (zstd default 3, gzip 6, lz4 1)", NULL, ACCEL_OPT_NUMERIC, ACCEL_CALL(level_option) },
	{ 0, "ultra", NULL, "allow zstd levels 20-22 (more memory)", ACCEL_SET(JOB(ultra), 1) },
	{ 'F', "format", "FORMAT", "compressed format to write: zstd, gzip or lz4", "zstd gzip lz4", ACCEL_WORD(JOB(format)) },
	ACCEL_OUTPUT_OPTION,
	{ 'c', "stdout", NULL, "write to stdout (the default; for zstd and gzip habits)", ACCEL_CALL(stdout_option) },
	ACCEL_FORCE_OPTION,
	{ 'B', "chunk-size", "SIZE", "bytes per parallel chunk (K, M suffixes; default by format and level)", ACCEL_SIZE(JOB(chunk), 1024, 1 << 30, "a size from 1K to 1G") },
	{ 0, "memory", "SIZE", "cap on memory for chunks in flight (K, M, G suffixes; default a quarter of free RAM)", ACCEL_COMMON(ACCEL_OPT_MEMORY) },
	{ 0, "seekable", NULL, "zstd: end with a seek table (zstd's seekable format) so that -d --range reads only the frames it needs", ACCEL_SET(JOB(seekable), 1) },
	{ 0, "range", "OFFSET:LENGTH", "with -d: write only LENGTH bytes of the content from OFFSET (K, M, G suffixes; no LENGTH: to the end)", ACCEL_CALL(range_option) },
	{ 0, "no-check", NULL, "do not write content checksums", ACCEL_SET(JOB(checksum), 0) },
	{ 'l', "list", NULL, "list the frames, sizes and ratio of compressed files", ACCEL_SET(JOB(list), 1) },
	{ 't', "test", NULL, "decompress and verify, writing nothing", ACCEL_CALL(test_option) },
	{ 0, "long", "N", "decompress zstd frames with windows up to 2^N bytes (10-31; 27 alone and by default)", NULL, ACCEL_OPT_OPTIONAL, ACCEL_INT(JOB(window_log), 10, 31, "a window log from 10 to 31"), .value = 27 },
	{ 0, "json", NULL, "with --list: print JSON; else the -v report (route, devices, statistics, probes) as one JSON document on stderr", ACCEL_COMMON(ACCEL_OPT_JSON) },
	ACCEL_BACKEND_OPTION_TEXT("engines to use, in order, joined by , or + (several serve the stream together): auto (the default) or cpu; a plugin's engines as accel-detect's route for zstd.compress lists them"),
	ACCEL_RUN_OPTIONS,
	ACCEL_VERBOSE_OPTION_TEXT("say more on stderr: the route, each engine's statistics, bytes and MB/s"),
	ACCEL_QUIET_HELP_OPTIONS,
	{ 0 },
};

static const int exit_statuses[] = {
	ACCEL_EXIT_OK, ACCEL_EXIT_FAILURE, ACCEL_EXIT_USAGE, ACCEL_EXIT_DATA, -1,
};

static const struct accel_cli cli = {
	"accel-compress", "[options] [FILE...]",
	"Compress or decompress FILEs (or stdin) to stdout in zstd, gzip or lz4 format, in parallel.",
	options, exit_statuses, NULL, NULL,
};

/* A malformed --backend list (an option: "Try --help" follows) or
 * ACCEL_FAULT (the environment: one line); exit status 2 either way. */
static int usage_error(const char *err)
{
	if (!strncmp(err, "--backend", 9))
		accel_msg_usage("%s", err);
	else
		accel_msg_error("%s", err);
	return ACCEL_EXIT_USAGE;
}

/* Report a failed run as one line; returns the exit status. */
static int report(int rc, const char *msg)
{
	if (rc == ACCEL_EPIPE)
		return 0;
	accel_msg_error("%s", msg[0] ? msg : accel_strerror(rc));
	return accel_exit_status(rc) == ACCEL_EXIT_USAGE ? ACCEL_EXIT_FAILURE : accel_exit_status(rc);
}

/* Open input `path`; a terminal as stdin only with -f. 0, or the exit
 * status after the message. */
static int open_input(const struct job *job, const char *path, struct accel_input *in)
{
	if (accel_input_open(in, path) < 0) {
		accel_msg_error("cannot read %s: %s", strcmp(path, "-") ? path : "stdin", strerror(errno));
		return ACCEL_EXIT_FAILURE;
	}
	if (in->fd == 0 && isatty(0) && !job->common.force) {
		accel_msg_error("stdin is a terminal; give a FILE, a pipe or -f");
		accel_input_close(in);
		return ACCEL_EXIT_FAILURE;
	}
	return 0;
}

static struct accel_stream_config stream_config(const struct job *job, int64_t total)
{
	struct accel_stream_config cfg = {
		.threads = job->common.threads,
		.fallback = job->common.fallback,
		.progress = job->common.progress < 0 ? isatty(2) && !job->common.quiet : job->common.progress,
		.total_size = total,
		.prog = cli.prog,
		.verbose = job->common.quiet ? -1 : job->common.verbose,
		.memory_limit = job->common.memory,
	};
	return cfg;
}

/* The end of one input's run: -v statistics, then the error line (the
 * exit status), naming the input unless the message does. */
static int input_done(struct job *job, struct accel_input *in, int rc, const struct accel_stream_stats *stats,
		      const char *err, double *in_bytes)
{
	if (job->report) {
		accel_report_run(job->report, in->name, stats);
	} else if (job->common.verbose) {
		fprintf(stderr, "%s: %s: ", cli.prog, in->name);
		accel_stream_stats_print(stats, stderr);
	}
	*in_bytes += (double)stats->bytes_in;
	accel_input_close(in);
	if (rc == ACCEL_EINVAL)
		return usage_error(err);
	if (rc == ACCEL_DECOMPRESS_GARBAGE) {
		if (!job->common.quiet)
			accel_msg_error("%s: %s", in->name, err);
		job->garbage = 1;
		return 0;
	}
	if (rc < 0) {
		/* A stream error names the input; the reader's already does,
		 * and a write error is about the output. */
		int named = !strncmp(err, in->name, strlen(in->name)) || !strncmp(err, "cannot write ", 13) ||
			    !strncmp(err, "cannot read ", 12);
		char line[700];
		snprintf(line, sizeof line, "%s%s%s", named ? "" : in->name, named ? "" : ": ", err);
		return report(rc, line);
	}
	return 0;
}

/* Decompress one input to out. */
static int decompress_one(struct accel_ctx *ctx, struct job *job, const char *path, struct accel_output *out,
			  double *in_bytes)
{
	struct accel_input in;
	char err[512] = "";
	int rc = open_input(job, path, &in);
	if (rc)
		return rc;
	struct accel_stream_stats stats;
	struct accel_decompress_cfg dcfg = {
		.backend = job->common.backend,
		.stream = stream_config(job, in.size),
		.window_log_max = job->window_log,
		.memory_limit = job->common.memory,
		.verbose = job->common.verbose,
		.report = job->report,
		.range = job->range,
		.range_offset = job->range_offset,
		.range_length = job->range_length,
	};
	rc = accel_decompress(ctx, &dcfg, &in, out, &stats, err, sizeof err);
	return input_done(job, &in, rc, &stats, err, in_bytes);
}

/* Compression of FILE...: one job per input, through one route and the
 * same engine contexts. */
struct compress_run {
	struct job *job;
	char **files;
	struct accel_output *out;
	struct accel_input in;
	int open;        /* in is open */
	int status;      /* exit status of the first failure, reported */
	double bytes;
};

static int compress_start(void *arg, size_t k, struct accel_input **in, struct accel_output **out, void **user,
			  char *err, size_t len)
{
	struct compress_run *r = arg;
	/* The first input is opened before routing, as its errors come
	 * first. */
	if (!r->open && (r->status = open_input(r->job, r->files[k], &r->in)) != 0)
		return ACCEL_EIO;
	r->open = 1;
	*in = &r->in;
	*out = r->out;
	return 0;
}

static void compress_finish(void *arg, size_t k, int rc, const struct accel_stream_stats *stats, const char *err)
{
	struct compress_run *r = arg;
	r->open = 0;
	int st = input_done(r->job, &r->in, rc, stats, err, &r->bytes);
	if (!r->status)
		r->status = st;
}

/* Size of the job for routing: the sum of the inputs' sizes, -1 when one
 * is not a regular file. */
static int64_t total_size(char **files, int nfiles, const struct accel_input *first)
{
	int64_t total = first->size;
	for (int i = 1; i < nfiles && total >= 0; i++) {
		struct stat st;
		if (!strcmp(files[i], "-") || stat(files[i], &st) < 0 || !S_ISREG(st.st_mode))
			total = -1;
		else
			total += st.st_size;
	}
	return total;
}

static int compress_files(struct accel_ctx *ctx, struct job *job, char **files, int nfiles,
			  struct accel_output *out, double *in_bytes)
{
	struct compress_run r = { .job = job, .files = files, .out = out };
	struct accel_seek_table seek = { 0 };
	int rc = open_input(job, files[0], &r.in);
	if (rc)
		return rc;
	r.open = 1;
	struct accel_compress_cfg cfg = {
		.backend = job->common.backend,
		.stream = stream_config(job, total_size(files, nfiles, &r.in)),
		.format = job->format,
		.level = job->level,
		.checksum = job->checksum,
		.chunk_size = job->chunk,
		.memory_limit = job->common.memory,
		.verbose = job->common.verbose,
		.report = job->report,
		.seek = job->seekable ? &seek : NULL,
	};
	struct accel_stream_jobs jobs = { (size_t)nfiles, &r, compress_start, compress_finish };
	char err[512] = "";
	rc = accel_compress_jobs(ctx, &cfg, &jobs, err, sizeof err);
	if (r.open)
		accel_input_close(&r.in);
	/* --seekable: one table for every frame of the output. */
	if (job->seekable && rc == 0 && !r.status && (rc = accel_seek_table_write(&seek, out)) < 0)
		snprintf(err, sizeof err, "cannot write %s: %s", out->path ? out->path : "stdout",
			 rc == ACCEL_EIO ? strerror(out->error) : accel_strerror(rc));
	accel_seek_table_free(&seek);
	*in_bytes += r.bytes;
	if (r.status)
		return r.status;
	if (rc == ACCEL_EINVAL)
		return usage_error(err);
	if (rc == ACCEL_ENOENGINE) {
		accel_msg_error("%s", err);
		return ACCEL_EXIT_FAILURE;
	}
	return rc < 0 ? report(rc, err) : 0;
}

static const char *check_name(enum accel_format f, int checksum)
{
	if (!checksum)
		return "none";
	return f == ACCEL_FORMAT_ZSTD ? "xxh64" : f == ACCEL_FORMAT_LZ4 ? "xxh32" : "crc32";
}

/* A number as cJSON prints it: --json keeps cJSON's format while frames
 * are streamed rather than held in a tree. */
static void put_number(double v)
{
	if (v >= 0 && v < 1e15 && v == (double)(uint64_t)v) {
		printf("%llu", (unsigned long long)v);
		return;
	}
	cJSON *n = cJSON_CreateNumber(v);
	char *text = n ? cJSON_PrintUnformatted(n) : NULL;
	fputs(text ? text : "null", stdout);
	free(text);
	cJSON_Delete(n);
}

static void put_string(const char *str)
{
	cJSON *n = cJSON_CreateString(str);
	char *text = n ? cJSON_PrintUnformatted(n) : NULL;
	fputs(text ? text : "null", stdout);
	free(text);
	cJSON_Delete(n);
}

/* One frame of --list, kept in a temporary file until the file's summary,
 * which comes first, is printed: memory stays constant whatever the count. */
struct frame_rec {
	uint64_t offset;
	int64_t compressed, uncompressed;  /* uncompressed -1: unknown */
};

/* An unnamed temporary file in $TMPDIR (else /tmp), or NULL. */
static FILE *temp_file(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/accel-compress.XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	unlink(path);
	FILE *f = fdopen(fd, "w+");
	if (!f)
		close(fd);
	return f;
}

struct list_state {
	int nfiles;  /* files printed so far (--json) */
};

/* Print the frame records of `recs` in the format of --json or -l -v. */
static int print_frames(struct job *job, FILE *recs)
{
	if (fflush(recs) != 0 || fseek(recs, 0, SEEK_SET) != 0)
		return ACCEL_EIO;
	struct frame_rec r;
	uint64_t i = 0;
	if (job->common.json)
		fputs("[", stdout);
	while (fread(&r, sizeof r, 1, recs) == 1) {
		if (job->common.json) {
			fputs(i ? ", {\n\t\t\t\t\t\"offset\":\t" : "{\n\t\t\t\t\t\"offset\":\t", stdout);
			put_number((double)r.offset);
			fputs(",\n\t\t\t\t\t\"compressed_bytes\":\t", stdout);
			put_number((double)r.compressed);
			fputs(",\n\t\t\t\t\t\"uncompressed_bytes\":\t", stdout);
			if (r.uncompressed >= 0)
				put_number((double)r.uncompressed);
			else
				fputs("null", stdout);
			fputs("\n\t\t\t\t}", stdout);
		} else {
			printf("    frame %llu at %llu: %llu -> ", (unsigned long long)i, (unsigned long long)r.offset,
			       (unsigned long long)r.compressed);
			if (r.uncompressed >= 0)
				put_number((double)r.uncompressed);
			else
				fputs("unknown", stdout);
			putchar('\n');
		}
		i++;
	}
	if (job->common.json)
		fputs("]", stdout);
	return ferror(recs) ? ACCEL_EIO : 0;
}

static int list_one(struct accel_ctx *ctx, struct job *job, const char *path, struct list_state *ls)
{
	struct accel_input in;
	char err[512] = "";
	if (accel_input_open(&in, path) < 0) {
		accel_msg_error("cannot read %s: %s", path, strerror(errno));
		return ACCEL_EXIT_FAILURE;
	}
	FILE *recs = NULL;
	if ((job->common.json || job->common.verbose) && !(recs = temp_file())) {
		accel_msg_error("cannot create a temporary file for the frame list: %s", strerror(errno));
		accel_input_close(&in);
		return ACCEL_EXIT_FAILURE;
	}
	/* A seek table at the end (regular files): the seekable format. */
	struct accel_seek_table seek = { 0 };
	char seek_err[512] = "";
	int seek_rc = accel_seek_table_read(&in, &seek, seek_err, sizeof seek_err);
	uint64_t seek_frames = seek.nframes;
	int seek_checks = seek.checksums;
	accel_seek_table_free(&seek);
	enum accel_format format = ACCEL_FORMAT_NONE;
	uint64_t nframes = 0, nskip = 0, csize = 0, usize = 0;
	int unknown_size = 0, checksum = 1, rc = 0;
	for (;;) {
		struct accel_frame f;
		uint64_t off = in.offset;
		rc = accel_frame_scan(&in, 0, 1, &f, err, sizeof err);
		if (rc == ACCEL_ENOTSUP) {
			uint64_t content;
			rc = accel_frame_measure(ctx, f.format, &in, &content, err, sizeof err);
			f.content_size = (int64_t)content;
			f.frame_size = (int64_t)(in.offset - off);
		}
		if (rc < 0 || f.format == ACCEL_FORMAT_NONE)
			break;
		if (f.format == ACCEL_FORMAT_SKIPPABLE) {
			nskip++;
			csize += (uint64_t)f.frame_size;
			continue;
		}
		if (format == ACCEL_FORMAT_NONE)
			format = f.format;
		nframes++;
		csize += (uint64_t)f.frame_size;
		if (f.content_size < 0)
			unknown_size = 1;
		else
			usize += (uint64_t)f.content_size;
		checksum &= f.checksum;
		struct frame_rec r = { off, f.frame_size, f.content_size };
		if (recs && fwrite(&r, sizeof r, 1, recs) != 1) {
			snprintf(err, sizeof err, "cannot write the temporary frame list: %s", strerror(errno));
			rc = ACCEL_EIO;
			break;
		}
	}
	accel_input_close(&in);
	if (rc == 0 && format == ACCEL_FORMAT_NONE) {
		snprintf(err, sizeof err, "no compressed frame found");
		rc = ACCEL_EDATA;
	}
	if (rc < 0) {
		if (recs)
			fclose(recs);
		accel_msg_error("%s: %s", in.name, err);
		return accel_exit_status(rc) == ACCEL_EXIT_USAGE ? ACCEL_EXIT_FAILURE : accel_exit_status(rc);
	}
	double ratio = csize && !unknown_size ? (double)usize / (double)csize : 0;
	if (job->common.json) {
		fputs(ls->nfiles++ ? ", {\n\t\t\t\"name\":\t" : "{\n\t\t\t\"name\":\t", stdout);
		put_string(in.name);
		fputs(",\n\t\t\t\"format\":\t", stdout);
		put_string(accel_format_name(format));
		fputs(",\n\t\t\t\"frames\":\t", stdout);
		put_number((double)nframes);
		fputs(",\n\t\t\t\"skippable_frames\":\t", stdout);
		put_number((double)nskip);
		fputs(",\n\t\t\t\"compressed_bytes\":\t", stdout);
		put_number((double)csize);
		fputs(",\n\t\t\t\"uncompressed_bytes\":\t", stdout);
		if (unknown_size)
			fputs("null", stdout);
		else
			put_number((double)usize);
		fputs(",\n\t\t\t\"ratio\":\t", stdout);
		put_number(ratio);
		fputs(",\n\t\t\t\"check\":\t", stdout);
		put_string(check_name(format, checksum));
		fputs(",\n\t\t\t\"seek_table\":\t", stdout);
		if (seek_rc == 0) {
			fputs("{\n\t\t\t\t\"frames\":\t", stdout);
			put_number((double)seek_frames);
			fputs(seek_checks ? ",\n\t\t\t\t\"checksums\":\ttrue\n\t\t\t}" : ",\n\t\t\t\t\"checksums\":\tfalse\n\t\t\t}",
			      stdout);
		} else if (seek_rc == ACCEL_ENOTSUP) {
			fputs("null", stdout);
		} else {
			fputs("{\n\t\t\t\t\"error\":\t", stdout);
			put_string(seek_err[0] ? seek_err : accel_strerror(seek_rc));
			fputs("\n\t\t\t}", stdout);
		}
		fputs(",\n\t\t\t\"frame_list\":\t", stdout);
	} else {
		char usz[32] = "unknown";
		if (!unknown_size)
			snprintf(usz, sizeof usz, "%llu", (unsigned long long)usize);
		printf("%7llu %6llu %14llu %14s %7.3f  %-6s %-6s %s\n", (unsigned long long)nframes,
		       (unsigned long long)nskip, (unsigned long long)csize, usz, ratio,
		       check_name(format, checksum), accel_format_name(format), in.name);
		if (seek_rc == 0)
			printf("    seekable: a seek table of %llu frames%s\n", (unsigned long long)seek_frames,
			       seek_checks ? " with checksums" : "");
		else if (seek_rc != ACCEL_ENOTSUP)
			printf("    seek table: unusable (%s)\n", seek_err[0] ? seek_err : accel_strerror(seek_rc));
	}
	rc = recs ? print_frames(job, recs) : 0;
	if (recs)
		fclose(recs);
	if (job->common.json)
		fputs("\n\t\t}", stdout);
	if (rc < 0) {
		accel_msg_error("%s: cannot read the temporary frame list: %s", in.name, strerror(errno));
		return ACCEL_EXIT_FAILURE;
	}
	return 0;
}

/* The options into job: 0, -1 (exit 0) or the exit status. */
static int parse_args(int argc, char **argv, struct job *job)
{
	memset(job, 0, sizeof *job);
	job->checksum = 1;
	job->format = "zstd";
	int rc = accel_parse(&cli, argc, argv, job, &job->common);
	if (rc)
		return rc;
	if (!job->level)
		job->level = accel_compress_default_level(job->format);
	if (job->level > 19 && (!job->ultra || strcmp(job->format, "zstd"))) {
		accel_msg_usage("level -%d needs --ultra and the zstd format", job->level);
		return ACCEL_EXIT_USAGE;
	}
	if (!strcmp(job->format, "gzip") && job->level > ACCEL_GZIP_LEVEL_MAX) {
		accel_msg_usage("level -%d is out of range for gzip (1-%d)", job->level, ACCEL_GZIP_LEVEL_MAX);
		return ACCEL_EXIT_USAGE;
	}
	if (!job->chunk)
		job->chunk = accel_compress_default_chunk(job->format, job->level);
	if (job->seekable && strcmp(job->format, "zstd")) {
		accel_msg_usage("--seekable: only the zstd format has a seek table (not %s)", job->format);
		return ACCEL_EXIT_USAGE;
	}
	if (job->seekable && (job->decompress || job->list)) {
		accel_msg_usage("--seekable is for compressing: not with -d, -t or -l");
		return ACCEL_EXIT_USAGE;
	}
	if (job->range && !job->decompress) {
		accel_msg_usage("--range needs -d (or -t)");
		return ACCEL_EXIT_USAGE;
	}
	return 0;
}

static int compress(int argc, char **argv)
{
	struct job job;
	int rc = parse_args(argc, argv, &job);
	if (rc)
		return rc < 0 ? 0 : rc;
	char *stdin_only[] = { "-" };
	char **files = job.common.noperands ? job.common.operands : stdin_only;
	int nfiles = job.common.noperands ? job.common.noperands : 1;
	struct accel_ctx *ctx = accel_ctx_new();
	if (!ctx) {
		accel_msg_error("out of memory");
		return ACCEL_EXIT_FAILURE;
	}
	int status = 0;
	if (job.list) {
		/* A reader that goes away (| head) ends the listing quietly. */
		signal(SIGPIPE, SIG_IGN);
		struct list_state ls = { 0 };
		if (job.common.json)
			fputs("{\n\t\"schema_version\":\t1,\n\t\"files\":\t[", stdout);
		else
			printf("%7s %6s %14s %14s %7s  %-6s %-6s %s\n", "Frames", "Skips", "Compressed",
			       "Uncompressed", "Ratio", "Check", "Format", "Filename");
		int werr = 0;
		for (int i = 0; i < nfiles && !werr; i++) {
			int r = list_one(ctx, &job, files[i], &ls);
			status = status ? status : r;
			/* Each line goes out as it is made, so a write error
			 * stops the listing at once. */
			if (!job.common.json && fflush(stdout) != 0)
				werr = errno;
		}
		if (job.common.json && !werr && fputs("]\n}\n", stdout) < 0)
			werr = errno;
		accel_ctx_free(ctx);
		if (!werr && fflush(stdout) != 0)
			werr = errno;
		if (!werr && ferror(stdout))
			werr = EIO;
		if (werr == EPIPE)
			return status;
		if (werr) {
			accel_msg_error("cannot write stdout: %s", strerror(werr));
			return ACCEL_EXIT_FAILURE;
		}
		return status;
	}

	struct accel_output out;
	rc = job.test ? accel_output_null(&out) : accel_output_open(&out, job.common.output, job.common.force, !job.decompress);
	if (rc < 0) {
		if (rc == ACCEL_EEXIST)
			accel_msg_error("%s already exists; use -f to overwrite it", job.common.output);
		else if (rc == ACCEL_EINVAL)
			accel_msg_error("refusing to write compressed data to a terminal; use -o FILE, a pipe or -f");
		else
			accel_msg_error("cannot write %s: %s", job.common.output ? job.common.output : "stdout", strerror(errno));
		accel_ctx_free(ctx);
		return ACCEL_EXIT_FAILURE;
	}
	/* One FILE in: the output gets its permissions, as zstd gives it. */
	struct stat st;
	if (nfiles == 1 && strcmp(files[0], "-") && stat(files[0], &st) == 0 && S_ISREG(st.st_mode) &&
	    accel_output_mode(&out, st.st_mode) < 0) {
		accel_msg_error("cannot write %s: %s", job.common.output, strerror(out.error));
		accel_output_abort(&out);
		accel_ctx_free(ctx);
		return ACCEL_EXIT_FAILURE;
	}
	double t0 = accel_now(), bytes = 0;
	if (job.common.json) {
		struct accel_report_opts ro = { .format = ACCEL_REPORT_JSON, .routes = 1, .started = t0,
						.prog = cli.prog };
		if (!(job.report = accel_report_new(stderr, &ro)) || accel_report_begin(job.report, ctx) < 0) {
			accel_msg_error("out of memory");
			accel_report_end(job.report);
			accel_output_abort(&out);
			accel_ctx_free(ctx);
			return ACCEL_EXIT_FAILURE;
		}
	}
	if (job.decompress)
		for (int i = 0; i < nfiles && !status; i++)
			status = decompress_one(ctx, &job, files[i], &out, &bytes);
	else
		status = compress_files(ctx, &job, files, nfiles, &out, &bytes);
	if (status || out.broken) {
		accel_output_abort(&out);
	} else if ((rc = accel_output_commit(&out)) < 0) {
		accel_msg_error("cannot write %s: %s", job.common.output ? job.common.output : "stdout",
				strerror(out.error ? out.error : errno));
		status = ACCEL_EXIT_FAILURE;
	}
	if (job.report) {
		/* After any error line: the route and its reasons say why. */
		if (accel_report_probes(job.report, ctx) < 0 || accel_report_end(job.report) < 0) {
			accel_msg_error("out of memory");
			status = status ? status : ACCEL_EXIT_FAILURE;
		}
	} else if (!status && job.common.verbose) {
		double dt = accel_now() - t0;
		fprintf(stderr, "%s: %.0f bytes in %.3f s, %.1f MB/s\n", cli.prog, bytes, dt,
			dt > 0 ? bytes / dt / 1e6 : 0.0);
	}
	accel_ctx_free(ctx);
	/* Trailing garbage is a warning, as gzip's: the output is kept, and
	 * the status is 2 when nothing failed. */
	return !status && job.garbage ? ACCEL_EXIT_USAGE : status;
}

/* A probe that timed out may have left a thread in a driver: accel_exit
 * then ends the process without running exit handlers. */
int main(int argc, char **argv)
{
	accel_cli_libraries("zstd lz4 isa-l libdeflate hwloc cjson", NULL);
	accel_exit(compress(argc, argv));
}
