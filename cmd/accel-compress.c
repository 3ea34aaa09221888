/*
 * accel-compress - zstd, gzip and lz4 compression and decompression, parallel
 * over chunks both ways, with output the standard tools read.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "accel.h"

/* The fastest --fast=N: lz4's largest acceleration (LZ4_ACCELERATION_MAX). */
#define ACCEL_FAST_MAX 65537

struct job {
	int decompress, list, test, ultra, checksum, level;
	int fast;                /* --fast=N, 0: not given */
	int window_log;          /* --long=N, 0: default */
	const char *format;
	uint64_t chunk;
	struct accel_common common;   /* -o, -f, --memory, --json, -v ... */
	struct accel_report *report;  /* --json: the -v report, on stderr at the end */
	int garbage;         /* a FILE's gzip data ended in trailing garbage */
	int to_stdout;       /* -c */
	int rm;              /* --rm: remove each FILE once its output is complete */
	int recursive;       /* -r */
	int seekable;        /* --seekable */
	int range;           /* --range OFFSET:LENGTH given */
	uint64_t range_offset, range_length;
};
#define JOB(field) ACCEL_AT(struct job, field)

/* -LEVEL; -0 is the format's default, as zstd takes it. The last of
 * -LEVEL and --fast counts. */
static int level_option(void *job, const char *arg)
{
	if (accel_parse_int(arg, 0, 22, &((struct job *)job)->level) < 0) {
		accel_msg_usage("level -%s is out of range (1-19, 20-22 with --ultra)", arg);
		return ACCEL_EINVAL;
	}
	((struct job *)job)->fast = 0;
	return 0;
}

/* --fast[=N]: zstd's and lz4's levels below 1 (-N; N 1 by default), gzip's
 * --fast (-1). */
static int fast_option(void *job, const char *arg)
{
	int n = 1;
	if (arg && accel_parse_int(arg, 1, ACCEL_FAST_MAX, &n) < 0) {
		accel_msg_usage("--fast=%s is out of range (1-%d)", arg, ACCEL_FAST_MAX);
		return ACCEL_EINVAL;
	}
	((struct job *)job)->fast = n;
	((struct job *)job)->level = 0;
	return 0;
}

