/*
 * test_cli.c - the option parser (clusters, attached and separate
 * arguments, numeric options, "--", operands, error texts), size and
 * integer parsing, the ACCEL_FAULT specification parser, and the start-up
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

enum { O_DEC = 1, O_OUT, O_LEVEL, O_CHECK, O_CHECKSUM, O_FORCE };

static const struct accel_option options[] = {
	{ O_DEC, 'd', "decompress", NULL, "decompress", NULL, 0 },
	{ O_OUT, 'o', "output", "FILE", "write FILE", "file", 0 },
	{ O_LEVEL, 0, NULL, "LEVEL", "level", NULL, ACCEL_OPT_NUMERIC },
	{ O_CHECK, 0, "check", NULL, "check", NULL, 0 },
	{ O_CHECKSUM, 0, "checksum", "ALGO", "checksum", NULL, 0 },
	{ O_FORCE, 'f', "force", NULL, "force", NULL, 0 },
	ACCEL_COMMON_OPTIONS,
	{ 0 },
};

static const struct accel_cli cli = { "accel-test", "[options] [FILE...]", "test", options, NULL, NULL };

static const struct accel_option plain_options[] = {
	{ O_DEC, 'd', "decompress", NULL, "decompress", NULL, 0 },
	{ 0 },
};
static const struct accel_cli plain_cli = { "accel-plain", "", "no numeric option", plain_options, NULL, NULL };

/* Parse argv (NULL-terminated, without the program name); write the
 * options as "id=arg id ..." and the operands, or the error text. */
static void parse(const struct accel_cli *c, char *out, size_t len, ...)
{
	char *argv[32] = { "prog" };
	int argc = 1;
	va_list ap;
	va_start(ap, len);
	for (char *a; (a = va_arg(ap, char *));)
		argv[argc++] = a;
	va_end(ap);
	struct accel_optparse p;
	accel_optparse_init(&p, c, argc, argv);
	int id, rc;
	const char *arg;
	size_t n = 0;
	out[0] = 0;
	while ((rc = accel_getopt(&p, &id, &arg)) == 1)
		n += (size_t)snprintf(out + n, len - n, arg ? "%d=%s " : "%d ", id, arg);
	if (rc < 0) {
		snprintf(out, len, "error: %s", p.errbuf);
	} else {
		n += (size_t)snprintf(out + n, len - n, "|");
		for (int i = 0; i < p.noperands; i++)
			n += (size_t)snprintf(out + n, len - n, " %s", p.operands[i]);
	}
}

#define EXPECT(want, ...) do { \
		char got[512]; \
		parse(&cli, got, sizeof got, __VA_ARGS__, (char *)NULL); \
		assert_string_equal(got, want); \
	} while (0)

static void short_options(void **state)
{
	EXPECT("1 6 |", "-d", "-f");
	EXPECT("1 6 |", "-df");
	EXPECT("1 2=out |", "-do", "out");
	EXPECT("1 2=out |", "-doout");
	EXPECT("2=-d |", "-o", "-d");  /* an argument may start with '-' */
	EXPECT("1002=4 |", "-T4");
	EXPECT("1002=4 |", "-T", "4");
	EXPECT("1 1002=4 1003 |", "-dT4", "-v");
	EXPECT("1002=v |", "-Tv");
}

static void long_options(void **state)
{
	EXPECT("1002=4 |", "--threads=4");
	EXPECT("1002=4 |", "--threads", "4");
	EXPECT("1002= |", "--threads=");
	EXPECT("2=a=b |", "--output=a=b");
	EXPECT("1 |", "--decompress");
	/* Unique prefixes are accepted, as getopt_long does. */
	EXPECT("1 1002=2 |", "--decomp", "--thr=2");
	/* An exact name wins over a longer one it prefixes. */
	EXPECT("4 |", "--check");
	EXPECT("5=xxh |", "--checks=xxh");
}

static void numeric_options(void **state)
{
	EXPECT("3=19 |", "-19");
	EXPECT("3=1 |", "-1");
	EXPECT("1 3=9 6 |", "-d9f");
	EXPECT("3=3 1 |", "-3d");
	EXPECT("3=5 3=7 |", "-5", "-7");
	char got[256];
	parse(&plain_cli, got, sizeof got, "-1", (char *)NULL);
	assert_string_equal(got, "error: unknown option '-1'");
}

static void operands(void **state)
{
	EXPECT("| a", "a");
	EXPECT("| -", "-");
	EXPECT("1 | a b", "a", "-d", "b");
	EXPECT("1 | a -f --threads=2 - b", "a", "-d", "--", "-f", "--threads=2", "-", "b");
	EXPECT("1 | --", "-d", "--", "--");
	EXPECT("|", (char *)NULL);
}

static void errors(void **state)
{
	EXPECT("error: unknown option '-x'", "-x");
	EXPECT("error: unknown option '-x'", "-dx");
	EXPECT("error: unknown option '--nope'", "--nope");
	EXPECT("error: unknown option '--nope'", "--nope=3");
	EXPECT("error: option '--ver' is ambiguous", "--ver");
	EXPECT("error: option '--chec' is ambiguous", "--chec");
	EXPECT("error: option '-T' needs an argument (N)", "-T");
	EXPECT("error: option '-o' needs an argument (FILE)", "-do");
	EXPECT("error: option '--threads' needs an argument (N)", "--threads");
	EXPECT("error: option '--threads' needs an argument (N)", "--thr");
	EXPECT("error: option '--verbose' takes no argument", "--verbose=1");
}

static void common_options(void **state)
{
	struct accel_common c;
	unsetenv("ACCEL_BACKEND");
	unsetenv("ACCEL_FALLBACK");
	unsetenv("ACCEL_THREADS");
	assert_int_equal(accel_common_init(&c, &cli), 0);
	assert_null(c.backend);
	assert_int_equal(c.fallback, ACCEL_FALLBACK_CPU);
	assert_int_equal(c.threads, 0);
	assert_int_equal(c.progress, -1);
	assert_int_equal(accel_common_option(&c, &cli, ACCEL_OPT_THREADS, "8"), 1);
	assert_int_equal(c.threads, 8);
	assert_int_equal(accel_common_option(&c, &cli, ACCEL_OPT_FALLBACK, "next"), 1);
	assert_int_equal(c.fallback, ACCEL_FALLBACK_NEXT);
	assert_int_equal(accel_common_option(&c, &cli, ACCEL_OPT_BACKEND, "cpu"), 1);
	assert_string_equal(c.backend, "cpu");
	assert_int_equal(accel_common_option(&c, &cli, O_DEC, NULL), 0);

	setenv("ACCEL_BACKEND", "vulkan,cpu", 1);
	setenv("ACCEL_FALLBACK", "none", 1);
	setenv("ACCEL_THREADS", "3", 1);
	assert_int_equal(accel_common_init(&c, &cli), 0);
	assert_string_equal(c.backend, "vulkan,cpu");
	assert_int_equal(c.fallback, ACCEL_FALLBACK_NONE);
	assert_int_equal(c.threads, 3);
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
