/*
 * hash.c - `accel-crypt hash`: file digests in the lines of sha256sum (GNU
 * coreutils: "DIGEST  NAME", names with a backslash or newline escaped and
 * the line marked with a leading backslash; --tag: "SHA256 (NAME) =
 * DIGEST"), and -c, which checks such lists with sha256sum -c's output and
 * exit status (libcore/ops/crypt/sums.c writes and reads the lines);
 * without -a, -c reads tagged lines of every algorithm, mixed, as cksum -c
 * does. Files are units of a stream run (one run per stretch of files of
 * one algorithm): each is hashed whole on a worker of the openssl engine,
 * several at once, and the lines come out in the order of the files.
 *
 * A unit's output is a sequence of records (channel byte 'o' stdout or 'e'
 * stderr, 2-byte length, text) that the thread writing units, in order,
 * puts on stdout and stderr (put_records), so messages about a file stay
 * between the lines of the files around it. Stdout is buffered as stdio
 * buffers it (by line on a terminal, else in blocks) and flushed before
 * each message on stderr, as sha256sum's error() does.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <openssl/crypto.h>
#include "crypt.h"

#define algos sum_algos

/* One file to hash: its name, and with -c its algorithm (an index into
 * algos) and the digest expected. */
struct entry {
	char *name;
	int algo;
	uint8_t want[64];
	char *pre;       /* -c -w: warnings about the lines before it, or NULL */
	/* --json: what its run read and wrote, where, and how it ended */
	int64_t bytes_in, bytes_out;   /* -1: not known */
	const char *engine;
	int errnum, mismatch;
};

struct hash_run {
	int algo, algo_given, tag, check, status_only, quiet, ignore_missing, warn;
	int binary, text, zero;   /* --binary, -t, -z: sha256sum's */
	struct sum_reader sums;
	char *tail;      /* -c -w: warnings about the lines after the last file's */
	struct entry *e;
	size_t n, next, end;   /* the entries; a run hashes e[next..end) */
	/* results, updated on workers */
	pthread_mutex_t lock;
	unsigned long matched, mismatched, unreadable;
	int failed;      /* without -c: a file could not be read */
	int strict;
	/* --progress: files done of r->n and their bytes (under lock) */
	struct accel_progress *meter;
	size_t files_done;
	uint64_t bytes_done;
	/* stdout's lines not written yet (put_records, on the thread
	 * writing units; flush_lines) */
	struct accel_output *out;
	char *lines;
	size_t nlines;
	int line_buffered;            /* stdout is a terminal */
	struct accel_ctx *ctx;        /* one for every run, as the report's devices are its */
	struct accel_report *report;  /* --json: one run entry per file, on stderr at the end */
	struct accel_common common;   /* -b, -T, --json, -v ... */
};
#define HASH(field) ACCEL_AT(struct hash_run, field)

static int algo_option(void *v, const char *arg)
{
	struct hash_run *r = v;
	for (r->algo = 0; r->algo < SUM_NALGOS && strcmp(algos[r->algo].name, arg); r->algo++)
		;
	r->algo_given = 1;
	if (r->algo == SUM_NALGOS) {
		accel_msg_usage("-a: '%s' is not one of sha256, sha512, sha3-256, blake2b512, sha1, md5", arg);
		return ACCEL_EINVAL;
	}
	return 0;
}

/* --status, -w and --quiet: the last one given counts, as in sha256sum. */
static int status_option(void *v, const char *arg)
{
	struct hash_run *r = v;
	r->quiet = r->warn = 0;
	r->status_only = 1;
	return 0;
}

static int warn_option(void *v, const char *arg)
{
	struct hash_run *r = v;
	r->quiet = r->status_only = 0;
	r->warn = 1;
	return 0;
}

static int quiet_option(void *v, const char *arg)
{
	struct hash_run *r = v;
	r->status_only = r->warn = 0;
	r->quiet = r->common.quiet = 1;
	r->common.verbose = 0;
	return 0;
}

