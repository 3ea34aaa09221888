/*
 * accel-detect - the inventory of the machine's accelerators: CPUs, GPUs,
 * crypto/compression and video engines, NICs, merged into one record per
 * physical device; the routes the other programs would take; and formats
 * for scripts (JSON, --require), Slurm (gres.conf) and Kubernetes (NFD).
 * The reports and the --require language are libaccel's (accel_report_*,
 * accel_require_*); this file is options, the probes to run, exit statuses.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "accel.h"

struct job {
	unsigned classes;        /* bit per enum accel_device_class */
	int classes_given;       /* a --class seen: the next ones add to it */
	enum accel_report_format format;
	int routes;
	char *require;           /* every --require, joined by ',': all must hold */
	char **ops;
	int nops;
	struct accel_common common;   /* -o, -b, -v ... */
};
#define JOB(field) ACCEL_AT(struct job, field)

/* "cpu, gpu, crypto, video, nic, npu, other" into buf. */
static const char *class_list(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (int c = 0; c < ACCEL_CLASS_COUNT && used < len; c++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", c ? ", " : "", accel_class_name(c));
	return buf;
}

/* --class: a comma-separated list of classes; an empty one, or an empty
 * or unknown name in it, is a usage error naming it. */
static int class_option(void *v, const char *list)
{
	unsigned *out = &((struct job *)v)->classes;
	char names[80];
	/* The first --class replaces "all"; each one after adds its own. */
	if (!((struct job *)v)->classes_given++)
		*out = 0;
	for (const char *w = list;; w++) {
		size_t n = strcspn(w, ",");
		char name[16] = "";
		int c = n < sizeof name ? (memcpy(name, w, n), accel_class_parse(name)) : -1;
		if (c < 0) {
			accel_msg_usage("--class: '%.*s' is not a class; classes are %s", (int)(n < 64 ? n : 64), w,
					class_list(names, sizeof names));
			return ACCEL_EINVAL;
		}
		*out |= ACCEL_CLASS_BIT(c);
		w += n;
		if (!*w)
			return 0;
	}
}

/* --require, repeatable: every EXPR must hold (joined by ',', the
 * language's "and"), not only the last one given. */
static int require_option(void *v, const char *expr)
{
	struct job *job = v;
	size_t have = job->require ? strlen(job->require) : 0, n = strlen(expr);
	char *all = realloc(job->require, have + n + 2);
	if (!all) {
		accel_msg_error("%s", accel_strerror(ACCEL_ENOMEM));
		return ACCEL_ENOMEM;
	}
	if (have)
		all[have++] = ',';
	memcpy(all + have, expr, n + 1);
	job->require = all;
	return 0;
}

static const struct accel_option options[] = {
	{ 'c', "class", "LIST", "show only these classes: cpu,gpu,crypto,video,nic,npu,other", "cpu gpu crypto video nic npu other", ACCEL_CALL(class_option) },
	{ 0, "json", NULL, "print one JSON document (same as --format json)", ACCEL_SET(JOB(format), ACCEL_REPORT_JSON) },
	{ 'F', "format", "FORMAT", "output format: table (default), json, gres (Slurm gres.conf), nfd (Kubernetes NFD features)", "table json gres nfd", ACCEL_CHOICE(JOB(format)) },
	{ 'o', "output", "FILE", "write to FILE (complete or not at all) instead of stdout; an existing FILE needs -f", "file", ACCEL_COMMON(ACCEL_OPT_OUTPUT) },
	ACCEL_FORCE_OPTION,
	{ 0, "routes", NULL, "print the ranked engines for each operation (or the OPERATIONs given); -v also the backends that do not offer it", ACCEL_SET(JOB(routes), 1) },
	{ 'r', "require", "EXPR", "exit 0 when EXPR holds, 4 when not (gpu, vulkan, aes,avx2, gpu>=2, gpu.memory>=40G); repeated, all must hold", ACCEL_CALL(require_option) },
	ACCEL_BACKEND_OPTION_TEXT("with --routes: the route a program's -b LIST gives (cpu, vkfft, opencl:1, vkfft.vulkan:gpu0 ...), each engine left out with its reason"),
	ACCEL_VERBOSE_OPTION_TEXT("say more: every probe and its time, in the report; with --routes, also the backends that do not offer the operation"),
	ACCEL_QUIET_HELP_OPTIONS,
	{ 0 },
};

static const int exit_statuses[] = {
	ACCEL_EXIT_OK, ACCEL_EXIT_FAILURE, ACCEL_EXIT_USAGE, ACCEL_EXIT_UNMET, -1,
};

static const struct accel_cli cli = {
	"accel-detect", "[options] [OPERATION...]",
	"List the accelerators of this machine, the routes operations take, or check a requirement.",
	options, exit_statuses, NULL, NULL,
};

/* ------------------------------------------------------------------ main */

/* Operations the programs offer: every op listed by a loaded backend. */
static int all_ops(struct accel_ctx *ctx, const char **ops, int max)
{
	int n = 0;
	for (int i = 0; i < accel_backend_count(ctx); i++) {
		const struct accel_backend_status *s = accel_backend_status(ctx, i);
		if (!s->backend || !s->backend->ops)
			continue;
		for (const char *const *o = s->backend->ops; *o && n < max; o++) {
			int dup = 0;
			for (int k = 0; k < n && !dup; k++)
				dup = !strcmp(ops[k], *o);
			if (!dup)
				ops[n++] = *o;
		}
	}
	return n;
}

/* 0 when every OPERATION given to --routes is one a backend here offers;
 * else the usage exit status, naming the first that is not. */
static int check_ops(struct accel_ctx *ctx, const struct job *job)
{
	const char *ops[64];
	int n = all_ops(ctx, ops, 64);
	for (int i = 0; i < job->nops; i++) {
		int known = 0;
		for (int k = 0; k < n && !known; k++)
			known = !strcmp(ops[k], job->ops[i]);
		if (!known) {
			accel_msg_usage("--routes: unknown operation '%s' (accel-detect --routes lists them)", job->ops[i]);
			return ACCEL_EXIT_USAGE;
		}
	}
	return 0;
}

static int emit(const struct job *job, const char *text, size_t len)
{
	struct accel_output out;
	int rc = accel_output_open(&out, job->common.output, job->common.force, 0);
	if (rc == ACCEL_EEXIST) {
		accel_msg_error("%s already exists; use -f to overwrite it", job->common.output);
		return ACCEL_EXIT_FAILURE;
	}
	if (rc < 0) {
		accel_msg_error("cannot write %s: %s", job->common.output ? job->common.output : "stdout", strerror(errno));
		return ACCEL_EXIT_FAILURE;
	}
	rc = accel_output_write(&out, text, len);
	if (rc == 0)
		rc = accel_output_commit(&out);
	else
		accel_output_abort(&out);
	if (rc < 0 && rc != ACCEL_EPIPE) {
		accel_msg_error("cannot write %s: %s", job->common.output ? job->common.output : "stdout", strerror(errno));
		return ACCEL_EXIT_FAILURE;
	}
	return 0;
}

static int parse_args(struct job *job, int argc, char **argv)
{
	memset(job, 0, sizeof *job);
	job->classes = ACCEL_CLASS_ALL;
	int rc = accel_parse(&cli, argc, argv, job, &job->common);
	if (rc)
		return rc;
	job->ops = job->common.operands;
	job->nops = job->common.noperands;
	if (job->nops && !job->routes) {
		accel_msg_usage("operations (%s) are only taken with --routes", job->ops[0]);
		return ACCEL_EXIT_USAGE;
	}
	/* --require prints nothing but why it does not hold: an option for
	 * an output would be dropped without a word. */
	if (job->require && (job->format != ACCEL_REPORT_TABLE || job->routes || job->common.output)) {
		accel_msg_usage("--require prints nothing but its reason: not with --json, --format, --routes or -o");
		return ACCEL_EXIT_USAGE;
	}
	if (job->routes && (job->format == ACCEL_REPORT_GRES || job->format == ACCEL_REPORT_NFD)) {
		accel_msg_usage("--routes prints a table or JSON: not with --format %s",
				job->format == ACCEL_REPORT_GRES ? "gres" : "nfd");
		return ACCEL_EXIT_USAGE;
	}
	return 0;
}

/* The route for one operation, as the programs would get it: 0, or the
 * usage exit status for a malformed --backend list. */
/* The number in a device id (2 in gpu2). */
static long id_number(const struct accel_device *d)
{
	return strtol(d->id + strcspn(d->id, "0123456789"), NULL, 10);
}

static int route_for(struct accel_ctx *ctx, const struct job *job, const char *name, struct accel_route *r)
{
	struct accel_op op = { .name = name, .checksum = 1 };
	struct accel_route_req req = { &op, job->common.backend, -1, NULL };
	if (accel_route(ctx, &req, r) == ACCEL_EINVAL) {
		accel_msg_usage("--backend: malformed list '%s'", job->common.backend);
		return ACCEL_EXIT_USAGE;
	}
	/* Reasons may quote a library's own message, and the operation is
	 * what the user typed. */
	accel_text_sanitize(r->op);
	for (int i = 0; i < r->n; i++) {
		accel_text_sanitize(r->entries[i].name);
		accel_text_sanitize(r->entries[i].reason);
	}
	return 0;
}

/* The report of the devices (unless --routes alone), the routes and the
 * probes, into f; 0 or an exit status. */
static int report(FILE *f, struct accel_ctx *ctx, const struct job *job, double t0)
{
	const char *ops[64];
	int nops = 0;
	if (job->routes) {
		if (job->nops)
			for (int i = 0; i < job->nops && i < 64; i++)
				ops[nops++] = job->ops[i];
		else
			nops = all_ops(ctx, ops, 64);
	}
	const char *nc = getenv("NO_COLOR");
	struct accel_report_opts o = {
		.format = job->format,
		.classes = job->classes,
		.verbose = job->common.verbose,
		.quiet = job->common.quiet,
		.color = job->format == ACCEL_REPORT_TABLE && !job->common.output && isatty(1) && !(nc && *nc),
		.routes = job->routes,
		.started = t0,
		.prog = cli.prog,
	};
	struct accel_report *r = accel_report_new(f, &o);
	if (!r) {
		accel_msg_error("%s", accel_strerror(ACCEL_ENOMEM));
		return ACCEL_EXIT_FAILURE;
	}
	/* The table with --routes is the routes alone. */
	int table_routes = job->format == ACCEL_REPORT_TABLE && job->routes;
	int rc = accel_report_begin(r, ctx), ndev = accel_device_count(ctx);
	const struct accel_device *devs[ndev > 0 ? ndev : 1];
	/* The devices of each class in the order of their ids (gpu2 before
	 * gpu10), whichever probe found them first, in the places the class
	 * holds among the others. */
	for (int i = 0; i < ndev; i++)
		devs[i] = accel_device_at(ctx, i);
	for (int i = 0; i < ndev; i++)
		for (int j = i + 1; j < ndev; j++)
			if (devs[j]->cls == devs[i]->cls && id_number(devs[j]) < id_number(devs[i])) {
				const struct accel_device *t = devs[i];
				devs[i] = devs[j];
				devs[j] = t;
			}
	for (int i = 0; i < ndev && !rc && !table_routes; i++)
		rc = accel_report_device(r, devs[i]);
	int status = 0;
	if (job->format == ACCEL_REPORT_TABLE || job->format == ACCEL_REPORT_JSON)
		for (int i = 0; i < nops && !rc; i++) {
			struct accel_route route;
			if ((status = route_for(ctx, job, ops[i], &route)))
				break;
			rc = accel_report_route(r, &route);
		}
	if (!rc && !status && !table_routes)
		rc = accel_report_probes(r, ctx);
	if (status) {
		accel_report_end(r);
		return status;
	}
	int end = accel_report_end(r);
	rc = rc ? rc : end;
	if (rc < 0) {
		accel_msg_error("%s", accel_strerror(rc));
		return ACCEL_EXIT_FAILURE;
	}
	return 0;
}

static int detect(int argc, char **argv)
{
	struct job job;
	accel_msg_prog(cli.prog);
	int rc = parse_args(&job, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;

	struct accel_require *req = NULL;
	unsigned need = job.classes;
	if (job.require) {
		size_t len = strlen(job.require) + 600;
		char *err = malloc(len);
		if (!err) {
			accel_msg_error("%s", accel_strerror(ACCEL_ENOMEM));
			return ACCEL_EXIT_FAILURE;
		}
		rc = accel_require_parse(job.require, &req, err, len);
		if (rc == ACCEL_EINVAL)
			accel_msg_usage("--require: %s", err);
		else if (rc < 0)
			accel_msg_error("%s", err);
		free(err);
		if (rc < 0)
			return rc == ACCEL_EINVAL ? ACCEL_EXIT_USAGE : ACCEL_EXIT_FAILURE;
	}
	if (job.format == ACCEL_REPORT_GRES)
		need = job.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_GPU);

	struct accel_ctx *ctx = accel_common_ctx(&job.common);
	if (!ctx) {
		accel_require_free(req);
		accel_msg_error("%s", accel_strerror(ACCEL_ENOMEM));
		return ACCEL_EXIT_FAILURE;
	}
	double t0 = accel_now();
	if (job.routes && job.nops && (rc = check_ops(ctx, &job))) {
		accel_require_free(req);
		accel_ctx_free(ctx);
		return rc;
	}
	/* The APIs a requirement names are the loaded backends'. */
	if (req)
		need = accel_require_classes(req, ctx);
	/* Only the backends that can find devices of those classes, in their
	 * order; --routes alone probes what the router needs for each operation. */
	if (req || !job.routes || job.format != ACCEL_REPORT_TABLE)
		accel_discover_classes(ctx, need);

	if (req) {
		size_t len = strlen(job.require) + 600;
		char *why = malloc(len);
		rc = why ? accel_require_eval(req, ctx, why, len) : ACCEL_ENOMEM;
		if (rc == ACCEL_EUNMET && !job.common.quiet)
			accel_msg_error("requirement not met: %s", why);
		else if (rc == ACCEL_EINVAL)
			accel_msg_usage("--require: %s", why);
		else if (rc < 0 && rc != ACCEL_EUNMET)
			accel_msg_error("%s", accel_strerror(rc));
		free(why);
		accel_require_free(req);
		accel_ctx_free(ctx);
		return rc == ACCEL_EUNMET ? ACCEL_EXIT_UNMET : rc == ACCEL_EINVAL ? ACCEL_EXIT_USAGE :
		       rc < 0 ? ACCEL_EXIT_FAILURE : 0;
	}

	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f) {
		accel_ctx_free(ctx);
		accel_msg_error("%s", accel_strerror(ACCEL_ENOMEM));
		return ACCEL_EXIT_FAILURE;
	}
	int status = report(f, ctx, &job, t0);
	fclose(f);
	if (!status)
		status = emit(&job, text, len);
	free(text);
	accel_ctx_free(ctx);
	return status;
}

/* A probe that timed out leaves its thread inside the driver: accel_exit
 * then ends the process without running the libraries' exit handlers. */
int main(int argc, char **argv)
{
	accel_cli_libraries("hwloc cjson @all", NULL);
	accel_exit(detect(argc, argv));
}
