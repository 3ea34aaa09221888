/*
 * accel-fft - batched, windowed, overlapping FFTs of a sample stream:
 * spectra, STFT rows and averaged power spectra, on the best engine for the
 * transform (FFTW on the CPU).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "accel.h"

enum {
	OPT_TYPE = 1, OPT_SIZE, OPT_WINDOW, OPT_HOP, OPT_OVERLAP, OPT_GAPS, OPT_INVERSE, OPT_FULL,
	OPT_OUT, OPT_DB_OFFSET, OPT_SHIFT, OPT_NORM, OPT_AVERAGE, OPT_DECIMATE, OPT_TEXT, OPT_NPY,
	OPT_PAD, OPT_PLAN, OPT_OUTPUT, OPT_FORCE, OPT_REAL, OPT_MEMORY,
};

static const struct accel_option options[] = {
	{ OPT_TYPE, 't', "type", "TYPE", "input samples, SigMF names: cf32 (default), ci32, ci16, ci8, cu8, cf64, f32, i32, i16, i8, u8, f64 (little-endian; _le accepted, _be for big-endian; SigMF's r of real types accepted), and i24, ci24 (packed 24-bit); without it a WAV header is detected",
	  "cf32 ci32 ci16 ci8 cu8 cf64 f32 i32 i16 i8 u8 f64 i24 ci24 cf32_be ci32_be ci16_be cf64_be f32_be i32_be i16_be f64_be", 0 },
	{ OPT_SIZE, 'n', "size", "N", "samples per transform, any N >= 2 (default 1024)", NULL, 0 },
	{ OPT_WINDOW, 'w', "window", "NAME", "window: rect (default), hann, hamming, blackman, blackman-harris, flattop, kaiser:BETA",
	  "rect hann hamming blackman blackman-harris flattop kaiser:", 0 },
	{ OPT_HOP, 0, "hop", "H", "samples from one frame's start to the next (default N: no overlap)", NULL, 0 },
	{ OPT_OVERLAP, 0, "overlap", "F", "fraction of a frame shared with the next, 0 to 0.99 (hop = N - round(F N))", NULL, 0 },
	{ OPT_GAPS, 0, "allow-gaps", NULL, "allow a hop larger than N (samples between frames are skipped)", NULL, 0 },
	{ OPT_INVERSE, 'i', "inverse", NULL, "inverse transform (sign +1; complex output unless --real)", NULL, 0 },
	{ OPT_REAL, 0, "real", NULL, "with --inverse: each frame is the N/2+1 complex bins of a half spectrum and each row N real f32 samples (numpy.fft.irfft, FFTW's c2r)", NULL, 0 },
	{ OPT_FULL, 0, "full", NULL, "all N bins of real input (default: the N/2+1 non-negative frequencies)", NULL, 0 },
	{ OPT_OUT, 0, "out", "MODE", "what each bin becomes: complex (default), mag, power or db", "complex mag power db", 0 },
	{ OPT_DB_OFFSET, 0, "db-offset", "DB", "added to every dB value (default 0)", NULL, 0 },
	{ OPT_SHIFT, 0, "shift", NULL, "put DC in the centre of full spectra (numpy.fft.fftshift)", NULL, 0 },
	{ OPT_NORM, 0, "norm", "MODE", "scaling as numpy.fft: backward (default: inverse / N), forward (forward / N), ortho (both / sqrt N) or none",
	  "backward forward ortho none", 0 },
	{ OPT_AVERAGE, 0, "average", "K", "write the mean of K spectra per row (Welch; mag, power or db)", NULL, 0 },
	{ OPT_DECIMATE, 0, "decimate", "D", "write one row in D (the frames of the others are not transformed)", NULL, 0 },
	{ OPT_TEXT, 0, "text", NULL, "write CSV text, one row per line (complex values as re,im pairs)", NULL, 0 },
	{ OPT_NPY, 0, "npy", NULL, "write a NumPy .npy array of shape (rows, bins)", NULL, 0 },
	{ OPT_PAD, 0, "pad", NULL, "at the end, complete a partial sample and the frames of the samples after the last whole frame (else exit 3, and dropped) with zero-valued samples (0x80 bytes for u8 and cu8, else zero bytes); also a FILE shorter than one frame (else exit 2)", NULL, 0 },
	{ OPT_PLAN, 0, "plan", "RIGOR", "planning effort: estimate, measure (default) or patient; plans are cached as wisdom",
	  "estimate measure patient", 0 },
	{ OPT_MEMORY, 0, "memory", "SIZE", "cap on memory (K, M, G suffixes; default: the memory available): units shrink to fit it, a job whose one frame does not fit is refused before it starts (exit 1), and units in flight stay under it (default: a quarter of the memory available)", NULL, 0 },
	{ OPT_OUTPUT, 'o', "output", "FILE", "write to FILE (complete or not at all) instead of stdout", "file", 0 },
	{ OPT_FORCE, 'f', "force", NULL, "overwrite FILE; read or write a terminal", NULL, 0 },
	ACCEL_COMMON_OPTIONS,
	{ 0 },
};

static const int exit_statuses[] = {
	ACCEL_EXIT_OK, ACCEL_EXIT_FAILURE, ACCEL_EXIT_USAGE, ACCEL_EXIT_DATA, -1,
};

static const struct accel_cli cli = {
	"accel-fft", "[options] [FILE]",
	"Batched, windowed, overlapping FFTs of the samples in FILE (or stdin): spectra, STFT rows, averaged power.",
	options, exit_statuses, NULL,
};

struct job {
	struct accel_fft f;
	int type_given, gaps, force;
	double overlap;          /* -1: not given */
	uint64_t memory;         /* --memory or $ACCEL_MEMORY, 0: not given */
	const char *output;
	struct accel_common common;
};