/* --binary and --text: the last one given counts, as in sha256sum. */
static int binary_option(void *r, const char *arg)
{
	(void)arg;
	((struct hash_run *)r)->binary = 1;
	((struct hash_run *)r)->text = 0;
	return 0;
}

static int text_option(void *r, const char *arg)
{
	(void)arg;
	((struct hash_run *)r)->text = 1;
	((struct hash_run *)r)->binary = 0;
	return 0;
}

static const struct accel_option hash_options[] = {
	{ 'a', "algorithm", "ALGO", "sha256 (default), sha512, sha3-256, blake2b512, sha1 or md5", "sha256 sha512 sha3-256 blake2b512 sha1 md5", ACCEL_CALL(algo_option) },
	{ 0, "tag", NULL, "print BSD-style lines: SHA256 (FILE) = DIGEST", ACCEL_SET(HASH(tag), 1) },
	{ 0, "binary", NULL, "mark the lines binary, DIGEST *FILE, as sha256sum -b (the bytes are read the same way; -b is --backend here)", ACCEL_CALL(binary_option) },
	{ 't', "text", NULL, "mark the lines text, DIGEST  FILE (the default)", ACCEL_CALL(text_option) },
	{ 'z', "zero", NULL, "end each line with NUL, not newline, the names not escaped", ACCEL_SET(HASH(zero), 1) },
	{ 'c', "check", NULL, "read digests from the FILEs and check them, as sha256sum -c; tagged lines (sha256sum --tag, b2sum --tag, openssl dgst) of any algorithm unless -a is given", ACCEL_SET(HASH(check), 1) },
	{ 0, "status", NULL, "with -c: print nothing; the exit status tells", ACCEL_CALL(status_option) },
	{ 0, "strict", NULL, "with -c: exit 1 for improperly formatted lines", ACCEL_SET(HASH(strict), 1) },
	{ 'w', "warn", NULL, "with -c: warn about improperly formatted lines", ACCEL_CALL(warn_option) },
	{ 0, "ignore-missing", NULL, "with -c: say nothing of files that do not exist", ACCEL_SET(HASH(ignore_missing), 1) },
	ACCEL_BACKEND_OPTION_TEXT("engines to hash with, in order, joined by ,: auto (the default), openssl (OpenSSL), sodium (libsodium: blake2b512), cpu (the CPU device's engine for the algorithm), or those accel-detect --routes sha256 lists"),
	{ 0, "fallback", "POLICY", "when an engine fails on a file: retry on cpu, on the next engine, or none (fail)", "cpu next none", ACCEL_COMMON(ACCEL_OPT_FALLBACK) },
	{ 'T', "threads", "N", "files hashed at once (0 = all cores; default 0)", ACCEL_COMMON(ACCEL_OPT_THREADS) },
	{ 'v', "verbose", NULL, "the route and per-engine statistics on stderr", ACCEL_COMMON(ACCEL_OPT_VERBOSE) },
	{ 0, "json", NULL, "a report as one JSON document on stderr at the end: the route, devices, probes, the exit status and one run per file (bytes read, bytes of lines written, the engine, why it failed)", ACCEL_COMMON(ACCEL_OPT_JSON) },
	{ 'q', "quiet", NULL, "with -c: do not print OK for each file that matches (and no progress meter)", ACCEL_CALL(quiet_option) },
	{ 0, "progress", NULL, "show files done of all, bytes and rate on stderr (default when stderr is a terminal and stdout is not)", ACCEL_COMMON(ACCEL_OPT_PROGRESS) },
	{ 0, "no-progress", NULL, "never show a progress meter", ACCEL_COMMON(ACCEL_OPT_NO_PROGRESS) },
	ACCEL_HELP_OPTIONS,
	{ 0 },
};

static const int hash_exit[] = { ACCEL_EXIT_OK, ACCEL_EXIT_FAILURE, ACCEL_EXIT_USAGE, -1 };

