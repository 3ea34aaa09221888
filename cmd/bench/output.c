/*
 * output.c - what accel-bench prints: the table, CSV, and the JSON document
 * (schema in accel-bench(1)).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "bench.h"

void bytes_text(uint64_t s, char *buf, size_t len)
{
	if (s >= 1u << 30 && !(s % (1u << 30)))
		snprintf(buf, len, "%lluG", (unsigned long long)(s >> 30));
	else if (s >= 1u << 20 && !(s % (1u << 20)))
		snprintf(buf, len, "%lluM", (unsigned long long)(s >> 20));
	else if (s >= 1u << 10 && !(s % (1u << 10)))
		snprintf(buf, len, "%lluK", (unsigned long long)(s >> 10));
	else
		snprintf(buf, len, "%llu", (unsigned long long)s);
}

void size_text(const struct kase *c, char *buf, size_t len)
{
	uint64_t s = c->size;
	if (c->op->fam == FAM_FFT)
		snprintf(buf, len, "N=%llu", (unsigned long long)s);
	else if (c->op->fam == FAM_ONNX)
		snprintf(buf, len, "batch=%llu", (unsigned long long)s);
	else if (IS_VIDEO(c->op->fam))
		snprintf(buf, len, "%dx%d", VIDEO_W(s), VIDEO_H(s));
	else
		bytes_text(s, buf, len);
}

uint64_t size_value(const struct kase *c)
{
	return IS_VIDEO(c->op->fam) ? (uint64_t)VIDEO_W(c->size) * (uint64_t)VIDEO_H(c->size) : c->size;
}

static const char *size_unit(const struct kase *c)
{
	return c->op->fam == FAM_FFT ? "samples" : c->op->fam == FAM_ONNX ? "batch" :
	       IS_VIDEO(c->op->fam) ? "pixels" : "bytes";
}

/* The name of the case's natural unit per second ("inferences_per_second",
 * "frames_per_second"), or NULL. */
static const char *unit_rate(const struct kase *c)
{
	return c->op->fam == FAM_ONNX ? "inferences_per_second" : IS_VIDEO(c->op->fam) ? "frames_per_second" : NULL;
}

double ratio(const struct kase *c)
{
	/* onnx.run: our library call against the peer's runs in its running
	 * process (neither starts a program per run). */
	const struct series *ours = c->op->fam == FAM_ONNX ? &c->ours : &c->prog;
	if (!c->peer_cmd[0] || !c->peer.n || !ours->n || (c->op->fam != FAM_ONNX && !c->prog_cmd[0]))
		return 0;
	return rate(ours, 1).median / rate(&c->peer, 1).median;
}

/* Our median MB/s over the reference's; 0 without one. */
static double ref_ratio(const struct kase *c)
{
	return c->ref_cmd[0] ? rate(&c->ours, (double)c->bytes / 1e6).median / c->ref_mbps : 0;
}

/* The references (--vs), under the table: a ceiling, not a peer. */
static void print_references(struct kase *cs, int n)
{
	int any = 0;
	for (int i = 0; i < n; i++) {
		struct kase *c = &cs[i];
		char sz[32];
		if (c->failed || !c->ref_cmd[0])
			continue;
		if (!any++)
			printf("\nREFERENCE: a ceiling, not a peer (in memory: no file, no age framing)\n"
			       "%-16s %-18s %9s  %-80s %9s %8s\n", "OPERATION", "ENGINE", "SIZE", "REFERENCE", "MB/S", "OURS/REF");
		size_text(c, sz, sizeof sz);
		printf("%-16s %-18s %9s  %-80s %9.1f %7.2fx\n", c->op->name, c->engine, sz, c->ref_cmd, c->ref_mbps,
		       ref_ratio(c));
	}
}

/* A case whose runs are small units (under 1 MiB), or inferences: its
 * latency matters. */
static int small_units(const struct kase *c)
{
	return c->op->fam == FAM_ONNX || (c->op->fam != FAM_FFT && !IS_VIDEO(c->op->fam) && c->bytes < (1u << 20));
}

