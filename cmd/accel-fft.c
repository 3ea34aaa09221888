/*
 * accel-fft - batched, windowed, overlapping FFTs of a sample stream:
 * spectra, STFT rows and averaged power spectra, on the best engine for the
 * transform (FFTW on the CPU).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "accel.h"
#include "fft/fft.h"

struct job {
	struct accel_fft f;
	int type_given, gaps, iq;
	unsigned channels;       /* --channels, 0: not given */
	unsigned rate;           /* samples per second of a channel (a WAV's), 0: unknown */
	double rate_given;       /* --rate, 0: not given */
	const char *png;         /* --png FILE */
	int npz;                 /* -o FILE.npz: f, t and Sxx */
	struct fft_audio audio;  /* a file libsndfile decodes */
	double overlap;          /* -1: not given */
	struct accel_common common;   /* -o, -f, --memory, --json, -v ... */
	struct accel_report *report;  /* --json: the -v report, on stderr at the end */
};
#define JOB(field) ACCEL_AT(struct job, field)

static int usage(const char *fmt, const char *arg)
{
	accel_msg_usage(fmt, arg);
	return ACCEL_EINVAL;
}

static int type_option(void *v, const char *arg)
{
	struct job *job = v;
	int t = accel_sample_parse(arg);
	if (t == ACCEL_ENOTSUP) {
		accel_msg_usage("--type: '%s': 8-bit samples have no byte order (SigMF names them without _le or _be: %.*s)",
				arg, (int)strlen(arg) - 3, arg);
		return ACCEL_EINVAL;
	}
	if (t < 0) {
		char names[256];
		accel_sample_names(", ", names, sizeof names);
		accel_msg_usage("--type: unknown sample type '%s' (one of %s; _le and SigMF's r of real types are accepted)", arg, names);
		return ACCEL_EINVAL;
	}
	job->f.type = (enum accel_sample)t;
	job->type_given = 1;
	return 0;
}

static int size_option(void *v, const char *arg)
{
	int n;
	if (accel_parse_int(arg, -0x7fffffff, 0x40000000, &n) < 0)
		return usage("--size: '%s' is not a number from 2 to 2^30", arg);
	if (n < 2)
		return usage("--size: %s is too small: a transform needs N >= 2", arg);
	((struct job *)v)->f.n = (size_t)n;
	return 0;
}

static int window_option(void *v, const char *arg)
{
	if (accel_fft_window_parse(&((struct job *)v)->f, arg) < 0)
		return usage("--window: '%s' is not one of rect, hann, hamming, blackman, blackman-harris, flattop, kaiser:BETA (BETA >= 0)", arg);
	return 0;
}

/* --hop and --overlap: the last one given counts. */
static int hop_option(void *v, const char *arg)
{
	struct job *job = v;
	int hop;
	if (accel_parse_int(arg, 1, 0x40000000, &hop) < 0)
		return usage("--hop: '%s' is not a number from 1 to 2^30", arg);
	job->f.hop = (size_t)hop;
	job->overlap = -1;
	return 0;
}

static int overlap_option(void *v, const char *arg)
{
	struct job *job = v;
	char *end;
	errno = 0;
	job->overlap = strtod(arg, &end);
	if (errno || end == arg || *end || !(job->overlap >= 0 && job->overlap <= 0.99))
		return usage("--overlap: '%s' is not a fraction from 0 to 0.99", arg);
	job->f.hop = 0;
	return 0;
}

static int channel_option(void *v, const char *arg)
{
	int c;
	if (accel_parse_int(arg, 0, ACCEL_FFT_MAX_CHANNELS - 1, &c) < 0)
		return usage("--channel: '%s' is not a channel number from 0 (the first, left)", arg);
	((struct job *)v)->f.pick = (unsigned)c + 1;
	return 0;
}

static int mix_option(void *v, const char *arg)
{
	if (strcmp(arg, "mono"))
		return usage("--mix: '%s' is not mono (the mean of every channel)", arg);
	((struct job *)v)->f.mix = 1;
	return 0;
}