const struct accel_cli hash_cli = {
	PROG " hash", "[-a ALGO] [--tag] [FILE...] | -c [FILE...]",
	"Print or check digests of FILEs (or stdin) as sha256sum does, several files at once.",
	hash_options, hash_exit, NULL, NULL,
};

/* Append text to out as records (of at most 0xffff bytes each). */
static int record(struct accel_buf *out, char ch, const char *text, size_t n)
{
	do {
		size_t k = n < 0xffff ? n : 0xffff;
		if (accel_buf_reserve(out, out->len + 3 + k))
			return ACCEL_ENOMEM;
		out->data[out->len++] = (uint8_t)ch;
		out->data[out->len++] = (uint8_t)(k >> 8);
		out->data[out->len++] = (uint8_t)k;
		memcpy(out->data + out->len, text, k);
		out->len += k;
		text += k;
		n -= k;
	} while (n);
	return 0;
}

static int emit(struct accel_buf *out, char ch, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int emit(struct accel_buf *out, char ch, const char *fmt, ...)
{
	char *s;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return ACCEL_ENOMEM;
	int rc = record(out, ch, s, (size_t)n);
	free(s);
	return rc;
}

/* The length of the valid UTF-8 sequence at p (1 to 4), or 0. */
static size_t utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) || (c == 0xf0 && p[1] < 0x90) ||
	    (c == 0xf4 && p[1] > 0x8f))
		return 0;
	return n;
}

/* A byte that the shell takes as itself anywhere in a word (first: at
 * the word's start). */
static int shell_plain(unsigned char c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("%+,-./@]_{}", c)) || (!first && (c == '#' || c == '~'));
}

/* A file name in a message, quoted as coreutils 9.1 quotes it for the
 * shell in a UTF-8 locale: bare when the shell takes it as it is; in
 * double quotes when its single quotes, spaces and colons are all that
 * the shell would not; else in single quotes, a single quote as '\'',
 * control characters and bytes that are not UTF-8 as '$'\n'' or
 * '$'\ooo''. Into buf[len]. */
static void quote(const char *name, char *buf, size_t len)
{
	const unsigned char *u = (const unsigned char *)name;
	int bare = *u != 0, dq = 0, other = 0;
	for (size_t i = 0, k; u[i]; i += k) {
		k = u[i] >= 0x80 ? utf8_len(u + i) : 1;
		if (k > 1)
			continue;
		k = 1;
		int plain = shell_plain(u[i], i == 0);
		bare &= plain;
		dq |= u[i] == '\'';
		other |= !plain && u[i] != '\'' && u[i] != ' ' && u[i] != ':';
	}
	if (bare || (dq && !other)) {
		snprintf(buf, len, bare ? "%s" : "\"%s\"", name);
		return;
	}
	size_t o = 0;
	int open = 1;
	buf[o++] = '\'';
	for (size_t i = 0, k; u[i] && o + 16 < len; i += k) {
		unsigned char ch = u[i];
		k = ch >= 0x80 ? utf8_len(u + i) : 1;
		if (k > 1 || (ch >= 32 && ch != 127 && ch < 0x80)) {
			if (!open)
				buf[o++] = '\'';
			open = 1;
			if (ch == '\'') {
				memcpy(buf + o, "'\\''", 4);
				o += 4;
			} else {
				memcpy(buf + o, u + i, k);
				o += k;
			}
			continue;
		}
		k = 1;
		const char *esc = ch == '\n' ? "n" : ch == '\t' ? "t" : ch == '\r' ? "r" : NULL;
		o += (size_t)(esc ? snprintf(buf + o, len - o, "'$'\\%s'", esc) : snprintf(buf + o, len - o, "'$'\\%03o'", ch));
		open = 0;
	}
	if (open)
		buf[o++] = '\'';
	buf[o] = 0;
}