static int stdout_option(void *job, const char *arg)
{
	((struct job *)job)->common.output = NULL;
	((struct job *)job)->to_stdout = 1;
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
	{ 0, NULL, "LEVEL", "compression level 1-19, gzip 1-12 (zstd default 3, gzip 6, lz4 1; 0: the default)", NULL, ACCEL_OPT_NUMERIC, ACCEL_CALL(level_option) },
	{ 0, "fast", "N", "faster than level 1, less compression: zstd's and lz4's levels -N (N 1 by default), gzip's -1", NULL, ACCEL_OPT_OPTIONAL, ACCEL_CALL(fast_option) },
	{ 0, "ultra", NULL, "allow zstd levels 20-22 (more memory)", ACCEL_SET(JOB(ultra), 1) },
	{ 'F', "format", "FORMAT", "compressed format to write: zstd, gzip or lz4", "zstd gzip lz4", ACCEL_WORD(JOB(format)) },
	{ 'o', "output", "FILE", "write everything to FILE (complete or not at all) instead of a file beside each FILE", "file", ACCEL_COMMON(ACCEL_OPT_OUTPUT) },
	{ 'c', "stdout", NULL, "write everything to stdout, the FILEs one after another (stdin alone goes there anyway)", ACCEL_CALL(stdout_option) },
	{ 'k', "keep", NULL, "keep each FILE (the default)", ACCEL_SET(JOB(rm), 0) },
	{ 0, "rm", NULL, "remove each FILE once its output is complete (not with -c)", ACCEL_SET(JOB(rm), 1) },
	{ 'r', "recursive", NULL, "FILEs that are folders: every regular file under them, symlinks skipped", ACCEL_SET(JOB(recursive), 1) },
	{ 'f', "force", NULL, "overwrite outputs; several inputs into one -o FILE; follow symlinked FILEs; read or write a terminal", ACCEL_COMMON(ACCEL_OPT_FORCE) },
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
	"Compress (or -d decompress) each FILE to FILE.zst, .gz or .lz4 beside it (-d: back), or stdin to stdout, in parallel.",
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

/* Compressed input small enough to decompress on the calling thread:
 * whatever frames it holds take a few ms at most in turn. */
#define SMALL_COMPRESSED ((int64_t)128 << 10)

/* The stream's set-up: an input known to be one unit (a chunk to
 * compress, a small file to decompress) runs on the calling thread, no
 * worker started for it, unless -T asks for threads: FILE... of small
 * files pay no thread start-up per FILE. */
static struct accel_stream_config stream_config(const struct job *job, int64_t total)
{
	int one_unit = !job->common.threads && total >= 0 &&
		       total <= (job->decompress ? SMALL_COMPRESSED : (int64_t)job->chunk);
	struct accel_stream_config cfg = {
		.threads = one_unit ? 1 : job->common.threads,
		.inline_units = one_unit,
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

/* Decompress the open input `in` to out, and close it. */
static int decompress_one(struct accel_ctx *ctx, struct job *job, struct accel_input *in, struct accel_output *out,
			  double *in_bytes)
{
	char err[512] = "";
	struct accel_stream_stats stats;
	struct accel_decompress_cfg dcfg = {
		.backend = job->common.backend,
		.stream = stream_config(job, in->size),
		.window_log_max = job->window_log,
		.memory_limit = job->common.memory,
		.verbose = job->common.verbose,
		.report = job->report,
		.range = job->range,
		.range_offset = job->range_offset,
		.range_length = job->range_length,
	};
	int rc = accel_decompress(ctx, &dcfg, in, out, &stats, err, sizeof err);
	return input_done(job, in, rc, &stats, err, in_bytes);
}

/* Compression of FILE...: one job per input, through one route and the
 * same engine contexts. */
struct compress_run {
	struct job *job;
	char **files;
	struct accel_output *out;
	struct accel_input in;
	int open;        /* in is open */
	int go_on;       /* a FILE that cannot be opened is skipped (stdout) */
	int status;      /* exit status of the first failure, reported */
	int skipped;     /* exit status of the first FILE skipped, reported */
	double bytes;
};

static int compress_start(void *arg, size_t k, struct accel_input **in, struct accel_output **out, void **user,
			  char *err, size_t len)
{
	struct compress_run *r = arg;
	/* The first input is opened before routing, as its errors come
	 * first. */
	int st;
	if (!r->open && (st = open_input(r->job, r->files[k], &r->in)) != 0) {
		if (r->go_on) {
			r->skipped = r->skipped ? r->skipped : st;
			return 1;
		}
		r->status = st;
		return ACCEL_EIO;
	}
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
 * is not a regular file; files[0]'s from `first` when it is open. */
static int64_t total_size(char **files, int nfiles, const struct accel_input *first)
{
	int64_t total = first ? first->size : 0;
	for (int i = first ? 1 : 0; i < nfiles && total >= 0; i++) {
		struct stat st;
		if (!strcmp(files[i], "-") || stat(files[i], &st) < 0 || !S_ISREG(st.st_mode))
			total = -1;
		else
			total += st.st_size;
	}
	return total;
}

/* The compression of job's options, for a job of `total` bytes (-1:
 * unknown), its frames recorded in seek (NULL: no --seekable). */
static struct accel_compress_cfg compress_config(const struct job *job, int64_t total, struct accel_seek_table *seek)
{
	struct accel_compress_cfg cfg = {
		.backend = job->common.backend,
		.stream = stream_config(job, total),
		.format = job->format,
		.level = job->level,
		.checksum = job->checksum,
		.chunk_size = job->chunk,
		.memory_limit = job->common.memory,
		.verbose = job->common.verbose,
		.report = job->report,
		.seek = job->seekable ? seek : NULL,
	};
	return cfg;
}

/* Compress files[0 .. nfiles) into out, files[0] already open as `first`
 * (closed here). */
static int compress_files(struct accel_ctx *ctx, struct job *job, char **files, int nfiles,
			  struct accel_input *first, struct accel_output *out, int go_on, double *in_bytes)
{
	struct compress_run r = { .job = job, .files = files, .out = out, .in = *first, .open = 1, .go_on = go_on };
	int rc;
	struct accel_seek_table seek = { 0 };
	struct accel_compress_cfg cfg = compress_config(job, total_size(files, nfiles, &r.in), &seek);
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
	return rc < 0 ? report(rc, err) : r.skipped;
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
	int unknown_size = 0, checksum = 0, rc = 0;
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
		checksum |= f.checksum;   /* any frame's, as zstd -l shows it */
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
	if (job->fast)
		job->level = !strcmp(job->format, "gzip") ? 1 : -job->fast;
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
	if (job->range && job->rm) {
		accel_msg_usage("--rm with --range: the output holds a slice, so the FILE stays");
		return ACCEL_EXIT_USAGE;
	}
	if (job->range && !job->decompress) {
		accel_msg_usage("--range needs -d (or -t)");
		return ACCEL_EXIT_USAGE;
	}
	return 0;
}

/* -l: the frames of each FILE, a table or --json. Returns the exit status. */
static int list_files(struct accel_ctx *ctx, struct job *job, char **files, int nfiles)
{
	int status = 0;
	/* A reader that goes away (| head) ends the listing quietly. */
	signal(SIGPIPE, SIG_IGN);
	struct list_state ls = { 0 };
	if (job->common.json)
		fputs("{\n\t\"schema_version\":\t1,\n\t\"files\":\t[", stdout);
	else
		printf("%7s %6s %14s %14s %7s  %-6s %-6s %s\n", "Frames", "Skips", "Compressed",
		       "Uncompressed", "Ratio", "Check", "Format", "Filename");
	int werr = 0;
	for (int i = 0; i < nfiles && !werr; i++) {
		int r = list_one(ctx, job, files[i], &ls);
		status = status ? status : r;
		/* Each line goes out as it is made, so a write error stops
		 * the listing at once. */
		if (!job->common.json && fflush(stdout) != 0)
			werr = errno;
	}
	if (job->common.json && !werr && fputs("]\n}\n", stdout) < 0)
		werr = errno;
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

/* The inputs of a run: the operands, folders expanded with -r. */
struct names {
	char **v;
	int n, cap;
	int ignored;   /* operands skipped (symlinks): exit 1 when nothing is left */
	int status;    /* exit status of the first operand refused here */
};

static int names_add(struct names *l, const char *path)
{
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 16;
		char **v = realloc(l->v, (size_t)cap * sizeof *v);
		if (!v)
			return ACCEL_ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	if (!(l->v[l->n] = strdup(path)))
		return ACCEL_ENOMEM;
	l->n++;
	return 0;
}

static void names_free(struct names *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

static int not_dots(const struct dirent *d)
{
	return strcmp(d->d_name, ".") && strcmp(d->d_name, "..");
}

/* -r: the regular files under folder `dir`, in name order; symlinks and
 * other files (FIFOs, devices) are skipped with a warning, as zstd -r
 * skips symlinks. 0 or ACCEL_ENOMEM; a folder that cannot be read is an
 * error line and l->status. */
static int walk(const struct job *job, const char *dir, struct names *l)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, not_dots, alphasort);
	if (n < 0) {
		accel_msg_error("cannot read %s: %s", dir, strerror(errno));
		l->status = l->status ? l->status : ACCEL_EXIT_FAILURE;
		return 0;
	}
	int rc = 0;
	for (int i = 0; i < n; i++) {
		size_t len = strlen(dir) + strlen(ents[i]->d_name) + 2;
		char *path = rc ? NULL : malloc(len);
		if (path) {
			struct stat st;
			snprintf(path, len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", ents[i]->d_name);
			if (lstat(path, &st) < 0) {
				accel_msg_error("cannot read %s: %s", path, strerror(errno));
				l->status = l->status ? l->status : ACCEL_EXIT_FAILURE;
			} else if (S_ISDIR(st.st_mode)) {
				rc = walk(job, path, l);
			} else if (S_ISREG(st.st_mode)) {
				rc = names_add(l, path);
			} else if (!job->common.quiet) {
				accel_msg_warn("%s is %s; skipped", path,
					       S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
			}
			free(path);
		} else if (!rc) {
			rc = ACCEL_ENOMEM;
		}
		free(ents[i]);
	}
	free(ents);
	return rc;
}

/* The operands into l: "-" and files as they are, folders expanded with
 * -r. A symlinked FILE is skipped without -f, as zstd skips it (-c and
 * -d too). 0 or ACCEL_ENOMEM. */
static int collect(const struct job *job, char **ops, int nops, int beside, struct names *l)
{
	for (int i = 0; i < nops; i++) {
		struct stat st;
		int rc = 0;
		if (strcmp(ops[i], "-") && lstat(ops[i], &st) == 0 && S_ISLNK(st.st_mode) && !job->common.force) {
			if (!job->common.quiet)
				accel_msg_warn("%s is a symbolic link; skipped (-f follows it)", ops[i]);
			l->ignored++;
			continue;
		}
		if (job->recursive && strcmp(ops[i], "-") && stat(ops[i], &st) == 0 && S_ISDIR(st.st_mode))
			rc = walk(job, ops[i], l);
		else if (beside && strcmp(ops[i], "-") && stat(ops[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			accel_msg_error("%s is a folder; skipped (-r reads the files under it)", ops[i]);
			l->status = l->status ? l->status : ACCEL_EXIT_FAILURE;
		} else
			rc = names_add(l, ops[i]);
		if (rc)
			return rc;
	}
	return 0;
}

/* The suffixes -d knows, and what each becomes: zstd's list, less the
 * formats we do not read (.lzma, .xz, .txz). */
static const struct {
	const char *suffix, *becomes;
} suffixes[] = {
	{ ".zst", "" }, { ".tzst", ".tar" }, { ".gz", "" }, { ".tgz", ".tar" }, { ".lz4", "" }, { ".tlz4", ".tar" },
};
#define SUFFIX_LIST ".zst/.tzst/.gz/.tgz/.lz4/.tlz4"

/* The name of FILE's output beside it: FILE.zst (.gz, .lz4 by format), or
 * with -d FILE less a known suffix. malloc'd; NULL when -d finds no known
 * suffix (errno EINVAL) or memory ran out (ENOMEM). */
static char *output_name(const struct job *job, const char *path)
{
	size_t n = strlen(path);
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	char *name = malloc(n + 8);
	if (!name) {
		errno = ENOMEM;
		return NULL;
	}
	if (!job->decompress) {
		const char *ext = !strcmp(job->format, "gzip") ? ".gz" : !strcmp(job->format, "lz4") ? ".lz4" : ".zst";
		snprintf(name, n + 8, "%s%s", path, ext);
		return name;
	}
	for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
		size_t k = strlen(suffixes[i].suffix);
		/* A name that is only the suffix leaves no name to restore. */
		if (strlen(base) > k && !strcmp(path + n - k, suffixes[i].suffix)) {
			snprintf(name, n + 8, "%.*s%s", (int)(n - k), path, suffixes[i].becomes);
			return name;
		}
	}
	free(name);
	errno = EINVAL;
	return NULL;
}

/* Report a failed accel_output_open of `name` (NULL: stdout); exit 1. */
static int output_failed(const char *name, int rc)
{
	if (rc == ACCEL_EEXIST)
		accel_msg_error("%s already exists; use -f to overwrite it", name);
	else if (rc == ACCEL_EINVAL)
		accel_msg_error("refusing to write compressed data to a terminal; use -o FILE, a pipe or -f");
	else
		accel_msg_error("cannot write %s: %s", name ? name : "stdout", strerror(errno));
	return ACCEL_EXIT_FAILURE;
}

/* Remove source `path` once its output is complete (--rm). */
static int remove_source(const char *path)
{
	if (unlink(path) < 0) {
		accel_msg_error("cannot remove %s: %s", path, strerror(errno));
		return ACCEL_EXIT_FAILURE;
	}
	return 0;
}

/* One FILE and its own output beside it (stdout for "-"), as FILE...
 * without -o, -c or -t writes them. */
struct beside {
	struct accel_input in;
	struct accel_output out;
	struct stat st;     /* FILE's, when regular */
	int regular;
	char *dst;          /* the output's name; NULL: stdout */
};

/* Open FILE `path` and its output beside it, which gets FILE's mode from
 * the start (the file never shows other bits). 0, or the exit status
 * after the message, with nothing left open. */
static int beside_open(struct job *job, const char *path, struct beside *b)
{
	int pipe_in = !strcmp(path, "-");
	b->dst = NULL;
	if (!pipe_in && !(b->dst = output_name(job, path))) {
		if (errno == ENOMEM)
			accel_msg_error("out of memory");
		else
			accel_msg_error("%s: unknown suffix (" SUFFIX_LIST " expected); cannot name the output: "
					"use -o FILE or -c; skipped", path);
		return ACCEL_EXIT_FAILURE;
	}
	int rc = open_input(job, path, &b->in);
	if (rc) {
		free(b->dst);
		return rc;
	}
	struct stat ost;
	b->regular = !pipe_in && fstat(b->in.fd, &b->st) == 0 && S_ISREG(b->st.st_mode);
	if (b->regular && stat(b->dst, &ost) == 0 && ost.st_dev == b->st.st_dev && ost.st_ino == b->st.st_ino) {
		accel_msg_error("%s: the output %s is the input itself; skipped", path, b->dst);
		rc = ACCEL_EXIT_FAILURE;
	} else if ((rc = accel_output_open(&b->out, b->dst, job->common.force, !job->decompress)) < 0) {
		rc = output_failed(b->dst, rc);
	} else if (b->regular && accel_output_mode(&b->out, b->st.st_mode) < 0) {
		accel_msg_error("cannot write %s: %s", b->dst, strerror(b->out.error));
		accel_output_abort(&b->out);
		rc = ACCEL_EXIT_FAILURE;
	}
	if (rc) {
		accel_input_close(&b->in);
		free(b->dst);
	}
	return rc;
}

/* FILE's run ended with exit status `status` (its input closed): the
 * output appears only when complete, with FILE's owner, mode and times,
 * and only then is FILE removed with --rm (not when trailing garbage was
 * left in it). Returns the exit status, reported. */
static int beside_close(struct job *job, const char *path, struct beside *b, int status, int garbage)
{
	if (status || b->out.broken) {
		accel_output_abort(&b->out);
	} else if ((b->regular && accel_output_attrs(&b->out, &b->st) < 0) || accel_output_commit(&b->out) < 0) {
		accel_msg_error("cannot write %s: %s", b->dst ? b->dst : "stdout",
				strerror(b->out.error ? b->out.error : errno));
		accel_output_abort(&b->out);
		status = ACCEL_EXIT_FAILURE;
	} else if (job->rm && b->regular && !garbage) {
		status = remove_source(path);
	}
	free(b->dst);
	return status;
}

/* Decompress one FILE to its own output beside it. Returns the exit
 * status, reported. */
static int decompress_beside(struct accel_ctx *ctx, struct job *job, const char *path, double *bytes)
{
	struct beside b;
	int status = beside_open(job, path, &b);
	if (status)
		return status;
	int garbage = job->garbage;
	job->garbage = 0;
	status = decompress_one(ctx, job, &b.in, &b.out, bytes);
	int had_garbage = job->garbage;
	job->garbage |= garbage;
	return beside_close(job, path, &b, status, had_garbage);
}

/* Compression of FILE... each beside itself, as the jobs of one run: one
 * route, one set of worker threads and engine contexts for all (1000 files
 * of 4 KiB on tmpfs: 0.35-0.39 s with a run a FILE, 0.08-0.10 s so, zstd
 * 0.07-0.08 s). A FILE that cannot be opened is skipped (start returns
 * 1); one whose run fails ends the run, and the next run takes up the
 * FILEs after it. */
struct beside_run {
	struct job *job;
	char **files;       /* files[0 .. n) of this run */
	struct beside b;
	struct accel_seek_table seek;   /* --seekable: the current FILE's frames */
	int open;           /* b is open (a job started and not finished) */
	int status;         /* exit status of the first failure, reported */
	size_t failed;      /* the job that ended the run, SIZE_MAX: none */
	double bytes;
};

static int beside_start(void *arg, size_t k, struct accel_input **in, struct accel_output **out, void **user,
			char *err, size_t len)
{
	(void)user;
	(void)err;
	(void)len;
	struct beside_run *r = arg;
	int st = beside_open(r->job, r->files[k], &r->b);
	if (st) {
		r->status = r->status ? r->status : st;
		return 1;
	}
	r->open = 1;
	*in = &r->b.in;
	*out = &r->b.out;
	return 0;
}

static void beside_finish(void *arg, size_t k, int rc, const struct accel_stream_stats *stats, const char *err)
{
	struct beside_run *r = arg;
	struct job *job = r->job;
	r->open = 0;
	if (rc < 0)
		r->failed = k;
	int st = input_done(job, &r->b.in, rc, stats, err, &r->bytes);
	/* --seekable: each output ends with the table of its own frames. */
	int wrc;
	if (!st && job->seekable && (wrc = accel_seek_table_write(&r->seek, &r->b.out)) < 0) {
		accel_msg_error("cannot write %s: %s", r->b.dst ? r->b.dst : "stdout",
				wrc == ACCEL_EIO ? strerror(r->b.out.error) : accel_strerror(wrc));
		st = ACCEL_EXIT_FAILURE;
	}
	int checksums = r->seek.checksums;
	accel_seek_table_free(&r->seek);
	r->seek.checksums = checksums;
	st = beside_close(job, r->files[k], &r->b, st, 0);
	r->status = r->status ? r->status : st;
}

static int compress_beside(struct accel_ctx *ctx, struct job *job, char **files, int nfiles, double *bytes)
{
	int status = 0;
	for (int from = 0; from < nfiles;) {
		struct beside_run r = { .job = job, .files = files + from, .failed = SIZE_MAX };
		struct accel_compress_cfg cfg = compress_config(job, total_size(files + from, nfiles - from, NULL), &r.seek);
		struct accel_stream_jobs jobs = { (size_t)(nfiles - from), &r, beside_start, beside_finish };
		char err[512] = "";
		int rc = accel_compress_jobs(ctx, &cfg, &jobs, err, sizeof err);
		if (r.open) {
			accel_input_close(&r.b.in);
			accel_output_abort(&r.b.out);
			free(r.b.dst);
		}
		accel_seek_table_free(&r.seek);
		*bytes += r.bytes;
		status = status ? status : r.status;
		if (rc < 0 && r.failed == SIZE_MAX) {
			/* The run itself failed (no route): no FILE can go on. */
			int st = rc == ACCEL_EINVAL ? usage_error(err) : rc == ACCEL_ENOENGINE ?
				 (accel_msg_error("%s", err), ACCEL_EXIT_FAILURE) : report(rc, err);
			return status ? status : st;
		}
		from += rc < 0 ? (int)r.failed + 1 : nfiles - from;
	}
	return status;
}

/* Everything into one output (stdout, -o FILE, or nothing with -t): the
 * FILEs compressed one after another into one stream, or decompressed in
 * turn, stopping at the first failure. Returns the exit status. */
static int one_output(struct accel_ctx *ctx, struct job *job, char **files, int nfiles, double *bytes)
{
	const char *name = job->common.output;
	if (nfiles > 1 && name && strcmp(name, "-") && !job->common.force) {
		accel_msg_error("%d inputs into one file %s lose their names; use -f to concatenate them, or -c",
				nfiles, name);
		return ACCEL_EXIT_FAILURE;
	}
	struct accel_output out;
	int rc = job->test ? accel_output_null(&out) : accel_output_open(&out, name, job->common.force, !job->decompress);
	if (rc < 0)
		return output_failed(name, rc);
	/* Into stdout (-c) or nowhere (-t), a FILE that fails is reported and
	 * the others go on, as zstd goes on; -o FILE is complete or not
	 * written at all. */
	int go_on = !name || !strcmp(name, "-") || job->test;
	struct accel_input first;
	struct stat st, ost;
	int status, skipped = 0;
	while ((status = open_input(job, files[0], &first)) != 0 && go_on && nfiles > 1) {
		skipped = skipped ? skipped : status;
		files++;
		nfiles--;
	}
	/* One FILE into -o FILE: its owner, mode and times, as zstd gives
	 * them; the output may not be the input itself. */
	int regular = !status && nfiles == 1 && out.tmp && strcmp(files[0], "-") && fstat(first.fd, &st) == 0 &&
		      S_ISREG(st.st_mode);
	if (!status && out.path && strcmp(files[0], "-") && stat(out.path, &ost) == 0 &&
	    fstat(first.fd, &st) == 0 && ost.st_dev == st.st_dev && ost.st_ino == st.st_ino) {
		accel_msg_error("%s: the output %s is the input itself", files[0], name);
		accel_input_close(&first);
		status = ACCEL_EXIT_FAILURE;
	}
	if (!status && regular && accel_output_mode(&out, st.st_mode) < 0) {
		accel_msg_error("cannot write %s: %s", name, strerror(out.error));
		accel_input_close(&first);
		status = ACCEL_EXIT_FAILURE;
	}
	if (status) {
		accel_output_abort(&out);
		return skipped ? skipped : status;
	}
	if (job->decompress) {
		status = decompress_one(ctx, job, &first, &out, bytes);
		for (int i = 1; i < nfiles && (!status || go_on) && !out.broken; i++) {
			int fst = open_input(job, files[i], &first);
			if (!fst)
				fst = decompress_one(ctx, job, &first, &out, bytes);
			status = status ? status : fst;
		}
	} else {
		status = compress_files(ctx, job, files, nfiles, &first, &out, go_on, bytes);
	}
	status = skipped ? skipped : status;
	if (status || out.broken) {
		accel_output_abort(&out);
		return status;
	}
	if ((regular && accel_output_attrs(&out, &st) < 0) || accel_output_commit(&out) < 0) {
		accel_msg_error("cannot write %s: %s", name ? name : "stdout", strerror(out.error ? out.error : errno));
		accel_output_abort(&out);
		return ACCEL_EXIT_FAILURE;
	}
	/* --rm once the output is complete; never with -c (as zstd), -t or
	 * trailing garbage, which stays in its FILE. */
	if (job->rm && name && strcmp(name, "-") && !job->test && !job->garbage)
		for (int i = 0; i < nfiles; i++)
			if (strcmp(files[i], "-") && stat(files[i], &st) == 0 && S_ISREG(st.st_mode))
				status = status ? status : remove_source(files[i]);
	return status;
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
	struct accel_ctx *ctx = accel_common_ctx(&job.common);
	if (!ctx) {
		accel_msg_error("out of memory");
		return ACCEL_EXIT_FAILURE;
	}
	int status = 0;
	if (job.list) {
		status = list_files(ctx, &job, files, nfiles);
		accel_ctx_free(ctx);
		return status;
	}
	/* zstd's model: with FILEs and neither -o, -c nor -t, each FILE gets
	 * its own output beside it; else everything goes to one output. */
	int beside = job.common.noperands && !job.common.output && !job.to_stdout && !job.test;
	struct names names = { 0 };
	if (collect(&job, files, nfiles, beside, &names) < 0) {
		accel_msg_error("out of memory");
		names_free(&names);
		accel_ctx_free(ctx);
		return ACCEL_EXIT_FAILURE;
	}
	status = names.status;
	if (!names.n) {
		/* Every FILE skipped: nothing to do, as zstd, exit 1. */
		names_free(&names);
		accel_ctx_free(ctx);
		return status ? status : ACCEL_EXIT_FAILURE;
	}
	double t0 = accel_now(), bytes = 0;
	if (job.common.json) {
		if (!(job.report = accel_report_run_start(ctx, cli.prog, t0))) {
			accel_msg_error("out of memory");
			names_free(&names);
			accel_ctx_free(ctx);
			return ACCEL_EXIT_FAILURE;
		}
	}
	if (beside) {
		/* A FILE that fails leaves no output and its source; the
		 * others go on, and the exit status is the first failure's. */
		if (job.decompress) {
			for (int i = 0; i < names.n; i++) {
				int st = decompress_beside(ctx, &job, names.v[i], &bytes);
				status = status ? status : st;
			}
		} else {
			int st = compress_beside(ctx, &job, names.v, names.n, &bytes);
			status = status ? status : st;
		}
	} else {
		int st = one_output(ctx, &job, names.v, names.n, &bytes);
		status = status ? status : st;
	}
	names_free(&names);
	if (!job.report && !status && job.common.verbose) {
		double dt = accel_now() - t0;
		fprintf(stderr, "%s: %.0f bytes in %.3f s, %.1f MB/s\n", cli.prog, bytes, dt,
			dt > 0 ? bytes / dt / 1e6 : 0.0);
	}
	/* Trailing garbage is a warning, as gzip's: the output is kept, and
	 * the status is 2 when nothing failed. */
	if (!status && job.garbage)
		status = ACCEL_EXIT_USAGE;
	/* After any error line: the route and its reasons say why. */
	status = accel_report_run_end(job.report, ctx, status);
	accel_ctx_free(ctx);
	return status;
}

/* A probe that timed out may have left a thread in a driver: accel_exit
 * then ends the process without running exit handlers. */
int main(int argc, char **argv)
{
	accel_cli_libraries("zstd lz4 xxhash isa-l libdeflate hwloc cjson", NULL);
	accel_exit(compress(argc, argv));
}