/* The words of --plan are not in the order of enum accel_fft_plan. */
static int plan_option(void *v, const char *arg)
{
	struct job *job = v;
	if (!strcmp(arg, "estimate")) job->f.plan = ACCEL_PLAN_ESTIMATE;
	else if (!strcmp(arg, "measure")) job->f.plan = ACCEL_PLAN_MEASURE;
	else if (!strcmp(arg, "patient")) job->f.plan = ACCEL_PLAN_PATIENT;
	else return usage("--plan: '%s' is not one of estimate, measure, patient", arg);
	return 0;
}

static const struct accel_option options[] = {
	{ 't', "type", "TYPE", "input samples, SigMF names: cf32 (default), ci32, ci16, ci8, cu8, cf64, f32, i32, i16, i8, u8, f64 (little-endian; _le accepted, _be for big-endian; SigMF's r of real types accepted), and i24, ci24 (packed 24-bit); without it a WAV header, or an audio file libsndfile reads (FLAC, W64, AIFF ...), is detected", "cf32 ci32 ci16 ci8 cu8 cf64 f32 i32 i16 i8 u8 f64 i24 ci24 cf32_be ci32_be ci16_be cf64_be f32_be i32_be i16_be f64_be", ACCEL_CALL(type_option) },
	{ 0, "channels", "C", "channels interleaved in raw input (default 1; a WAV says its own): each is transformed, rows hold the spectra of every channel", ACCEL_INT(JOB(channels), 1, ACCEL_FFT_MAX_CHANNELS, NULL) },
	{ 0, "channel", "K", "transform channel K only, counted from 0 (the first, left)", ACCEL_CALL(channel_option) },
	{ 0, "mix", "mono", "transform the mean of the channels (as sox remix -, ffmpeg -ac 1)", "mono", ACCEL_CALL(mix_option) },
	{ 0, "rate", "HZ", "samples per second of a channel, for the axes of -o FILE.npz and --png (default: the audio header's, else 1 as scipy's fs)", ACCEL_DOUBLE(JOB(rate_given), 1e-9, 1e15, "a rate in Hz above 0") },
	{ 0, "iq", NULL, "read a stereo WAV as complex I/Q samples (I left, Q right), not as two real channels", ACCEL_SET(JOB(iq), 1) },
	{ 'n', "size", "N", "samples per transform, any N >= 2 (default 1024)", ACCEL_CALL(size_option) },
	{ 'w', "window", "NAME", "window: rect (default), hann, hamming, blackman, blackman-harris, flattop, kaiser:BETA", "rect hann hamming blackman blackman-harris flattop kaiser:", ACCEL_CALL(window_option) },
	{ 0, "hop", "H", "samples from one frame's start to the next (default N: no overlap)", ACCEL_CALL(hop_option) },
	{ 0, "overlap", "F", "fraction of a frame shared with the next, 0 to 0.99 (hop = N - round(F N))", ACCEL_CALL(overlap_option) },
	{ 0, "allow-gaps", NULL, "allow a hop larger than N (samples between frames are skipped)", ACCEL_SET(JOB(gaps), 1) },
	{ 'i', "inverse", NULL, "inverse transform (sign +1; complex output unless --real)", ACCEL_SET(JOB(f.inverse), 1) },
	{ 0, "real", NULL, "with --inverse: each frame is the N/2+1 complex bins of a half spectrum and each row N real f32 samples (numpy.fft.irfft, FFTW's c2r)", ACCEL_SET(JOB(f.real), 1) },
	{ 0, "full", NULL, "all N bins of real input (default: the N/2+1 non-negative frequencies)", ACCEL_SET(JOB(f.full), 1) },
	{ 0, "out", "MODE", "what each bin becomes: complex (default), mag, power or db", "complex mag power db", ACCEL_CHOICE(JOB(f.out)) },
	{ 0, "db-offset", "DB", "added to every dB value (default 0)", ACCEL_DOUBLE(JOB(f.db_offset), 0, 0, "a number") },
	{ 0, "shift", NULL, "put DC in the centre of full spectra (numpy.fft.fftshift)", ACCEL_SET(JOB(f.shift), 1) },
	{ 0, "norm", "MODE", "scaling as numpy.fft: backward (default: inverse / N), forward (forward / N), ortho (both / sqrt N) or none", "backward forward ortho none", ACCEL_CHOICE(JOB(f.norm)) },
	{ 0, "average", "K", "write the mean of K spectra per row (Welch; mag, power or db)", ACCEL_INT(JOB(f.average), 1, 1 << 20, NULL) },
	{ 0, "decimate", "D", "write one row in D (the frames of the others are not transformed)", ACCEL_INT(JOB(f.decimate), 1, 1 << 30, "a number from 1 to 2^30") },
	{ 0, "text", NULL, "write CSV text, one row per line (complex values as re,im pairs)", ACCEL_SET(JOB(f.format), ACCEL_FFT_TEXT) },
	{ 0, "npy", NULL, "write a NumPy .npy array of shape (rows, bins)", ACCEL_SET(JOB(f.format), ACCEL_FFT_NPY) },
	{ 0, "png", "FILE", "draw the spectrogram into FILE (PNG; gnuplot): dB, viridis, time in s across, frequency in Hz up; one spectrum a row (--channel or --mix for several channels); spectra go to -o FILE.npz only", "file", ACCEL_STRING(JOB(png)) },
	{ 0, "pad", NULL, "at the end, complete a partial sample and the frames of the samples after the last whole frame (else exit 3, and dropped) with zero-valued samples (0x80 bytes for u8 and cu8, else zero bytes); also a FILE shorter than one frame (else exit 2)", ACCEL_SET(JOB(f.pad), 1) },
	{ 0, "plan", "RIGOR", "planning effort: estimate, measure (default) or patient; plans are cached as wisdom", "estimate measure patient", ACCEL_CALL(plan_option) },
	{ 0, "memory", "SIZE", "cap on memory (K, M, G suffixes; default: the memory available): units shrink to fit it, a job whose one frame does not fit is refused before it starts (exit 1), and units in flight stay under it (default: a quarter of the memory available)", ACCEL_COMMON(ACCEL_OPT_MEMORY) },
	ACCEL_OUTPUT_OPTION,
	ACCEL_FORCE_OPTION,
	ACCEL_BACKEND_OPTION_TEXT("engines to use, in order, joined by , or + (several serve the stream together): auto (the default), fftw (the CPU), vkfft (hardware Vulkan and OpenCL devices), cufft (CUDA GPUs), fftw+cufft; an engine on a software device by its full name, as accel-detect --routes fft.c2c shows it: vkfft.vulkan:gpu0"),
	ACCEL_RUN_OPTIONS,
	ACCEL_VERBOSE_OPTION_TEXT("say more on stderr: the WAV header read, the route, each engine's statistics and MB/s"),
	{ 0, "json", NULL, "the -v report (route, devices, statistics, probes, exit status) as one JSON document on stderr at the end", ACCEL_COMMON(ACCEL_OPT_JSON) },
	ACCEL_QUIET_HELP_OPTIONS,
	{ 0 },
};