/* The engine hashed (or failed to read) one file. */
static int file_result(void *arg, const struct accel_unit *u, const uint8_t *digest, size_t dlen, int errnum,
		       struct accel_buf *out)
{
	struct hash_run *r = arg;
	size_t k;
	const char *name = (const char *)u->in.data;
	memcpy(&k, u->in.data + strlen(name) + 1, sizeof k);
	struct entry *e = &r->e[k];
	e->errnum = digest ? 0 : errnum;
	/* The warnings come out in the order of the lines, as sha256sum's. */
	int rc = e->pre ? record(out, 'e', e->pre, strlen(e->pre)) : 0;
	if (rc)
		return rc;
	if (digest && !r->check) {
		size_t n;
		char *line = sum_line_format(r->tag ? algos[r->algo].tags[0] : NULL, digest, dlen, name,
					     (r->binary ? SUM_BINARY : 0) | (r->zero ? SUM_ZERO : 0), &n);
		if (!line)
			return ACCEL_ENOMEM;
		rc = record(out, 'o', line, n);
		free(line);
		return rc;
	}
	int escaped;
	char *shown = sum_name_escape(name, 1, &escaped);
	if (!shown)
		return ACCEL_ENOMEM;
	if (!digest) {
		int missing = errnum == ENOENT;
		if (!(r->check && r->ignore_missing && missing)) {
			pthread_mutex_lock(&r->lock);
			if (r->check)
				r->unreadable++;
			else
				r->failed = 1;
			pthread_mutex_unlock(&r->lock);
			/* sha256sum names the file raw in the error, escaped
			 * in the FAILED line. */
			char q[4200];
			quote(name, q, sizeof q);
			rc = emit(out, 'e', "%s: %s: %s\n", PROG, q, strerror(errnum));
			if (!rc && r->check && !r->status_only)
				rc = emit(out, 'o', "%s%s: FAILED open or read\n", escaped ? "\\" : "", shown);
		}
		free(shown);
		return rc;
	}
	int ok = dlen == algos[e->algo].dlen && CRYPTO_memcmp(digest, e->want, dlen) == 0;
	e->mismatch = !ok;
	pthread_mutex_lock(&r->lock);
	if (ok)
		r->matched++;
	else
		r->mismatched++;
	pthread_mutex_unlock(&r->lock);
	if (!r->status_only && (!ok || !r->quiet))
		rc = emit(out, 'o', "%s%s: %s\n", escaped ? "\\" : "", shown, ok ? "OK" : "FAILED");
	free(shown);
	return rc;
}

/* A file hashed (or not): its result, and the meter counts it with its
 * size (a regular file's; 0 for standard input and pipes). */
static int file_done(void *arg, const struct accel_unit *u, const uint8_t *digest, size_t dlen, int errnum,
		     struct accel_buf *out)
{
	struct hash_run *r = arg;
	if (r->report) {
		/* The size of what was read: a regular file's (the engine
		 * read it to its end), else not known. */
		const char *name = (const char *)u->in.data;
		size_t k;
		memcpy(&k, u->in.data + strlen(name) + 1, sizeof k);
		struct stat st;
		int sized = digest && (strcmp(name, "-") ? stat(name, &st) : fstat(0, &st)) == 0 && S_ISREG(st.st_mode);
		r->e[k].bytes_in = sized ? (int64_t)st.st_size : -1;
	}
	if (r->meter) {
		const char *name = (const char *)u->in.data;
		struct stat st;
		int sized = digest && strcmp(name, "-") && !stat(name, &st) && S_ISREG(st.st_mode);
		pthread_mutex_lock(&r->lock);
		r->files_done++;
		r->bytes_done += sized ? (uint64_t)st.st_size : 0;
		accel_progress_bytes(r->meter, r->bytes_done);
		accel_progress_set(r->meter, (double)r->files_done);
		pthread_mutex_unlock(&r->lock);
	}
	return file_result(arg, u, digest, dlen, errnum, out);
}

/* Bytes of stdout's lines held before they are written: sha256sum's
 * stdio writes 4 KiB at a time. 2000 one-line files took 2000 writes, a
 * pipe hop and a thread hop each when a thread relayed the lines: 1460
 * context switches on 2 cores against sha256sum's 3 (392 now, with the
 * workers taking the files themselves), 43.8 ms against 17.9 now. */
