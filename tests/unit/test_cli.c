/*
 * test_cli.c - the option parser (clusters, attached and separate
 * arguments, numeric options, "--", operands, error texts), size and
 * integer parsing, the variables options are bound to (each type, its
 * usage line), the ACCEL_FAULT specification parser, and the start-up
 * that holds fds 0, 1 and 2 open.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <accel/cli.h>
#include <accel/io.h>
#include "core.h"

/* The grammar: each option of this table records itself ("d", "o=ARG")
 * in the job's trace. */
struct tjob {
	char trace[256];
	struct accel_common common;
};

static int record(void *v, const char *name, const char *arg)
{
	struct tjob *j = v;
	size_t n = strlen(j->trace);
	snprintf(j->trace + n, sizeof j->trace - n, arg ? "%s=%s " : "%s ", name, arg);
	return 0;
}

#define RECORD(name) \
	static int rec_##name(void *v, const char *arg) { return record(v, #name, arg); }
RECORD(d) RECORD(o) RECORD(level) RECORD(check) RECORD(checksum) RECORD(f) RECORD(T)

static const struct accel_option options[] = {
	{ 'd', "decompress", NULL, "decompress", ACCEL_CALL(rec_d) },
	{ 'o', "output", "FILE", "write FILE", "file", ACCEL_CALL(rec_o) },
	{ 0, NULL, "LEVEL", "level", NULL, ACCEL_OPT_NUMERIC, ACCEL_CALL(rec_level) },
	{ 0, "check", NULL, "check", ACCEL_CALL(rec_check) },
	{ 0, "checksum", "ALGO", "checksum", ACCEL_CALL(rec_checksum) },
	{ 'f', "force", NULL, "force", ACCEL_CALL(rec_f) },
	{ 'T', "threads", "N", "worker threads (0 = all cores; default 0)", ACCEL_CALL(rec_T) },
	ACCEL_BASIC_OPTIONS,
	{ 0 },
};

static const struct accel_cli cli = { "accel-test", "[options] [FILE...]", "test", options, NULL, NULL, NULL };

static const struct accel_option plain_options[] = {
	{ 'd', "decompress", NULL, "decompress", ACCEL_CALL(rec_d) },
	{ 0 },
};
static const struct accel_cli plain_cli = { "accel-plain", "", "no numeric option", plain_options, NULL, NULL, NULL };

/* Run f(arg) with stderr going to err[len] (what it printed, NUL-ended). */
static int with_stderr(int (*f)(void *), void *arg, char *err, size_t len)
{
	fflush(stderr);
	FILE *tmp = tmpfile();
	assert_non_null(tmp);
	int saved = dup(2);
	dup2(fileno(tmp), 2);
	int rc = f(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	size_t n = fread(err, 1, len - 1, tmp);
	err[n] = 0;
	fclose(tmp);
	return rc;
}

struct call {
	const struct accel_cli *cli;
	int argc;
	char **argv;
	void *job;
	struct accel_common *common;
};

static int call_parse(void *v)
{
	struct call *c = v;
	return accel_parse(c->cli, c->argc, c->argv, c->job, c->common);
}

/* accel_parse of argv (NULL-terminated, after the program name) against
 * cli into job: its return value, and what it printed in err[len]. */
static int parse_into(const struct accel_cli *c, void *job, struct accel_common *common, char *err, size_t len,
		      va_list ap)
{
	static char *argv[32];
	argv[0] = "prog";
	int argc = 1;
	for (char *a; (a = va_arg(ap, char *));)
		argv[argc++] = a;
	struct call call = { c, argc, argv, job, common };
	int rc = with_stderr(call_parse, &call, err, len);
	/* The context kept for --backend (accel_common_ctx): none after a
	 * usage error or a text, one after -b with a job to run. */
	if (rc != 0)
		assert_null(common->ctx);
	accel_ctx_free(common->ctx);
	common->ctx = NULL;
	return rc;
}

/* The trace of the options and the operands ("d o=out | a b"), or the
 * usage error's first line. */
static void parse(const struct accel_cli *c, char *out, size_t len, ...)
{
	struct tjob j;
	memset(&j, 0, sizeof j);
	char err[512];
	va_list ap;
	va_start(ap, len);
	int rc = parse_into(c, &j, &j.common, err, sizeof err, ap);
	va_end(ap);
	if (rc) {
		const char *colon = strstr(err, ": ");
		snprintf(out, len, "%d %.*s", rc, (int)strcspn(colon ? colon + 2 : err, "\n"), colon ? colon + 2 : err);
		return;
	}
	size_t n = (size_t)snprintf(out, len, "%s|", j.trace);
	for (int i = 0; i < j.common.noperands; i++)
		n += (size_t)snprintf(out + n, len - n, " %s", j.common.operands[i]);
}

#define EXPECT(want, ...) do { \
		char got[512]; \
		parse(&cli, got, sizeof got, __VA_ARGS__, (char *)NULL); \
		assert_string_equal(got, want); \
	} while (0)