static int usage(const char *fmt, const char *arg)
{
	accel_msg_usage(fmt, arg);
	return ACCEL_EXIT_USAGE;
}

/* A positive count from 1 to max. */
static int parse_count(const char *s, int max, size_t *out)
{
	int v;
	if (accel_parse_int(s, 1, max, &v) < 0)
		return -1;
	*out = (size_t)v;
	return 0;
}

/* A --memory value: 1 MiB or more. */
static int parse_memory(const char *s, uint64_t *out)
{
	return accel_parse_size(s, out) < 0 || *out < (1u << 20) ? ACCEL_EINVAL : 0;
}

static int parse_args(int argc, char **argv, struct job *job, struct accel_optparse *p)
{
	memset(job, 0, sizeof *job);
	job->f.n = 1024;
	job->overlap = -1;
	if (accel_common_init(&job->common, &cli) < 0)
		return ACCEL_EXIT_USAGE;
	const char *env = getenv("ACCEL_MEMORY");
	if (env && *env && parse_memory(env, &job->memory) < 0) {
		accel_msg_error("ACCEL_MEMORY: '%s' is not a size of 1M or more", env);
		return ACCEL_EXIT_USAGE;
	}
	accel_optparse_init(p, &cli, argc, argv);
	int id, rc;
	const char *arg;
	size_t v;
	char *end;
	while ((rc = accel_getopt(p, &id, &arg)) == 1) {
		int c = accel_common_option(&job->common, &cli, id, arg);
		if (c == 2)
			return -1;
		if (c < 0)
			return accel_exit_status(c);
		if (c == 1)
			continue;
		switch (id) {
		case OPT_TYPE: {
			int t = accel_sample_parse(arg);
			if (t == ACCEL_ENOTSUP) {
				accel_msg_usage("--type: '%s': 8-bit samples have no byte order (SigMF names them without _le or _be: %.*s)",
						arg, (int)strlen(arg) - 3, arg);
				return ACCEL_EXIT_USAGE;
			}
			if (t < 0) {
				char names[256];
				accel_sample_names(", ", names, sizeof names);
				accel_msg_usage("--type: unknown sample type '%s' (one of %s; _le and SigMF's r of real types are accepted)", arg, names);
				return ACCEL_EXIT_USAGE;
			}
			job->f.type = (enum accel_sample)t;
			job->type_given = 1;
			break;
		}
		case OPT_SIZE: {
			int n;
			if (accel_parse_int(arg, -0x7fffffff, 0x40000000, &n) < 0)
				return usage("--size: '%s' is not a number from 2 to 2^30", arg);
			if (n < 2)
				return usage("--size: %s is too small: a transform needs N >= 2", arg);
			job->f.n = (size_t)n;
			break;
		}
		case OPT_WINDOW:
			if (accel_fft_window_parse(&job->f, arg) < 0)
				return usage("--window: '%s' is not one of rect, hann, hamming, blackman, blackman-harris, flattop, kaiser:BETA (BETA >= 0)", arg);
			break;
		case OPT_HOP:
			if (parse_count(arg, 0x40000000, &v) < 0)
				return usage("--hop: '%s' is not a number from 1 to 2^30", arg);
			job->f.hop = v;
			job->overlap = -1;
			break;
		case OPT_OVERLAP:
			errno = 0;
			job->overlap = strtod(arg, &end);
			if (errno || end == arg || *end || !(job->overlap >= 0 && job->overlap <= 0.99))
				return usage("--overlap: '%s' is not a fraction from 0 to 0.99", arg);
			job->f.hop = 0;
			break;
		case OPT_GAPS: job->gaps = 1; break;
		case OPT_INVERSE: job->f.inverse = 1; break;
		case OPT_REAL: job->f.real = 1; break;
		case OPT_FULL: job->f.full = 1; break;
		case OPT_OUT:
			if (!strcmp(arg, "complex")) job->f.out = ACCEL_FFT_COMPLEX;
			else if (!strcmp(arg, "mag")) job->f.out = ACCEL_FFT_MAG;
			else if (!strcmp(arg, "power")) job->f.out = ACCEL_FFT_POWER;
			else if (!strcmp(arg, "db")) job->f.out = ACCEL_FFT_DB;
			else return usage("--out: '%s' is not one of complex, mag, power, db", arg);
			break;
		case OPT_DB_OFFSET:
			errno = 0;
			job->f.db_offset = strtod(arg, &end);
			if (errno || end == arg || *end || !isfinite(job->f.db_offset))
				return usage("--db-offset: '%s' is not a number", arg);
			break;
		case OPT_SHIFT: job->f.shift = 1; break;
		case OPT_NORM:
			if (!strcmp(arg, "backward")) job->f.norm = ACCEL_NORM_BACKWARD;
			else if (!strcmp(arg, "forward")) job->f.norm = ACCEL_NORM_FORWARD;
			else if (!strcmp(arg, "ortho")) job->f.norm = ACCEL_NORM_ORTHO;
			else if (!strcmp(arg, "none")) job->f.norm = ACCEL_NORM_NONE;
			else return usage("--norm: '%s' is not one of backward, forward, ortho, none", arg);
			break;
		case OPT_AVERAGE:
			if (parse_count(arg, 1 << 20, &v) < 0)
				return usage("--average: '%s' is not a number from 1 to 1048576", arg);
			job->f.average = (unsigned)v;
			break;
		case OPT_DECIMATE:
			if (parse_count(arg, 1 << 30, &v) < 0)
				return usage("--decimate: '%s' is not a number from 1 to 2^30", arg);
			job->f.decimate = (unsigned)v;
			break;
		case OPT_TEXT: job->f.format = ACCEL_FFT_TEXT; break;
		case OPT_NPY: job->f.format = ACCEL_FFT_NPY; break;
		case OPT_PAD: job->f.pad = 1; break;
		case OPT_PLAN:
			if (!strcmp(arg, "estimate")) job->f.plan = ACCEL_PLAN_ESTIMATE;
			else if (!strcmp(arg, "measure")) job->f.plan = ACCEL_PLAN_MEASURE;
			else if (!strcmp(arg, "patient")) job->f.plan = ACCEL_PLAN_PATIENT;
			else return usage("--plan: '%s' is not one of estimate, measure, patient", arg);
			break;
		case OPT_MEMORY:
			if (parse_memory(arg, &job->memory) < 0)
				return usage("--memory: '%s' is not a size of 1M or more", arg);
			break;
		case OPT_OUTPUT: job->output = arg; break;
		case OPT_FORCE: job->force = 1; break;
		}
	}
	if (rc < 0) {
		accel_msg_usage("%s", p->errbuf);
		return ACCEL_EXIT_USAGE;
	}
	if (p->noperands > 1) {
		accel_msg_usage("one input at most (got %d)", p->noperands);
		return ACCEL_EXIT_USAGE;
	}
	if (job->overlap >= 0) {
		double h = (double)job->f.n - floor(job->overlap * (double)job->f.n + 0.5);
		job->f.hop = h < 1 ? 1 : (size_t)h;
	}
	if (job->f.hop > job->f.n && !job->gaps) {
		accel_msg_usage("--hop %zu is larger than the transform size %zu: samples would be skipped (add --allow-gaps)",
				job->f.hop, job->f.n);
		return ACCEL_EXIT_USAGE;
	}
	return 0;
}

