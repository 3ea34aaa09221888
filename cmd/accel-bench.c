/*
 * accel-bench - measure the toolkit's operations on each engine, through
 * the libcore calls the programs make (accel_compress, accel_decompress,
 * accel_age_encrypt/decrypt, the hash stream, accel_fft_run), on inputs
 * made from this machine's files (tones and noise for FFTs), and beside the
 * peer tools (zstd, pigz, lz4, sha256sum, age) with --vs.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "accel.h"

extern char **environ;

#define MAX_SIZES 16
#define MAX_SAMPLES 100000
/* Bytes of samples per FFT run (at least one frame). */
#define FFT_BYTES ((uint64_t)16 << 20)
#define DEFAULT_BYTES ((uint64_t)16 << 20)
#define DEFAULT_N 1024

struct job {
	const char *sizes;       /* --size LIST */
	double time;             /* --time S per case */
	int repeat;              /* --repeat N, 0: by time */
	int warmup;
	int vs, list, csv;
	uint64_t size[MAX_SIZES];
	int nsizes;
	struct accel_common common;   /* -b, -T, --json, -v, -q ... */
};
#define JOB(field) ACCEL_AT(struct job, field)

static const struct accel_option options[] = {
	{ 0, "size", "LIST", "sizes, joined by commas: bytes of input with K, M, G suffixes (default 16M), or N, the samples per transform, for FFTs (default 1024)", ACCEL_STRING(JOB(sizes)) },
	{ 0, "time", "S", "seconds of measured runs per case, at least 3 runs (default 1)", ACCEL_DOUBLE(JOB(time), 0.001, 86400, "a number of seconds from 0.001 to 86400") },
	{ 0, "repeat", "N", "exactly N measured runs per case (instead of --time)", ACCEL_INT(JOB(repeat), 1, MAX_SAMPLES, NULL) },
	{ 0, "warmup", "N", "runs before the measured ones, not counted (default 1)", ACCEL_INT(JOB(warmup), 0, 1000, NULL) },
	{ 0, "vs", NULL, "run the peer tool (zstd, pigz, lz4, sha256sum ..., age) on the same input, interleaved with ours, and print our/peer ratios", ACCEL_SET(JOB(vs), 1) },
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

static const struct accel_cli cli = {
	"accel-bench", "[options] [OPERATION...]",
	"Measure the toolkit's operations on each engine, on real inputs, beside their peer tools.",
	options, NULL, NULL,
};

/* -------------------------------------------------------- the operations */

enum family { FAM_COMPRESS, FAM_DECOMPRESS, FAM_AGE_ENCRYPT, FAM_AGE_DECRYPT, FAM_HASH, FAM_FFT };
enum fft_kind { FFT_C2C, FFT_R2C, FFT_C2R };

/* An operation measured here, and its peer: argv[0] and what follows it
 * before the input file (%T: the thread count, %L: the level). */
struct opdef {
	const char *name;
	enum family fam;
	const char *format;      /* compress: "zstd" ...; hash: the tool's name */
	int fft;                 /* enum fft_kind */
	const char *peer[8];
};

static const struct opdef ops[] = {
	{ "zstd.compress", FAM_COMPRESS, "zstd", 0, { "zstd", "-q", "-%L", "-T%T", "-c" } },
	{ "zstd.decompress", FAM_DECOMPRESS, "zstd", 0, { "zstd", "-q", "-d", "-c" } },
	{ "gzip.compress", FAM_COMPRESS, "gzip", 0, { "pigz", "-%L", "-p", "%T", "-c" } },
	{ "gzip.decompress", FAM_DECOMPRESS, "gzip", 0, { "pigz", "-d", "-p", "%T", "-c" } },
	{ "lz4.compress", FAM_COMPRESS, "lz4", 0, { "lz4", "-q", "-%L", "-c" } },
	{ "lz4.decompress", FAM_DECOMPRESS, "lz4", 0, { "lz4", "-q", "-d", "-c" } },
	{ "age.encrypt", FAM_AGE_ENCRYPT, NULL, 0, { "age", "-r", "%R" } },
	{ "age.decrypt", FAM_AGE_DECRYPT, NULL, 0, { "age", "-d", "-i", "%I" } },
	{ "sha256", FAM_HASH, NULL, 0, { "sha256sum" } },
	{ "sha512", FAM_HASH, NULL, 0, { "sha512sum" } },
	{ "sha3-256", FAM_HASH, NULL, 0, { NULL } },
	{ "blake2b512", FAM_HASH, NULL, 0, { "b2sum" } },
	{ "sha1", FAM_HASH, NULL, 0, { "sha1sum" } },
	{ "md5", FAM_HASH, NULL, 0, { "md5sum" } },
	{ "fft.c2c", FAM_FFT, NULL, FFT_C2C, { NULL } },
	{ "fft.r2c", FAM_FFT, NULL, FFT_R2C, { NULL } },
	{ "fft.c2r", FAM_FFT, NULL, FFT_C2R, { NULL } },
};
#define NOPS (sizeof ops / sizeof ops[0])

static const struct opdef *opdef(const char *name)
{
	for (size_t i = 0; i < NOPS; i++)
		if (!strcmp(ops[i].name, name))
			return &ops[i];
	return NULL;
}

/* The operations of the toolkit: ours, then any other a loaded backend
 * lists (not measured yet). */
#define MAX_NAMES 64
static int all_ops(struct accel_ctx *ctx, const char **names)
{
	int n = 0;
	for (size_t i = 0; i < NOPS; i++)
		names[n++] = ops[i].name;
	for (int i = 0; i < accel_backend_count(ctx); i++) {
		const struct accel_backend_status *s = accel_backend_status(ctx, i);
		if (!s->backend || !s->backend->ops)
			continue;
		for (const char *const *o = s->backend->ops; *o && n < MAX_NAMES; o++) {
			int dup = 0;
			for (int k = 0; k < n && !dup; k++)
				dup = !strcmp(names[k], *o);
			if (!dup)
				names[n++] = *o;
		}
	}
	return n;
}

/* ------------------------------------------------------------ the cases */

struct stats3 {
	double min, median, max;
};

/* One measured run set: ours or the peer's. */
struct series {
	double *t;               /* seconds of each measured run */
	int n;
	double cpu;              /* user + system seconds of the measured runs */
	long rss_kib;            /* peak resident set (ours only: a child's
	                          * ru_maxrss counts its parent's pages at exec) */
	double start;            /* seconds taken off each run: the peer's start-up */
};

struct kase {
	const struct opdef *op;
	char engine[80];         /* the -b item this case runs on */
	char ran[160];           /* engines that ran units, from the statistics */
	uint64_t size;           /* bytes, or N for FFTs */
	const char *input;       /* file read by each run (ours and the peer) */
	const char *tiny;        /* the set-up run's input */
	uint64_t in_bytes;       /* bytes read per run */
	uint64_t bytes;          /* bytes the MB/s counts (uncompressed for codecs) */
	uint64_t out_bytes;      /* bytes written per run */
	double transforms;       /* FFT frames per run */
	double setup;
	struct series ours, peer;
	char peer_cmd[160];      /* "" without a peer */
	char *peer_argv[16];
	int failed;
};

struct bench {
	struct job *job;
	struct accel_ctx *ctx;
	char dir[4096];          /* temporary folder */
	char *files[256];        /* made in it, removed at the end */
	int nfiles;
	int threads;             /* the thread count given to peers */
	uint8_t age_key[ACCEL_AGE_KEY_LEN];
	char age_recipient[128], age_identity[4200];
	int age_peer;            /* 1: age-keygen made the identity */
	int progress;            /* 1: the case being measured is shown on stderr */
};

/* End the progress line before a message. */
static void clear_progress(const struct bench *b)
{
	if (b->progress)
		fputs("\r\033[K", stderr);
}

/* A path in the temporary folder, remembered for removal (NULL when out
 * of memory or of slots). */
static char *temp_path(struct bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *temp_path(struct bench *b, const char *fmt, ...)
{
	char name[256], *p;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	for (int i = 0; i < b->nfiles; i++)
		if (!strcmp(strrchr(b->files[i], '/') + 1, name))
			return b->files[i];
	if (b->nfiles == (int)(sizeof b->files / sizeof b->files[0]) ||
	    asprintf(&p, "%s/%s", b->dir, name) < 0)
		return NULL;
	return b->files[b->nfiles++] = p;
}

/* The inputs go when a signal ends the run: the handler removes them,
 * then hands the signal on to the handler it replaced (accel_output's,
 * for its own temporary) or to the default action. */
static const int end_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU, SIGXFSZ };
#define NSIG_END (sizeof end_signals / sizeof end_signals[0])
static struct sigaction old_action[NSIG_END];
static struct bench *volatile running;

static void on_signal(int sig)
{
	struct bench *b = running;
	if (b) {
		for (int i = 0; i < b->nfiles; i++)
			unlink(b->files[i]);
		rmdir(b->dir);
	}
	for (size_t i = 0; i < NSIG_END; i++)
		if (end_signals[i] == sig) {
			sigaction(sig, &old_action[i], NULL);
			if (old_action[i].sa_handler != SIG_DFL && old_action[i].sa_handler != SIG_IGN &&
			    !(old_action[i].sa_flags & SA_SIGINFO)) {
				old_action[i].sa_handler(sig);
				return;
			}
		}
	raise(sig);
}

/* Install on_signal for the signals whose action is not to ignore them
 * (a signal the parent ignored, as under nohup, stays ignored). */
static void catch_signals(struct bench *b)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigfillset(&sa.sa_mask);
	running = b;
	for (size_t i = 0; i < NSIG_END; i++)
		if (sigaction(end_signals[i], NULL, &old_action[i]) == 0 && old_action[i].sa_handler != SIG_IGN)
			sigaction(end_signals[i], &sa, NULL);
}