static const int exit_statuses[] = {
	ACCEL_EXIT_OK, ACCEL_EXIT_FAILURE, ACCEL_EXIT_USAGE, ACCEL_EXIT_DATA, -1,
};

static const struct accel_cli cli = {
	"accel-fft", "[options] [FILE]",
	"Batched, windowed, overlapping FFTs of the samples in FILE (or stdin): spectra, STFT rows, averaged power.",
	options, exit_statuses, NULL, NULL,
};

/* The options into job: 0, -1 (exit 0) or the exit status. */
static int parse_args(int argc, char **argv, struct job *job)
{
	memset(job, 0, sizeof *job);
	job->f.n = 1024;
	job->overlap = -1;
	int rc = accel_parse(&cli, argc, argv, job, &job->common);
	if (rc)
		return rc;
	if (job->common.noperands > 1) {
		accel_msg_usage("one input at most (got %d)", job->common.noperands);
		return ACCEL_EXIT_USAGE;
	}
	if (job->overlap >= 0) {
		double h = (double)job->f.n - floor(job->overlap * (double)job->f.n + 0.5);
		job->f.hop = h < 1 ? 1 : (size_t)h;
	}
	if (job->iq && job->type_given) {
		accel_msg_usage("--iq reads a stereo WAV as I/Q: with --type, name a complex type (ci16, cf32 ...)");
		return ACCEL_EXIT_USAGE;
	}
	if (job->iq && (job->f.pick || job->f.mix || job->channels)) {
		accel_msg_usage("--iq reads two channels as one complex signal: --channel, --mix and --channels do not apply");
		return ACCEL_EXIT_USAGE;
	}
	job->f.channels = job->channels;
	job->npz = job->common.output && accel_npy_form_of(job->common.output) == ACCEL_NPY_NPZ;
	if (job->npz || job->png) {
		const char *what = job->png ? "--png" : "-o FILE.npz";
		if (job->f.inverse) {
			accel_msg_usage("%s draws or holds spectra against frequency: --inverse does not apply", what);
			return ACCEL_EXIT_USAGE;
		}
		if (job->f.format != ACCEL_FFT_BINARY) {
			accel_msg_usage("%s writes a format of its own: --text and --npy do not apply", what);
			return ACCEL_EXIT_USAGE;
		}
		if (job->png && job->common.output && !job->npz) {
			accel_msg_usage("--png: the spectra go to -o FILE.npz only (drop -o, or name a .npz)");
			return ACCEL_EXIT_USAGE;
		}
		if (job->png && job->f.out == ACCEL_FFT_COMPLEX)
			job->f.out = ACCEL_FFT_DB;
		if (job->png && job->f.out != ACCEL_FFT_DB) {
			accel_msg_usage("--png draws dB: give --out db or no --out");
			return ACCEL_EXIT_USAGE;
		}
		if (job->f.out == ACCEL_FFT_COMPLEX) {
			accel_msg_usage("-o FILE.npz holds real spectra (Sxx): add --out mag, power or db (complex rows: --npy)");
			return ACCEL_EXIT_USAGE;
		}
	}
	if (job->f.hop > job->f.n && !job->gaps) {
		accel_msg_usage("--hop %zu is larger than the transform size %zu: samples would be skipped (add --allow-gaps)",
				job->f.hop, job->f.n);
		return ACCEL_EXIT_USAGE;
	}
	return 0;
}