static void short_options(void **state)
{
	EXPECT("d f |", "-d", "-f");
	EXPECT("d f |", "-df");
	EXPECT("d o=out |", "-do", "out");
	EXPECT("d o=out |", "-doout");
	EXPECT("o=-d |", "-o", "-d");  /* an argument may start with '-' */
	EXPECT("T=4 |", "-T4");
	EXPECT("T=4 |", "-T", "4");
	EXPECT("d T=4 |", "-dT4", "-v");
	EXPECT("T=v |", "-Tv");
}

static void long_options(void **state)
{
	EXPECT("T=4 |", "--threads=4");
	EXPECT("T=4 |", "--threads", "4");
	EXPECT("T= |", "--threads=");
	EXPECT("o=a=b |", "--output=a=b");
	EXPECT("d |", "--decompress");
	/* Unique prefixes are accepted, as getopt_long does. */
	EXPECT("d T=2 |", "--decomp", "--thr=2");
	/* An exact name wins over a longer one it prefixes. */
	EXPECT("check |", "--check");
	EXPECT("checksum=xxh |", "--checks=xxh");
}

static void numeric_options(void **state)
{
	EXPECT("level=19 |", "-19");
	EXPECT("level=1 |", "-1");
	EXPECT("d level=9 f |", "-d9f");
	EXPECT("level=3 d |", "-3d");
	EXPECT("level=5 level=7 |", "-5", "-7");
	char got[256];
	parse(&plain_cli, got, sizeof got, "-1", (char *)NULL);
	assert_string_equal(got, "2 unknown option '-1'");
}

static void operands(void **state)
{
	EXPECT("| a", "a");
	EXPECT("| -", "-");
	EXPECT("d | a b", "a", "-d", "b");
	EXPECT("d | a -f --threads=2 - b", "a", "-d", "--", "-f", "--threads=2", "-", "b");
	EXPECT("d | --", "-d", "--", "--");
	EXPECT("|", (char *)NULL);
}

static void errors(void **state)
{
	EXPECT("2 unknown option '-x'", "-x");
	EXPECT("2 unknown option '-x'", "-dx");
	EXPECT("2 unknown option '--nope'", "--nope");
	EXPECT("2 unknown option '--nope'", "--nope=3");
	EXPECT("2 option '--ver' is ambiguous", "--ver");
	EXPECT("2 option '--chec' is ambiguous", "--chec");
	EXPECT("2 option '-T' needs an argument (N)", "-T");
	EXPECT("2 option '-o' needs an argument (FILE)", "-do");
	EXPECT("2 option '--threads' needs an argument (N)", "--threads");
	EXPECT("2 option '--threads' needs an argument (N)", "--thr");
	EXPECT("2 option '--verbose' takes no argument", "--verbose=1");
}

/* The bound types: each option's variable, and the usage line for a bad
 * value. */
struct bjob {
	int dec, level, mode, window;
	const char *format, *name;
	uint64_t chunk;
	double ratio;
	float scale;
	char small;
	struct accel_common common;
};
#define B(field) ACCEL_AT(struct bjob, field)