static void cleanup(struct bench *b)
{
	for (int i = 0; i < b->nfiles; i++) {
		unlink(b->files[i]);
		free(b->files[i]);
	}
	if (b->dir[0])
		rmdir(b->dir);
	b->nfiles = 0;
	b->dir[0] = 0;
}

/* ------------------------------------------------------------ the inputs */

/* The corpus walk (nftw has no user pointer). */
static struct {
	int fd;
	uint64_t left;
	int error;
} walk;

static int walk_file(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (flag != FTW_F || !S_ISREG(st->st_mode) || st->st_size == 0)
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	static uint8_t buf[1 << 16];
	ssize_t n;
	while (walk.left && (n = read(fd, buf, walk.left < sizeof buf ? walk.left : sizeof buf)) > 0) {
		if (write(walk.fd, buf, (size_t)n) != n) {
			walk.error = errno ? errno : EIO;
			break;
		}
		walk.left -= (uint64_t)n;
	}
	close(fd);
	return walk.left == 0 || walk.error;
}

/* The corpus of `size` bytes: the files under /usr/share/doc and the
 * system's library folder, concatenated in the order of the walk (as
 * tests/bench/corpus.sh's tar), repeated when they hold fewer bytes.
 * 0, or -1 after the message. */
static int make_corpus(const char *path, uint64_t size)
{
	static const char *const roots[] = { "/usr/share/doc", "/usr/lib/x86_64-linux-gnu", "/usr/lib" };
	walk.fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	walk.left = size;
	walk.error = 0;
	if (walk.fd < 0) {
		accel_msg_error("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof roots / sizeof roots[0] && walk.left && !walk.error; i++)
		if (i != 2 || access(roots[1], F_OK) != 0)
			nftw(roots[i], walk_file, 16, FTW_PHYS | FTW_MOUNT);
	uint64_t have = size - walk.left;
	if (!walk.error && walk.left && !have)
		walk.error = ENOENT;
	/* Too few files: the corpus again from its start. */
	static uint8_t buf[1 << 16];
	for (uint64_t off = 0; !walk.error && walk.left;) {
		size_t want = walk.left < sizeof buf ? (size_t)walk.left : sizeof buf;
		ssize_t n = pread(walk.fd, buf, want < have - off ? want : (size_t)(have - off), (off_t)off);
		if (n <= 0 || write(walk.fd, buf, (size_t)n) != n) {
			walk.error = n < 0 ? errno : EIO;
			break;
		}
		walk.left -= (uint64_t)n;
		off = (off + (uint64_t)n) % have;
	}
	if (close(walk.fd) < 0 && !walk.error)
		walk.error = errno;
	if (walk.error) {
		accel_msg_error("cannot make the input %s from this machine's files: %s", path,
				walk.error == ENOENT ? "no readable file under /usr/share/doc or /usr/lib" :
				strerror(walk.error));
		return -1;
	}
	return 0;
}

/* FFT input: `frames` frames of `frame` samples of tones plus noise,
 * complex (cf32) or real (f32). 0, or -1 after the message. */
static int make_tones(const char *path, uint64_t frames, size_t frame, int complex)
{
	FILE *f = fopen(path, "we");
	if (!f) {
		accel_msg_error("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	static const double tone[3][2] = { { 0.0123, 0.5 }, { 0.1789, 0.25 }, { 0.3301, 0.125 } };
	uint64_t x = 0x9e3779b97f4a7c15u, n = frames * frame;
	for (uint64_t j = 0; j < n; j++) {
		float v[2] = { 0, 0 };
		for (int t = 0; t < 3; t++) {
			double ph = 2 * M_PI * tone[t][0] * (double)j;
			v[0] += (float)(tone[t][1] * cos(ph));
			v[1] += (float)(tone[t][1] * sin(ph));
		}
		for (int k = 0; k < 2; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			v[k] += (float)(0.1 * ((double)(x >> 11) / 9007199254740992.0 - 0.5));
		}
		fwrite(v, sizeof(float), complex ? 2 : 1, f);
	}
	if (ferror(f) | (fclose(f) != 0)) {
		accel_msg_error("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int64_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) < 0 ? -1 : st.st_size;
}

/* ------------------------------------------------------- our runs */

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
	struct accel_stream_ops sops = { hash_next, NULL, NULL };
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
static int run_op(struct bench *b, const struct kase *c, const char *path, const char *dest,
		  struct accel_stream_stats *st, uint64_t *written, char *err, size_t len)
{
	struct accel_input in;
	struct accel_output out;
	err[0] = 0;
	if (accel_input_open(&in, path) < 0) {
		snprintf(err, len, "cannot read %s: %s", path, strerror(errno));
		return ACCEL_EIO;
	}
	if (accel_output_open(&out, dest ? dest : "/dev/null", 1, 1) < 0) {
		snprintf(err, len, "cannot write %s: %s", dest ? dest : "/dev/null", strerror(errno));
		accel_input_close(&in);
		return ACCEL_EIO;
	}
	int rc;
	const struct opdef *op = c->op;
	if (op->fam == FAM_COMPRESS) {
		struct accel_compress_cfg cfg = { .backend = c->engine, .stream = stream_cfg(b, in.size),
						  .format = op->format, .checksum = 1 };
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

/* ------------------------------------------------------ the peer's runs */

static int on_path(const char *prog)
{
	const char *path = getenv("PATH");
	if (!path)
		return 0;
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");
		char full[4096];
		snprintf(full, sizeof full, "%.*s/%s", (int)n, n ? p : ".", prog);
		if (access(full, X_OK) == 0)
			return 1;
		p += n + (p[n] == ':');
	}
	return 0;
}

/* Run argv with stdin from /dev/null, stdout to `out` (NULL: /dev/null)
 * and stderr to /dev/null; its rusage into *ru (may be NULL). Returns the
 * exit status, or -1 when it could not run or died of a signal. */
static int spawn(char *const argv[], const char *out, struct rusage *ru)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return -1;
	int st;
	struct rusage r;
	while (wait4(pid, &st, 0, &r) < 0)
		if (errno != EINTR)
			return -1;
	if (ru)
		*ru = r;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* age's key pair for the age peers, once: 0, or -1 when age-keygen
 * cannot make one (no peer then). */
static int age_keys(struct bench *b)
{
	if (b->age_peer)
		return b->age_peer > 0 ? 0 : -1;
	b->age_peer = -1;
	char *key = temp_path(b, "age-key.txt"), *rec = temp_path(b, "age-recipient.txt");
	if (!key || !rec || !on_path("age-keygen"))
		return -1;
	char *gen[] = { "age-keygen", "-o", key, NULL }, *pub[] = { "age-keygen", "-y", key, NULL };
	if (spawn(gen, NULL, NULL) != 0 || spawn(pub, rec, NULL) != 0)
		return -1;
	FILE *f = fopen(rec, "re");
	if (!f)
		return -1;
	int ok = fgets(b->age_recipient, sizeof b->age_recipient, f) != NULL;
	fclose(f);
	b->age_recipient[strcspn(b->age_recipient, "\n")] = 0;
	if (!ok || !b->age_recipient[0])
		return -1;
	snprintf(b->age_identity, sizeof b->age_identity, "%s", key);
	b->age_peer = 1;
	return 0;
}

/* The peer's command for case c on `input` into c->peer_argv and
 * c->peer_cmd (shown without file names): 0, or -1 when there is none
 * here. */
static int peer_command(struct bench *b, struct kase *c, const char *input)
{
	const struct opdef *op = c->op;
	if (!op->peer[0] || !on_path(op->peer[0]))
		return -1;
	if ((op->fam == FAM_AGE_ENCRYPT || op->fam == FAM_AGE_DECRYPT) && age_keys(b) < 0)
		return -1;
	int n = 0;
	size_t used = 0;
	for (int i = 0; op->peer[i] && n < 14; i++) {
		char word[4300];
		const char *w = op->peer[i];
		int shown = 1;
		if (strstr(w, "%T"))
			snprintf(word, sizeof word, "%.*s%d", (int)(strstr(w, "%T") - w), w, b->threads);
		else if (strstr(w, "%L"))
			snprintf(word, sizeof word, "%.*s%d", (int)(strstr(w, "%L") - w), w,
				 accel_compress_default_level(op->format));
		else if (!strcmp(w, "%R"))
			snprintf(word, sizeof word, "%s", b->age_recipient), shown = 0;
		else if (!strcmp(w, "%I"))
			snprintf(word, sizeof word, "%s", b->age_identity), shown = 0;
		else
			snprintf(word, sizeof word, "%s", w);
		if (!(c->peer_argv[n++] = strdup(word)))
			return -1;
		if (shown && used < sizeof c->peer_cmd)
			used += (size_t)snprintf(c->peer_cmd + used, sizeof c->peer_cmd - used, "%s%s", used ? " " : "", word);
	}
	if (!(c->peer_argv[n++] = strdup(input)))
		return -1;
	c->peer_argv[n] = NULL;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The peer's start-up: the median of 3 runs on the empty input of case
 * c (for age -d, an age file of the empty plaintext), into c->peer.start.
 * 0, or -1 when it failed. */
static int peer_start(struct bench *b, struct kase *c, const char *input)
{
	const char *tiny = c->tiny;
	if (c->op->fam == FAM_AGE_DECRYPT) {
		char *theirs = temp_path(b, "age-empty.age");
		char *enc[] = { "age", "-r", b->age_recipient, "-o", theirs, (char *)c->tiny, NULL };
		if (!theirs)
			return -1;
		enc[5] = temp_path(b, "empty");
		if (file_size(theirs) < 0 && spawn(enc, NULL, NULL) != 0)
			return -1;
		tiny = theirs;
	}
	int last = 0;
	while (c->peer_argv[last + 1])
		last++;
	char *keep = c->peer_argv[last];
	c->peer_argv[last] = (char *)tiny;
	double t[3];
	int rc = 0;
	for (int i = 0; i < 3 && !rc; i++) {
		double t0 = accel_now();
		rc = spawn(c->peer_argv, NULL, NULL) ? -1 : 0;
		t[i] = accel_now() - t0;
	}
	c->peer_argv[last] = keep;
	qsort(t, 3, sizeof t[0], cmp_double);
	c->peer.start = t[1];
	return rc;
}

static double tv(struct timeval t)
{
	return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

static double cpu_self(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return tv(ru.ru_utime) + tv(ru.ru_stime);
}

static int add_sample(struct series *s, double t)
{
	if (!(s->n & (s->n - 1)) || !s->t) {
		double *nt = realloc(s->t, (size_t)(s->n ? 2 * s->n : 1) * sizeof *nt);
		if (!nt)
			return -1;
		s->t = nt;
	}
	s->t[s->n++] = t;
	return 0;
}

/* --------------------------------------------------------- measuring */

/* The engines that ran units in a run, joined by '+', into buf[len]. */
static void engines_ran(const struct accel_stream_stats *st, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (int i = 0; i < st->nengines && used < len; i++)
		if (st->engines[i].units)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "+" : "", st->engines[i].name);
}

/* The inputs of case c (made once per operation family and size). 0, or
 * -1 after the message. */
static int prepare(struct bench *b, struct kase *c)
{
	const struct opdef *op = c->op;
	char err[512];
	uint64_t w;
	struct accel_stream_stats st;
	if (op->fam == FAM_FFT) {
		size_t frame = op->fft == FFT_C2R ? (size_t)c->size / 2 + 1 : (size_t)c->size;
		int complex = op->fft != FFT_R2C;
		uint64_t fb = frame * (complex ? 8 : 4), frames = FFT_BYTES / fb ? FFT_BYTES / fb : 1;
		const char *kind = op->name + 4;
		char *in = temp_path(b, "%s-%llu", kind, (unsigned long long)c->size);
		char *one = temp_path(b, "%s-%llu-one", kind, (unsigned long long)c->size);
		if (!in || !one)
			goto oom;
		if ((file_size(in) < 0 && make_tones(in, frames, frame, complex) < 0) ||
		    (file_size(one) < 0 && make_tones(one, 1, frame, complex) < 0))
			return -1;
		c->input = in;
		c->tiny = one;
		c->in_bytes = c->bytes = frames * fb;
		c->transforms = (double)frames;
		return 0;
	}
	char *corpus = temp_path(b, "corpus-%llu", (unsigned long long)c->size), *empty = temp_path(b, "empty");
	if (!corpus || !empty)
		goto oom;
	if (file_size(corpus) < 0 && make_corpus(corpus, c->size) < 0)
		return -1;
	if (file_size(empty) < 0 && make_corpus(empty, 0) < 0)
		return -1;
	c->input = corpus;
	c->tiny = empty;
	c->in_bytes = c->bytes = c->size;
	if (op->fam != FAM_DECOMPRESS && op->fam != FAM_AGE_DECRYPT)
		return 0;
	/* What the decoder reads: our own output (the peer reads the same
	 * file, but for age, which reads its own). */
	struct kase enc = *c;
	char kind[32];
	snprintf(kind, sizeof kind, "%s", op->fam == FAM_AGE_DECRYPT ? "age" : op->format);
	enc.op = opdef(op->fam == FAM_AGE_DECRYPT ? "age.encrypt" : op->format[0] == 'z' ? "zstd.compress" :
		       op->format[0] == 'g' ? "gzip.compress" : "lz4.compress");
	snprintf(enc.engine, sizeof enc.engine, "auto");
	char *big = temp_path(b, "%s-%llu", kind, (unsigned long long)c->size), *small = temp_path(b, "%s-empty", kind);
	if (!big || !small)
		goto oom;
	int rc = 0;
	if (file_size(big) < 0)
		rc = run_op(b, &enc, corpus, big, &st, &w, err, sizeof err);
	if (!rc && file_size(small) < 0)
		rc = run_op(b, &enc, empty, small, &st, &w, err, sizeof err);
	if (rc < 0) {
		accel_msg_error("%s: cannot make its input: %s", op->name, err);
		return -1;
	}
	c->input = big;
	c->tiny = small;
	c->in_bytes = (uint64_t)file_size(big);
	return 0;
oom:
	accel_msg_error("out of memory");
	return -1;
}

/* Reset the peak resident set of this process (Linux: clear_refs 5), so
 * that ru_maxrss after a case is the case's own; where that is refused it
 * stays the peak so far. */
static void reset_peak_rss(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = write(fd, "5", 1);
		(void)n;
		close(fd);
	}
}

/* Measure case c: the set-up run, the warm-up, then the measured runs
 * (ours and the peer's in turn). 0, or -1 after the message. */
static int measure(struct bench *b, struct kase *c)
{
	const struct job *job = b->job;
	char err[512];
	uint64_t w = 0;
	struct accel_stream_stats st;
	if (prepare(b, c) < 0)
		return -1;
	const char *peer_in = c->input;
	if (job->vs && c->op->fam == FAM_AGE_DECRYPT) {
		/* age decrypts a file of its own, of the same plaintext. */
		char *theirs = temp_path(b, "age-%llu.age", (unsigned long long)c->size);
		char *plain = temp_path(b, "corpus-%llu", (unsigned long long)c->size);
		char *enc[] = { "age", "-r", b->age_recipient, "-o", theirs, plain, NULL };
		peer_in = NULL;
		if (theirs && plain && on_path("age") && age_keys(b) == 0 &&
		    (file_size(theirs) >= 0 || spawn(enc, NULL, NULL) == 0))
			peer_in = theirs;
	}
	if (job->vs && peer_in && peer_command(b, c, peer_in) < 0)
		c->peer_cmd[0] = 0;
	reset_peak_rss();
	double t0 = accel_now();
	int rc = run_op(b, c, c->tiny, NULL, &st, &w, err, sizeof err);
	c->setup = accel_now() - t0;
	int peer = c->peer_cmd[0] != 0;
	if (peer && (rc = peer_start(b, c, peer_in)) < 0) {
		clear_progress(b);
		accel_msg_warn("%s: the peer '%s' failed on an empty input: no ratio", c->op->name, c->peer_cmd);
		peer = rc = 0;
	}
	for (int i = 0; !rc && i < job->warmup; i++) {
		rc = run_op(b, c, c->input, NULL, &st, &w, err, sizeof err);
		int ps = peer ? spawn(c->peer_argv, NULL, NULL) : 0;
		if (ps != 0) {
			clear_progress(b);
			accel_msg_warn("%s: the peer '%s' failed (exit %d): no ratio", c->op->name, c->peer_cmd, ps);
			peer = 0;
		}
	}
	double spent = 0;
	for (int i = 0; !rc && (job->repeat ? i < job->repeat : i < 3 || spent < job->time) && i < MAX_SAMPLES; i++) {
		double cpu0 = cpu_self();
		t0 = accel_now();
		rc = run_op(b, c, c->input, NULL, &st, &w, err, sizeof err);
		double dt = accel_now() - t0;
		c->ours.cpu += cpu_self() - cpu0;
		spent += dt;
		if (!rc && add_sample(&c->ours, dt) < 0)
			rc = ACCEL_ENOMEM;
		if (!rc && peer) {
			struct rusage ru;
			t0 = accel_now();
			int ps = spawn(c->peer_argv, NULL, &ru);
			dt = accel_now() - t0;
			if (ps != 0) {
				clear_progress(b);
				accel_msg_warn("%s: the peer '%s' failed (exit %d): no ratio", c->op->name, c->peer_cmd, ps);
				peer = 0;
			} else if (add_sample(&c->peer, dt) < 0) {
				rc = ACCEL_ENOMEM;
			} else {
				c->peer.cpu += tv(ru.ru_utime) + tv(ru.ru_stime);
			}
		}
	}
	if (!peer)
		c->peer_cmd[0] = 0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	c->ours.rss_kib = ru.ru_maxrss;
	c->out_bytes = w;
	if (rc == 0)
		engines_ran(&st, c->ran, sizeof c->ran);
	if (rc == 0 && job->common.verbose) {
		clear_progress(b);
		fprintf(stderr, "%s: %s on %s, %d runs; the last: ", cli.prog, c->op->name, c->engine, c->ours.n);
		accel_stream_stats_print(&st, stderr);
	}
	if (rc < 0) {
		clear_progress(b);
		accel_msg_error("%s on %s, size %llu: %s", c->op->name, c->engine, (unsigned long long)c->size,
				err[0] ? err : accel_strerror(rc));
		return -1;
	}
	return 0;
}

/* min, median and max of `per / t` over the series' times, each less
 * s->start when it is longer. */
static struct stats3 rate(const struct series *s, double per)
{
	struct stats3 r = { 0, 0, 0 };
	if (!s->n)
		return r;
	double *t = malloc((size_t)s->n * sizeof *t);
	if (!t)
		return r;
	for (int i = 0; i < s->n; i++)
		t[i] = s->t[i] > s->start ? s->t[i] - s->start : s->t[i];
	qsort(t, (size_t)s->n, sizeof *t, cmp_double);
	double med = s->n % 2 ? t[s->n / 2] : (t[s->n / 2 - 1] + t[s->n / 2]) / 2;
	r.min = per / t[s->n - 1];
	r.median = per / med;
	r.max = per / t[0];
	free(t);
	return r;
}

static double flops_per_transform(const struct kase *c)
{
	double n = (double)c->size;
	/* 5 N log2 N for a complex transform; half of it for a real one
	 * (benchFFT's convention). */
	return (c->op->fft == FFT_C2C ? 5 : 2.5) * n * log2(n);
}

/* ------------------------------------------------------------- output */

static void size_text(const struct kase *c, char *buf, size_t len)
{
	uint64_t s = c->size;
	if (c->op->fam == FAM_FFT)
		snprintf(buf, len, "N=%llu", (unsigned long long)s);
	else if (s >= 1u << 30 && !(s % (1u << 30)))
		snprintf(buf, len, "%lluG", (unsigned long long)(s >> 30));
	else if (s >= 1u << 20 && !(s % (1u << 20)))
		snprintf(buf, len, "%lluM", (unsigned long long)(s >> 20));
	else if (s >= 1u << 10 && !(s % (1u << 10)))
		snprintf(buf, len, "%lluK", (unsigned long long)(s >> 10));
	else
		snprintf(buf, len, "%llu", (unsigned long long)s);
}

static double ratio(const struct kase *c)
{
	if (!c->peer_cmd[0] || !c->peer.n)
		return 0;
	return rate(&c->ours, 1).median / rate(&c->peer, 1).median;
}

static void print_table(struct kase *cs, int n)
{
	printf("%-16s %-18s %9s %8s %9s %-19s %7s %9s %8s %7s  %-24s %9s %9s\n", "OPERATION", "ENGINE", "SIZE",
	       "SETUP", "MB/S", "MIN-MAX", "GFLOPS", "MSAMPLE/S", "CPU S/GB", "RSS MiB", "PEER", "PEER MB/S",
	       "OURS/PEER");
	for (int i = 0; i < n; i++) {
		struct kase *c = &cs[i];
		if (c->failed)
			continue;
		char sz[32], setup[32], mm[40], gf[16] = "-", ms[16] = "-", pm[16] = "-", pr[16] = "-";
		size_text(c, sz, sizeof sz);
		if (c->setup < 1)
			snprintf(setup, sizeof setup, "%.1fms", c->setup * 1e3);
		else
			snprintf(setup, sizeof setup, "%.2fs", c->setup);
		struct stats3 r = rate(&c->ours, (double)c->bytes / 1e6);
		snprintf(mm, sizeof mm, "%.1f-%.1f", r.min, r.max);
		if (c->op->fam == FAM_FFT) {
			snprintf(gf, sizeof gf, "%.2f", rate(&c->ours, c->transforms * flops_per_transform(c) / 1e9).median);
			snprintf(ms, sizeof ms, "%.1f", rate(&c->ours, c->transforms * (double)c->size / 1e6).median);
		}
		if (c->peer_cmd[0]) {
			snprintf(pm, sizeof pm, "%.1f", rate(&c->peer, (double)c->bytes / 1e6).median);
			snprintf(pr, sizeof pr, "%.2fx", ratio(c));
		}
		printf("%-16s %-18s %9s %8s %9.1f %-19s %7s %9s %8.2f %7.0f  %-24s %9s %9s\n", c->op->name, c->engine,
		       sz, setup, r.median, mm, gf, ms, c->ours.cpu / (double)c->ours.n / (double)c->bytes * 1e9,
		       (double)c->ours.rss_kib / 1024, c->peer_cmd[0] ? c->peer_cmd : "-", pm, pr);
	}
}

static void print_csv(struct kase *cs, int n)
{
	printf("operation,engine,size,size_unit,input_bytes,bytes,setup_seconds,repeats,mbps_min,mbps_median,"
	       "mbps_max,gflops_median,msamples_per_second_median,cpu_seconds_per_byte,peak_rss_bytes,peer,"
	       "peer_setup_seconds,peer_mbps_median,peer_cpu_seconds_per_byte,ratio\n");
	for (int i = 0; i < n; i++) {
		struct kase *c = &cs[i];
		if (c->failed)
			continue;
		struct stats3 r = rate(&c->ours, (double)c->bytes / 1e6);
		printf("%s,%s,%llu,%s,%llu,%llu,%.9g,%d,%.6g,%.6g,%.6g,", c->op->name, c->engine,
		       (unsigned long long)c->size, c->op->fam == FAM_FFT ? "samples" : "bytes",
		       (unsigned long long)c->in_bytes, (unsigned long long)c->bytes, c->setup, c->ours.n, r.min,
		       r.median, r.max);
		if (c->op->fam == FAM_FFT)
			printf("%.6g,%.6g,", rate(&c->ours, c->transforms * flops_per_transform(c) / 1e9).median,
			       rate(&c->ours, c->transforms * (double)c->size / 1e6).median);
		else
			printf(",,");
		printf("%.6g,%lld,", c->ours.cpu / (double)c->ours.n / (double)c->bytes, (long long)c->ours.rss_kib * 1024);
		if (c->peer_cmd[0])
			printf("%s,%.9g,%.6g,%.6g,%.6g\n", c->peer_cmd, c->peer.start,
			       rate(&c->peer, (double)c->bytes / 1e6).median,
			       c->peer.cpu / (double)c->peer.n / (double)c->bytes, ratio(c));
		else
			printf(",,,,\n");
	}
}

static cJSON *stats_json(struct stats3 s)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "min", s.min);
	cJSON_AddNumberToObject(o, "median", s.median);
	cJSON_AddNumberToObject(o, "max", s.max);
	return o;
}

static cJSON *seconds_json(const struct series *s)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < s->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(s->t[i]));
	return a;
}

/* The machine as accel-detect --json describes it: its host and devices
 * objects, or NULL. */
static cJSON *machine_json(struct accel_ctx *ctx)
{
	accel_discover_classes(ctx, ACCEL_CLASS_ALL);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	struct accel_report_opts o = { .format = ACCEL_REPORT_JSON, .started = accel_now(), .prog = cli.prog };
	struct accel_report *r = accel_report_new(f, &o);
	int rc = r ? accel_report_begin(r, ctx) : ACCEL_ENOMEM;
	for (int i = 0; !rc && i < accel_device_count(ctx); i++)
		rc = accel_report_device(r, accel_device_at(ctx, i));
	rc = accel_report_end(r) < 0 ? ACCEL_ENOMEM : rc;
	fclose(f);
	cJSON *doc = rc ? NULL : cJSON_Parse(text);
	free(text);
	cJSON *m = cJSON_CreateObject();
	if (doc && m) {
		cJSON_AddItemToObject(m, "host", cJSON_DetachItemFromObject(doc, "host"));
		cJSON_AddItemToObject(m, "devices", cJSON_DetachItemFromObject(doc, "devices"));
	}
	cJSON_Delete(doc);
	return m;
}

static int print_json(struct bench *b, struct kase *cs, int n, const char **skipped, int nskipped)
{
	const struct job *job = b->job;
	cJSON *root = cJSON_CreateObject(), *cases = cJSON_CreateArray(), *nm = cJSON_CreateArray();
	cJSON *set = cJSON_CreateObject();
	cJSON_AddNumberToObject(root, "schema_version", 1);
	cJSON_AddStringToObject(root, "accel_version", ACCEL_VERSION);
	cJSON_AddItemToObject(root, "machine", machine_json(b->ctx));
	cJSON_AddNumberToObject(set, "time_seconds", job->time);
	if (job->repeat)
		cJSON_AddNumberToObject(set, "repeat", job->repeat);
	else
		cJSON_AddNullToObject(set, "repeat");
	cJSON_AddNumberToObject(set, "warmup", job->warmup);
	cJSON_AddNumberToObject(set, "threads", job->common.threads);
	cJSON_AddBoolToObject(set, "vs", job->vs);
	cJSON_AddItemToObject(root, "settings", set);
	for (int i = 0; i < n; i++) {
		struct kase *c = &cs[i];
		if (c->failed)
			continue;
		cJSON *o = cJSON_CreateObject();
		int fft = c->op->fam == FAM_FFT;
		cJSON_AddStringToObject(o, "operation", c->op->name);
		cJSON_AddStringToObject(o, "engine", c->engine);
		cJSON_AddStringToObject(o, "engines_ran", c->ran);
		cJSON_AddNumberToObject(o, "size", (double)c->size);
		cJSON_AddStringToObject(o, "size_unit", fft ? "samples" : "bytes");
		cJSON_AddNumberToObject(o, "input_bytes", (double)c->in_bytes);
		cJSON_AddNumberToObject(o, "bytes", (double)c->bytes);
		cJSON_AddNumberToObject(o, "output_bytes", (double)c->out_bytes);
		cJSON_AddNumberToObject(o, "setup_seconds", c->setup);
		cJSON_AddNumberToObject(o, "repeats", c->ours.n);
		cJSON_AddItemToObject(o, "seconds", seconds_json(&c->ours));
		cJSON_AddItemToObject(o, "mbps", stats_json(rate(&c->ours, (double)c->bytes / 1e6)));
		if (fft) {
			cJSON_AddNumberToObject(o, "transforms", c->transforms);
			cJSON_AddItemToObject(o, "gflops", stats_json(rate(&c->ours, c->transforms * flops_per_transform(c) / 1e9)));
			cJSON_AddItemToObject(o, "msamples_per_second",
					      stats_json(rate(&c->ours, c->transforms * (double)c->size / 1e6)));
		} else {
			cJSON_AddNullToObject(o, "transforms");
			cJSON_AddNullToObject(o, "gflops");
			cJSON_AddNullToObject(o, "msamples_per_second");
		}
		cJSON_AddNumberToObject(o, "cpu_seconds_per_byte", c->ours.cpu / (double)c->ours.n / (double)c->bytes);
		cJSON_AddNumberToObject(o, "peak_rss_bytes", (double)c->ours.rss_kib * 1024);
		if (c->peer_cmd[0]) {
			cJSON *p = cJSON_CreateObject();
			cJSON_AddStringToObject(p, "command", c->peer_cmd);
			cJSON_AddNumberToObject(p, "setup_seconds", c->peer.start);
			cJSON_AddItemToObject(p, "seconds", seconds_json(&c->peer));
			cJSON_AddItemToObject(p, "mbps", stats_json(rate(&c->peer, (double)c->bytes / 1e6)));
			cJSON_AddNumberToObject(p, "cpu_seconds_per_byte", c->peer.cpu / (double)c->peer.n / (double)c->bytes);
			cJSON_AddNumberToObject(p, "ratio", ratio(c));
			cJSON_AddItemToObject(o, "peer", p);
		} else {
			cJSON_AddNullToObject(o, "peer");
		}
		cJSON_AddItemToArray(cases, o);
	}
	cJSON_AddItemToObject(root, "cases", cases);
	for (int i = 0; i < nskipped; i++)
		cJSON_AddItemToArray(nm, cJSON_CreateString(skipped[i]));
	cJSON_AddItemToObject(root, "not_measured", nm);
	char *text = cJSON_Print(root);
	cJSON_Delete(root);
	if (!text)
		return -1;
	puts(text);
	free(text);
	return 0;
}

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
		if (job->nsizes == MAX_SIZES || accel_parse_size(word, &v) < 0 || v < 1) {
			if (job->nsizes == MAX_SIZES)
				accel_msg_usage("--size: at most %d sizes", MAX_SIZES);
			else
				accel_msg_usage("--size: '%s' is not a size (bytes with K, M, G suffixes, or N for FFTs)", word);
			return ACCEL_EXIT_USAGE;
		}
		job->size[job->nsizes++] = v;
		s += n + (s[n] == ',');
	}
	return 0;
}

/* The -b items of the case list for op, or every engine that can run it:
 * into items (names of 80 bytes). Returns their number. */
static int engines_for(struct accel_ctx *ctx, const char *list, const char *op, char (*items)[80], int max)
{
	int n = 0;
	struct accel_op o = { .name = op, .checksum = 1 };
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
	const char *skipped[MAX_NAMES];
	int nskipped = 0, ncases = 0, cap = 0, status = 0;
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
		int ne = engines_for(b.ctx, job.common.backend, op->name, items, 16);
		if (job.list) {
			printf("%-16s ", op->name);
			for (int e = 0; e < ne; e++)
				printf("%s%s", e ? ", " : "", items[e]);
			puts(ne ? "" : job.common.backend ? "no engine of --backend can run it" : "no engine here");
			continue;
		}
		uint64_t dflt = op->fam == FAM_FFT ? DEFAULT_N : DEFAULT_BYTES;
		int nsz = job.nsizes ? job.nsizes : 1;
		for (int e = 0; e < ne; e++)
			for (int s = 0; s < nsz; s++) {
				uint64_t size = job.nsizes ? job.size[s] : dflt;
				if (op->fam == FAM_FFT && (size < 2 || size > (1u << 26))) {
					accel_msg_usage("--size: %llu is not an FFT size for %s (N from 2 to 2^26)",
							(unsigned long long)size, op->name);
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
				"the operations are not measured yet");
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
	b.threads = job.common.threads ? job.common.threads : accel_cpu_count();
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