#define LINES_BUF ((size_t)64 << 10)

/* Write the lines held: 0, or the write's error (ACCEL_EPIPE when the
 * reader went away). */
static int flush_lines(struct hash_run *r)
{
	int rc = r->nlines ? accel_output_write(r->out, r->lines, r->nlines) : 0;
	r->nlines = 0;
	return rc;
}

/* The stream's writer of a unit: its records to stdout (held in
 * r->lines) and stderr, in order; with --json, the engine that hashed the
 * file and the bytes its lines take. On the thread writing units, one at a
 * time. 0, or a write's error, which ends the run. */
static int put_records(void *user, struct accel_output *out, const struct accel_unit *u, char *err,
			  size_t len)
{
	(void)err;
	(void)len;
	(void)out;
	struct hash_run *r = user;
	int64_t n = 0;
	for (size_t i = 0; i + 3 <= u->out.len;) {
		char ch = (char)u->out.data[i];
		size_t l = (size_t)u->out.data[i + 1] << 8 | u->out.data[i + 2];
		const uint8_t *text = u->out.data + i + 3;
		i += 3 + l;
		if (ch == 'e') {
			int rc = flush_lines(r);
			if (rc < 0)
				return rc;
			fflush(stderr);
			fwrite(text, 1, l, stderr);
			continue;
		}
		/* A record is at most 0xffff bytes (record()): it fits. */
		n += (int64_t)l;
		if (r->nlines + l > LINES_BUF) {
			int rc = flush_lines(r);
			if (rc < 0)
				return rc;
		}
		memcpy(r->lines + r->nlines, text, l);
		r->nlines += l;
	}
	if (r->report) {
		const char *name = (const char *)u->in.data;
		size_t k;
		memcpy(&k, u->in.data + strlen(name) + 1, sizeof k);
		r->e[k].bytes_out = n;
		r->e[k].engine = u->engine ? u->engine->name : NULL;
	}
	return r->line_buffered ? flush_lines(r) : 0;
}

