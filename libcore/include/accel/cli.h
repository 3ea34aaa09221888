/*
 * accel/cli.h - what the accel-* programs share: messages, options, progress meters.
 * Part of libaccel's public API; <accel.h> includes every such header.
 *
 * How to write a program: cmd/accel-NAME.c and its man page
 * man/accel-NAME.1.in (whose @OPTIONS@ the build fills from the table; the
 * build stops when the page is missing), nothing else. accel-compress is
 * the full example; its skeleton:
 *
 *	struct job {
 *		int level;
 *		const char *format;
 *		struct accel_common common;     -o, -f, -b, -T, -v ... land here
 *	};
 *	#define JOB(field) ACCEL_AT(struct job, field)
 *
 *	static const struct accel_option options[] = {
 *		{ 'F', "format", "FORMAT", "zstd or gzip", "zstd gzip", ACCEL_WORD(JOB(format)) },
 *		{ 'L', "level", "N", "level 1-19", ACCEL_INT(JOB(level), 1, 19, NULL) },
 *		ACCEL_OUTPUT_OPTION,
 *		ACCEL_COMMON_OPTIONS,
 *		{ 0 },
 *	};
 *	static const struct accel_cli cli = {
 *		"accel-name", "[options] [FILE...]", "What it does, in one line.", options, NULL, NULL,
 *	};
 *
 *	static int run(int argc, char **argv)
 *	{
 *		struct job job = { .level = 3, .format = "zstd" };
 *		int rc = accel_parse(&cli, argc, argv, &job, &job.common);
 *		if (rc)
 *			return rc < 0 ? 0 : rc;
 *		route and run the job on job.common.operands[0 .. noperands)
 *		(accel_route_job, the stream engine), map the result to an exit
 *		status (accel_exit_status)
 *	}
 *
 *	int main(int argc, char **argv)
 *	{
 *		accel_cli_libraries("zstd hwloc", NULL);     what --version lists
 *		accel_exit(run(argc, argv));
 *	}
 *
 * An option whose value needs more than a type and a range (two fields, a
 * list, its own message) is ACCEL_CALL(fn); checks across options follow
 * accel_parse. Subcommands (accel-crypt keygen) are struct accel_subcommand.
 */
#ifndef ACCEL_CLI_H
#define ACCEL_CLI_H

#include <stddef.h>
#include <accel/context.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* The CLI helpers are for a program's main thread, before it starts
 * others: they are not thread-safe (the parser and the completions use
 * static storage, accel_parse sets the accel_msg_prog name, and they read
 * the environment). */

enum accel_opt_flags {
	ACCEL_OPT_HIDDEN = 1 << 0,   /* not in --help, man page or completions */
	ACCEL_OPT_NUMERIC = 1 << 1,  /* matches -N (e.g. compression level -19) */
	ACCEL_OPT_OPTIONAL = 1 << 2, /* long option whose argument is optional: only
	                              * "--name=ARG" gives one */
};

/* What an option does with its variable (the field of the job at `at`). */
enum accel_opt_type {
	ACCEL_OPT_END,     /* ends the table ({ 0 }) */
	ACCEL_OPT_SET,     /* int (or enum): becomes `value`; takes no argument */
	ACCEL_OPT_INT,     /* int: a decimal number from min to max */
	ACCEL_OPT_SIZE,    /* uint64_t: bytes, "64M" (accel_parse_size), from min to max */
	ACCEL_OPT_DOUBLE,  /* double or float: a finite number from min to max */
	ACCEL_OPT_STRING,  /* const char *: the argument (a pointer into argv) */
	ACCEL_OPT_WORD,    /* const char *: the argument, one of the words of `complete` */
	ACCEL_OPT_CHOICE,  /* int (or enum): the index of the argument among the words of `complete` */
	ACCEL_OPT_CALL,    /* call(job, arg) */
	ACCEL_OPT_COMMON,  /* a common option (`value`: enum accel_common_opt), parsed by libcore */
};

/* One option, declared once: the parser, --help, the man page and the
 * completions come from the table. */