void print_table(const struct bench *b, struct kase *cs, int n)
{
	int p99 = 0, units = 0;
	for (int i = 0; i < n; i++) {
		p99 |= !cs[i].failed && small_units(&cs[i]);
		units |= !cs[i].failed && unit_rate(&cs[i]);
	}
	printf("%-16s %-18s %9s %5s %8s %9s %-19s ", "OPERATION", "ENGINE", "SIZE", "LEVEL", "SETUP", "MB/S", "MIN-MAX");
	if (units)
		printf("%8s %8s ", "INFER/S", "FRAMES/S");
	if (p99)
		printf("%8s ", "P99 MS");
	printf("%7s %9s %8s %7s %9s %11s  %-33s %9s %9s\n", "GFLOPS", "MSAMPLE/S", "CPU S/GB", "RSS MiB", "PROG MB/S",
	       "START MS", "PEER", "PEER MB/S", "OURS/PEER");
	for (int i = 0; i < n; i++) {
		struct kase *c = &cs[i];
		if (c->failed)
			continue;
		char sz[32], lv[16] = "-", setup[32], mm[40], gf[16] = "-", ms[16] = "-", pm[16] = "-", pr[16] = "-";
		char gm[16] = "-", st[32] = "-";
		size_text(c, sz, sizeof sz);
		if (c->level)
			snprintf(lv, sizeof lv, "%d", c->level);
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
		if (c->prog_cmd[0])
			snprintf(gm, sizeof gm, "%.1f", rate(&c->prog, (double)c->bytes / 1e6).median);
		if (c->prog_cmd[0] || c->peer_cmd[0]) {
			char a[16] = "-", z[16] = "-";
			if (c->prog_cmd[0])
				snprintf(a, sizeof a, "%.1f", c->prog.start * 1e3);
			if (c->peer_cmd[0])
				snprintf(z, sizeof z, "%.1f", c->peer.start * 1e3);
			snprintf(st, sizeof st, "%s/%s", a, z);
		}
		if (c->peer_cmd[0])
			snprintf(pm, sizeof pm, "%.1f", rate(&c->peer, (double)c->bytes / 1e6).median);
		if (ratio(c) > 0)
			snprintf(pr, sizeof pr, "%.2fx", ratio(c));
		printf("%-16s %-18s %9s %5s %8s %9.1f %-19s ", c->op->name, c->engine, sz, lv, setup, r.median, mm);
		if (units) {
			char u[16] = "-";
			if (unit_rate(c))
				snprintf(u, sizeof u, "%.1f", rate(&c->ours, c->units).median);
			printf("%8s %8s ", c->op->fam == FAM_ONNX ? u : "-", IS_VIDEO(c->op->fam) ? u : "-");
		}
		if (p99)
			printf("%8.3f ", percentiles(&c->ours).p99 * 1e3);
		printf("%7s %9s %8.2f %7.0f %9s %11s  %-33s %9s %9s\n", gf, ms,
		       c->ours.cpu / (double)c->ours.n / (double)c->bytes * 1e9, (double)c->ours.rss_kib / 1024, gm, st,
		       c->peer_cmd[0] ? c->peer_cmd : "-", pm, pr);
	}
	print_references(cs, n);
	if (b->ceiling.mbps_1t > 0)
		printf("ceiling: memcpy %.0f MB/s on 1 thread, %.0f MB/s on %d; %d cores\n", b->ceiling.mbps_1t,
		       b->ceiling.mbps_all, b->ceiling.cores, b->ceiling.cores);
}