static const struct accel_option bound_options[] = {
	{ 'd', "decompress", NULL, "decompress", ACCEL_SET(B(dec), 1) },
	{ 'z', "compress", NULL, "compress", ACCEL_SET(B(dec), 0) },
	{ 'L', "level", "N", "level", ACCEL_INT(B(level), 1, 19, NULL) },
	{ 0, "window", "N", "window log", NULL, ACCEL_OPT_OPTIONAL, ACCEL_INT(B(window), 10, 31, "a window log from 10 to 31"), .value = 27 },
	{ 'm', "mode", "MODE", "mode", "fast medium slow", ACCEL_CHOICE(B(mode)) },
	{ 0, "layout", "L", "layout", "nchw nhwc", ACCEL_CHOICE(B(mode)) },
	{ 0, "decode", "D", "decoder", "ctc", ACCEL_WORD(B(name)) },
	{ 'F', "format", "FORMAT", "format", "zstd gzip lz4", ACCEL_WORD(B(format)) },
	{ 'B', "chunk-size", "SIZE", "chunk", ACCEL_SIZE(B(chunk), 1024, 1 << 30, "a size from 1K to 1G") },
	{ 'r', "ratio", "F", "ratio", ACCEL_DOUBLE(B(ratio), 0, 0.99, "a fraction from 0 to 0.99") },
	{ 0, "scale", "X", "scale", ACCEL_DOUBLE(B(scale), 0, 0, "a number") },
	{ 0, "memory", "SIZE", "memory cap", ACCEL_COMMON(ACCEL_OPT_MEMORY) },
	ACCEL_OUTPUT_OPTION,
	ACCEL_FORCE_OPTION,
	ACCEL_COMMON_OPTIONS,
	{ 0 },
};
static const struct accel_cli bound_cli = { "accel-bound", "[options]", "bound", bound_options, NULL, NULL, NULL };

static const struct accel_option bad_table[] = {
	{ 's', "small", NULL, "a char bound as an int", ACCEL_SET(B(small), 1) },
	{ 0 },
};
static const struct accel_cli bad_cli = { "accel-bad", "", "a bad table", bad_table, NULL, NULL, NULL };

/* accel_parse against bound_cli into *j: its return value; err gets the
 * first line printed on stderr. */
static int bparse(const struct accel_cli *c, struct bjob *j, char *err, size_t len, ...)
{
	memset(j, 0, sizeof *j);
	j->level = -1;
	va_list ap;
	va_start(ap, len);
	int rc = parse_into(c, j, &j->common, err, len, ap);
	va_end(ap);
	err[strcspn(err, "\n")] = 0;
	return rc;
}

#define BAD(line, ...) do { \
		struct bjob j; \
		char err[512]; \
		assert_int_equal(bparse(&bound_cli, &j, err, sizeof err, __VA_ARGS__, (char *)NULL), 2); \
		assert_string_equal(err, line); \
	} while (0)

static void bound_values(void **state)
{
	struct bjob j;
	char err[512];
	unsetenv("ACCEL_MEMORY");
	assert_int_equal(bparse(&bound_cli, &j, err, sizeof err, "-d", "-L7", "--mode=slow", "-F", "lz4", "-B", "64K",
				"-r", "0.5", "--scale", "-2.5", "--decode", "ctc", "-o", "out", "-f", "--memory", "2M",
				"--window", (char *)NULL), 0);
	assert_string_equal(err, "");
	assert_int_equal(j.dec, 1);
	assert_int_equal(j.level, 7);
	assert_int_equal(j.mode, 2);
	assert_string_equal(j.format, "lz4");
	assert_string_equal(j.name, "ctc");
	assert_true(j.chunk == 64 << 10);
	assert_true(j.ratio == 0.5);
	assert_true(j.scale == -2.5f);
	assert_string_equal(j.common.output, "out");
	assert_int_equal(j.common.force, 1);
	assert_true(j.common.memory == 2 << 20);
	assert_int_equal(j.window, 27);  /* an optional argument left out */
	assert_int_equal(bparse(&bound_cli, &j, err, sizeof err, "-dz", "--window=12", "--layout", "nhwc", "-B", "1G",
				(char *)NULL), 0);
	assert_int_equal(j.dec, 0);  /* the last one counts */
	assert_int_equal(j.window, 12);
	assert_int_equal(j.mode, 1);
	assert_true(j.chunk == 1 << 30);
	assert_null(j.common.output);
	/* Abbreviations reach bound options as they reach the others. */
	assert_int_equal(bparse(&bound_cli, &j, err, sizeof err, "--lev=19", "--mem", "1G", "--chunk=4KiB", (char *)NULL), 0);
	assert_int_equal(j.level, 19);
	assert_true(j.common.memory == 1 << 30);
	assert_true(j.chunk == 4096);
	setenv("ACCEL_MEMORY", "8M", 1);
	assert_int_equal(bparse(&bound_cli, &j, err, sizeof err, (char *)NULL), 0);
	assert_true(j.common.memory == 8 << 20);
	setenv("ACCEL_MEMORY", "8", 1);
	assert_int_equal(bparse(&bound_cli, &j, err, sizeof err, (char *)NULL), 2);
	assert_string_equal(err, "accel-bound: ACCEL_MEMORY: '8' is not a size of 1M or more");
	unsetenv("ACCEL_MEMORY");
}