struct accel_option {
	char short_name;      /* 0: none */
	const char *long_name;/* NULL: none */
	const char *arg;      /* argument name ("N", "FILE"), NULL: a flag */
	const char *help;     /* one line */
	const char *complete; /* "file", "dir", ACCEL_COMPLETE_BACKENDS or a
	                       * space-separated list of words (WORD and CHOICE
	                       * take one of them); NULL */
	unsigned flags;
	enum accel_opt_type type;
	size_t at, size;      /* the variable: its offset in the job and its bytes (ACCEL_AT) */
	long long value;      /* SET: the value; an OPTIONAL option given no
	                       * argument sets this; COMMON: which */
	double min, max;      /* INT, SIZE, DOUBLE: the range, when min < max */
	/* The usage line for a bad argument is "--NAME: 'ARG' is not WHAT"
	 * (-C when there is no long name); NULL: "a number from MIN to MAX",
	 * or the words ("A", "A or B", "one of A, B, C"). */
	const char *what;
	/* CALL: act on arg (NULL for a flag); returns 0, or a negative
	 * ACCEL_E* after printing the message (ACCEL_EINVAL: a usage error, by
	 * accel_msg_usage; exit status by accel_exit_status). */
	int (*call)(void *job, const char *arg);
};

/* The variable of an option: field `f` of the job, a struct of type T. */
#define ACCEL_AT(T, f) .at = offsetof(T, f), .size = sizeof(((T *)0)->f)
/* The rest of an entry, after its help text (or its `complete`). */
#define ACCEL_SET(var, v) .type = ACCEL_OPT_SET, var, .value = (v)
#define ACCEL_INT(var, lo, hi, w) .type = ACCEL_OPT_INT, var, .min = (lo), .max = (hi), .what = (w)
#define ACCEL_SIZE(var, lo, hi, w) .type = ACCEL_OPT_SIZE, var, .min = (lo), .max = (hi), .what = (w)
#define ACCEL_DOUBLE(var, lo, hi, w) .type = ACCEL_OPT_DOUBLE, var, .min = (lo), .max = (hi), .what = (w)
#define ACCEL_STRING(var) .type = ACCEL_OPT_STRING, var
#define ACCEL_WORD(var) .type = ACCEL_OPT_WORD, var
#define ACCEL_CHOICE(var) .type = ACCEL_OPT_CHOICE, var
#define ACCEL_CALL(fn) .type = ACCEL_OPT_CALL, .call = (fn)
#define ACCEL_COMMON(id) .type = ACCEL_OPT_COMMON, .value = (id)

/* The options every program shares (DESIGN.md), into struct accel_common. */
enum accel_common_opt {
	ACCEL_OPT_BACKEND = 1, ACCEL_OPT_FALLBACK, ACCEL_OPT_THREADS,
	ACCEL_OPT_VERBOSE, ACCEL_OPT_QUIET, ACCEL_OPT_PROGRESS, ACCEL_OPT_NO_PROGRESS,
	ACCEL_OPT_JSON, ACCEL_OPT_OUTPUT, ACCEL_OPT_FORCE, ACCEL_OPT_MEMORY,
	ACCEL_OPT_HELP, ACCEL_OPT_VERSION, ACCEL_OPT_GEN_MAN, ACCEL_OPT_GEN_COMPLETION,
};

/* An option's `complete` that lists "auto" and the registered backends'
 * names, read from the registry when the shell completes (--completion
 * backends). */
#define ACCEL_COMPLETE_BACKENDS "@backends"

/* The common options, to splice into a program's table: a program lists
 * only those it acts on (an option in --help is an option that works). One
 * with its own help text is an entry of its own: { 'T', "threads", "N",
 * "files hashed at once", ACCEL_COMMON(ACCEL_OPT_THREADS) }. */
#define ACCEL_BACKEND_OPTION \
	ACCEL_BACKEND_OPTION_TEXT("engines to use, in order, joined by , or + (several serve the stream together): auto (the default), cpu, or those accel-detect --routes lists for the operation")
/* -b and -v with the program's own help text: the engines that run its
 * operations, what -v prints for it (each name in a -b text works with the
 * program, on a machine with that device). */
#define ACCEL_BACKEND_OPTION_TEXT(help) \
	{ 'b', "backend", "LIST", help, ACCEL_COMPLETE_BACKENDS, ACCEL_COMMON(ACCEL_OPT_BACKEND) }
#define ACCEL_VERBOSE_OPTION_TEXT(help) \
	{ 'v', "verbose", NULL, help, ACCEL_COMMON(ACCEL_OPT_VERBOSE) }