/* Set job's type and channels for `channels` interleaved channels of
 * `type` (a WAV's, or f32 from libsndfile): 0, or the exit status after
 * the message. */
static int take_channels(struct job *job, const char *name, const char *what, enum accel_sample type,
			 unsigned channels)
{
	if (job->channels && job->channels != channels) {
		accel_msg_usage("--channels %u: %s is %s of %u channel%s", job->channels, name, what, channels,
				channels == 1 ? "" : "s");
		return ACCEL_EXIT_USAGE;
	}
	job->f.type = type;
	job->f.channels = channels;
	if (job->iq) {
		char cname[16];
		if (channels != 2) {
			accel_msg_usage("--iq: %s has %u channel%s; I/Q is two (I left, Q right)", name, channels,
					channels == 1 ? "" : "s");
			return ACCEL_EXIT_USAGE;
		}
		snprintf(cname, sizeof cname, "c%s", accel_sample_name(type));
		job->f.type = (enum accel_sample)accel_sample_parse(cname);
		job->f.channels = 1;
	}
	return 0;
}

/* An audio file libsndfile reads (by its signature) at the start of `in`:
 * decoded on a thread into f32 samples, which `in` then reads from a pipe
 * (the file itself stays with the decoder). 0, or the exit status after
 * the message. */
static int read_audio(struct job *job, struct accel_input *in, int64_t *data_size)
{
	char err[512];
	struct fft_audio *a = &job->audio;
	int rc = fft_audio_open(a, in, err, sizeof err);
	if (rc) {
		accel_msg_error("%s", err);
		return rc == ACCEL_ENOTSUP ? ACCEL_EXIT_FAILURE : ACCEL_EXIT_DATA;
	}
	int status = take_channels(job, in->name, "an audio file", ACCEL_SAMPLE_F32, a->channels);
	if (status)
		return status;
	job->rate = a->rate;
	*data_size = a->frames >= 0 ? a->frames * (int64_t)a->channels * 4 : -1;
	if (job->common.verbose) {
		char bits[32] = "";
		if (a->bits)
			snprintf(bits, sizeof bits, ", %u-bit", a->bits);
		fprintf(stderr, "%s: %s: %s (libsndfile), %u channel%s, %u Hz%s, read as %s%s\n", cli.prog, in->name,
			a->format, a->channels, a->channels == 1 ? "" : "s", a->rate, bits,
			job->iq ? "cf32 (I/Q)" : "f32", a->channels > 1 && !job->iq ? " per channel" : "");
	}
	return 0;
}