void print_csv(struct kase *cs, int n)
{
	printf("operation,engine,size,size_unit,input_bytes,bytes,setup_seconds,repeats,mbps_min,mbps_median,"
	       "mbps_max,gflops_median,msamples_per_second_median,cpu_seconds_per_byte,peak_rss_bytes,peer,"
	       "peer_startup_seconds,peer_mbps_median,peer_cpu_seconds_per_byte,ratio,level,latency_p50_seconds,"
	       "latency_p90_seconds,latency_p99_seconds,program,program_startup_seconds,program_mbps_median,"
	       "program_cpu_seconds_per_byte,reference,reference_mbps,inferences_per_second_median,"
	       "frames_per_second_median,resolution\n");
	for (int i = 0; i < n; i++) {
		struct kase *c = &cs[i];
		if (c->failed)
			continue;
		struct stats3 r = rate(&c->ours, (double)c->bytes / 1e6);
		char sz[32];
		size_text(c, sz, sizeof sz);
		printf("%s,%s,%llu,%s,%llu,%llu,%.9g,%d,%.6g,%.6g,%.6g,", c->op->name, c->engine,
		       (unsigned long long)size_value(c), size_unit(c),
		       (unsigned long long)c->in_bytes, (unsigned long long)c->bytes, c->setup, c->ours.n, r.min,
		       r.median, r.max);
		if (c->op->fam == FAM_FFT)
			printf("%.6g,%.6g,", rate(&c->ours, c->transforms * flops_per_transform(c) / 1e9).median,
			       rate(&c->ours, c->transforms * (double)c->size / 1e6).median);
		else
			printf(",,");
		printf("%.6g,%lld,", c->ours.cpu / (double)c->ours.n / (double)c->bytes, (long long)c->ours.rss_kib * 1024);
		if (c->peer_cmd[0])
			printf("%s,%.9g,%.6g,%.6g,", c->peer_cmd, c->peer.start, rate(&c->peer, (double)c->bytes / 1e6).median,
			       c->peer.cpu / (double)c->peer.n / (double)c->bytes);
		else
			printf(",,,,");
		if (ratio(c) > 0)
			printf("%.6g", ratio(c));
		if (c->level)
			printf(",%d,", c->level);
		else
			printf(",,");
		struct latency l = percentiles(&c->ours);
		printf("%.9g,%.9g,%.9g,", l.p50, l.p90, l.p99);
		if (c->prog_cmd[0])
			printf("%s,%.9g,%.6g,%.6g,", c->prog_cmd, c->prog.start, rate(&c->prog, (double)c->bytes / 1e6).median,
			       c->prog.cpu / (double)c->prog.n / (double)c->bytes);
		else
			printf(",,,,");
		if (c->ref_cmd[0])
			printf("%s,%.6g,", c->ref_cmd, c->ref_mbps);
		else
			printf(",,");
		if (c->op->fam == FAM_ONNX)
			printf("%.6g,,\n", rate(&c->ours, c->units).median);
		else if (IS_VIDEO(c->op->fam))
			printf(",%.6g,%s\n", rate(&c->ours, c->units).median, sz);
		else
			printf(",,\n");
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

/* Case c's natural unit per second in the series s: the field of the unit
 * it has, null for the other. */
static void units_json(cJSON *o, const struct kase *c, const struct series *s)
{
	static const char *const names[] = { "inferences_per_second", "frames_per_second" };
	for (size_t i = 0; i < 2; i++)
		if (unit_rate(c) && !strcmp(unit_rate(c), names[i]))
			cJSON_AddItemToObject(o, names[i], stats_json(rate(s, c->units)));
		else
			cJSON_AddNullToObject(o, names[i]);
}

static cJSON *latency_json(const struct series *s)
{
	struct latency l = percentiles(s);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "p50", l.p50);
	cJSON_AddNumberToObject(o, "p90", l.p90);
	cJSON_AddNumberToObject(o, "p99", l.p99);
	return o;
}

static cJSON *seconds_json(const struct series *s)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; i < s->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(s->t[i]));
	return a;
}

/* A program's runs (ours or the peer's): command, start-up, each run's
 * seconds, MB/s of whole runs, its unit per second, its latency, CPU
 * seconds per byte. */
static cJSON *program_json(const struct kase *c, const char *cmd, const struct series *s)
{
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "command", cmd);
	cJSON_AddNumberToObject(p, "startup_seconds", s->start);
	cJSON_AddItemToObject(p, "seconds", seconds_json(s));
	cJSON_AddItemToObject(p, "mbps", stats_json(rate(s, (double)c->bytes / 1e6)));
	units_json(p, c, s);
	cJSON_AddItemToObject(p, "latency_seconds", latency_json(s));
	cJSON_AddNumberToObject(p, "cpu_seconds_per_byte", s->cpu / (double)s->n / (double)c->bytes);
	return p;
}

/* The memcpy ceiling and the cores of the run; null figures where the
 * buffers could not be had. */