/* For programs that run the stream engine. */
#define ACCEL_RUN_OPTIONS \
	{ 0, "fallback", "POLICY", "when an engine fails on a unit: retry on cpu, on the next engine, or none (fail)", "cpu next none", ACCEL_COMMON(ACCEL_OPT_FALLBACK) }, \
	{ 'T', "threads", "N", "worker threads (0 = all cores; default 0)", ACCEL_COMMON(ACCEL_OPT_THREADS) }, \
	{ 0, "progress", NULL, "show a progress meter on stderr", ACCEL_COMMON(ACCEL_OPT_PROGRESS) }, \
	{ 0, "no-progress", NULL, "never show a progress meter", ACCEL_COMMON(ACCEL_OPT_NO_PROGRESS) }
/* For every program: -v, then ACCEL_QUIET_HELP_OPTIONS. */
#define ACCEL_BASIC_OPTIONS \
	ACCEL_VERBOSE_OPTION_TEXT("say more on stderr: what ran on which engine, with its statistics"), \
	ACCEL_QUIET_HELP_OPTIONS
/* -q, --help, --version and the hidden generators: after a program's own -v. */
#define ACCEL_QUIET_HELP_OPTIONS \
	{ 'q', "quiet", NULL, "print nothing but errors, no progress meter either", ACCEL_COMMON(ACCEL_OPT_QUIET) }, \
	ACCEL_HELP_OPTIONS, \
	{ 0, "help-man", NULL, "print the options as man(7) source", NULL, ACCEL_OPT_HIDDEN, ACCEL_COMMON(ACCEL_OPT_GEN_MAN) }, \
	{ 0, "completion", "SHELL", "print a completion script for bash, zsh or fish", NULL, ACCEL_OPT_HIDDEN, ACCEL_COMMON(ACCEL_OPT_GEN_COMPLETION) }
/* --help and --version: a subcommand's own. */
#define ACCEL_HELP_OPTIONS \
	{ 'h', "help", NULL, "show this help and exit", ACCEL_COMMON(ACCEL_OPT_HELP) }, \
	{ 'V', "version", NULL, "show the version, then the libraries in use with theirs (one line each), and exit", ACCEL_COMMON(ACCEL_OPT_VERSION) }
#define ACCEL_COMMON_OPTIONS ACCEL_BACKEND_OPTION, ACCEL_RUN_OPTIONS, ACCEL_BASIC_OPTIONS
/* -o FILE and -f, as most programs say them. */
#define ACCEL_OUTPUT_OPTION \
	{ 'o', "output", "FILE", "write to FILE (complete or not at all) instead of stdout", "file", ACCEL_COMMON(ACCEL_OPT_OUTPUT) }
#define ACCEL_FORCE_OPTION \
	{ 'f', "force", NULL, "overwrite FILE; read or write a terminal", ACCEL_COMMON(ACCEL_OPT_FORCE) }

/* A subcommand, `PROG NAME [options]` when NAME is the first argument (as
 * accel-crypt keygen): its own table, a section of the program's man page
 * and its own completions. */
struct accel_subcommand {
	const char *name;                  /* "keygen"; NULL ends the list */
	const struct accel_cli *cli;       /* prog "accel-crypt keygen", its options */
	int (*run)(int argc, char **argv); /* argv[0] is name; returns the exit status */
};

/* A program's description for the generated texts. */
struct accel_cli {
	const char *prog;        /* "accel-compress"; a subcommand's "accel-crypt keygen" */
	const char *usage;       /* "[options] [FILE...]" */
	const char *summary;     /* one line */
	const struct accel_option *options;
	/* The exit statuses the program can return (enum accel_exit), ending
	 * with -1, for --help; NULL: 0, 1 and 2. */
	const int *exit_statuses;
	/* NULL: none. The completions go one level deep (a subcommand's own list
	 * is not read). */
	const struct accel_subcommand *subcommands;
	/* The words the operands complete to, joined by spaces (accel-bench's
	 * operations); NULL: file names. */
	const char *operands;
};

/* Settings of the common options, after accel_parse. */
struct accel_common {
	const char *backend;
	enum accel_fallback fallback;
	int threads;
	int verbose, quiet, json;
	int progress;            /* -1: auto (stderr is a terminal); 0 with -q */
	const char *output;      /* -o FILE; NULL: stdout */
	int force;               /* -f */
	uint64_t memory;         /* --memory or $ACCEL_MEMORY: bytes, 1 MiB or
	                          * more; 0: the library's default */
	char **operands;         /* the operands, in argv order (moved to the
	                          * front of argv itself: nothing to free) */
	int noperands;
	/* The context accel_parse made to check --backend against the
	 * registry, NULL when none: taken by accel_common_ctx. */
	struct accel_ctx *ctx;
};