static void bound_errors(void **state)
{
	BAD("accel-bound: --level: '0' is not a number from 1 to 19", "-L0");
	BAD("accel-bound: --level: '20' is not a number from 1 to 19", "--level=20");
	BAD("accel-bound: --level: '3x' is not a number from 1 to 19", "-L", "3x");
	BAD("accel-bound: --level: '99999999999' is not a number from 1 to 19", "-L99999999999");
	BAD("accel-bound: --window: '9' is not a window log from 10 to 31", "--window=9");
	BAD("accel-bound: --mode: 'Fast' is not one of fast, medium, slow", "-m", "Fast");
	BAD("accel-bound: --layout: 'nch' is not nchw or nhwc", "--layout", "nch");
	BAD("accel-bound: --decode: 'beam' is not ctc", "--decode=beam");
	BAD("accel-bound: --format: 'xz' is not one of zstd, gzip, lz4", "-Fxz");
	BAD("accel-bound: --chunk-size: '512' is not a size from 1K to 1G", "-B512");
	BAD("accel-bound: --chunk-size: '2G' is not a size from 1K to 1G", "-B", "2G");
	BAD("accel-bound: --chunk-size: '1.5M' is not a size from 1K to 1G", "-B", "1.5M");
	BAD("accel-bound: --ratio: '1' is not a fraction from 0 to 0.99", "-r1");
	BAD("accel-bound: --ratio: '0.5x' is not a fraction from 0 to 0.99", "-r", "0.5x");
	BAD("accel-bound: --scale: 'inf' is not a number", "--scale=inf");
	BAD("accel-bound: --scale: '1e999' is not a number", "--scale=1e999");
	BAD("accel-bound: --memory: '512K' is not a size of 1M or more", "--memory=512K");
	BAD("accel-bound: --threads: '-1' is not a number of threads (0-4096)", "-T-1");
	BAD("accel-bound: --fallback: 'cpus' is not one of cpu, next, none", "--fallback", "cpus");
	BAD("accel-bound: option '--m' is ambiguous", "--m=fast");
	/* A table binding a variable of the wrong size is refused, not
	 * written past. */
	struct bjob j;
	char err[512];
	assert_int_equal(bparse(&bad_cli, &j, err, sizeof err, "-s", (char *)NULL), 1);
	assert_string_equal(err, "accel-bad: option table: --small: a variable of 1 bytes does not fit its type");
	assert_int_equal(j.small, 0);
}

/* -v counts; -q and -v undo each other, the last one counting. */
static void verbosity(void **state)
{
	struct bjob j;
	char err[512];
	assert_int_equal(bparse(&bound_cli, &j, err, sizeof err, "-vv", (char *)NULL), 0);
	assert_int_equal(j.common.verbose, 2);
	assert_int_equal(bparse(&bound_cli, &j, err, sizeof err, "-v", "--verb", "-v", (char *)NULL), 0);
	assert_int_equal(j.common.verbose, 3);
	assert_int_equal(bparse(&bound_cli, &j, err, sizeof err, "-vvq", (char *)NULL), 0);
	assert_int_equal(j.common.verbose, 0);
	assert_int_equal(j.common.quiet, 1);
	assert_int_equal(bparse(&bound_cli, &j, err, sizeof err, "-qv", (char *)NULL), 0);
	assert_int_equal(j.common.verbose, 1);
	assert_int_equal(j.common.quiet, 0);
}