/* A WAV header at the start of `in` (when -t was not given): the sample
 * type and data size from it, the header consumed. 0, or the exit status
 * after the message. */
static int read_wav(struct job *job, struct accel_input *in, int64_t *data_size)
{
	*data_size = -1;
	size_t want = 16;
	for (;;) {
		const uint8_t *p;
		ssize_t n = accel_input_peek(in, want, &p);
		if (n < 0) {
			accel_msg_error("cannot read %s: %s", in->name, strerror(errno));
			return ACCEL_EXIT_FAILURE;
		}
		struct accel_wav w;
		char err[512];
		size_t need;
		if (want == 16 && fft_audio_magic(p, (size_t)n))
			return read_audio(job, in, data_size);
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
		int status = take_channels(job, in->name, "a WAV", w.type, w.channels);
		if (status)
			return status;
		job->rate = w.rate;
		*data_size = w.data_size;
		accel_input_consume(in, (size_t)w.data_offset);
		if (job->common.verbose) {
			char as[64];
			if (job->iq)
				snprintf(as, sizeof as, "%s (I/Q)", accel_sample_name(job->f.type));
			else if (w.channels > 1)
				snprintf(as, sizeof as, "%u channels of %s", w.channels, accel_sample_name(w.type));
			else
				snprintf(as, sizeof as, "%s", accel_sample_name(w.type));
			fprintf(stderr, "%s: %s: WAV%s%s%s, %u channel%s, %u Hz, %u-bit, read as %s\n", cli.prog, in->name,
				strcmp(w.form, "RIFF") ? " (" : "", strcmp(w.form, "RIFF") ? w.form : "",
				strcmp(w.form, "RIFF") ? ")" : "", w.channels, w.channels == 1 ? "" : "s", w.rate, w.bits, as);
		}
		return 0;
	}
}

/* The final outputs of a spectrogram (-o FILE.npz, --png FILE), and the
 * temporary folder whose rows.f32 holds the rows until the run ends. */
struct spectrogram {
	struct accel_output npz, png;
	int npz_open, png_open;
	char dir[4096], rows[4160];
	int fd;
};

static int open_final(struct accel_output *out, const char *path, int force)
{
	int rc = accel_output_open(out, path, force, 1);
	if (rc == ACCEL_EEXIST)
		accel_msg_error("%s already exists; use -f to overwrite it", path);
	else if (rc < 0)
		accel_msg_error("cannot write %s: %s", path, rc == ACCEL_ENOMEM ? "out of memory" : strerror(errno));
	return rc < 0 ? ACCEL_EXIT_FAILURE : 0;
}

/* Open the final outputs and the temporary the rows go to, as `out`. 0,
 * or the exit status after the message. */