/* The start-up of every program and its options: accel_common_init, then
 * each option of argv[1..argc) into its variable in `job` (the struct the
 * table's ACCEL_AT offsets are in) or into `common` (for the
 * ACCEL_OPT_COMMON ones; usually job's own member), then the operands into
 * common->operands. Long options may be abbreviated to a unique prefix;
 * short ones cluster ("-dfo FILE"); "--" ends the options. A program sets
 * its defaults in `job` first. Returns 0: run the job; -1: a text was
 * printed to stdout (--help, --version ...): exit 0; else the exit status
 * after the message on stderr (2 for a usage error: an unknown option, a
 * bad value, a malformed environment variable). */
int accel_parse(const struct accel_cli *cli, int argc, char **argv, void *job, struct accel_common *common);
/* The first step of accel_parse: set defaults for the common options from
 * the environment (ACCEL_BACKEND, ACCEL_FALLBACK, ACCEL_THREADS,
 * ACCEL_MEMORY), each read only when the program's table has its option,
 * and check ACCEL_PROBE_TIMEOUT (accel_probe_timeout); also accel_msg_prog
 * (cli->prog up to its first blank: a subcommand's messages name the
 * program). Call it first, before any other thread, file or library. It
 * opens /dev/null on each of fds 0, 1 and 2 that is closed (stdin
 * write-only, stdout and stderr read-only, so that using them still fails
 * with EBADF), so no descriptor opened later takes their place, and
 * installs the signal handlers of accel_output_open. Returns 0, or
 * ACCEL_EINVAL with a message on stderr for a malformed environment value. */
int accel_common_init(struct accel_common *c, const struct accel_cli *cli);
/* The program's context: the one accel_parse made to check --backend
 * (its registry read once per run, not again), handed over, else a new
 * one (accel_ctx_new). The caller frees it (accel_ctx_free); NULL when out
 * of memory. accel_parse keeps that context only when it returns 0 (a job
 * to run); a caller that then runs none frees it the same way. */
struct accel_ctx *accel_common_ctx(struct accel_common *c);
/* --help text (usage, visible options, exit statuses) to f; write errors
 * are left in f's error flag. */
void accel_cli_help(const struct accel_cli *cli, FILE *f);
/* The libraries --version lists after its line "PROG VERSION", one line
 * "NAME VERSION" each, for the program and its subcommands; call it first
 * in main(). `libraries`: libaccel's, by these names, in order: "zstd",
 * "lz4", "xxhash", "isa-l", "libdeflate", "hwloc", "cjson", "minizip"; "@OP" for those the plugins
 * that offer operation OP load ("@all": every plugin's); NULL: none.
 * `versions` (NULL: none): the lines of the libraries the program links
 * itself (OpenSSL, FFmpeg), listed first, as struct accel_backend.versions
 * writes them. Both pointers are kept. */
void accel_cli_libraries(const char *libraries, void (*versions)(char *buf, size_t len));
/* --version's text to f: "PROG VERSION", then the lines of the libraries
 * accel_cli_libraries named, a line said twice printed once. "@OP" loads
 * the plugins (a context made and freed here), not the devices. */
void accel_cli_versions(const struct accel_cli *cli, FILE *f);
/* The man page's OPTIONS entries (roff .TP items) to f, then each
 * subcommand's under a .SS heading naming it. */
void accel_cli_man(const struct accel_cli *cli, FILE *f);
/* A completion script for `shell` ("bash", "zsh" or "fish") to f, the
 * subcommands' names and options with it; the same bytes on every machine,
 * as the scripts are committed (completions/). For "backends", the words
 * of ACCEL_COMPLETE_BACKENDS one a line, which the scripts ask the program
 * for when completing: this loads the registry (a context). Returns 0, or
 * ACCEL_EINVAL for any other `shell`. */
int accel_cli_completion(const struct accel_cli *cli, const char *shell, FILE *f);