/* --json: the runs of entries e[from..to). 0 or ACCEL_ENOMEM. */
static int report_files(struct hash_run *r, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		const struct entry *e = &r->e[i];
		const char *why = e->errnum ? strerror(e->errnum) : e->mismatch ? "computed checksum did NOT match" : NULL;
		struct accel_report_stage g = { "hash", algos[e->algo].name, e->engine, NULL, -1, -1 };
		struct accel_report_job j = { strcmp(e->name, "-") ? e->name : "stdin", e->errnum ? 0 : e->bytes_in,
					      e->bytes_out, -1, -1, -1, why, 1, &g };
		int rc = accel_report_job(r->report, &j);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* One file per unit: its name, NUL, its index. */
static int next_file(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	struct hash_run *r = user;
	if (r->next == r->end)
		return 0;
	size_t k = r->next++;
	size_t l = strlen(r->e[k].name) + 1;
	if (accel_buf_reserve(&u->in, l + sizeof k))
		return ACCEL_ENOMEM;
	memcpy(u->in.data, r->e[k].name, l);
	memcpy(u->in.data + l, &k, sizeof k);
	u->in.len = l + sizeof k;
	u->offset = k;
	u->last = r->next == r->end;
	u->out_hint = 256;
	return 1;
}

/* Read the list `path` into r's entries; counts improper lines. 0 or -1
 * after a message. */
static int read_list(struct hash_run *r, const char *path, unsigned long *improper, size_t *valid)
{
	int is_stdin = !strcmp(path, "-");
	char q[4200];
	quote(is_stdin ? "standard input" : path, q, sizeof q);
	FILE *f = is_stdin ? stdin : fopen(path, "re");
	if (!f) {
		accel_msg_error("%s: %s", q, strerror(errno));
		return -1;
	}
	r->sums.from_stdin = is_stdin;
	struct text pre = { 0 };
	char *line = NULL;
	size_t cap = 0;
	ssize_t l;
	unsigned long lineno = 0;
	while ((l = getline(&line, &cap, f)) > 0) {
		lineno++;
		struct entry e;
		char *name;
		int rc = sum_line_parse(&r->sums, line, (size_t)l, &e.algo, e.want, &name);
		if (rc == 0)
			continue;
		if (rc < 0) {
			(*improper)++;
			if (r->warn)
				text_addf(&pre, "%s: %s: %lu: improperly formatted %s checksum line\n", PROG, q, lineno,
					  algos[r->algo].tags[0]);
			continue;
		}
		struct entry *ne = realloc(r->e, (r->n + 1) * sizeof *ne);
		if (ne)
			r->e = ne;
		if (!ne || pre.oom || !(e.name = strdup(name))) {
			free(pre.p);
			free(line);
			if (f != stdin)
				fclose(f);
			accel_msg_error("out of memory");
			return -1;
		}
		e.pre = pre.p;
		memset(&pre, 0, sizeof pre);
		r->e[r->n++] = e;
		(*valid)++;
	}
	r->tail = pre.p;
	free(line);
	int bad = ferror(f);
	if (f != stdin)
		fclose(f);
	else
		clearerr(f);
	if (bad) {
		accel_msg_error("%s: read error", q);
		return -1;
	}
	return 0;
}

/* Hash r's entries e[next..end), all of algorithm algo, through one
 * stream run, the lines to out. Returns 0 or an exit status. */
static int run_segment(struct hash_run *r, int algo, const struct accel_common *common, struct accel_output *out)
{
	struct accel_ctx *ctx = r->ctx;
	size_t first = r->next;
	for (size_t i = r->next; i < r->end; i++) {
		r->e[i].bytes_in = r->e[i].bytes_out = -1;
		r->e[i].engine = NULL;
		r->e[i].errnum = r->e[i].mismatch = 0;
	}
	struct accel_hash_files h = { file_done, r };
	struct accel_op op = { .name = algos[algo].name, .ext = &h };
	struct accel_route route;
	struct accel_route_req req = { &op, common->backend, -1, NULL };
	char why[256];
	int rc = accel_route_job(ctx, &req, common->verbose, r->report, &route, why, sizeof why);
	if (rc < 0) {
		if (rc == ACCEL_EINVAL)
			accel_msg_usage("%s", why);
		else
			accel_msg_error("%s", why);
		return rc == ACCEL_EINVAL ? ACCEL_EXIT_USAGE : ACCEL_EXIT_FAILURE;
	}
	/* Standard input named twice is read once, to its end, then found
	 * empty (as sha256sum does): one worker keeps the files in order. */
	int stdin_uses = 0;
	for (size_t i = r->next; i < r->end; i++)
		stdin_uses += !strcmp(r->e[i].name, "-");
	/* One file is one unit: hashed on the calling thread (no worker
	 * started for it) unless -T asks for threads. */
	int one_unit = r->end - r->next == 1 && !common->threads;
	struct accel_stream_config cfg = {
		.threads = stdin_uses > 1 || one_unit ? 1 : common->threads,
		.inline_units = one_unit,
		/* Each worker takes the next file itself: no hand-off, no
		 * wake-up per file. */
		.worker_reads = 2,
		.fallback = common->fallback,
		.progress = 0,
		.total_size = -1,
		.prog = PROG,
		.verbose = common->quiet ? -1 : common->verbose,
		.write = put_records,
	};
	int status = 0;
	r->out = out;
	r->nlines = 0;
	r->line_buffered = isatty(out->fd) == 1;
	if (!r->lines && !(r->lines = malloc(LINES_BUF))) {
		accel_msg_error("out of memory");
		return ACCEL_EXIT_FAILURE;
	}
	struct accel_input none;
	accel_input_mem(&none, "", 0, "files");
	struct accel_stream_ops ops = { next_file, NULL, NULL, NULL };
	struct accel_stream_stats stats;
	char err[512] = "";
	/* On a terminal the meter would mix with the lines on stdout. */
	if (common->progress > 0 || (common->progress < 0 && isatty(2) && !isatty(1) && !common->quiet)) {
		r->files_done = 0;
		r->bytes_done = 0;
		r->meter = accel_progress_new_unit(op.name, "files", 1, (double)r->n);
		accel_progress_bytes(r->meter, 0);
	}
	rc = accel_stream_run(ctx, &cfg, &route, &op, &ops, r, &none, out, &stats, err, sizeof err);
	/* The lines of the files written before an error are good ones. */
	int wrc = out->broken ? 0 : flush_lines(r);
	accel_progress_end(r->meter);
	r->meter = NULL;
	accel_input_close(&none);
	if (r->report && report_files(r, first, r->end) < 0) {
		accel_msg_error("out of memory");
		status = ACCEL_EXIT_FAILURE;
	} else if (rc == 0 && common->verbose) {
		fprintf(stderr, "%s: ", PROG);
		accel_stream_stats_print(&stats, stderr);
	}
	if (rc < 0 && rc != ACCEL_EPIPE) {
		accel_msg_error("%s", err[0] ? err : accel_strerror(rc));
		status = rc == ACCEL_EINVAL ? ACCEL_EXIT_USAGE : ACCEL_EXIT_FAILURE;
	}
	if (wrc == ACCEL_EIO) {
		accel_msg_error("cannot write stdout: %s", strerror(out->error));
		status = ACCEL_EXIT_FAILURE;
	}
	return status;
}

/* Hash all r's entries, the lines to out in their order: one stream run
 * for each stretch of entries of one algorithm. Returns 0 or an exit
 * status. */
static int run_files(struct hash_run *r, const struct accel_common *common, struct accel_output *out)
{
	int status = 0;
	for (size_t from = 0; from < r->n && !status; from = r->end) {
		r->next = r->end = from;
		while (r->end < r->n && r->e[r->end].algo == r->e[from].algo)
			r->end++;
		status = run_segment(r, r->e[from].algo, common, out);
	}
	return status;
}

/* Close stdout after a run that ended with status: status, or 1 after a
 * message when closing it fails. */
static int finish_stdout(struct accel_output *out, int status)
{
	if (out->broken) {
		accel_output_abort(out);
		return status;
	}
	if (accel_output_commit(out) < 0) {
		accel_msg_error("cannot write stdout: %s", strerror(out->error ? out->error : errno));
		return ACCEL_EXIT_FAILURE;
	}
	return status;
}

static int hash_main(struct hash_run *r);

int cmd_hash(int argc, char **argv)
{
	struct hash_run r;
	memset(&r, 0, sizeof r);
	pthread_mutex_init(&r.lock, NULL);
	int rc = accel_parse(&hash_cli, argc, argv, &r, &r.common);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (r.check && r.tag) {
		accel_msg_usage("--tag does not go with -c");
		return ACCEL_EXIT_USAGE;
	}
	/* sha256sum's own refusals. */
	if (r.check && (r.binary || r.text)) {
		accel_msg_usage("the --binary and --text options are meaningless when verifying checksums");
		return ACCEL_EXIT_USAGE;
	}
	if (r.check && r.zero) {
		accel_msg_usage("the --zero option is not supported when verifying checksums");
		return ACCEL_EXIT_USAGE;
	}
	if (r.tag && r.text) {
		accel_msg_usage("--tag does not support --text mode");
		return ACCEL_EXIT_USAGE;
	}
	if (!r.check && (r.status_only || r.strict || r.warn || r.ignore_missing)) {
		accel_msg_usage("--status, --strict, -w and --ignore-missing go with -c");
		return ACCEL_EXIT_USAGE;
	}
	/* The engine fetches digests by their provider names. */
	openssl_setup(&r.common);
	openssl_no_legacy_names();
	if (!(r.ctx = accel_common_ctx(&r.common)) ||
	    (r.common.json && !(r.report = accel_report_run_start(r.ctx, PROG " hash", accel_now())))) {
		accel_msg_error("out of memory");
		accel_ctx_free(r.ctx);
		return ACCEL_EXIT_FAILURE;
	}
	int status = hash_main(&r);
	/* After the error lines: the routes and the files' runs say why. */
	status = accel_report_run_end(r.report, r.ctx, status);
	accel_ctx_free(r.ctx);
	free(r.lines);
	return status;
}

/* Hash or check the files of the parsed r: the exit status. */
static int hash_main(struct hash_run *r)
{
	char *stdin_only[] = { "-" };
	char **files = r->common.noperands ? r->common.operands : stdin_only;
	int nfiles = r->common.noperands ? r->common.noperands : 1;
	int status = 0;
	struct accel_output out;
	if (accel_output_open(&out, NULL, 1, 0) < 0) {
		accel_msg_error("cannot write stdout: %s", strerror(errno));
		return ACCEL_EXIT_FAILURE;
	}
	/* The engine reads stdin itself (the file named -). */
	for (int i = 0; i < nfiles && !r->check; i++)
		if (!strcmp(files[i], "-"))
			accel_pipe_grow(0);
	if (!r->check) {
		r->e = calloc((size_t)nfiles, sizeof *r->e);
		if (!r->e) {
			accel_msg_error("out of memory");
			accel_output_abort(&out);
			return ACCEL_EXIT_FAILURE;
		}
		for (int i = 0; i < nfiles; i++) {
			r->e[i].name = files[i];
			r->e[i].algo = r->algo;
		}
		r->n = (size_t)nfiles;
		status = finish_stdout(&out, run_files(r, &r->common, &out));
		free(r->e);
		return status ? status : r->failed ? ACCEL_EXIT_FAILURE : 0;
	}
	/* -c: each list is checked in turn, with its own summary. */
	r->sums.plain = r->algo;
	r->sums.only = r->algo_given ? r->algo : -1;
	r->sums.reversed = -1;
	for (int i = 0; i < nfiles; i++) {
		unsigned long improper = 0;
		size_t valid = 0;
		char list[4200];
		quote(strcmp(files[i], "-") ? files[i] : "standard input", list, sizeof list);
		r->n = 0;
		r->e = NULL;
		r->tail = NULL;
		r->matched = r->mismatched = r->unreadable = 0;
		int st = read_list(r, files[i], &improper, &valid) < 0 ? ACCEL_EXIT_FAILURE : 0;
		if (!st && valid)
			st = run_files(r, &r->common, &out);
		if (r->tail)
			fputs(r->tail, stderr);
		if (!st && !valid) {
			accel_msg_error("%s: no properly formatted checksum lines found", list);
			st = ACCEL_EXIT_FAILURE;
		}
		if (!st && !r->status_only) {
			if (improper)
				accel_msg_error("WARNING: %lu line%s improperly formatted", improper,
						improper == 1 ? " is" : "s are");
			if (r->unreadable)
				accel_msg_error("WARNING: %lu listed file%s could not be read", r->unreadable,
						r->unreadable == 1 ? "" : "s");
			if (r->mismatched)
				accel_msg_error("WARNING: %lu computed checksum%s did NOT match", r->mismatched,
						r->mismatched == 1 ? "" : "s");
			if (r->ignore_missing && !r->matched)
				accel_msg_error("%s: no file was verified", list);
		}
		/* Nothing verified is a failure too (all missing, with
		 * --ignore-missing). */
		if (!st && (!r->matched || r->mismatched || r->unreadable || (r->strict && improper)))
			st = ACCEL_EXIT_FAILURE;
		if (!status)
			status = st;
		for (size_t k = 0; k < r->n; k++) {
			free(r->e[k].name);
			free(r->e[k].pre);
		}
		free(r->e);
		free(r->tail);
	}
	return finish_stdout(&out, status);
}