static int spectrogram_open(struct job *job, struct spectrogram *sg, struct accel_output *out)
{
	sg->fd = -1;
	if (job->npz) {
		if (open_final(&sg->npz, job->common.output, job->common.force))
			return ACCEL_EXIT_FAILURE;
		sg->npz_open = 1;
	}
	if (job->png) {
		if (open_final(&sg->png, job->png, job->common.force))
			return ACCEL_EXIT_FAILURE;
		sg->png_open = 1;
	}
	const char *tmp = getenv("TMPDIR");
	snprintf(sg->dir, sizeof sg->dir, "%s/accel-fft.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(sg->dir)) {
		accel_msg_error("cannot make a temporary folder in %s: %s", tmp && *tmp ? tmp : "/tmp", strerror(errno));
		sg->dir[0] = 0;
		return ACCEL_EXIT_FAILURE;
	}
	snprintf(sg->rows, sizeof sg->rows, "%s/rows.f32", sg->dir);
	sg->fd = open(sg->rows, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (sg->fd < 0 || accel_output_fd(out, sg->fd) < 0) {
		accel_msg_error("cannot write %s: %s", sg->rows, strerror(errno));
		return ACCEL_EXIT_FAILURE;
	}
	return 0;
}

/* Write the .npz and draw the PNG from the rows. 0, or the exit status
 * after the message. */
static int spectrogram_finish(struct job *job, struct spectrogram *sg, uint64_t consumed)
{
	struct fft_axes ax = {
		.rate = job->rate_given ? job->rate_given : job->rate ? job->rate : 1,
		.hop = job->f.hop, .n = job->f.n, .average = job->f.average, .decimate = job->f.decimate,
		.frames = (uint64_t)accel_fft_stream_frames(&job->f, (int64_t)consumed),
	};
	off_t size = lseek(sg->fd, 0, SEEK_END);
	uint64_t rows = size > 0 ? (uint64_t)size / (job->f.bins * job->f.outputs * sizeof(float)) : 0;
	char err[512] = "";
	if (sg->npz_open) {
		if (fft_write_npz(&job->f, &ax, sg->fd, rows, &sg->npz, err, sizeof err) < 0) {
			accel_msg_error("%s: %s", job->common.output, err);
			return ACCEL_EXIT_FAILURE;
		}
		sg->npz_open = 0;
		if (accel_output_commit(&sg->npz) < 0) {
			accel_msg_error("cannot write %s: %s", job->common.output,
					strerror(sg->npz.error ? sg->npz.error : errno));
			return ACCEL_EXIT_FAILURE;
		}
	}
	if (sg->png_open) {
		if (fft_draw_png(&job->f, &ax, sg->rows, rows, sg->dir, &sg->png, err, sizeof err) < 0) {
			accel_msg_error("cannot draw %s: %s", job->png, err);
			return ACCEL_EXIT_FAILURE;
		}
		sg->png_open = 0;
		if (accel_output_commit(&sg->png) < 0) {
			accel_msg_error("cannot write %s: %s", job->png, strerror(sg->png.error ? sg->png.error : errno));
			return ACCEL_EXIT_FAILURE;
		}
	}
	return 0;
}

/* Remove what is left: unfinished outputs and the temporaries. */
static void spectrogram_close(struct spectrogram *sg)
{
	if (sg->npz_open)
		accel_output_abort(&sg->npz);
	if (sg->png_open)
		accel_output_abort(&sg->png);
	sg->npz_open = sg->png_open = 0;
	if (sg->fd >= 0)
		close(sg->fd);
	sg->fd = -1;
	if (sg->dir[0]) {
		static const char *const names[] = { "rows.f32", "plot.gp", "gnuplot.err" };
		char p[4160];
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
			snprintf(p, sizeof p, "%s/%s", sg->dir, names[i]);
			unlink(p);
		}
		rmdir(sg->dir);
		sg->dir[0] = 0;
	}
}

/* Transform the input at path (NULL: stdin) on ctx: the exit status,
 * after the message. */
