/*
 * test_profile.c - the routing profile: save then load gives the same
 * entries, schema_version checked by value, a profile from another machine
 * or an invalid one ignored with its reason (the route names it), and
 * engines keyed by a stable identity that probe order does not change.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "core.h"

static const char *const zstd_only[] = { "zstd.compress", NULL };

/* Backend "g" finds two fake GPUs, at PCI 0000:98:00.0 and 0000:99:00.0,
 * in the order `reverse` says; their ids follow the probe order. */
static int reverse;

static int add_gpu(struct accel_probe *p, const char *pci)
{
	struct accel_device d;
	memset(&d, 0, sizeof d);
	d.cls = ACCEL_CLASS_GPU;
	d.numa_node = -1;
	strcpy(d.vendor, "Fake");
	strcpy(d.model, "Fake H100");
	strcpy(d.pci_address, pci);
	accel_device_set(&d, "pci_id", "10de:2330");
	accel_device_set(&d, "cuda_driver_version", "12.4");
	int dev = accel_probe_add_device(p, &d);
	return dev < 0 || accel_probe_add_engine(p, dev, NULL) < 0 ? ACCEL_ENOMEM : 0;
}

static int g_probe(struct accel_probe *p)
{
	const char *a = reverse ? "0000:99:00.0" : "0000:98:00.0";
	const char *b = reverse ? "0000:98:00.0" : "0000:99:00.0";
	return add_gpu(p, a) < 0 || add_gpu(p, b) < 0 ? ACCEL_ENOMEM : 0;
}

static int g_supports(const struct accel_engine *e, const struct accel_op *op, double *prior, char *reason,
		      size_t len)
{
	*prior = 1e6;
	snprintf(reason, len, "fake");
	return 0;
}

static const struct accel_backend g_backend = {
	.abi = ACCEL_BACKEND_ABI, .name = "g", .description = "fake", .ops = zstd_only,
	.probe = g_probe, .supports = g_supports,
};

static struct accel_op zstd_op = { .name = "zstd.compress", .level = 3, .chunk_size = 1 << 20 };

/* A context with the built-in cpu backend and g, both probed. */
static struct accel_ctx *new_ctx(void)
{
	unsetenv("ACCEL_BACKEND");
	unsetenv("ACCEL_PROFILE");
	unsetenv("ACCEL_BACKEND_PATH");
	struct accel_ctx *ctx = accel_ctx_new();
	assert_non_null(ctx);
	while (ctx->nbackends > 1 && strcmp(ctx->backends[ctx->nbackends - 1].origin, "built-in"))
		ctx->nbackends--;
	struct accel_backend_status *s = core_backend_add(ctx, "g", "test_profile.c");
	assert_non_null(s);
	s->backend = &g_backend;
	accel_discover(ctx, "zstd.compress");
	assert_int_equal(accel_engine_count(ctx), 3);
	return ctx;
}

static const struct accel_engine *engine_at_pci(struct accel_ctx *ctx, const char *pci)
{
	for (int i = 0; i < accel_engine_count(ctx); i++) {
		const struct accel_engine *e = accel_engine_at(ctx, i);
		if (!strcmp(accel_device_at(ctx, e->device)->pci_address, pci))
			return e;
	}
	fail_msg("no engine at %s", pci);
	return NULL;
}

static const char *cpu_model_here(struct accel_ctx *ctx)
{
	const struct accel_engine *cpu = accel_cpu_engine(ctx);
	assert_non_null(cpu);
	return accel_device_at(ctx, cpu->device)->model;
}

static char dir[64];