static cJSON *ceiling_json(const struct bench *b)
{
	cJSON *o = cJSON_CreateObject();
	if (b->ceiling.mbps_1t > 0) {
		cJSON_AddNumberToObject(o, "memcpy_mbps_1t", b->ceiling.mbps_1t);
		cJSON_AddNumberToObject(o, "memcpy_mbps_all", b->ceiling.mbps_all);
	} else {
		cJSON_AddNullToObject(o, "memcpy_mbps_1t");
		cJSON_AddNullToObject(o, "memcpy_mbps_all");
	}
	cJSON_AddNumberToObject(o, "cores", b->ceiling.cores);
	return o;
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

cJSON *results_json(struct bench *b, struct kase *cs, int n, const char **skipped, int nskipped)
{
	const struct job *job = b->job;
	cJSON *root = cJSON_CreateObject(), *cases = cJSON_CreateArray(), *nm = cJSON_CreateArray();
	cJSON *set = cJSON_CreateObject();
	cJSON_AddNumberToObject(root, "schema_version", RESULTS_SCHEMA);
	cJSON_AddStringToObject(root, "accel_version", ACCEL_VERSION);
	cJSON *m = machine_json(b->ctx);
	cJSON_AddItemToObject(m, "ceiling", ceiling_json(b));
	cJSON_AddItemToObject(root, "machine", m);
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
		cJSON_AddNumberToObject(o, "size", (double)size_value(c));
		cJSON_AddStringToObject(o, "size_unit", size_unit(c));
		if (IS_VIDEO(c->op->fam)) {
			char res[32];
			size_text(c, res, sizeof res);
			cJSON_AddStringToObject(o, "resolution", res);
		} else {
			cJSON_AddNullToObject(o, "resolution");
		}
		if (c->level)
			cJSON_AddNumberToObject(o, "level", c->level);
		else
			cJSON_AddNullToObject(o, "level");
		cJSON_AddNumberToObject(o, "input_bytes", (double)c->in_bytes);
		cJSON_AddNumberToObject(o, "bytes", (double)c->bytes);
		cJSON_AddNumberToObject(o, "output_bytes", (double)c->out_bytes);
		cJSON_AddNumberToObject(o, "setup_seconds", c->setup);
		cJSON_AddNumberToObject(o, "repeats", c->ours.n);
		cJSON_AddItemToObject(o, "seconds", seconds_json(&c->ours));
		cJSON_AddItemToObject(o, "mbps", stats_json(rate(&c->ours, (double)c->bytes / 1e6)));
		cJSON_AddItemToObject(o, "latency_seconds", latency_json(&c->ours));
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
		units_json(o, c, &c->ours);
		cJSON_AddNumberToObject(o, "cpu_seconds_per_byte", c->ours.cpu / (double)c->ours.n / (double)c->bytes);
		cJSON_AddNumberToObject(o, "peak_rss_bytes", (double)c->ours.rss_kib * 1024);
		if (c->prog_cmd[0])
			cJSON_AddItemToObject(o, "program", program_json(c, c->prog_cmd, &c->prog));
		else
			cJSON_AddNullToObject(o, "program");
		if (c->peer_cmd[0]) {
			cJSON *p = program_json(c, c->peer_cmd, &c->peer);
			if (ratio(c) > 0)
				cJSON_AddNumberToObject(p, "ratio", ratio(c));
			else
				cJSON_AddNullToObject(p, "ratio");
			cJSON_AddItemToObject(o, "peer", p);
		} else {
			cJSON_AddNullToObject(o, "peer");
		}
		if (c->ref_cmd[0]) {
			cJSON *r = cJSON_CreateObject();
			cJSON_AddStringToObject(r, "command", c->ref_cmd);
			cJSON_AddNumberToObject(r, "mbps", c->ref_mbps);
			cJSON_AddNumberToObject(r, "ratio", ref_ratio(c));
			cJSON_AddItemToObject(o, "reference", r);
		} else {
			cJSON_AddNullToObject(o, "reference");
		}
		cJSON_AddItemToArray(cases, o);
	}
	cJSON_AddItemToObject(root, "cases", cases);
	for (int i = 0; i < nskipped; i++)
		cJSON_AddItemToArray(nm, cJSON_CreateString(skipped[i]));
	cJSON_AddItemToObject(root, "not_measured", nm);
	return root;
}

int print_json(struct bench *b, struct kase *cs, int n, const char **skipped, int nskipped)
{
	cJSON *root = results_json(b, cs, n, skipped, nskipped);
	char *text = root ? cJSON_Print(root) : NULL;
	cJSON_Delete(root);
	if (!text)
		return -1;
	puts(text);
	free(text);
	return 0;
}