/* A WAV header at the start of `in` (when -t was not given): the sample
 * type and data size from it, the header consumed. 0, or the exit status
 * after the message. */
static int read_wav(struct job *job, struct accel_input *in, int64_t *data_size)
{
	*data_size = -1;
	size_t want = 12;
	for (;;) {
		const uint8_t *p;
		ssize_t n = accel_input_peek(in, want, &p);
		if (n < 0) {
			accel_msg_error("cannot read %s: %s", in->name, strerror(errno));
			return ACCEL_EXIT_FAILURE;
		}
		struct accel_wav w;
		char err[200];
		size_t need;
		int rc = accel_wav_parse(p, (size_t)n, &w, &need, err, sizeof err);
		if (rc == 0)
			return 0;
		if (rc == ACCEL_ENOTSUP && (size_t)n < need) {
			if ((size_t)n < want) {
				/* The input ended inside the header. */
				if (n < 12)
					return 0;
				accel_msg_error("%s: WAV header: the input ends inside the header (at byte %zd)", in->name, n);
				return ACCEL_EXIT_DATA;
			}
			want = need;
			continue;
		}
		if (rc < 0) {
			accel_msg_error("%s: %s", in->name, err);
			return ACCEL_EXIT_DATA;
		}
		job->f.type = w.type;
		*data_size = w.data_size;
		accel_input_consume(in, (size_t)w.data_offset);
		if (job->common.verbose)
			fprintf(stderr, "%s: %s: WAV%s%s%s, %u channel%s, %u Hz, %u-bit, read as %s\n", cli.prog, in->name,
				strcmp(w.form, "RIFF") ? " (" : "", strcmp(w.form, "RIFF") ? w.form : "",
				strcmp(w.form, "RIFF") ? ")" : "", w.channels, w.channels == 1 ? "" : "s", w.rate, w.bits,
				accel_sample_name(w.type));
		return 0;
	}
}