static int run_input(struct job *job, struct accel_ctx *ctx, const char *path)
{
	struct accel_input src, piped, *in = &src;
	int piped_open = 0;
	if (accel_input_open(&src, path) < 0) {
		accel_msg_error("cannot read %s: %s", path ? path : "stdin", strerror(errno));
		return ACCEL_EXIT_FAILURE;
	}
	if (src.fd == 0 && isatty(0) && !job->common.force) {
		accel_msg_error("stdin is a terminal; give a FILE, a pipe or -f");
		accel_input_close(&src);
		return ACCEL_EXIT_FAILURE;
	}
	int64_t data_size = -1;
	int status = job->type_given ? 0 : read_wav(job, &src, &data_size);
	if (!status && job->audio.sf) {
		/* libsndfile decodes the file; the transform reads its
		 * samples from a pipe. */
		int rfd;
		char fdpath[32];
		if (fft_audio_start(&job->audio, &rfd) < 0) {
			accel_msg_error("cannot start decoding %s: %s", src.name, strerror(errno));
			status = ACCEL_EXIT_FAILURE;
		} else {
			snprintf(fdpath, sizeof fdpath, "/dev/fd/%d", rfd);
			if (accel_input_open(&piped, fdpath) < 0) {
				accel_msg_error("cannot read the samples of %s: %s", src.name, strerror(errno));
				status = ACCEL_EXIT_FAILURE;
			} else {
				piped.name = src.name;
				piped_open = 1;
				in = &piped;
			}
			close(rfd);
		}
	}
	if (status) {
		fft_audio_end(&job->audio, NULL, 0);
		accel_input_close(&src);
		return status;
	}
	if (job->rate_given && job->common.verbose && job->rate && job->rate_given != job->rate)
		fprintf(stderr, "%s: --rate %g Hz in place of the %u Hz %s states\n", cli.prog, job->rate_given,
			job->rate, in->name);
	/* A spectrogram draws full spectra with 0 Hz in the middle. */
	if (job->png && (job->f.full || accel_sample_is_complex(job->f.type)))
		job->f.shift = 1;
	uint64_t start = in->offset;
	/* The bytes of samples, when known: checked against one frame and
	 * the memory cap before anything of the job's size is made. */
	int64_t avail = in->size >= 0 ? in->size - (int64_t)in->offset : -1;
	job->f.input_bytes = data_size >= 0 && (avail < 0 || data_size < avail) ? data_size : avail;
	struct accel_output out;
	struct spectrogram sg = { .fd = -1 };
	int out_open = 0;
	job->f.memory_limit = job->common.memory ? job->common.memory : accel_memory_available(ctx);
	char err[512] = "";
	int rc = accel_fft_setup(&job->f, err, sizeof err);
	if (rc < 0) {
		if (rc == ACCEL_EDATA) {
			/* -n asks for more than FILE holds: a usage error. */
			accel_msg_error("%s: %s", in->name, err);
			status = ACCEL_EXIT_USAGE;
		} else if (rc == ACCEL_EINVAL) {
			accel_msg_usage("%s", err);
			status = ACCEL_EXIT_USAGE;
		} else if (err[0]) {
			accel_msg_error("%s (%s)", err, job->common.memory ? "--memory or ACCEL_MEMORY" :
					"the memory available; --memory sets another");
			status = ACCEL_EXIT_FAILURE;
		} else {
			accel_msg_error("out of memory");
			status = ACCEL_EXIT_FAILURE;
		}
		goto done;
	}
	/* A FILE known to hold no sample (accel_fft_setup takes 0 bytes for
	 * unknown): fewer than one frame, a usage error as any shorter FILE. */
	if (job->f.input_bytes == 0 && accel_fft_check_samples(&job->f, 0, err, sizeof err) < 0) {
		accel_msg_error("%s: %s", in->name, err);
		status = ACCEL_EXIT_USAGE;
		goto done;
	}
	if (job->png && job->f.outputs > 1) {
		accel_msg_usage("--png draws one spectrum a row: %s has %u channels (add --channel K or --mix mono)",
				in->name, job->f.outputs);
		status = ACCEL_EXIT_USAGE;
		goto done;
	}
	if (job->npz || job->png) {
		status = spectrogram_open(job, &sg, &out);
		if (status)
			goto done;
		out_open = 1;
	} else {
		rc = accel_output_open(&out, job->common.output, job->common.force, job->f.format != ACCEL_FFT_TEXT);
		if (rc < 0) {
			if (rc == ACCEL_EEXIST)
				accel_msg_error("%s already exists; use -f to overwrite it", job->common.output);
			else if (rc == ACCEL_EINVAL)
				accel_msg_error("refusing to write binary spectra to a terminal; use --text, -o FILE, a pipe or -f");
			else if (rc == ACCEL_ENOMEM)
				accel_msg_error("out of memory");
			else
				accel_msg_error("cannot write %s: %s", job->common.output ? job->common.output : "stdout", strerror(errno));
			status = ACCEL_EXIT_FAILURE;
			goto done;
		}
		out_open = 1;
	}
	struct accel_fft_cfg cfg = {
		.backend = job->common.backend,
		.stream = {
			.threads = job->common.threads,
			.fallback = job->common.fallback,
			.progress = job->common.progress < 0 ? isatty(2) && !job->common.quiet : job->common.progress,
			.total_size = in->size,
			.prog = cli.prog,
			.verbose = job->common.quiet ? -1 : job->common.verbose,
			.progress_unit = "samples",
			.progress_scale = 1.0 / (double)job->f.in_bytes,
			.memory_limit = job->common.memory,
		},
		.verbose = job->common.verbose,
		.report = job->report,
		.data_size = data_size,
		.inline_one_unit = job->common.threads <= 1,
	};
	struct accel_stream_stats stats;
	double t0 = accel_now();
	rc = accel_fft_run(ctx, &cfg, &job->f, in, &out, &stats, err, sizeof err);
	if (job->report) {
		accel_report_run(job->report, in->name, &stats);
	} else if (job->common.verbose) {
		fprintf(stderr, "%s: %s: ", cli.prog, in->name);
		accel_stream_stats_print(&stats, stderr);
	}
	uint64_t consumed = in->offset - start;
	if (piped_open) {
		/* The read end closed first: a decoder still writing stops. */
		accel_input_close(&piped);
		piped_open = 0;
		char derr[512];
		if (fft_audio_end(&job->audio, derr, sizeof derr) < 0 && (rc >= 0 || rc == ACCEL_EPIPE)) {
			accel_msg_error("%s: %s", src.name, derr);
			accel_output_abort(&out);
			out_open = 0;
			status = ACCEL_EXIT_DATA;
			goto done;
		}
	}
	if (rc < 0 && rc != ACCEL_EPIPE) {
		int named = !strncmp(err, in->name, strlen(in->name)) || !strncmp(err, "cannot ", 7) ||
			    !strncmp(err, "--", 2) || !strncmp(err, "ACCEL_", 6) || !strncmp(err, "no engine", 9);
		accel_msg_error("%s%s%s", named ? "" : in->name, named ? "" : ": ", err[0] ? err : accel_strerror(rc));
		status = accel_exit_status(rc);
		if (rc == ACCEL_ENOENGINE || rc == ACCEL_EDEVICE)
			status = ACCEL_EXIT_FAILURE;
		accel_output_abort(&out);
	} else if (out.broken) {
		accel_output_abort(&out);
	} else if (accel_output_commit(&out) < 0) {
		accel_msg_error("cannot write %s: %s", job->common.output ? job->common.output : "stdout",
				strerror(out.error ? out.error : errno));
		status = ACCEL_EXIT_FAILURE;
	} else if (sg.fd >= 0) {
		status = spectrogram_finish(job, &sg, consumed);
	}
	out_open = 0;
	if (!status && job->common.verbose && !job->report) {
		double dt = accel_now() - t0, bytes = (double)stats.bytes_in;
		fprintf(stderr, "%s: %.0f samples in %.3f s, %.1f MB/s of input\n", cli.prog,
			bytes / (double)job->f.sample_bytes, dt, dt > 0 ? bytes / dt / 1e6 : 0.0);
	}
done:
	if (out_open)
		accel_output_abort(&out);
	spectrogram_close(&sg);
	if (piped_open)
		accel_input_close(&piped);
	fft_audio_end(&job->audio, NULL, 0);
	accel_input_close(&src);
	accel_fft_free(&job->f);
	return status;
}

/* The run of the input at path, with --json its report at the end. */
static int run(struct job *job, const char *path)
{
	struct accel_ctx *ctx = accel_common_ctx(&job->common);
	if (!ctx || (job->common.json && !(job->report = accel_report_run_start(ctx, cli.prog, accel_now())))) {
		accel_msg_error("out of memory");
		accel_ctx_free(ctx);
		return ACCEL_EXIT_FAILURE;
	}
	int status = run_input(job, ctx, path);
	/* After any error line: the route and its reasons say why. */
	status = accel_report_run_end(job->report, ctx, status);
	accel_ctx_free(ctx);
	return status;
}

/* A probe that timed out may have left a thread in a driver: accel_exit
 * then ends the process without running exit handlers. */
int main(int argc, char **argv)
{
	accel_cli_libraries("@fft.c2c hwloc", NULL);
	struct job job;
	int rc = parse_args(argc, argv, &job);
	if (rc)
		accel_exit(rc < 0 ? 0 : rc);
	accel_exit(run(&job, job.common.noperands ? job.common.operands[0] : NULL));
}