static int setup(void **state)
{
	strcpy(dir, "/tmp/accel-profile-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static const char *write_file(const char *name, const char *text)
{
	static char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	return path;
}

static char *read_text(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	return buf;
}

/* Replace the first `from` in file `path` by `to`. */
static void edit(const char *path, const char *from, const char *to)
{
	char *t = read_text(path), out[65536];
	char *at = strstr(t, from);
	assert_non_null(at);
	snprintf(out, sizeof out, "%.*s%s%s", (int)(at - t), t, to, at + strlen(from));
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(out, f);
	assert_int_equal(fclose(f), 0);
}

/* A profile of ctx saved at dir/NAME: g at 0000:98 5000 MB/s, g at 0000:99
 * 10 MB/s, cpu 400 MB/s, all for large jobs. */
static const char *save_profile(struct accel_ctx *ctx, const char *name)
{
	static char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	struct accel_profile_entry *e = NULL;
	int n = 0;
	assert_int_equal(accel_profile_put(ctx, &e, &n, "zstd.compress", engine_at_pci(ctx, "0000:98:00.0"),
					   "large", 5000), 0);
	assert_int_equal(accel_profile_put(ctx, &e, &n, "zstd.compress", engine_at_pci(ctx, "0000:99:00.0"),
					   "large", 10), 0);
	assert_int_equal(accel_profile_put(ctx, &e, &n, "zstd.compress", accel_cpu_engine(ctx), "large", 400), 0);
	char err[256];
	assert_int_equal(accel_profile_save(ctx, path, e, n, err, sizeof err), 0);
	assert_string_equal(err, "");
	free(e);
	return path;
}

static void round_trip(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	const struct accel_engine *g98 = engine_at_pci(ctx, "0000:98:00.0"), *cpu = accel_cpu_engine(ctx);
	struct accel_profile_entry *e = NULL;
	int n = 0;
	assert_int_equal(accel_profile_put(ctx, &e, &n, "zstd.compress", g98, "large", 4000), 0);
	assert_int_equal(accel_profile_put(ctx, &e, &n, "zstd.compress", cpu, "large", 400.5), 0);
	assert_int_equal(accel_profile_put(ctx, &e, &n, "zstd.compress", cpu, "small", 120), 0);
	/* The same (operation, engine, size class) again replaces it. */
	assert_int_equal(accel_profile_put(ctx, &e, &n, "zstd.compress", g98, "large", 5000), 0);
	assert_int_equal(n, 3);
	assert_int_equal(accel_profile_put(ctx, &e, &n, "zstd.compress", g98, "large", 0), ACCEL_EINVAL);
	assert_int_equal(accel_profile_put(ctx, &e, &n, "zstd.compress", g98, "large", -1), ACCEL_EINVAL);
	assert_int_equal(n, 3);

	/* Saved under folders that do not exist yet, with the umask's mode. */
	char path[160], err[256];
	snprintf(path, sizeof path, "%s/cache/accel/profile.json", dir);
	mode_t old = umask(027);
	int rc = accel_profile_save(ctx, path, e, n, err, sizeof err);
	umask(old);
	assert_int_equal(rc, 0);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	/* Nothing else is left beside it (no temporary). */
	char folder[160];
	snprintf(folder, sizeof folder, "%s/cache/accel", dir);
	DIR *d = opendir(folder);
	assert_non_null(d);
	int files = 0;
	for (struct dirent *x; (x = readdir(d));)
		files += strcmp(x->d_name, ".") && strcmp(x->d_name, "..");
	closedir(d);
	assert_int_equal(files, 1);
	const char *text = read_text(path);
	assert_non_null(strstr(text, "\"schema_version\":\t2"));
	assert_non_null(strstr(text, "\"engine_key\":\t\"g@pci:0000:98:00.0\""));
	assert_non_null(strstr(text, "\"cuda_driver_version\":\t\"12.4\""));

	struct accel_profile_entry *back = NULL;
	char why[256];
	assert_int_equal(accel_profile_load_for(ctx, path, &back, why, sizeof why), 3);
	assert_string_equal(why, "");
	for (int i = 0; i < 3; i++) {
		assert_string_equal(back[i].op, e[i].op);
		assert_string_equal(back[i].engine, e[i].engine);
		assert_string_equal(back[i].key, e[i].key);
		assert_string_equal(back[i].size_class, e[i].size_class);
		assert_true(back[i].mbps == e[i].mbps);
	}
	char key[256], used[16];
	accel_engine_key(ctx, cpu, key, sizeof key);
	assert_true(accel_profile_lookup(back, 3, "zstd.compress", key, cpu->name, "small", used, sizeof used) == 120);
	assert_string_equal(used, "small");
	/* An unmeasured class takes the large measurement. */
	assert_true(accel_profile_lookup(back, 3, "zstd.compress", key, cpu->name, "medium", used, sizeof used) == 400.5);
	assert_string_equal(used, "large");
	assert_true(accel_profile_lookup(back, 3, "lz4.compress", key, cpu->name, "large", used, sizeof used) == 0);
	free(back);
	/* Saved again over it: replaced. */
	assert_int_equal(accel_profile_save(ctx, path, e, 1, err, sizeof err), 0);
	assert_int_equal(accel_profile_load(path, &back), 1);
	free(back);
	free(e);

	/* A folder that cannot be made is an error naming why; nothing written. */
	write_file("plain", "x");
	snprintf(path, sizeof path, "%s/plain/sub/profile.json", dir);
	assert_int_equal(accel_profile_save(ctx, path, NULL, 0, err, sizeof err), ACCEL_EIO);
	char want[300];
	snprintf(want, sizeof want, "cannot create the folder of %s: Not a directory", path);
	assert_string_equal(err, want);
	accel_ctx_free(ctx);
}

/* accel_profile_load_for on `text`: its result, with the reason in why. */
static int load_text(struct accel_ctx *ctx, const char *text, char *why, size_t len)
{
	struct accel_profile_entry *e = NULL;
	int rc = accel_profile_load_for(ctx, write_file("p.json", text), &e, why, len);
	if (rc < 0)
		assert_null(e);
	free(e);
	return rc;
}

static void schema_version_by_value(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	char why[256];
	assert_int_equal(load_text(ctx, "{\"schema_version\": 3, \"entries\": []}", why, sizeof why), ACCEL_EDATA);
	assert_string_equal(why, "schema_version 3 is not supported (this build reads 1 and 2)");
	assert_int_equal(load_text(ctx, "{\"schema_version\": 2.5, \"entries\": []}", why, sizeof why), ACCEL_EDATA);
	assert_string_equal(why, "schema_version 2.5 is not supported (this build reads 1 and 2)");
	assert_int_equal(load_text(ctx, "{\"schema_version\": 0, \"entries\": []}", why, sizeof why), ACCEL_EDATA);
	assert_string_equal(why, "schema_version 0 is not supported (this build reads 1 and 2)");
	assert_int_equal(load_text(ctx, "{\"schema_version\": \"2\", \"entries\": []}", why, sizeof why), ACCEL_EDATA);
	assert_string_equal(why, "schema_version is not a number");
	assert_int_equal(load_text(ctx, "{\"entries\": []}", why, sizeof why), ACCEL_EDATA);
	assert_string_equal(why, "no schema_version");
	/* Schema 2 must say which machine it was measured on. */
	assert_int_equal(load_text(ctx, "{\"schema_version\": 2, \"entries\": []}", why, sizeof why), ACCEL_EDATA);
	assert_string_equal(why, "no machine identity (\"machine\" with \"cpu_model\" and \"devices\")");
	assert_int_equal(load_text(ctx, "{\"schema_version\": 2}", why, sizeof why), ACCEL_EDATA);
	assert_string_equal(why, "no \"entries\" array");
	/* Schema 1 is still read: entries by engine name, no machine. */
	assert_int_equal(load_text(ctx, "{\"schema_version\": 1, \"entries\": [{\"operation\": \"zstd.compress\","
				   " \"engine\": \"cpu\", \"mb_per_s\": 7}]}", why, sizeof why), 1);
	assert_string_equal(why, "");
	/* Entries with an empty or overlong name, or a speed past a double,
	 * are skipped. */
	assert_int_equal(load_text(ctx, "{\"schema_version\": 1, \"entries\": ["
				   "{\"operation\": \"\", \"engine\": \"cpu\", \"mb_per_s\": 7},"
				   "{\"operation\": \"zstd.compress\", \"engine\": \"\", \"mb_per_s\": 7},"
				   "{\"operation\": \"zstd.compress.0123456789012345678901\", \"engine\": \"cpu\", \"mb_per_s\": 7},"
				   "{\"operation\": \"zstd.compress\", \"engine\": \"cpu\", \"size_class\": \"\", \"mb_per_s\": 7},"
				   "{\"operation\": \"zstd.compress\", \"engine\": \"cpu\", \"mb_per_s\": 1e999},"
				   "{\"operation\": \"zstd.compress\", \"engine\": \"cpu\", \"mb_per_s\": 8}]}", why, sizeof why), 1);
	assert_int_equal(load_text(ctx, "{\"schema_version\": 1, \"entries\": [", why, sizeof why), ACCEL_EDATA);
	assert_string_equal(why, "not valid JSON");
	assert_int_equal(load_text(ctx, "[1, 2]", why, sizeof why), ACCEL_EDATA);
	assert_string_equal(why, "not a JSON object");
	/* Sizes: 2000 entries (a buffer grown from 4 KiB) read whole; a file
	 * over 8 MiB is refused. */
	size_t cap = (9u << 20) + 64, used = 0;
	char *big = malloc(cap);
	assert_non_null(big);
	used += (size_t)snprintf(big, cap, "{\"schema_version\": 1, \"entries\": [");
	for (int i = 0; i < 2000; i++)
		used += (size_t)snprintf(big + used, cap - used, "%s{\"operation\": \"zstd.compress\", \"engine\": \"cpu\", \"mb_per_s\": %d}",
					 i ? ", " : "", i + 1);
	used += (size_t)snprintf(big + used, cap - used, "]}");
	assert_int_equal(load_text(ctx, big, why, sizeof why), 2000);
	memset(big + used, ' ', cap - 1 - used);
	big[cap - 1] = 0;
	assert_int_equal(load_text(ctx, big, why, sizeof why), ACCEL_EDATA);
	assert_string_equal(why, "larger than 8 MiB");
	free(big);
	/* No file: no profile, nothing to say. */
	struct accel_profile_entry *e = (void *)1;
	char path[128];
	snprintf(path, sizeof path, "%s/absent.json", dir);
	assert_int_equal(accel_profile_load_for(ctx, path, &e, why, sizeof why), 0);
	assert_null(e);
	assert_string_equal(why, "");
	accel_ctx_free(ctx);
}

static void another_machine_ignored(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	char why[320], want[320];
	struct accel_profile_entry *e = NULL;
	const char *path = save_profile(ctx, "m.json");
	assert_int_equal(accel_profile_load_for(ctx, path, &e, why, sizeof why), 3);
	free(e);

	/* Another CPU. */
	char from[200];
	snprintf(from, sizeof from, "\"cpu_model\":\t\"%s\"", cpu_model_here(ctx));
	edit(path, from, "\"cpu_model\":\t\"Not This CPU 9000\"");
	assert_int_equal(accel_profile_load_for(ctx, path, &e, why, sizeof why), ACCEL_ENOTSUP);
	assert_null(e);
	snprintf(want, sizeof want, "measured on another machine (CPU 'Not This CPU 9000', this one '%s')",
		 cpu_model_here(ctx));
	assert_string_equal(why, want);
	/* The router ignores it, says why, and ranks by priors. */
	struct accel_route r;
	struct accel_route_req req = { &zstd_op, "auto", -1, path };
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	snprintf(want, sizeof want, "profile %s ignored: measured on another machine (CPU 'Not This CPU 9000', this one '%s')",
		 path, cpu_model_here(ctx));
	assert_string_equal(r.profile_note, want);
	for (int i = 0; i < r.nranked; i++)
		assert_memory_equal(r.entries[i].reason, "prior ", 6);
	/* The route prints it once, under its first line. */
	char buf[8192] = "";
	FILE *f = fmemopen(buf, sizeof buf, "w");
	accel_route_print(&r, f);
	fclose(f);
	char line[400];
	snprintf(line, sizeof line, "route for zstd.compress (auto):\n  %s\n", want);
	assert_memory_equal(buf, line, strlen(line));
	assert_null(strstr(buf + strlen(line), "ignored"));

	/* Another GPU at a PCI address the profile names. */
	path = save_profile(ctx, "m.json");
	edit(path, "\"pci_id\":\t\"10de:2330\"", "\"pci_id\":\t\"1002:740f\"");
	assert_int_equal(accel_profile_load_for(ctx, path, &e, why, sizeof why), ACCEL_ENOTSUP);
	assert_string_equal(why, "measured on another machine (PCI 0000:98:00.0 held 1002:740f Fake H100, now 10de:2330 Fake H100)");
	/* Another driver version. */
	path = save_profile(ctx, "m.json");
	edit(path, "\"cuda_driver_version\":\t\"12.4\"", "\"cuda_driver_version\":\t\"11.8\"");
	assert_int_equal(accel_profile_load_for(ctx, path, &e, why, sizeof why), ACCEL_ENOTSUP);
	assert_string_equal(why, "measured with another driver on 0000:98:00.0 (cuda_driver_version 11.8, now 12.4)");
	/* driver_versions as an array names nothing to compare (it crashed
	 * the reader: an array's members have no name). */
	path = save_profile(ctx, "m.json");
	edit(path, "\"driver_versions\":\t{\n\t\t\t\t\t\"cuda_driver_version\":\t\"12.4\"\n\t\t\t\t}",
	     "\"driver_versions\": [\"11.8\", 7]");
	assert_int_equal(accel_profile_load_for(ctx, path, &e, why, sizeof why), 3);
	free(e);
	/* A device the profile has but this run did not find is no reason. */
	path = save_profile(ctx, "m.json");
	edit(path, "\"pci_address\":\t\"0000:99:00.0\"", "\"pci_address\":\t\"0000:42:00.0\"");
	assert_int_equal(accel_profile_load_for(ctx, path, &e, why, sizeof why), 3);
	free(e);
	accel_ctx_free(ctx);
}

static void invalid_profile_ignored_by_router(void **state)
{
	struct accel_ctx *ctx = new_ctx();
	struct accel_route r;
	const char *path = write_file("bad.json", "{\"schema_version\": 7, \"entries\": []}");
	struct accel_route_req req = { &zstd_op, "auto", -1, path };
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	char want[300];
	snprintf(want, sizeof want, "profile %s ignored: schema_version 7 is not supported (this build reads 1 and 2)", path);
	assert_string_equal(r.profile_note, want);
	/* From $ACCEL_PROFILE too. */
	path = write_file("bad.json", "not json");
	setenv("ACCEL_PROFILE", path, 1);
	req.profile = NULL;
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	unsetenv("ACCEL_PROFILE");
	snprintf(want, sizeof want, "profile %s ignored: not valid JSON", path);
	assert_string_equal(r.profile_note, want);
	/* Absent, or valid: nothing to say. */
	snprintf(want, sizeof want, "%s/absent.json", dir);
	req.profile = want;
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_string_equal(r.profile_note, "");
	req.profile = save_profile(ctx, "ok.json");
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_string_equal(r.profile_note, "");
	assert_string_equal(r.entries[0].reason, "measured 5000 MB/s (profile, large jobs)");
	/* Forced routes do not read the profile. */
	req.profile = path;
	req.backend = "cpu";
	assert_int_equal(accel_route(ctx, &req, &r), 0);
	assert_string_equal(r.profile_note, "");
	accel_ctx_free(ctx);
}

static void stable_identity_keys(void **state)
{
	reverse = 0;
	struct accel_ctx *a = new_ctx();
	char key[256];
	assert_int_equal(accel_engine_key(a, engine_at_pci(a, "0000:98:00.0"), key, sizeof key), 0);
	assert_string_equal(key, "g@pci:0000:98:00.0");
	char want[256];
	snprintf(want, sizeof want, "cpu@cpu:%s", cpu_model_here(a));
	assert_int_equal(accel_engine_key(a, accel_cpu_engine(a), key, sizeof key), 0);
	assert_string_equal(key, want);
	const char *path = save_profile(a, "k.json");

	/* The GPUs found in the other order: the measurement stays with the
	 * GPU at 0000:98, whatever id and engine name it has now. */
	reverse = 1;
	struct accel_ctx *b = new_ctx();
	reverse = 0;
	const struct accel_engine *g98 = engine_at_pci(b, "0000:98:00.0"), *g99 = engine_at_pci(b, "0000:99:00.0");
	assert_int_equal(accel_engine_key(b, g98, key, sizeof key), 0);
	assert_string_equal(key, "g@pci:0000:98:00.0");
	struct accel_route r;
	struct accel_route_req req = { &zstd_op, "auto", -1, path };
	assert_int_equal(accel_route(b, &req, &r), 0);
	assert_string_equal(r.profile_note, "");
	assert_ptr_equal(r.entries[0].engine, g98);
	assert_string_equal(r.entries[0].reason, "measured 5000 MB/s (profile, large jobs)");
	assert_ptr_equal(r.entries[1].engine, accel_cpu_engine(b));
	assert_ptr_equal(r.entries[2].engine, g99);
	assert_string_equal(r.entries[2].reason, "measured 10 MB/s (profile, large jobs)");
	accel_ctx_free(a);
	accel_ctx_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(schema_version_by_value),
		cmocka_unit_test(another_machine_ignored),
		cmocka_unit_test(invalid_profile_ignored_by_router),
		cmocka_unit_test(stable_identity_keys),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