static int run(struct job *job, const char *path)
{
	struct accel_input in;
	if (accel_input_open(&in, path) < 0) {
		accel_msg_error("cannot read %s: %s", path ? path : "stdin", strerror(errno));
		return ACCEL_EXIT_FAILURE;
	}
	if (in.fd == 0 && isatty(0) && !job->force) {
		accel_msg_error("stdin is a terminal; give a FILE, a pipe or -f");
		accel_input_close(&in);
		return ACCEL_EXIT_FAILURE;
	}
	int64_t data_size = -1;
	int status = job->type_given ? 0 : read_wav(job, &in, &data_size);
	if (status) {
		accel_input_close(&in);
		return status;
	}
	/* The bytes of samples, when known: checked against one frame and
	 * the memory cap before anything of the job's size is made. */
	int64_t avail = in.size >= 0 ? in.size - (int64_t)in.offset : -1;
	job->f.input_bytes = data_size >= 0 && (avail < 0 || data_size < avail) ? data_size : avail;
	struct accel_ctx *ctx = accel_ctx_new();
	if (!ctx) {
		accel_msg_error("out of memory");
		accel_input_close(&in);
		return ACCEL_EXIT_FAILURE;
	}
	job->f.memory_limit = job->memory ? job->memory : accel_memory_available(ctx);
	char err[512] = "";
	int rc = accel_fft_setup(&job->f, err, sizeof err);
	if (rc < 0) {
		if (rc == ACCEL_EDATA) {
			/* -n asks for more than FILE holds: a usage error. */
			accel_msg_error("%s: %s", in.name, err);
			status = ACCEL_EXIT_USAGE;
		} else if (rc == ACCEL_EINVAL) {
			accel_msg_usage("%s", err);
			status = ACCEL_EXIT_USAGE;
		} else if (err[0]) {
			accel_msg_error("%s (%s)", err, job->memory ? "--memory or ACCEL_MEMORY" :
					"the memory available; --memory sets another");
			status = ACCEL_EXIT_FAILURE;
		} else {
			accel_msg_error("out of memory");
			status = ACCEL_EXIT_FAILURE;
		}
		accel_ctx_free(ctx);
		accel_input_close(&in);
		return status;
	}
	struct accel_output out;
	rc = accel_output_open(&out, job->output, job->force, job->f.format != ACCEL_FFT_TEXT);
	if (rc < 0) {
		if (rc == ACCEL_EEXIST)
			accel_msg_error("%s already exists; use -f to overwrite it", job->output);
		else if (rc == ACCEL_EINVAL)
			accel_msg_error("refusing to write binary spectra to a terminal; use --text, -o FILE, a pipe or -f");
		else if (rc == ACCEL_ENOMEM)
			accel_msg_error("out of memory");
		else
			accel_msg_error("cannot write %s: %s", job->output ? job->output : "stdout", strerror(errno));
		accel_ctx_free(ctx);
		accel_input_close(&in);
		accel_fft_free(&job->f);
		return ACCEL_EXIT_FAILURE;
	}
	struct accel_fft_cfg cfg = {
		.backend = job->common.backend,
		.stream = {
			.threads = job->common.threads,
			.fallback = job->common.fallback,
			.progress = job->common.progress < 0 ? isatty(2) && !job->common.quiet : job->common.progress,
			.total_size = in.size,
			.prog = cli.prog,
			.verbose = job->common.quiet ? -1 : job->common.verbose,
			.progress_unit = "samples",
			.progress_scale = 1.0 / (double)job->f.sample_bytes,
			.memory_limit = job->memory,
		},
		.verbose = job->common.verbose,
		.data_size = data_size,
	};
	struct accel_stream_stats stats;
	double t0 = accel_now();
	rc = accel_fft_run(ctx, &cfg, &job->f, &in, &out, &stats, err, sizeof err);
	if (job->common.verbose) {
		fprintf(stderr, "%s: %s: ", cli.prog, in.name);
		accel_stream_stats_print(&stats, stderr);
	}
	if (rc < 0 && rc != ACCEL_EPIPE) {
		int named = !strncmp(err, in.name, strlen(in.name)) || !strncmp(err, "cannot ", 7) ||
			    !strncmp(err, "--", 2) || !strncmp(err, "ACCEL_", 6) || !strncmp(err, "no engine", 9);
		accel_msg_error("%s%s%s", named ? "" : in.name, named ? "" : ": ", err[0] ? err : accel_strerror(rc));
		status = accel_exit_status(rc);
		if (rc == ACCEL_ENOENGINE || rc == ACCEL_EDEVICE)
			status = ACCEL_EXIT_FAILURE;
		accel_output_abort(&out);
	} else if (out.broken) {
		accel_output_abort(&out);
	} else if (accel_output_commit(&out) < 0) {
		accel_msg_error("cannot write %s: %s", job->output ? job->output : "stdout",
				strerror(out.error ? out.error : errno));
		status = ACCEL_EXIT_FAILURE;
	}
	if (!status && job->common.verbose) {
		double dt = accel_now() - t0, bytes = (double)stats.bytes_in;
		fprintf(stderr, "%s: %.0f samples in %.3f s, %.1f MB/s of input\n", cli.prog,
			bytes / (double)job->f.sample_bytes, dt, dt > 0 ? bytes / dt / 1e6 : 0.0);
	}
	accel_ctx_free(ctx);
	accel_input_close(&in);
	accel_fft_free(&job->f);
	return status;
}

/* A probe that timed out may have left a thread in a driver: accel_exit
 * then ends the process without running exit handlers. */
int main(int argc, char **argv)
{
	struct job job;
	struct accel_optparse p;
	int rc = parse_args(argc, argv, &job, &p);
	if (rc)
		accel_exit(rc < 0 ? 0 : rc);
	accel_exit(run(&job, p.noperands ? p.operands[0] : NULL));
}