static void common_options(void **state)
{
	struct bjob j;
	char err[512];
	unsetenv("ACCEL_BACKEND");
	unsetenv("ACCEL_FALLBACK");
	unsetenv("ACCEL_THREADS");
	assert_int_equal(bparse(&bound_cli, &j, err, sizeof err, (char *)NULL), 0);
	assert_null(j.common.backend);
	assert_int_equal(j.common.fallback, ACCEL_FALLBACK_CPU);
	assert_int_equal(j.common.threads, 0);
	assert_int_equal(j.common.progress, -1);
	assert_int_equal(bparse(&bound_cli, &j, err, sizeof err, "-T8", "--fallback", "next", "--no-progress",
				"-b", "cpu", (char *)NULL), 0);
	assert_string_equal(j.common.backend, "cpu");
	assert_int_equal(j.common.threads, 8);
	assert_int_equal(j.common.fallback, ACCEL_FALLBACK_NEXT);
	assert_int_equal(j.common.progress, 0);

	setenv("ACCEL_BACKEND", "vulkan,cpu", 1);
	setenv("ACCEL_FALLBACK", "none", 1);
	setenv("ACCEL_THREADS", "3", 1);
	assert_int_equal(bparse(&bound_cli, &j, err, sizeof err, (char *)NULL), 0);
	assert_string_equal(j.common.backend, "vulkan,cpu");
	assert_int_equal(j.common.fallback, ACCEL_FALLBACK_NONE);
	assert_int_equal(j.common.threads, 3);
	/* A program without the option does not read its variable. */
	assert_int_equal(bparse(&plain_cli, &j, err, sizeof err, (char *)NULL), 0);
	assert_null(j.common.backend);
	assert_int_equal(j.common.threads, 0);
	unsetenv("ACCEL_BACKEND");
	unsetenv("ACCEL_FALLBACK");
	unsetenv("ACCEL_THREADS");

	enum accel_fallback f;
	assert_int_equal(accel_fallback_parse("cpu", &f), 0);
	assert_int_equal(f, ACCEL_FALLBACK_CPU);
	assert_int_equal(accel_fallback_parse("CPU", &f), ACCEL_EINVAL);
	assert_int_equal(accel_fallback_parse("", &f), ACCEL_EINVAL);
}

/* In a child with fds 0, 1 and 2 closed: the bits of what went wrong after
 * accel_common_init (0: nothing). */
static int closed_std_child(void)
{
	struct accel_common c;
	struct accel_input in;
	struct accel_output out;
	int bad = 0, fds[2];
	char byte = 'x';
	close(0);
	close(1);
	close(2);
	if (accel_common_init(&c, &cli) != 0)
		bad |= 1;
	if ((fcntl(0, F_GETFL) & O_ACCMODE) != O_WRONLY || (fcntl(1, F_GETFL) & O_ACCMODE) != O_RDONLY ||
	    (fcntl(2, F_GETFL) & O_ACCMODE) != O_RDONLY)
		bad |= 2;
	/* What the program opens next never takes a standard number. */
	if (pipe(fds) < 0 || fds[0] < 3 || fds[1] < 3)
		bad |= 4;
	/* Using them fails as on a closed fd (not tried where fd 0 may be
	 * the pipe: the read would wait). */
	if (bad || read(0, &byte, 1) != -1 || errno != EBADF || write(1, &byte, 1) != -1 || errno != EBADF)
		bad |= 8;
	if (accel_input_open(&in, NULL) != ACCEL_EIO || errno != EBADF)
		bad |= 16;
	if (accel_output_open(&out, NULL, 0, 0) != ACCEL_EIO || errno != EBADF)
		bad |= 32;
	/* A second start-up leaves them as they are. */
	if (accel_common_init(&c, &cli) != 0 || (fcntl(1, F_GETFL) & O_ACCMODE) != O_RDONLY)
		bad |= 64;
	return bad;
}

static void closed_std_fds(void **state)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(closed_std_child());
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static void completion_shells(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_int_equal(accel_cli_completion(&cli, "tcsh", f), ACCEL_EINVAL);
	fclose(f);
	assert_int_equal(len, 0);
	free(text);
	f = open_memstream(&text, &len);
	accel_cli_help(&cli, f);
	fclose(f);
	assert_non_null(strstr(text, "\n  -T, --threads N          worker threads"));
	assert_non_null(strstr(text, "\n  -LEVEL                   level\n"));
	assert_null(strstr(text, "--help-man"));  /* hidden */
	assert_null(strstr(text, "--completion"));
	free(text);
}

static void parse_size(void **state)
{
	static const struct { const char *s; uint64_t v; } good[] = {
		{ "0", 0 }, { "12", 12 }, { "4K", 4096 }, { "4k", 4096 }, { "4KiB", 4096 },
		{ "4KB", 4096 }, { "64M", 64u << 20 }, { "1G", 1u << 30 }, { "2T", 2ull << 40 },
		{ "16777215T", 16777215ull << 40 },
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		uint64_t v = 7;
		if (accel_parse_size(good[i].s, &v) != 0 || v != good[i].v)
			fail_msg("accel_parse_size(\"%s\"): expected %llu", good[i].s, (unsigned long long)good[i].v);
	}
	static const char *const bad[] = {
		"", "-1", "K", "4X", "4KK", "1.5M", "4 K", "18446744073709551616", "16777216T", "4B",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		uint64_t v = 7;
		if (accel_parse_size(bad[i], &v) != ACCEL_EINVAL || v != 7)
			fail_msg("accel_parse_size(\"%s\"): expected ACCEL_EINVAL, output untouched", bad[i]);
	}
	assert_int_equal(accel_parse_size(NULL, &(uint64_t){0}), ACCEL_EINVAL);
}