/* Parse "12", "4K", "64M", "1G", "2T" (powers of 1024; either case, an
 * optional "i" and "B": "4KiB") to bytes in *out. Returns 0, or
 * ACCEL_EINVAL (*out unchanged) for anything else or an overflow. Safe
 * from any thread, as is accel_parse_int. */
int accel_parse_size(const char *s, uint64_t *out);
/* Parse a decimal int from min to max (a leading '-' allowed, no blanks)
 * into *out. Returns 0, or ACCEL_EINVAL (*out unchanged). */
int accel_parse_int(const char *s, int min, int max, int *out);

/* Messages: "PROG: text" on stderr, one line (text cut at 1023 bytes),
 * written with one fprintf so lines from several threads do not mix:
 * safe from any thread (not from a signal handler). accel_msg_prog sets
 * PROG ("accel" before): it keeps the pointer, not a copy, and must be
 * called before other threads print. */
void accel_msg_prog(const char *prog);
void accel_msg_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void accel_msg_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Usage error: message plus "Try 'PROG --help' for more information." on
 * a second line (two writes: call it from one thread). */
void accel_msg_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Progress meter on stderr, one line redrawn at most five times a second:
 * the amount done, the rate, and the ETA when the total is known. When
 * stderr is not a terminal, no escape code or carriage return: a line of
 * its own at most once a second (a log). Not thread-safe: one thread at a
 * time updates a meter (in the stream engine the worker writing units, or
 * the reader during a sequential region, under the run's lock). The meter
 * keeps the label pointer: it must outlive the meter. */
struct accel_progress;
/* A meter counting bytes; total in bytes, <= 0 unknown. NULL when out of
 * memory (the update functions then do nothing). */
struct accel_progress *accel_progress_new(const char *label, int64_t total);
/* A meter counting in the operation's unit: `unit` NULL or "B" bytes
 * (shown as B, KiB, MiB ...), "s" seconds of media (shown as [h:]mm:ss,
 * the rate as a speed, "1.50x"), any other name ("samples", "frames")
 * counted with k, M, G and that name (cut at 15 bytes). `scale`: units per byte given to
 * accel_progress_update (<= 0: 1; 1/4 for 16-bit stereo samples).
 * `total`: the total in the unit, <= 0 unknown (no ETA). NULL when out of
 * memory. */
struct accel_progress *accel_progress_new_unit(const char *label, const char *unit, double scale, double total);
/* Bytes done so far (times the meter's scale); p may be NULL. */
void accel_progress_update(struct accel_progress *p, uint64_t done);
/* Amount done so far in the meter's unit; p may be NULL. */
void accel_progress_set(struct accel_progress *p, double done);
/* For a meter counting in another unit than bytes ("files"): the bytes
 * done as well. The line then shows the count of the total, the bytes and
 * their rate: "sha256: 3/10 files (30%) 12.0 MiB 40.0 MiB/s ETA 00:02".
 * Set it before accel_progress_set; p may be NULL. */
void accel_progress_bytes(struct accel_progress *p, uint64_t bytes);
/* The meter's line as it would be drawn `elapsed` seconds after it was
 * made, without the carriage return and line erase: "zstd.compress: 1.0
 * MiB (50%) 512.0 KiB/s ETA 00:02". Returns snprintf's count. */
int accel_progress_format(const struct accel_progress *p, double elapsed, char *buf, size_t len);
/* Draw the final line, end it with a newline, free the meter (NULL:
 * nothing). */
void accel_progress_end(struct accel_progress *p);

/* End the program with exit status `status`: exit() normally; when a
 * bounded call was abandoned (accel_abandoned_calls() > 0), stdout and
 * stderr are flushed and closed and the process ends with _exit(), so no
 * atexit handler or library destructor runs under the thread still inside
 * a driver. A failure to write stdout then turns status 0 into 1, with
 * one line on stderr. Never returns. Call it from one thread (as exit()). */
__attribute__((noreturn)) void accel_exit(int status);

/* Replace, in place, what must not reach a terminal or a file from text a
 * driver, sysfs or a database gave: control characters (C0 but tab, which
 * becomes a space; DEL; C1), Unicode direction overrides and bytes that
 * are not valid UTF-8 become '?'; so do U+2028 and U+2029. The text never
 * grows. Touches only s: safe from any thread. */
void accel_text_sanitize(char *s);

/* Seconds on a monotonic clock (CLOCK_MONOTONIC), from an arbitrary
 * start. Async-signal-safe. */
double accel_now(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
