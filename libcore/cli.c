/*
 * cli.c - the CLI helpers: one option table per program, from which the
 * parser, --help, the man page's OPTIONS section and the bash/zsh/fish
 * completions are all generated, plus the common options of DESIGN.md.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <accel/cli.h>
#include "core.h"

/* The parser's state over argv. */
struct parser {
	const struct accel_cli *cli;
	int argc;
	char **argv;
	int i;                   /* next argv index */
	const char *cluster;     /* rest of a "-abc" cluster */
	int done;                /* "--" seen */
	char **operands;         /* gathered in argv itself, from argv[1]: the k-th
	                          * goes to a slot already read (1 + k <= its index) */
	int noperands;
	char errbuf[160];
};

static const struct accel_option *find_short(const struct accel_cli *cli, char c)
{
	for (const struct accel_option *o = cli->options; o->type; o++)
		if (o->short_name == c)
			return o;
	return NULL;
}

static const struct accel_option *find_numeric(const struct accel_cli *cli)
{
	for (const struct accel_option *o = cli->options; o->type; o++)
		if (o->flags & ACCEL_OPT_NUMERIC)
			return o;
	return NULL;
}

/* Exact long name, or a unique prefix of one (as getopt_long). */
static const struct accel_option *find_long(struct parser *p, const char *name, size_t n)
{
	const struct accel_option *hit = NULL;
	int count = 0;
	for (const struct accel_option *o = p->cli->options; o->type; o++) {
		if (!o->long_name || strncmp(o->long_name, name, n))
			continue;
		if (strlen(o->long_name) == n)
			return o;
		hit = o;
		count++;
	}
	if (count > 1) {
		snprintf(p->errbuf, sizeof p->errbuf, "option '--%.*s' is ambiguous", (int)n, name);
		return NULL;
	}
	if (!hit)
		snprintf(p->errbuf, sizeof p->errbuf, "unknown option '--%.*s'", (int)n, name);
	return hit;
}

/* The next option of a "-abc" cluster (p->cluster non-empty). */
static int next_short(struct parser *p, const struct accel_option **out, const char **arg)
{
	static char digits[16];
	const char *c = p->cluster;
	const struct accel_option *num = find_numeric(p->cli);
	if (num && *c >= '0' && *c <= '9') {
		size_t n = strspn(c, "0123456789");
		if (n >= sizeof digits)
			n = sizeof digits - 1;
		memcpy(digits, c, n);
		digits[n] = 0;
		p->cluster = c + n;
		*out = num;
		*arg = digits;
		return 1;
	}
	const struct accel_option *o = find_short(p->cli, *c);
	if (!o) {
		snprintf(p->errbuf, sizeof p->errbuf, "unknown option '-%c'", *c);
		return ACCEL_EINVAL;
	}
	p->cluster = c + 1;
	if (o->arg) {
		if (*p->cluster) {
			*arg = p->cluster;
		} else if (p->i < p->argc) {
			*arg = p->argv[p->i++];
		} else {
			snprintf(p->errbuf, sizeof p->errbuf, "option '-%c' needs an argument (%s)", *c, o->arg);
			return ACCEL_EINVAL;
		}
		p->cluster = NULL;
	}
	*out = o;
	return 1;
}

/* Next option: 1 with *out and *arg set (numeric options give the digits,
 * at most 15, in a static buffer; other arguments point into argv; NULL
 * for none), 0 when all argv is read, or ACCEL_EINVAL with the message in
 * p->errbuf (unknown or ambiguous option, missing or unwanted argument). */