static void parse_int(void **state)
{
	int v = -5;
	assert_int_equal(accel_parse_int("0", 0, 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(accel_parse_int("10", 0, 10, &v), 0);
	assert_int_equal(v, 10);
	v = -5;
	assert_int_equal(accel_parse_int("11", 0, 10, &v), ACCEL_EINVAL);
	assert_int_equal(accel_parse_int("-1", 0, 10, &v), ACCEL_EINVAL);
	assert_int_equal(accel_parse_int("4x", 0, 10, &v), ACCEL_EINVAL);
	assert_int_equal(accel_parse_int("", 0, 10, &v), ACCEL_EINVAL);
	assert_int_equal(accel_parse_int("99999999999999999999", 0, 10, &v), ACCEL_EINVAL);
	assert_int_equal(v, -5);
}

static void fault_spec(void **state)
{
	/* Load the (empty) environment first: afterwards only our parses count. */
	unsetenv("ACCEL_FAULT");
	assert_int_equal(core_fault_status(), 0);
	assert_false(core_fault_hit("cpu", 0));

	static const char *const good[] = {
		"", "cpu:3", "cpu:*", "test:test0:0,5-7", "cpu:1;vulkan:2-4", "cpu:18446744073709551615",
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		if (core_fault_parse(good[i]) != 0)
			fail_msg("core_fault_parse(\"%s\"): expected 0", good[i]);
	assert_int_equal(core_fault_parse(NULL), 0);
	static const char *const bad[] = {
		"cpu", ":3", "cpu:", "cpu:x", "cpu:5-3", "cpu:1-", "cpu:-1", "cpu:1x", "cpu:*,1", "cpu:3;gpu",
		"cpu:1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (core_fault_parse(bad[i]) != ACCEL_EINVAL)
			fail_msg("core_fault_parse(\"%s\"): expected ACCEL_EINVAL", bad[i]);
}

static void fault_hits(void **state)
{
	unsetenv("ACCEL_FAULT");
	assert_int_equal(core_fault_status(), 0);
	assert_int_equal(core_fault_parse("test:test0:0,5-7;cpu:*"), 0);
	assert_true(core_fault_hit("test:test0", 0));
	assert_false(core_fault_hit("test:test0", 1));
	assert_false(core_fault_hit("test:test0", 4));
	assert_true(core_fault_hit("test:test0", 5));
	assert_true(core_fault_hit("test:test0", 7));
	assert_false(core_fault_hit("test:test0", 8));
	assert_false(core_fault_hit("test:test1", 0));
	assert_true(core_fault_hit("cpu", 12345));

	/* A backend name matches each of its engines, not other names it prefixes. */
	assert_int_equal(core_fault_parse("vulkan:2"), 0);
	assert_true(core_fault_hit("vulkan:gpu0", 2));
	assert_true(core_fault_hit("vulkan:gpu1", 2));
	assert_false(core_fault_hit("vulkan:gpu1", 3));
	assert_false(core_fault_hit("vulkan2:gpu0", 2));
	assert_false(core_fault_hit("vulk:gpu0", 2));
	assert_false(core_fault_hit("cpu", 2));

	/* A malformed specification leaves no rule behind. */
	assert_int_equal(core_fault_parse("cpu:1;gpu"), ACCEL_EINVAL);
	assert_false(core_fault_hit("cpu", 1));
	assert_int_equal(core_fault_parse(""), 0);
	assert_false(core_fault_hit("vulkan:gpu0", 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(short_options),
		cmocka_unit_test(long_options),
		cmocka_unit_test(numeric_options),
		cmocka_unit_test(operands),
		cmocka_unit_test(errors),
		cmocka_unit_test(bound_values),
		cmocka_unit_test(bound_errors),
		cmocka_unit_test(verbosity),
		cmocka_unit_test(common_options),
		cmocka_unit_test(closed_std_fds),
		cmocka_unit_test(completion_shells),
		cmocka_unit_test(parse_size),
		cmocka_unit_test(parse_int),
		cmocka_unit_test(fault_spec),
		cmocka_unit_test(fault_hits),
	};
	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
