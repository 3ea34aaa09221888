/*
 * output.c - what accel-bench prints: the table, CSV, and the JSON document
 * (schema in accel-bench(1)).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "bench.h"

void size_text(const struct kase *c, char *buf, size_t len)
{
	uint64_t s = c->size;
	if (c->op->fam == FAM_FFT)
		snprintf(buf, len, "N=%llu", (unsigned long long)s);
	else if (c->op->fam == FAM_ONNX)
		snprintf(buf, len, "batch=%llu", (unsigned long long)s);
	else if (IS_VIDEO(c->op->fam))
		snprintf(buf, len, "%dx%d", VIDEO_W(s), VIDEO_H(s));
	else if (s >= 1u << 30 && !(s % (1u << 30)))
		snprintf(buf, len, "%lluG", (unsigned long long)(s >> 30));
	else if (s >= 1u << 20 && !(s % (1u << 20)))
		snprintf(buf, len, "%lluM", (unsigned long long)(s >> 20));
	else if (s >= 1u << 10 && !(s % (1u << 10)))
		snprintf(buf, len, "%lluK", (unsigned long long)(s >> 10));
	else
		snprintf(buf, len, "%llu", (unsigned long long)s);
}

/* The size as a number, in its unit: pixels of a frame for video. */
static uint64_t size_value(const struct kase *c)
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
	if (!c->peer_cmd[0] || !c->peer.n)
		return 0;
	return rate(&c->ours, 1).median / rate(&c->peer, 1).median;
}

void print_table(struct kase *cs, int n)
{
	printf("%-16s %-18s %9s %8s %9s %-19s %7s %9s %8s %8s %-17s %8s %7s  %-24s %9s %9s\n", "OPERATION", "ENGINE",
	       "SIZE", "SETUP", "MB/S", "MIN-MAX", "GFLOPS", "MSAMPLE/S", "INFER/S", "FRAMES/S", "P50/P90/P99 MS",
	       "CPU S/GB", "RSS MiB", "PEER", "PEER MB/S", "OURS/PEER");
	for (int i = 0; i < n; i++) {
		struct kase *c = &cs[i];
		if (c->failed)
			continue;
		char sz[32], setup[32], mm[40], gf[16] = "-", ms[16] = "-", pm[16] = "-", pr[16] = "-";
		char inf[16] = "-", fps[16] = "-", lat[48] = "-";
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
		if (unit_rate(c))
			snprintf(c->op->fam == FAM_ONNX ? inf : fps, 16, "%.1f", rate(&c->ours, c->units).median);
		if (c->op->fam == FAM_ONNX) {
			double p[3];
			percentiles(&c->ours, p);
			snprintf(lat, sizeof lat, "%.2f/%.2f/%.2f", p[0] * 1e3, p[1] * 1e3, p[2] * 1e3);
		}
		if (c->peer_cmd[0]) {
			snprintf(pm, sizeof pm, "%.1f", rate(&c->peer, (double)c->bytes / 1e6).median);
			snprintf(pr, sizeof pr, "%.2fx", ratio(c));
		}
		printf("%-16s %-18s %9s %8s %9.1f %-19s %7s %9s %8s %8s %-17s %8.2f %7.0f  %-24s %9s %9s\n", c->op->name,
		       c->engine, sz, setup, r.median, mm, gf, ms, inf, fps, lat,
		       c->ours.cpu / (double)c->ours.n / (double)c->bytes * 1e9,
		       (double)c->ours.rss_kib / 1024, c->peer_cmd[0] ? c->peer_cmd : "-", pm, pr);
	}
}

void print_csv(struct kase *cs, int n)
{
	printf("operation,engine,size,size_unit,input_bytes,bytes,setup_seconds,repeats,mbps_min,mbps_median,"
	       "mbps_max,gflops_median,msamples_per_second_median,cpu_seconds_per_byte,peak_rss_bytes,peer,"
	       "peer_setup_seconds,peer_mbps_median,peer_cpu_seconds_per_byte,ratio,inferences_per_second_median,"
	       "frames_per_second_median,latency_p50_seconds,latency_p90_seconds,latency_p99_seconds\n");
	for (int i = 0; i < n; i++) {
		struct kase *c = &cs[i];
		if (c->failed)
			continue;
		struct stats3 r = rate(&c->ours, (double)c->bytes / 1e6);
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
			printf("%s,%.9g,%.6g,%.6g,%.6g,", c->peer_cmd, c->peer.setup,
			       rate(&c->peer, (double)c->bytes / 1e6).median,
			       c->peer.cpu / (double)c->peer.n / (double)c->bytes, ratio(c));
		else
			printf(",,,,,");
		double p[3];
		percentiles(&c->ours, p);
		if (c->op->fam == FAM_ONNX)
			printf("%.6g,,%.6g,%.6g,%.6g\n", rate(&c->ours, c->units).median, p[0], p[1], p[2]);
		else if (IS_VIDEO(c->op->fam))
			printf(",%.6g,,,\n", rate(&c->ours, c->units).median);
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

static cJSON *latency_json(const struct series *s)
{
	double p[3];
	percentiles(s, p);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "p50", p[0]);
	cJSON_AddNumberToObject(o, "p90", p[1]);
	cJSON_AddNumberToObject(o, "p99", p[2]);
	return o;
}

/* Case c's natural unit per second and latency of the series s: the
 * fields of the unit they have, null for the others. */
static void units_json(cJSON *o, const struct kase *c, const struct series *s)
{
	static const char *const names[] = { "inferences_per_second", "frames_per_second" };
	for (size_t i = 0; i < 2; i++)
		if (unit_rate(c) && !strcmp(unit_rate(c), names[i]))
			cJSON_AddItemToObject(o, names[i], stats_json(rate(s, c->units)));
		else
			cJSON_AddNullToObject(o, names[i]);
	if (c->op->fam == FAM_ONNX)
		cJSON_AddItemToObject(o, "latency_seconds", latency_json(s));
	else
		cJSON_AddNullToObject(o, "latency_seconds");
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

int print_json(struct bench *b, struct kase *cs, int n, const char **skipped, int nskipped)
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
		cJSON_AddNumberToObject(o, "size", (double)size_value(c));
		cJSON_AddStringToObject(o, "size_unit", size_unit(c));
		if (IS_VIDEO(c->op->fam)) {
			char res[32];
			size_text(c, res, sizeof res);
			cJSON_AddStringToObject(o, "resolution", res);
		} else {
			cJSON_AddNullToObject(o, "resolution");
		}
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
		units_json(o, c, &c->ours);
		cJSON_AddNumberToObject(o, "cpu_seconds_per_byte", c->ours.cpu / (double)c->ours.n / (double)c->bytes);
		cJSON_AddNumberToObject(o, "peak_rss_bytes", (double)c->ours.rss_kib * 1024);
		if (c->peer_cmd[0]) {
			cJSON *p = cJSON_CreateObject();
			cJSON_AddStringToObject(p, "command", c->peer_cmd);
			cJSON_AddNumberToObject(p, "setup_seconds", c->peer.setup);
			cJSON_AddItemToObject(p, "seconds", seconds_json(&c->peer));
			cJSON_AddItemToObject(p, "mbps", stats_json(rate(&c->peer, (double)c->bytes / 1e6)));
			units_json(p, c, &c->peer);
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