static int next_option(struct parser *p, const struct accel_option **out, const char **arg)
{
	*arg = NULL;
	if (p->cluster && *p->cluster)
		return next_short(p, out, arg);
	while (p->i < p->argc) {
		char *a = p->argv[p->i++];
		if (p->done || a[0] != '-' || !a[1]) {
			p->operands[p->noperands++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			p->done = 1;
			continue;
		}
		if (a[1] != '-') {
			p->cluster = a + 1;
			return next_short(p, out, arg);
		}
		const char *name = a + 2, *eq = strchr(name, '=');
		size_t n = eq ? (size_t)(eq - name) : strlen(name);
		const struct accel_option *o = find_long(p, name, n);
		if (!o)
			return ACCEL_EINVAL;
		if (o->flags & ACCEL_OPT_OPTIONAL) {
			*arg = eq ? eq + 1 : NULL;
		} else if (o->arg) {
			if (eq) {
				*arg = eq + 1;
			} else if (p->i < p->argc) {
				*arg = p->argv[p->i++];
			} else {
				snprintf(p->errbuf, sizeof p->errbuf, "option '--%s' needs an argument (%s)",
					 o->long_name, o->arg);
				return ACCEL_EINVAL;
			}
		} else if (eq) {
			snprintf(p->errbuf, sizeof p->errbuf, "option '--%s' takes no argument", o->long_name);
			return ACCEL_EINVAL;
		}
		*out = o;
		return 1;
	}
	return 0;
}

/* Whether the program's table has common option `id`. */
static int has_option(const struct accel_cli *cli, int id)
{
	for (const struct accel_option *o = cli->options; o->type; o++)
		if (o->type == ACCEL_OPT_COMMON && o->value == id)
			return 1;
	return 0;
}

/* Check a --backend list against the registry of the context kept in
 * c->ctx for the program (accel_common_ctx), made now if none is: 0, or
 * ACCEL_EINVAL after a usage line naming the problem and the backends. */
static int check_backends(struct accel_common *c, const char *list)
{
	if (!c->ctx && !(c->ctx = accel_ctx_new()))
		return 0;   /* the program reports the missing memory itself */
	char err[640];
	int rc = accel_backend_list_check(c->ctx, list, err, sizeof err);
	if (rc < 0)
		accel_msg_usage("--backend: %s", err);
	return rc;
}

/* The context kept in c for the program, taken from it (NULL: none). */
static struct accel_ctx *common_ctx_kept(struct accel_common *c)
{
	struct accel_ctx *ctx = c->ctx;
	c->ctx = NULL;
	return ctx;
}

struct accel_ctx *accel_common_ctx(struct accel_common *c)
{
	struct accel_ctx *ctx = common_ctx_kept(c);
	return ctx ? ctx : accel_ctx_new();
}

/* A --memory value: 1 MiB or more. */
static int parse_memory(const char *s, uint64_t *out)
{
	uint64_t v;
	if (accel_parse_size(s, &v) < 0 || v < (1u << 20))
		return ACCEL_EINVAL;
	*out = v;
	return 0;
}

int accel_common_init(struct accel_common *c, const struct accel_cli *cli)
{
	/* A subcommand's messages name the program ("accel-crypt"). */
	static char prog[64];
	snprintf(prog, sizeof prog, "%.*s", (int)strcspn(cli->prog, " "), cli->prog);
	memset(c, 0, sizeof *c);
	c->progress = -1;
	c->fallback = ACCEL_FALLBACK_CPU;
	accel_msg_prog(prog);
	core_msg_help_name(cli->prog);
	core_io_startup();
	const char *v;
	/* Not checked against the registry: a setting shared by many machines
	 * may name a backend one of them lacks, which the route then gives as
	 * the reason. */
	if ((v = getenv("ACCEL_BACKEND")) && *v && has_option(cli, ACCEL_OPT_BACKEND))
		c->backend = v;
	if ((v = getenv("ACCEL_FALLBACK")) && *v && has_option(cli, ACCEL_OPT_FALLBACK) &&
	    accel_fallback_parse(v, &c->fallback) < 0) {
		accel_msg_error("ACCEL_FALLBACK: '%s' is not one of cpu, next, none", v);
		return ACCEL_EINVAL;
	}
	if ((v = getenv("ACCEL_THREADS")) && *v && has_option(cli, ACCEL_OPT_THREADS) &&
	    accel_parse_int(v, 0, 4096, &c->threads) < 0) {
		accel_msg_error("ACCEL_THREADS: '%s' is not a number of threads (0-4096)", v);
		return ACCEL_EINVAL;
	}
	if ((v = getenv("ACCEL_MEMORY")) && *v && has_option(cli, ACCEL_OPT_MEMORY) &&
	    parse_memory(v, &c->memory) < 0) {
		accel_msg_error("ACCEL_MEMORY: '%s' is not a size of 1M or more", v);
		return ACCEL_EINVAL;
	}
	double timeout;
	if (accel_probe_timeout(&timeout) < 0) {
		accel_msg_error("ACCEL_PROBE_TIMEOUT: '%s' is not a number of seconds from %g to %g",
				getenv("ACCEL_PROBE_TIMEOUT"), ACCEL_PROBE_TIMEOUT_MIN, ACCEL_PROBE_TIMEOUT_MAX);
		return ACCEL_EINVAL;
	}
	return 0;
}

int accel_fallback_parse(const char *s, enum accel_fallback *out)
{
	if (!strcmp(s, "cpu"))
		*out = ACCEL_FALLBACK_CPU;
	else if (!strcmp(s, "next"))
		*out = ACCEL_FALLBACK_NEXT;
	else if (!strcmp(s, "none"))
		*out = ACCEL_FALLBACK_NONE;
	else
		return ACCEL_EINVAL;
	return 0;
}

/* After a text for stdout: DONE (exit 0) when it all went out or the
 * reader went away, else ACCEL_EIO with the one-line error printed. */
enum { DONE = 1 };
static int flushed(void)
{
	int e = 0;
	if (fflush(stdout) != 0)
		e = errno;
	else if (ferror(stdout))
		e = EIO;
	if (!e || e == EPIPE)
		return DONE;
	accel_msg_error("cannot write stdout: %s", strerror(e));
	return ACCEL_EIO;
}

/* A common option into c: 0, DONE (a text printed: exit 0), ACCEL_EINVAL
 * (bad value, usage message printed) or ACCEL_EIO (writing a text failed,
 * message printed). --backend is checked against the registry of the
 * context the program then runs on (accel_common_ctx). */
static int common_option(struct accel_common *c, const struct accel_cli *cli, int id, const char *arg)
{
	switch (id) {
	case ACCEL_OPT_BACKEND:
		if (check_backends(c, arg) < 0)
			return ACCEL_EINVAL;
		c->backend = arg;
		break;
	case ACCEL_OPT_FALLBACK:
		if (accel_fallback_parse(arg, &c->fallback) < 0) {
			accel_msg_usage("--fallback: '%s' is not one of cpu, next, none", arg);
			return ACCEL_EINVAL;
		}
		break;
	case ACCEL_OPT_THREADS:
		if (accel_parse_int(arg, 0, 4096, &c->threads) < 0) {
			accel_msg_usage("--threads: '%s' is not a number of threads (0-4096)", arg);
			return ACCEL_EINVAL;
		}
		break;
	case ACCEL_OPT_MEMORY:
		if (parse_memory(arg, &c->memory) < 0) {
			accel_msg_usage("--memory: '%s' is not a size of 1M or more", arg);
			return ACCEL_EINVAL;
		}
		break;
	case ACCEL_OPT_VERBOSE: c->verbose++; c->quiet = 0; break;
	case ACCEL_OPT_QUIET: c->quiet = 1; c->verbose = 0; break;
	case ACCEL_OPT_PROGRESS: c->progress = 1; break;
	case ACCEL_OPT_NO_PROGRESS: c->progress = 0; break;
	case ACCEL_OPT_JSON: c->json = 1; break;
	case ACCEL_OPT_OUTPUT: c->output = arg; break;
	case ACCEL_OPT_FORCE: c->force = 1; break;
	case ACCEL_OPT_HELP: accel_cli_help(cli, stdout); return flushed();
	case ACCEL_OPT_VERSION: accel_cli_versions(cli, stdout); return flushed();
	case ACCEL_OPT_GEN_MAN: accel_cli_man(cli, stdout); return flushed();
	case ACCEL_OPT_GEN_COMPLETION:
		if (accel_cli_completion(cli, arg, stdout) < 0) {
			accel_msg_usage("--completion: '%s' is not one of bash, zsh, fish", arg);
			return ACCEL_EINVAL;
		}
		return flushed();
	}
	return 0;
}

/* The index of word w among the space-separated words of list, or -1. */
static int word_index(const char *list, const char *w)
{
	size_t n = strlen(w);
	for (int i = 0; list && *list; i++) {
		size_t len = strcspn(list, " ");
		if (len == n && !strncmp(list, w, n))
			return i;
		list += len + strspn(list + len, " ");
	}
	return -1;
}

/* "--name", or "-c" for an option without a long name. */
static void option_name(const struct accel_option *o, char *buf, size_t len)
{
	if (o->long_name)
		snprintf(buf, len, "--%s", o->long_name);
	else
		snprintf(buf, len, "-%c", o->short_name);
}

/* The usage line for o's bad argument arg; ACCEL_EINVAL. */
static int bad_value(const struct accel_option *o, const char *arg)
{
	char name[48], what[256];
	option_name(o, name, sizeof name);
	if (o->what) {
		snprintf(what, sizeof what, "%s", o->what);
	} else if (o->type == ACCEL_OPT_WORD || o->type == ACCEL_OPT_CHOICE) {
		/* "A", "A or B", "one of A, B, C". */
		int n = 0;
		for (const char *w = o->complete; *w; n++)
			w += strcspn(w, " ") + strspn(w + strcspn(w, " "), " ");
		size_t used = (size_t)snprintf(what, sizeof what, "%s", n > 2 ? "one of " : "");
		const char *w = o->complete;
		for (int i = 0; i < n && used < sizeof what; i++) {
			size_t len = strcspn(w, " ");
			used += (size_t)snprintf(what + used, sizeof what - used, "%s%.*s",
						 !i ? "" : n == 2 ? " or " : ", ", (int)len, w);
			w += len + strspn(w + len, " ");
		}
	} else {
		snprintf(what, sizeof what, "a number from %.0f to %.0f", o->min, o->max);
	}
	accel_msg_usage("%s: '%s' is not %s", name, arg, what);
	return ACCEL_EINVAL;
}

/* Whether v is outside o's range (when it has one). */
static int out_of_range(const struct accel_option *o, double v)
{
	return o->min < o->max && (v < o->min || v > o->max);
}

/* Act on option o with argument arg (NULL: none): its variable in job, a
 * common option in c, or its callback. 0, DONE, or a negative ACCEL_E*
 * after the message. */
static int apply(const struct accel_option *o, const char *arg, void *job, struct accel_common *c,
		 const struct accel_cli *cli)
{
	char *var = (char *)job + o->at;
	static const size_t sizes[] = {
		[ACCEL_OPT_SET] = sizeof(int), [ACCEL_OPT_INT] = sizeof(int), [ACCEL_OPT_SIZE] = sizeof(uint64_t),
		[ACCEL_OPT_STRING] = sizeof(char *), [ACCEL_OPT_WORD] = sizeof(char *), [ACCEL_OPT_CHOICE] = sizeof(int),
	};
	if ((o->type < sizeof sizes / sizeof sizes[0] && sizes[o->type] && o->size != sizes[o->type]) ||
	    (o->type == ACCEL_OPT_DOUBLE && o->size != sizeof(double) && o->size != sizeof(float))) {
		char name[48];
		option_name(o, name, sizeof name);
		accel_msg_error("option table: %s: a variable of %zu bytes does not fit its type", name, o->size);
		return ACCEL_ENOTSUP;
	}
	int i = (int)o->value;
	switch (o->type) {
	case ACCEL_OPT_END:
		break;
	case ACCEL_OPT_COMMON:
		return common_option(c, cli, (int)o->value, arg);
	case ACCEL_OPT_CALL:
		return o->call(job, arg);
	case ACCEL_OPT_SET:
		memcpy(var, &i, sizeof i);
		break;
	case ACCEL_OPT_INT:
		if (arg && accel_parse_int(arg, o->min < o->max ? (int)o->min : INT_MIN,
					   o->min < o->max ? (int)o->max : INT_MAX, &i) < 0)
			return bad_value(o, arg);
		memcpy(var, &i, sizeof i);
		break;
	case ACCEL_OPT_SIZE: {
		uint64_t v;
		if (accel_parse_size(arg, &v) < 0 || out_of_range(o, (double)v))
			return bad_value(o, arg);
		memcpy(var, &v, sizeof v);
		break;
	}
	case ACCEL_OPT_DOUBLE: {
		char *end;
		errno = 0;
		double v = strtod(arg, &end);
		if (errno || end == arg || *end || !isfinite(v) || out_of_range(o, v))
			return bad_value(o, arg);
		float f = (float)v;
		memcpy(var, o->size == sizeof f ? (void *)&f : (void *)&v, o->size);
		break;
	}
	case ACCEL_OPT_WORD:
	case ACCEL_OPT_STRING:
		if (o->type == ACCEL_OPT_WORD && word_index(o->complete, arg) < 0)
			return bad_value(o, arg);
		memcpy(var, &arg, sizeof arg);
		break;
	case ACCEL_OPT_CHOICE:
		if ((i = word_index(o->complete, arg)) < 0)
			return bad_value(o, arg);
		memcpy(var, &i, sizeof i);
		break;
	}
	return 0;
}

int accel_parse(const struct accel_cli *cli, int argc, char **argv, void *job, struct accel_common *common)
{
	if (accel_common_init(common, cli) < 0)
		return ACCEL_EXIT_USAGE;
	struct parser p = { .cli = cli, .argc = argc, .argv = argv, .i = 1, .operands = argv + 1 };
	const struct accel_option *o;
	const char *arg;
	int rc;
	while ((rc = next_option(&p, &o, &arg)) == 1) {
		rc = apply(o, arg, job, common, cli);
		if (rc == DONE || rc < 0) {
			/* No job to run: the context made for --backend goes. */
			accel_ctx_free(common_ctx_kept(common));
			return rc == DONE ? -1 : accel_exit_status(rc);
		}
	}
	if (rc < 0) {
		accel_ctx_free(common_ctx_kept(common));
		accel_msg_usage("%s", p.errbuf);
		return ACCEL_EXIT_USAGE;
	}
	common->operands = p.operands;
	common->noperands = p.noperands;
	if (common->quiet)
		common->progress = 0;   /* -q silences the meter, --progress or not */
	return 0;
}

/* "-T, --threads N" as --help shows it. */
static void option_label(const struct accel_option *o, char *buf, size_t len)
{
	if (o->flags & ACCEL_OPT_NUMERIC) {
		snprintf(buf, len, "-%s", o->arg);
		return;
	}
	char s[8] = "    ";
	if (o->short_name)
		snprintf(s, sizeof s, "-%c, ", o->short_name);
	int opt = (o->flags & ACCEL_OPT_OPTIONAL) != 0;
	snprintf(buf, len, "%s%s%s%s%s%s", s, o->long_name ? "--" : "", o->long_name ? o->long_name : "",
		 o->arg ? (opt ? "[=" : " ") : "", o->arg ? o->arg : "", o->arg && opt ? "]" : "");
}

/* What an exit status means, for --help. */
static const char *exit_text(int status)
{
	switch (status) {
	case ACCEL_EXIT_OK: return "success";
	case ACCEL_EXIT_FAILURE: return "failure";
	case ACCEL_EXIT_USAGE: return "usage error";
	case ACCEL_EXIT_DATA: return "input failed an integrity check";
	case ACCEL_EXIT_UNMET: return "requirement not met";
	case ACCEL_EXIT_REGRESSION: return "regression found";
	}
	return "";
}

void accel_cli_help(const struct accel_cli *cli, FILE *f)
{
	fprintf(f, "Usage: %s %s\n%s\n\nOptions:\n", cli->prog, cli->usage, cli->summary);
	for (const struct accel_option *o = cli->options; o->type; o++) {
		if (o->flags & ACCEL_OPT_HIDDEN)
			continue;
		char label[64];
		option_label(o, label, sizeof label);
		fprintf(f, "  %-24s %s\n", label, o->help);
	}
	static const int basic[] = { ACCEL_EXIT_OK, ACCEL_EXIT_FAILURE, ACCEL_EXIT_USAGE, -1 };
	fputs("\nExit status:", f);
	for (const int *e = cli->exit_statuses ? cli->exit_statuses : basic; *e >= 0; e++)
		fprintf(f, "%s %d %s", e == cli->exit_statuses || e == basic ? "" : ",", *e, exit_text(*e));
	fprintf(f, ".\nSee %s(1) and accel(7).\n", cli->prog);
}

/* Write s for roff: backslashes and leading dots escaped, '-' as \-. */
static void roff(FILE *f, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", f);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

void accel_cli_man(const struct accel_cli *cli, FILE *f)
{
	for (const struct accel_option *o = cli->options; o->type; o++) {
		if (o->flags & ACCEL_OPT_HIDDEN)
			continue;
		fputs(".TP\n", f);
		if (o->flags & ACCEL_OPT_NUMERIC) {
			fputs("\\fB\\-\\fI", f);
			roff(f, o->arg);
			fputs("\\fR\n", f);
		} else {
			if (o->short_name)
				fprintf(f, "\\fB\\-%c\\fR%s", o->short_name, o->long_name ? ", " : "");
			if (o->long_name) {
				fputs("\\fB\\-\\-", f);
				roff(f, o->long_name);
				fputs("\\fR", f);
			}
			if (o->arg) {
				fputs(o->flags & ACCEL_OPT_OPTIONAL ? "[=\\fI" : " \\fI", f);
				roff(f, o->arg);
				fputs(o->flags & ACCEL_OPT_OPTIONAL ? "\\fR]" : "\\fR", f);
			}
			fputc('\n', f);
		}
		roff(f, o->help);
		fputc('\n', f);
	}
	for (const struct accel_subcommand *s = cli->subcommands; s && s->name; s++) {
		fprintf(f, ".SS \"%s\"\n", s->cli->prog);
		accel_cli_man(s->cli, f);
	}
}

/* s inside single quotes for sh/zsh ('\'' for a quote); zsh's _arguments
 * also needs brackets and colons out of the description. */
static void squote(FILE *f, const char *s, int zsh)
{
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else if (zsh && (*s == '[' || *s == ']'))
			fputc(*s == '[' ? '(' : ')', f);
		else if (zsh && *s == ':')
			fputs("\\:", f);
		else
			fputc(*s, f);
	}
}

static void fname(FILE *f, const char *prog)
{
	for (; *prog; prog++)
		fputc(*prog == '-' ? '_' : *prog, f);
}

/* Whether an option appears in the completions. */
static int completed(const struct accel_option *o)
{
	return !(o->flags & (ACCEL_OPT_HIDDEN | ACCEL_OPT_NUMERIC));
}

/* Whether an option's argument completes to the registry's backends. */
static int is_backends(const struct accel_option *o)
{
	return o->complete && !strcmp(o->complete, ACCEL_COMPLETE_BACKENDS);
}

/* Whether any option of cli or of its subcommands completes to backends. */
static int wants_backends(const struct accel_cli *cli)
{
	for (const struct accel_option *o = cli->options; o->type; o++)
		if (completed(o) && is_backends(o))
			return 1;
	for (const struct accel_subcommand *s = cli->subcommands; s && s->name; s++)
		if (wants_backends(s->cli))
			return 1;
	return 0;
}

/* "auto" and the registered backends' names (those a shell can take
 * unquoted), one a line. */
static void backend_words(FILE *f)
{
	char names[1024];
	struct accel_ctx *ctx = accel_ctx_new();
	names[0] = 0;
	if (ctx)
		accel_backend_names(ctx, " ", names, sizeof names);
	accel_ctx_free(ctx);
	fputs("auto\n", f);
	for (char *w = strtok(names, " "); w; w = strtok(NULL, " "))
		if (strspn(w, "abcdefghijklmnopqrstuvwxyz0123456789_-") == strlen(w))
			fprintf(f, "%s\n", w);
}

/* The function of one table: _PROG for the program, _PROG_SUB for its
 * subcommand SUB. */
static void bash_function(FILE *f, const struct accel_cli *cli, const char *prog, const char *sub)
{
	fputc('_', f);
	fname(f, prog);
	if (sub) {
		fputc('_', f);
		fname(f, sub);
	}
	fputs("()\n{\n\tlocal cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n", f);
	if (cli->subcommands) {
		fputs("\tif ((COMP_CWORD > 1)); then\n\t\tcase \"${COMP_WORDS[1]}\" in\n", f);
		for (const struct accel_subcommand *s = cli->subcommands; s->name; s++) {
			fprintf(f, "\t\t%s) _", s->name);
			fname(f, prog);
			fputc('_', f);
			fname(f, s->name);
			fputs("; return ;;\n", f);
		}
		fputs("\t\tesac\n\tfi\n", f);
	}
	fputs("\tcase \"$prev\" in\n", f);
	for (const struct accel_option *o = cli->options; o->type; o++) {
		if (!completed(o) || (o->flags & ACCEL_OPT_OPTIONAL) || !o->arg)
			continue;
		fputc('\t', f);
		if (o->short_name)
			fprintf(f, "-%c%s", o->short_name, o->long_name ? "|" : "");
		if (o->long_name)
			fprintf(f, "--%s", o->long_name);
		if (!o->complete)
			fputs(") return ;;\n", f);
		else if (!strcmp(o->complete, "file"))
			fputs(") COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", f);
		else if (!strcmp(o->complete, "dir"))
			fputs(") COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n", f);
		else if (is_backends(o))
			fputs(") COMPREPLY=($(compgen -W \"$(\"${COMP_WORDS[0]}\" --completion=backends 2>/dev/null)\" -- \"$cur\")); return ;;\n", f);
		else
			fprintf(f, ") COMPREPLY=($(compgen -W '%s' -- \"$cur\")); return ;;\n", o->complete);
	}
	fputs("\tesac\n\tif [[ \"$cur\" == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W '", f);
	int first = 1;
	for (const struct accel_option *o = cli->options; o->type; o++) {
		if (!completed(o))
			continue;
		if (o->short_name)
			fprintf(f, "%s-%c", first ? "" : " ", o->short_name), first = 0;
		if (o->long_name)
			fprintf(f, "%s--%s", first ? "" : " ", o->long_name), first = 0;
	}
	fputs("' -- \"$cur\"))\n\t\treturn\n\tfi\n", f);
	if (cli->operands)
		fprintf(f, "\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\"))\n", cli->operands);
	else
		fputs("\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n", f);
	if (cli->subcommands) {
		fputs("\tif ((COMP_CWORD == 1)); then\n\t\tCOMPREPLY+=($(compgen -W '", f);
		for (const struct accel_subcommand *s = cli->subcommands; s->name; s++)
			fprintf(f, "%s%s", s == cli->subcommands ? "" : " ", s->name);
		fputs("' -- \"$cur\"))\n\tfi\n", f);
	}
	fputs("}\n", f);
}

static void completion_bash(const struct accel_cli *cli, FILE *f)
{
	fprintf(f, "# bash completion for %s (generated by --completion bash)\n", cli->prog);
	for (const struct accel_subcommand *s = cli->subcommands; s && s->name; s++)
		bash_function(f, s->cli, cli->prog, s->name);
	bash_function(f, cli, cli->prog, NULL);
	fprintf(f, "complete -o filenames -F _");
	fname(f, cli->prog);
	fprintf(f, " %s\n", cli->prog);
}

static void zsh_action(FILE *f, const struct accel_option *o)
{
	fputc(':', f);
	squote(f, o->arg, 1);
	fputc(':', f);
	if (!o->complete)
		return;
	if (!strcmp(o->complete, "file"))
		fputs("_files", f);
	else if (!strcmp(o->complete, "dir"))
		fputs("_files -/", f);
	else if (is_backends(o))
		fputs("{compadd - ${(f)\"$($words[1] --completion=backends 2>/dev/null)\"}}", f);
	else
		fprintf(f, "(%s)", o->complete);
}

/* One table's _arguments call; `sub` (a subcommand's name, or NULL) is the
 * first operand, already typed. */
static void zsh_arguments(FILE *f, const struct accel_cli *cli, const char *sub)
{
	fputs("_arguments -s -S \\\n", f);
	for (const struct accel_option *o = cli->options; o->type; o++) {
		if (!completed(o))
			continue;
		fputs("  ", f);
		if (o->short_name && o->long_name) {
			fprintf(f, "'(-%c --%s)'{-%c%s,--%s%s}'[", o->short_name, o->long_name, o->short_name,
				o->arg ? "+" : "", o->long_name, o->arg ? "=" : "");
		} else if (o->short_name) {
			fprintf(f, "'-%c%s[", o->short_name, o->arg ? "+" : "");
		} else {
			fprintf(f, "'--%s%s[", o->long_name,
				!o->arg ? "" : o->flags & ACCEL_OPT_OPTIONAL ? "=-" : "=");
		}
		squote(f, o->help, 1);
		fputc(']', f);
		if (o->arg)
			zsh_action(f, o);
		fputs("' \\\n", f);
	}
	if (sub)
		fprintf(f, "  '1: :(%s)' \\\n", sub);
	if (cli->operands)
		fprintf(f, "  '*:operand:(%s)'\n", cli->operands);
	else
		fputs("  '*:file:_files'\n", f);
}

/* With subcommands: the words after one go to its own table; the first
 * word is one of their names or what the program itself takes. */
static void completion_zsh(const struct accel_cli *cli, FILE *f)
{
	fprintf(f, "#compdef %s\n# zsh completion for %s (generated by --completion zsh)\n", cli->prog, cli->prog);
	if (!cli->subcommands) {
		zsh_arguments(f, cli, NULL);
		return;
	}
	fputs("case $words[2] in\n", f);
	for (const struct accel_subcommand *s = cli->subcommands; s->name; s++) {
		fprintf(f, "%s)\n", s->name);
		zsh_arguments(f, s->cli, s->name);
		fputs("  ;;\n", f);
	}
	fputs("*)\n  if (( CURRENT == 2 )) && [[ $PREFIX != -* ]]; then\n    local -a commands=(\n", f);
	for (const struct accel_subcommand *s = cli->subcommands; s->name; s++) {
		fprintf(f, "      '%s:", s->name);
		squote(f, s->cli->summary, 1);
		fputs("'\n", f);
	}
	fprintf(f, "    )\n    _describe -t commands '%s subcommand' commands\n    _files\n    return\n  fi\n", cli->prog);
	zsh_arguments(f, cli, NULL);
	fputs("  ;;\nesac\n", f);
}

/* s inside fish's single quotes. */
static void fish_quote(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\'' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
}

/* One table's lines: the program's (sub NULL) or its subcommand sub's;
 * with subcommands, each line holds when __PROG_command says so. */
static void fish_options(FILE *f, const struct accel_cli *cli, const char *prog, int subcommands,
			 const char *sub)
{
	for (const struct accel_option *o = cli->options; o->type; o++) {
		if (!completed(o))
			continue;
		fprintf(f, "complete -c %s", prog);
		if (subcommands) {
			fputs(" -n '__", f);
			fname(f, prog);
			fprintf(f, "_command%s%s'", sub ? " " : "", sub ? sub : "");
		}
		if (o->short_name)
			fprintf(f, " -s %c", o->short_name);
		if (o->long_name)
			fprintf(f, " -l %s", o->long_name);
		if (o->arg && !(o->flags & ACCEL_OPT_OPTIONAL)) {
			if (is_backends(o)) {
				fputs(" -x -a '(__", f);
				fname(f, prog);
				fputs("_backends)'", f);
			} else if (o->complete && strcmp(o->complete, "file") && strcmp(o->complete, "dir")) {
				fprintf(f, " -x -a '%s'", o->complete);
			} else if (o->complete) {
				fputs(" -r -F", f);
			} else {
				fputs(" -x", f);
			}
		}
		fputs(" -d '", f);
		fish_quote(f, o->help);
		fputs("'\n", f);
	}
}

static void completion_fish(const struct accel_cli *cli, FILE *f)
{
	fprintf(f, "# fish completion for %s (generated by --completion fish)\n", cli->prog);
	if (wants_backends(cli)) {
		fputs("function __", f);
		fname(f, cli->prog);
		fprintf(f, "_backends -d 'what -b of %s completes to: its registry'\n"
			"\tset -l w (commandline -opc)\n\t$w[1] --completion=backends 2>/dev/null\nend\n", cli->prog);
	}
	if (!cli->subcommands) {
		fish_options(f, cli, cli->prog, 0, NULL);
		if (cli->operands)
			fprintf(f, "complete -c %s -f -a '%s'\n", cli->prog, cli->operands);
		return;
	}
	fputs("function __", f);
	fname(f, cli->prog);
	fprintf(f, "_command -d 'whether the %s subcommand (the first word) is $argv[1], or none is and $argv is empty'\n"
		"\tset -l w (commandline -opc)\n\tset -l sub\n\tif set -q w[2]; and contains -- $w[2]", cli->prog);
	for (const struct accel_subcommand *s = cli->subcommands; s->name; s++)
		fprintf(f, " %s", s->name);
	fputs("\n\t\tset sub $w[2]\n\tend\n\ttest \"$sub\" = \"$argv[1]\"\nend\n", f);
	fish_options(f, cli, cli->prog, 1, NULL);
	for (const struct accel_subcommand *s = cli->subcommands; s->name; s++) {
		fprintf(f, "complete -c %s -n 'test (count (commandline -opc)) -eq 1' -a %s -d '", cli->prog, s->name);
		fish_quote(f, s->cli->summary);
		fputs("'\n", f);
	}
	for (const struct accel_subcommand *s = cli->subcommands; s->name; s++)
		fish_options(f, s->cli, cli->prog, 1, s->name);
}

int accel_cli_completion(const struct accel_cli *cli, const char *shell, FILE *f)
{
	if (!strcmp(shell, "bash"))
		completion_bash(cli, f);
	else if (!strcmp(shell, "zsh"))
		completion_zsh(cli, f);
	else if (!strcmp(shell, "fish"))
		completion_fish(cli, f);
	else if (!strcmp(shell, "backends"))
		backend_words(f);
	else
		return ACCEL_EINVAL;
	return 0;
}
