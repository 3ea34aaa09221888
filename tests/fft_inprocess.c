/*
 * fft_inprocess.c - a test driver (build/tests/fft-inprocess): the FFT
 * jobs of LIST run one after the other in one process, on one context, on
 * ENGINE with no fallback, as a program running many jobs (accel-bench, a
 * library's caller) runs them. Each line of LIST is "[options] IN OUT", the
 * line tests/fixtures/fft/ref.py checks reads, with these options of
 * accel-fft: -n N, -t TYPE, -w NAME, --hop H, -i (--inverse), --full, --out
 * MODE, --db-offset DB, --shift, --norm MODE, --average K, --decimate D.
 * Usage: fft-inprocess ENGINE LIST
 * Exit status: 0; 1 a job failed (its line on stderr); 2 usage or a line
 * it cannot read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <accel.h>

#define PROG "fft-inprocess"

static int pick(const char *s, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

/* f from the words of a line but its last two (IN, OUT): 0, or -1 after a
 * line on stderr. */
static int parse(struct accel_fft *f, char **w, int n)
{
	static const char *const outs[] = { "complex", "mag", "power", "db", NULL };
	static const char *const norms[] = { "backward", "forward", "ortho", "none", NULL };
	memset(f, 0, sizeof *f);
	f->type = ACCEL_SAMPLE_CF32;
	for (int i = 0; i < n; i++) {
		const char *o = w[i], *v = i + 1 < n ? w[i + 1] : NULL;
		int k;
		if (!strcmp(o, "-i") || !strcmp(o, "--inverse")) {
			f->inverse = 1;
			continue;
		}
		if (!strcmp(o, "--full")) {
			f->full = 1;
			continue;
		}
		if (!strcmp(o, "--shift")) {
			f->shift = 1;
			continue;
		}
		if (!v)
			goto bad;
		i++;
		if (!strcmp(o, "-n"))
			f->n = strtoul(v, NULL, 10);
		else if (!strcmp(o, "--hop"))
			f->hop = strtoul(v, NULL, 10);
		else if (!strcmp(o, "--average"))
			f->average = (unsigned)strtoul(v, NULL, 10);
		else if (!strcmp(o, "--decimate"))
			f->decimate = (unsigned)strtoul(v, NULL, 10);
		else if (!strcmp(o, "--db-offset"))
			f->db_offset = strtod(v, NULL);
		else if (!strcmp(o, "-t") && (k = accel_sample_parse(v)) >= 0)
			f->type = (enum accel_sample)k;
		else if (!strcmp(o, "-w") && accel_fft_window_parse(f, v) == 0)
			;
		else if (!strcmp(o, "--out") && (k = pick(v, outs)) >= 0)
			f->out = (enum accel_fft_out)k;
		else if (!strcmp(o, "--norm") && (k = pick(v, norms)) >= 0)
			f->norm = (enum accel_fft_norm)k;
		else
			goto bad;
		continue;
	bad:
		fprintf(stderr, PROG ": cannot read the option %s%s%s\n", o, v ? " " : "", v ? v : "");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: " PROG " ENGINE LIST\n");
		return 2;
	}
	FILE *list = fopen(argv[2], "r");
	struct accel_ctx *ctx = accel_ctx_new();
	if (!list || !ctx) {
		fprintf(stderr, PROG ": cannot read %s\n", argv[2]);
		return 2;
	}
	char line[1024];
	int status = 0;
	while (!status && fgets(line, sizeof line, list)) {
		char *w[64];
		int n = 0;
		for (char *t = strtok(line, " \t\n"); t && n < 64; t = strtok(NULL, " \t\n"))
			w[n++] = t;
		if (!n)
			continue;
		struct accel_fft f;
		if (n < 3 || parse(&f, w, n - 2) < 0) {
			status = 2;
			break;
		}
		char err[512] = "";
		struct accel_input in;
		struct accel_output out;
		if (accel_input_open(&in, w[n - 2]) < 0) {
			fprintf(stderr, PROG ": cannot read %s\n", w[n - 2]);
			status = 1;
			break;
		}
		f.input_bytes = in.size;
		int rc = accel_fft_setup(&f, err, sizeof err);
		if (rc == 0 && accel_output_open(&out, w[n - 1], 1, 1) < 0) {
			snprintf(err, sizeof err, "cannot write %s", w[n - 1]);
			rc = -1;
		} else if (rc == 0) {
			struct accel_fft_cfg cfg = {
				.backend = argv[1],
				.stream = { .fallback = ACCEL_FALLBACK_NONE, .total_size = in.size, .prog = PROG },
				.data_size = -1,
			};
			struct accel_stream_stats st;
			rc = accel_fft_run(ctx, &cfg, &f, &in, &out, &st, err, sizeof err);
			if (rc < 0)
				accel_output_abort(&out);
			else if (accel_output_commit(&out) < 0)
				rc = -1, snprintf(err, sizeof err, "cannot write %s", w[n - 1]);
		}
		accel_input_close(&in);
		accel_fft_free(&f);
		if (rc < 0) {
			fprintf(stderr, PROG ": %s: %s\n", w[n - 2], err[0] ? err : accel_strerror(rc));
			status = 1;
		}
	}
	fclose(list);
	accel_ctx_free(ctx);
	return status;
}
