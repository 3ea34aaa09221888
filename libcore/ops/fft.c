/*
 * fft.c - the FFT operation family as accel-fft runs it: a sample stream cut
 * into frames of N samples every `hop` samples, whole frames batched into
 * units (a unit holds the raw samples its frames span, so overlapping frames
 * share bytes), transformed by an engine, then scaled, reduced to magnitude,
 * power or dB, averaged, decimated and formatted here, the same for every
 * engine. Units hold whole rows (a multiple of --average frames), so rows
 * never straddle units and workers need no state from one another.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <accel/ops/fft.h>
#include "core.h"

static const struct {
	const char *name;
	unsigned char bytes, complex;
} samples[ACCEL_SAMPLE_COUNT] = {
	[ACCEL_SAMPLE_CF32] = { "cf32", 8, 1 },
	[ACCEL_SAMPLE_CI16] = { "ci16", 4, 1 },
	[ACCEL_SAMPLE_CI8] = { "ci8", 2, 1 },
	[ACCEL_SAMPLE_CU8] = { "cu8", 2, 1 },
	[ACCEL_SAMPLE_F32] = { "f32", 4, 0 },
	[ACCEL_SAMPLE_I16] = { "i16", 2, 0 },
	[ACCEL_SAMPLE_U8] = { "u8", 1, 0 },
	[ACCEL_SAMPLE_CF64] = { "cf64", 16, 1 },
	[ACCEL_SAMPLE_F64] = { "f64", 8, 0 },
	[ACCEL_SAMPLE_I8] = { "i8", 1, 0 },
	[ACCEL_SAMPLE_CI32] = { "ci32", 8, 1 },
	[ACCEL_SAMPLE_I32] = { "i32", 4, 0 },
	[ACCEL_SAMPLE_CI24] = { "ci24", 6, 1 },
	[ACCEL_SAMPLE_I24] = { "i24", 3, 0 },
	[ACCEL_SAMPLE_CF32_BE] = { "cf32_be", 8, 1 },
	[ACCEL_SAMPLE_CI16_BE] = { "ci16_be", 4, 1 },
	[ACCEL_SAMPLE_F32_BE] = { "f32_be", 4, 0 },
	[ACCEL_SAMPLE_I16_BE] = { "i16_be", 2, 0 },
	[ACCEL_SAMPLE_CF64_BE] = { "cf64_be", 16, 1 },
	[ACCEL_SAMPLE_F64_BE] = { "f64_be", 8, 0 },
	[ACCEL_SAMPLE_CI32_BE] = { "ci32_be", 8, 1 },
	[ACCEL_SAMPLE_I32_BE] = { "i32_be", 4, 0 },
};

/* SigMF's core:datatype is (r|c)TYPE, with _le or _be after every type
 * wider than a byte; our names drop the "r" of real types and the "_le". */
int accel_sample_parse(const char *name)
{
	char base[16];
	size_t len = name ? strlen(name) : 0;
	if (!len || len >= sizeof base)
		return ACCEL_EINVAL;
	memcpy(base, name, len + 1);
	int order = 0;  /* 1: _le, 2: _be */
	if (len > 3 && (!strcmp(base + len - 3, "_le") || !strcmp(base + len - 3, "_be"))) {
		order = base[len - 2] == 'b' ? 2 : 1;
		base[len - 3] = 0;
	}
	int t = -1;
	for (int i = 0; i < ACCEL_SAMPLE_COUNT && t < 0; i++) {
		if (strchr(samples[i].name, '_'))
			continue;
		if (!strcmp(base, samples[i].name) ||
		    (base[0] == 'r' && !samples[i].complex && !strcmp(base + 1, samples[i].name)))
			t = i;
	}
	if (t < 0)
		return ACCEL_EINVAL;
	if (!order)
		return t;
	if (samples[t].bytes == (samples[t].complex ? 2 : 1))
		return ACCEL_ENOTSUP;
	if (order == 1)
		return t;
	char be[16];
	snprintf(be, sizeof be, "%s_be", samples[t].name);
	for (int i = 0; i < ACCEL_SAMPLE_COUNT; i++)
		if (!strcmp(be, samples[i].name))
			return i;
	return ACCEL_EINVAL;
}

const char *accel_sample_name(enum accel_sample t)
{
	return (unsigned)t < ACCEL_SAMPLE_COUNT ? samples[t].name : "?";
}

size_t accel_sample_bytes(enum accel_sample t)
{
	return (unsigned)t < ACCEL_SAMPLE_COUNT ? samples[t].bytes : 0;
}

int accel_sample_is_complex(enum accel_sample t)
{
	return (unsigned)t < ACCEL_SAMPLE_COUNT && samples[t].complex;
}

void accel_sample_names(const char *sep, char *buf, size_t len)
{
	size_t used = 0;
	if (len)
		buf[0] = 0;
	for (int i = 0; i < ACCEL_SAMPLE_COUNT && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? sep : "", samples[i].name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

static const char *const window_names[] = {
	[ACCEL_WINDOW_RECT] = "rect", [ACCEL_WINDOW_HANN] = "hann", [ACCEL_WINDOW_HAMMING] = "hamming",
	[ACCEL_WINDOW_BLACKMAN] = "blackman", [ACCEL_WINDOW_BLACKMAN_HARRIS] = "blackman-harris",
	[ACCEL_WINDOW_FLATTOP] = "flattop", [ACCEL_WINDOW_KAISER] = "kaiser",
};

int accel_fft_window_parse(struct accel_fft *f, const char *s)
{
	if (!strncmp(s, "kaiser:", 7)) {
		char *end;
		errno = 0;
		double beta = strtod(s + 7, &end);
		if (errno || end == s + 7 || *end || !(beta >= 0) || beta > 1000)
			return ACCEL_EINVAL;
		f->window = ACCEL_WINDOW_KAISER;
		f->kaiser_beta = beta;
		return 0;
	}
	for (size_t i = 0; i < sizeof window_names / sizeof window_names[0]; i++) {
		if (i != ACCEL_WINDOW_KAISER && !strcmp(s, window_names[i])) {
			f->window = (enum accel_fft_window)i;
			return 0;
		}
	}
	return ACCEL_EINVAL;
}

/* Modified Bessel function of the first kind, order 0, by its power series
 * sum ((x/2)^k / k!)^2 (Abramowitz and Stegun 9.6.12). */
static double bessel_i0(double x)
{
	double term = 1, sum = 1, q = x * x / 4;
	for (int k = 1; k < 1000 && term > sum * 1e-17; k++) {
		term *= q / ((double)k * k);
		sum += term;
	}
	return sum;
}

/* Periodic (DFT-even) windows of length N, as scipy.signal.get_window
 * makes them: the symmetric window of N + 1 points without its last. The
 * cosine sums' coefficients are those of Harris (1978) and, for the flat
 * top, of scipy.signal.windows.flattop (D'Antona and Ferrero). */
static void make_window(const struct accel_fft *f, float *w)
{
	static const double coef[][5] = {
		[ACCEL_WINDOW_RECT] = { 1 },
		[ACCEL_WINDOW_HANN] = { 0.5, 0.5 },
		[ACCEL_WINDOW_HAMMING] = { 0.54, 0.46 },
		[ACCEL_WINDOW_BLACKMAN] = { 0.42, 0.5, 0.08 },
		[ACCEL_WINDOW_BLACKMAN_HARRIS] = { 0.35875, 0.48829, 0.14128, 0.01168 },
		[ACCEL_WINDOW_FLATTOP] = { 0.21557895, 0.41663158, 0.277263158, 0.083578947, 0.006947368 },
	};
	size_t n = f->n;
	if (f->window == ACCEL_WINDOW_KAISER) {
		double i0b = bessel_i0(f->kaiser_beta);
		for (size_t i = 0; i < n; i++) {
			double r = 2.0 * (double)i / (double)n - 1.0;
			w[i] = (float)(bessel_i0(f->kaiser_beta * sqrt(fmax(0, 1 - r * r))) / i0b);
		}
		return;
	}
	/* The terms past the window's last coefficient add zeros, and the
	 * first is a[0] (cos 0 = 1): left out, every value is the same and a
	 * rectangular window takes no cosine (a few thousand of them were a
	 * tenth of a small run's start-up). */
	const double *a = coef[f->window];
	int terms = 5;
	while (terms > 1 && a[terms - 1] == 0)
		terms--;
	for (size_t i = 0; i < n; i++) {
		double v = a[0], x = 2 * M_PI * (double)i / (double)n;
		for (int k = 1; k < terms; k++)
			v += (k & 1 ? -a[k] : a[k]) * cos(k * x);
		w[i] = (float)v;
	}
}

/* Frames an engine transforms at once: rows of `avg` frames making about
 * 256 KiB of complex floats (one row at least), at most `unit`. */
static size_t batch_of(const struct accel_fft *f, size_t avg, size_t unit)
{
	size_t row = avg * f->n * 8, rows = ((size_t)256 << 10) / row;
	size_t b = (rows ? rows : 1) * avg;
	return b < unit ? b : unit;
}

/* Whether rows hold complex values (else float32 values). */
static int complex_rows(const struct accel_fft *f)
{
	return f->out == ACCEL_FFT_COMPLEX && !f->c2r;
}

/* Floats of one output row. */
static size_t row_floats(const struct accel_fft *f)
{
	return complex_rows(f) ? 2 * f->bins : f->bins;
}

/* f->memory, in bytes: the window (N floats); one unit's samples (its
 * frames' span) and rows (binary, or CSV at 17 bytes a value; one row of
 * floats when split); one engine's batch of frames in and transformed;
 * the reader's overlap; when split, the writer's sum of a row (doubles). */
static uint64_t job_memory(const struct accel_fft *f)
{
	uint64_t fu = f->unit_frames, avg = f->split ? fu : f->average, ss = f->sample_bytes;
	uint64_t span = ((fu - 1) * f->hop + f->frame) * ss;
	uint64_t rows = f->split ? 1 : fu / avg;
	uint64_t out = (rows + 1) * row_floats(f) * (f->format == ACCEL_FFT_TEXT && !f->split ? 17 : 4);
	uint64_t per_in = f->r2c ? f->n : 2 * f->frame, per_out = f->c2r ? f->n : 2 * f->bins;
	uint64_t buffers = (uint64_t)batch_of(f, (size_t)avg, (size_t)fu) * (per_in + per_out) * 4;
	uint64_t tail = f->frame > f->hop ? (f->frame - f->hop) * f->in_bytes : 0;
	/* Several channels: the interleaved span read, and the writer's rows
	 * of every channel but the last until they are interleaved. */
	uint64_t stage = f->channels > 1 ? span / ss * f->in_bytes : 0;
	uint64_t held = (uint64_t)(f->outputs - 1) * out;
	return (uint64_t)f->n * 4 + span + out + buffers + tail + stage + held + (f->split ? f->bins * 8 : 0);
}

int accel_fft_check_samples(const struct accel_fft *f, int64_t bytes, char *err, size_t len)
{
	if (bytes < 0 || f->pad || (uint64_t)bytes / f->in_bytes >= f->frame)
		return 0;
	unsigned long long have = (unsigned long long)bytes / f->in_bytes;
	if (f->c2r)
		snprintf(err, len, "%llu bins, fewer than the %zu of one half spectrum of N = %zu: no row to write (--pad zero-pads them to one frame, as numpy.fft.irfft(x, n=%zu) does)",
			 have, f->frame, f->n, f->n);
	else
		snprintf(err, len, "%llu samples, fewer than one frame of N = %zu: no row to write (--pad zero-pads them to one frame, as numpy.fft.fft(x, n=%zu) does)",
			 have, f->n, f->n);
	return ACCEL_EDATA;
}

int accel_fft_setup(struct accel_fft *f, char *err, size_t len)
{
	f->win = NULL;
	if (f->n < 2) {
		snprintf(err, len, "the transform size must be at least 2");
		return ACCEL_EINVAL;
	}
	if (f->n > ((size_t)1 << 30)) {
		snprintf(err, len, "the transform size must be at most 2^30");
		return ACCEL_EINVAL;
	}
	if ((unsigned)f->type >= ACCEL_SAMPLE_COUNT) {
		snprintf(err, len, "unknown sample type");
		return ACCEL_EINVAL;
	}
	f->c2r = f->real;
	f->frame = f->c2r ? f->n / 2 + 1 : f->n;
	if (f->c2r && f->hop && f->hop != f->frame) {
		snprintf(err, len, "--hop and --overlap do not apply to an inverse real transform: each frame is N/2+1 bins");
		return ACCEL_EINVAL;
	}
	if (f->hop == 0)
		f->hop = f->frame;
	if (f->average == 0)
		f->average = 1;
	if (f->decimate == 0)
		f->decimate = 1;
	if (f->window == ACCEL_WINDOW_KAISER && !(f->kaiser_beta >= 0)) {
		snprintf(err, len, "the Kaiser window's beta must be 0 or more");
		return ACCEL_EINVAL;
	}
	if (f->average > 1 && f->out == ACCEL_FFT_COMPLEX) {
		snprintf(err, len, "averaging needs --out mag, power or db (complex spectra do not average)");
		return ACCEL_EINVAL;
	}
	if (!isfinite(f->db_offset)) {
		snprintf(err, len, "the dB offset must be a finite number");
		return ACCEL_EINVAL;
	}
	if (f->c2r) {
		const char *why = !f->inverse ? "needs --inverse (a forward transform of real samples is -t f32)" :
			!accel_sample_is_complex(f->type) ? "reads half spectra: a complex type (cf32, the forward transform's output)" :
			f->full ? "takes the N/2+1 bins of a half spectrum, not --full" :
			f->window != ACCEL_WINDOW_RECT ? "takes no window (a window applies to samples)" :
			f->out != ACCEL_FFT_COMPLEX ? "writes real samples: --out mag, power and db do not apply" :
			f->shift ? "takes no --shift (a half spectrum has no negative frequencies)" : NULL;
		if (why) {
			snprintf(err, len, "--real %s", why);
			return ACCEL_EINVAL;
		}
	}
	if (f->channels == 0)
		f->channels = 1;
	if (f->channels > ACCEL_FFT_MAX_CHANNELS) {
		snprintf(err, len, "%u channels: at most %d are read", f->channels, ACCEL_FFT_MAX_CHANNELS);
		return ACCEL_EINVAL;
	}
	if (f->pick > f->channels || (f->pick && f->mix)) {
		if (f->mix)
			snprintf(err, len, "--channel and --mix mono exclude each other");
		else
			snprintf(err, len, "--channel %u: the input has %u channel%s (0 to %u)", f->pick - 1,
				 f->channels, f->channels == 1 ? "" : "s", f->channels - 1);
		return ACCEL_EINVAL;
	}
	f->in_type = f->type;
	if (f->mix && f->channels > 1)
		f->type = accel_sample_is_complex(f->type) ? ACCEL_SAMPLE_CF32 : ACCEL_SAMPLE_F32;
	f->r2c = !accel_sample_is_complex(f->type) && !f->full && !f->inverse;
	if (f->shift && f->r2c) {
		snprintf(err, len, "--shift needs a full spectrum: complex input, --full or --inverse");
		return ACCEL_EINVAL;
	}
	f->bins = f->r2c ? f->n / 2 + 1 : f->n;
	f->sample_bytes = accel_sample_bytes(f->type);
	f->in_bytes = accel_sample_bytes(f->in_type) * f->channels;
	f->outputs = f->channels > 1 && !f->pick && !f->mix ? f->channels : 1;
	double n = (double)f->n;
	switch (f->norm) {
	case ACCEL_NORM_BACKWARD: f->scale = f->inverse ? 1 / n : 1; break;
	case ACCEL_NORM_FORWARD: f->scale = f->inverse ? 1 : 1 / n; break;
	case ACCEL_NORM_ORTHO: f->scale = 1 / sqrt(n); break;
	default: f->scale = 1; break;
	}
	size_t fr = 0;  /* frames per unit to try, 0: given */
	f->unit_auto = !f->unit_frames;
	if (!f->unit_frames) {
		size_t by_input = ((size_t)4 << 20) / (f->hop * f->in_bytes);
		size_t by_buffer = ((size_t)16 << 20) / (f->n * 8);
		fr = by_input < by_buffer ? by_input : by_buffer;
		if (fr == 0)
			fr = 1;
	} else if (f->unit_frames > f->average && f->unit_frames % f->average) {
		snprintf(err, len, "frames per unit must be a multiple of the frames averaged");
		return ACCEL_EINVAL;
	}
	/* Units chosen here shrink (by halves) until the job fits the memory
	 * limit, or hold one frame. */
	for (;;) {
		if (fr)
			f->unit_frames = fr >= f->average ? fr - fr % f->average : fr;
		f->split = f->unit_frames < f->average;
		f->memory = job_memory(f);
		if (fr <= 1 || !f->memory_limit || f->memory <= f->memory_limit)
			break;
		fr /= 2;
	}
	if (f->outputs > 1 && f->split) {
		snprintf(err, len, "--average %u spans more frames than a unit holds: with %u channels, pick one (--channel) or mix them (--mix mono)",
			 f->average, f->channels);
		return ACCEL_EINVAL;
	}
	if (f->input_bytes > 0 && accel_fft_check_samples(f, f->input_bytes, err, len) < 0)
		return ACCEL_EDATA;
	if (f->memory_limit && f->memory > f->memory_limit) {
		int gib = f->memory_limit >= ((uint64_t)1 << 30);
		double unit = gib ? 1073741824.0 : 1048576.0;
		snprintf(err, len, "N = %zu needs %.1f %s (the window, one unit's samples and rows, an engine's transform buffers), more than the limit of %.1f %s",
			 f->n, (double)f->memory / unit, gib ? "GiB" : "MiB", (double)f->memory_limit / unit, gib ? "GiB" : "MiB");
		return ACCEL_ENOMEM;
	}
	f->win = malloc(f->n * sizeof *f->win);
	if (!f->win)
		return ACCEL_ENOMEM;
	make_window(f, f->win);
	return 0;
}

void accel_fft_free(struct accel_fft *f)
{
	free(f->win);
	f->win = NULL;
}

const char *accel_fft_op_name(const struct accel_fft *f)
{
	return f->r2c ? "fft.r2c" : f->c2r ? "fft.c2r" : "fft.c2c";
}

size_t accel_fft_row_values(const struct accel_fft *f)
{
	return f->bins;
}

size_t accel_fft_unit_frames(const struct accel_fft *f, size_t len)
{
	size_t s = len / f->sample_bytes;
	return s < f->frame ? 0 : (s - f->frame) / f->hop + 1;
}

/* The first row of unit `seq`: units of every channel of one stretch of
 * input share their rows. */
static uint64_t first_row(const struct accel_fft *f, uint64_t seq)
{
	return seq / f->outputs * (f->unit_frames / f->average);
}

/* Whether row `row` of the stream is written (--decimate). */
static int row_kept(const struct accel_fft *f, uint64_t row)
{
	return row % f->decimate == 0;
}

size_t accel_fft_kept_frames(const struct accel_fft *f, uint64_t seq, size_t frames)
{
	if (f->decimate <= 1)
		return frames;  /* every row kept: no division per row */
	uint64_t row0 = first_row(f, seq);
	size_t kept = 0;
	for (size_t r = 0; r * f->average < frames; r++) {
		if (!row_kept(f, row0 + r))
			continue;
		size_t left = frames - r * f->average;
		kept += left < f->average ? left : f->average;
	}
	return kept;
}

static inline float le_f32(const uint8_t *p)
{
	float v;
	memcpy(&v, p, 4);
	return v;
}

static inline double le_f64(const uint8_t *p)
{
	double v;
	memcpy(&v, p, 8);
	return v;
}

static inline float le_i16(const uint8_t *p)
{
	return (float)(int16_t)(p[0] | p[1] << 8);
}

static inline float be_i16(const uint8_t *p)
{
	return (float)(int16_t)(p[1] | p[0] << 8);
}

/* Packed 24-bit little-endian, sign-extended. */
static inline float le_i24(const uint8_t *p)
{
	return (float)((int32_t)((uint32_t)p[0] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 24) >> 8);
}

static inline float le_i32(const uint8_t *p)
{
	return (float)(int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

static inline float be_i32(const uint8_t *p)
{
	return (float)(int32_t)((uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24);
}

static inline float be_f32(const uint8_t *p)
{
	uint8_t b[4] = { p[3], p[2], p[1], p[0] };
	return le_f32(b);
}

static inline double be_f64(const uint8_t *p)
{
	uint8_t b[8] = { p[7], p[6], p[5], p[4], p[3], p[2], p[1], p[0] };
	return le_f64(b);
}

/* Loops over the samples of one frame, one per type, the window applied:
 * complex samples into interleaved pairs, real ones into one float each
 * (r2c) or a pair with a zero imaginary part. */
#define LOAD_LOOP(BYTES, RE, IM)                                             \
	do {                                                                 \
		if (cplx_out) {                                              \
			for (size_t i = 0; i < end; i++, p += (BYTES)) {     \
				dst[2 * i] = (RE) * w[i];                    \
				dst[2 * i + 1] = (IM) * w[i];                \
			}                                                    \
		} else {                                                     \
			for (size_t i = 0; i < end; i++, p += (BYTES))       \
				dst[i] = (RE) * w[i];                        \
		}                                                            \
	} while (0)

/* One frame: samples [start, start + N) of in (those past `avail` read as
 * zero), windowed, into dst. */
static void load_frame(const struct accel_fft *f, const uint8_t *in, size_t avail, size_t start, float *dst)
{
	size_t n = f->frame, end = start + n <= avail ? n : avail > start ? avail - start : 0;
	const float *w = f->win;
	const uint8_t *p = in + start * f->sample_bytes;
	int cplx_out = !f->r2c;
	switch (f->type) {
	case ACCEL_SAMPLE_CF32: LOAD_LOOP(8, le_f32(p), le_f32(p + 4)); break;
	case ACCEL_SAMPLE_CI16: LOAD_LOOP(4, le_i16(p) * (1.0f / 32768), le_i16(p + 2) * (1.0f / 32768)); break;
	case ACCEL_SAMPLE_CI8: LOAD_LOOP(2, (float)(int8_t)p[0] * (1.0f / 128), (float)(int8_t)p[1] * (1.0f / 128)); break;
	case ACCEL_SAMPLE_CU8: LOAD_LOOP(2, ((float)p[0] - 128) * (1.0f / 128), ((float)p[1] - 128) * (1.0f / 128)); break;
	case ACCEL_SAMPLE_F32: LOAD_LOOP(4, le_f32(p), 0.0f); break;
	case ACCEL_SAMPLE_I16: LOAD_LOOP(2, le_i16(p) * (1.0f / 32768), 0.0f); break;
	case ACCEL_SAMPLE_U8: LOAD_LOOP(1, ((float)p[0] - 128) * (1.0f / 128), 0.0f); break;
	case ACCEL_SAMPLE_CF64: LOAD_LOOP(16, (float)le_f64(p), (float)le_f64(p + 8)); break;
	case ACCEL_SAMPLE_F64: LOAD_LOOP(8, (float)le_f64(p), 0.0f); break;
	case ACCEL_SAMPLE_I8: LOAD_LOOP(1, (float)(int8_t)p[0] * (1.0f / 128), 0.0f); break;
	case ACCEL_SAMPLE_CI32: LOAD_LOOP(8, le_i32(p) * 0x1p-31f, le_i32(p + 4) * 0x1p-31f); break;
	case ACCEL_SAMPLE_I32: LOAD_LOOP(4, le_i32(p) * 0x1p-31f, 0.0f); break;
	case ACCEL_SAMPLE_CI24: LOAD_LOOP(6, le_i24(p) * 0x1p-23f, le_i24(p + 3) * 0x1p-23f); break;
	case ACCEL_SAMPLE_I24: LOAD_LOOP(3, le_i24(p) * 0x1p-23f, 0.0f); break;
	case ACCEL_SAMPLE_CF32_BE: LOAD_LOOP(8, be_f32(p), be_f32(p + 4)); break;
	case ACCEL_SAMPLE_CI16_BE: LOAD_LOOP(4, be_i16(p) * (1.0f / 32768), be_i16(p + 2) * (1.0f / 32768)); break;
	case ACCEL_SAMPLE_F32_BE: LOAD_LOOP(4, be_f32(p), 0.0f); break;
	case ACCEL_SAMPLE_I16_BE: LOAD_LOOP(2, be_i16(p) * (1.0f / 32768), 0.0f); break;
	case ACCEL_SAMPLE_CF64_BE: LOAD_LOOP(16, (float)be_f64(p), (float)be_f64(p + 8)); break;
	case ACCEL_SAMPLE_F64_BE: LOAD_LOOP(8, (float)be_f64(p), 0.0f); break;
	case ACCEL_SAMPLE_CI32_BE: LOAD_LOOP(8, be_i32(p) * 0x1p-31f, be_i32(p + 4) * 0x1p-31f); break;
	case ACCEL_SAMPLE_I32_BE: LOAD_LOOP(4, be_i32(p) * 0x1p-31f, 0.0f); break;
	default: end = 0; break;
	}
	size_t per = cplx_out ? 2 : 1;
	if (end < n)
		memset(dst + end * per, 0, (n - end) * per * sizeof *dst);
}

size_t accel_fft_load(const struct accel_fft *f, uint64_t seq, const uint8_t *in, size_t len, size_t frames,
		      size_t first, size_t count, float *dst)
{
	size_t avail = len / f->sample_bytes, per = f->r2c ? f->n : 2 * f->frame, k = 0, done = 0;
	if (f->decimate == 1) {
		/* Every frame kept: kept frame k is frame k. */
		for (size_t i = first; i < frames && done < count; i++, done++)
			load_frame(f, in, avail, i * f->hop, dst + done * per);
		return done;
	}
	uint64_t row0 = first_row(f, seq);
	for (size_t r = 0; r * f->average < frames && done < count; r++) {
		if (!row_kept(f, row0 + r))
			continue;
		size_t i0 = r * f->average, i1 = i0 + f->average < frames ? i0 + f->average : frames;
		if (k + (i1 - i0) <= first) {
			/* A row wholly before the first frame asked for. */
			k += i1 - i0;
			continue;
		}
		for (size_t i = i0; i < i1 && done < count; i++, k++) {
			if (k < first)
				continue;
			load_frame(f, in, avail, i * f->hop, dst + done * per);
			done++;
		}
	}
	return done;
}

size_t accel_fft_kept_index(const struct accel_fft *f, uint64_t seq, size_t frames, uint32_t *idx)
{
	size_t k = 0;
	if (f->decimate == 1) {
		for (size_t i = 0; i < frames; i++)
			idx[k++] = (uint32_t)i;
		return k;
	}
	uint64_t row0 = first_row(f, seq);
	for (size_t r = 0; r * f->average < frames; r++) {
		if (!row_kept(f, row0 + r))
			continue;
		for (size_t i = r * f->average; i < frames && i < (r + 1) * f->average; i++)
			idx[k++] = (uint32_t)i;
	}
	return k;
}

size_t accel_fft_rows(const struct accel_fft *f, size_t kept)
{
	return (kept + f->average - 1) / f->average;
}

size_t accel_fft_batch_frames(const struct accel_fft *f)
{
	return batch_of(f, f->average, accel_fft_kept_frames(f, 0, f->unit_frames));
}

/* Append `v` values (floats) of one row to out: binary, or a CSV line. */
static int put_row(const struct accel_fft *f, const float *v, size_t count, struct accel_buf *out)
{
	if (f->format != ACCEL_FFT_TEXT) {
		size_t bytes = count * sizeof *v;
		if (out->len + bytes > out->cap && accel_buf_reserve(out, out->len + bytes) < 0)
			return ACCEL_ENOMEM;
		memcpy(out->data + out->len, v, bytes);
		out->len += bytes;
		return 0;
	}
	/* "%.9g" gives back the same float; 16 bytes the longest value, and
	 * a separator. */
	size_t need = count * 17 + 2;
	if (out->len + need > out->cap && accel_buf_reserve(out, out->len + need) < 0)
		return ACCEL_ENOMEM;
	char *p = (char *)out->data + out->len;
	for (size_t i = 0; i < count; i++) {
		int n = snprintf(p, 17, "%.9g", (double)v[i]);
		p += n;
		*p++ = i + 1 < count ? ',' : '\n';
	}
	out->len = (size_t)((uint8_t *)p - out->data);
	return 0;
}

int accel_fft_put_rows(const struct accel_fft *f, const float *rows, size_t nrows, struct accel_buf *out)
{
	size_t vals = row_floats(f);
	if (f->format != ACCEL_FFT_TEXT)
		return put_row(f, rows, vals * nrows, out);
	for (size_t r = 0; r < nrows; r++)
		if (put_row(f, rows + r * vals, vals, out) < 0)
			return ACCEL_ENOMEM;
	return 0;
}

void accel_fft_scale(float *dst, const float *src, size_t n, float s)
{
	/* Blocks of 8 through a temporary: GCC's -O2 vectorizes them (two
	 * mulps), where it leaves a plain loop over dst and src scalar (the
	 * scaling of c2r's output took a fifth of the run). */
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		float t[8];
		for (int j = 0; j < 8; j++)
			t[j] = src[i + j] * s;
		for (int j = 0; j < 8; j++)
			dst[i + j] = t[j];
	}
	for (; i < n; i++)
		dst[i] = src[i] * s;
}

int accel_fft_emit(const struct accel_fft *f, const float *spec, size_t kept, struct accel_buf *out)
{
	if (f->out == ACCEL_FFT_COMPLEX && f->format != ACCEL_FFT_TEXT && !f->shift) {
		/* Complex rows (real ones for c2r) as they are: one copy, scaled
		 * when needed. */
		size_t vals = row_floats(f) * kept;
		if (accel_buf_reserve(out, out->len + vals * sizeof(float)) < 0)
			return ACCEL_ENOMEM;
		float *o = (float *)(out->data + out->len);
		if (f->scale == 1) {
			memcpy(o, spec, vals * sizeof(float));
		} else {
			accel_fft_scale(o, spec, vals, (float)f->scale);
		}
		out->len += vals * sizeof(float);
		return 0;
	}
	size_t bins = f->bins, cplx = f->out == ACCEL_FFT_COMPLEX;
	size_t vals = row_floats(f);
	if (f->c2r) {
		/* Text rows of N real samples each. */
		float *row = malloc(vals * sizeof *row), s = (float)f->scale;
		int rc = row ? 0 : ACCEL_ENOMEM;
		for (size_t r = 0; r < kept && !rc; r++) {
			accel_fft_scale(row, spec + r * vals, vals, s);
			rc = put_row(f, row, vals, out);
		}
		free(row);
		return rc;
	}
	float *row = malloc(vals * sizeof *row);
	double *acc = cplx ? NULL : malloc(bins * sizeof *acc);
	if (!row || (!cplx && !acc)) {
		free(row);
		free(acc);
		return ACCEL_ENOMEM;
	}
	double s = f->scale, s2 = s * s;
	/* --shift: value j of the row is bin (j + N - N/2) mod N. */
	size_t rot = f->shift ? bins - bins / 2 : 0;
	int rc = 0;
	for (size_t r0 = 0; r0 < kept && !rc; r0 += f->average) {
		size_t k = kept - r0 < f->average ? kept - r0 : f->average;
		const float *fr = spec + 2 * bins * r0;
		if (cplx) {
			for (size_t j = 0; j < bins; j++) {
				size_t b = j + rot < bins ? j + rot : j + rot - bins;
				row[2 * j] = (float)(fr[2 * b] * s);
				row[2 * j + 1] = (float)(fr[2 * b + 1] * s);
			}
		} else {
			for (size_t b = 0; b < bins; b++)
				acc[b] = 0;
			for (size_t m = 0; m < k; m++, fr += 2 * bins) {
				for (size_t b = 0; b < bins; b++) {
					double re = fr[2 * b], im = fr[2 * b + 1], p = re * re + im * im;
					acc[b] += f->out == ACCEL_FFT_MAG ? sqrt(p) : p;
				}
			}
			for (size_t j = 0; j < bins; j++) {
				size_t b = j + rot < bins ? j + rot : j + rot - bins;
				double v = acc[b] / (double)k;
				if (f->out == ACCEL_FFT_MAG)
					v *= s;
				else if (f->out == ACCEL_FFT_POWER)
					v *= s2;
				else
					v = 10 * log10(v * s2) + f->db_offset;
				row[j] = (float)v;
			}
		}
		rc = put_row(f, row, vals, out);
	}
	free(row);
	free(acc);
	return rc;
}

/* Frames in a stream's final stretch of `s` samples: whole frames, and with
 * --pad also the partial frames holding samples no earlier frame held
 * (`first`: no frame came before). */
static uint64_t final_frames(const struct accel_fft *f, uint64_t s, int first)
{
	if (!f->pad)
		return s < f->frame ? 0 : (s - f->frame) / f->hop + 1;
	/* No sample at all: one frame of zeros, as numpy.fft.fft(x, n) pads an
	 * empty x. */
	if (s == 0)
		return first ? 1 : 0;
	/* Frame i (i >= 1, or i >= 0 after an earlier frame) first holds
	 * sample i * hop + max(0, N - hop). */
	uint64_t d = f->frame > f->hop ? f->frame - f->hop : 0;
	uint64_t c = s > d ? (s - d + f->hop - 1) / f->hop : 0;
	return first && c < 1 ? 1 : c;
}

/* Rows written for `frames` frames from the stream's start. */
static uint64_t rows_of(const struct accel_fft *f, uint64_t frames)
{
	uint64_t rows = (frames + f->average - 1) / f->average;
	return (rows + f->decimate - 1) / f->decimate;
}

int64_t accel_fft_stream_frames(const struct accel_fft *f, int64_t bytes)
{
	if (bytes < 0)
		return -1;
	uint64_t s = (uint64_t)bytes / f->in_bytes;
	if (f->pad && (uint64_t)bytes % f->in_bytes)
		s++;
	return (int64_t)final_frames(f, s, 1);
}

int64_t accel_fft_stream_rows(const struct accel_fft *f, int64_t bytes)
{
	if (bytes < 0)
		return -1;
	uint64_t s = (uint64_t)bytes / f->in_bytes;
	if (f->pad && (uint64_t)bytes % f->in_bytes)
		s++;
	return (int64_t)rows_of(f, final_frames(f, s, 1));
}

/* ------------------------------------------------------------ the stream */

/* Input bytes of a unit run by CPU engines only: its samples and rows stay
 * in a core's L2 cache (512 KiB and more on current x86 and Arm cores)
 * while they are transformed and written, and the few units in flight are
 * used again, their buffers faulted in once. A unit of 4 MiB, which
 * device engines want, makes the CPU fault in and clear fresh output pages
 * for every unit and stream its rows through memory. */
#define CPU_UNIT_BYTES ((size_t)256 << 10)

/* Whether every engine serving the stream from its start (the route's
 * first, all of a shared route, or its first nserving) is on the CPU
 * device. */
static int cpu_route(const struct accel_ctx *ctx, const struct accel_route *r)
{
	int nserve = r->nserving > 0 ? r->nserving : r->shared ? r->nranked : 1;
	for (int i = 0; i < nserve && i < r->nranked; i++) {
		const struct accel_engine *e = r->entries[i].engine;
		const struct accel_device *d = e ? accel_device_at(ctx, e->device) : NULL;
		if (!d || d->cls != ACCEL_CLASS_CPU)
			return 0;
	}
	return r->nranked > 0;
}

/* Units of f for CPU engines: about CPU_UNIT_BYTES of input, when that
 * changes no output byte. An engine runs a unit's frames in batches of
 * accel_fft_batch_frames from the unit's start and the rest of a batch by
 * a one-frame plan, whose last bits may differ; so every batch must fall
 * where it fell in the unit setup chose. When that unit is a whole number
 * of batches, the smaller unit is a whole number of batches dividing it
 * (the last short unit's batches fall where they fell too). Else (c2r's
 * N/2+1 bins: 1022 frames of 4 MiB, batches of 32) the units setup chose
 * are cut into stretches of whole batches, about CPU_UNIT_BYTES each, and
 * a last one holding the rest: *sub, the frames of a stretch, is set and
 * f->unit_frames stays (the batches' size comes from it). Only where
 * setup chose the unit (f->unit_auto), every frame is kept (no
 * --decimate, whose rows are counted per unit) and rows are not split
 * across units. */
static void cpu_units(struct accel_fft *f, size_t *sub)
{
	if (!f->unit_auto || f->split || f->decimate != 1)
		return;
	size_t b = accel_fft_batch_frames(f), want = CPU_UNIT_BYTES / (f->hop * f->in_bytes);
	if (!b || b >= f->unit_frames)
		return;
	if (f->unit_frames % b) {
		size_t m = (want + b - 1) / b;
		if (b * (m ? m : 1) < f->unit_frames)
			*sub = b * (m ? m : 1);
		return;
	}
	size_t m = want / b > 1 ? want / b : 1;
	while (m > 1 && (f->unit_frames / b) % m)
		m--;
	if (b * m < f->unit_frames) {
		f->unit_frames = b * m;
		f->memory = job_memory(f);
	}
}

struct fft_run {
	struct accel_fft *f;
	int64_t left;            /* sample bytes left to read (WAV data), -1: to the end */
	uint64_t start;          /* the input's offset at the first sample */
	int started;             /* a unit was made */
	uint64_t rows;           /* rows the units made so far hold */
	uint64_t out_at;         /* the last unit's rows' byte offset in the job's output (fft_out_at) */
	int64_t header_rows;     /* rows the .npy header says, -1: none written */
	size_t header_len;
	const char *name;
	struct accel_buf tail;   /* bytes read that start the next unit (its overlap) */
	size_t map_over;         /* mapped input: bytes at its position the last unit held */
	/* f->split: the reader's place in the rows, and the writer's sum of
	 * the row being written. */
	uint64_t row;            /* the row the next frame is in */
	size_t row_frames;       /* frames of that row read so far */
	double *acc;             /* f->bins sums of unit means times their frames */
	size_t acc_frames;       /* frames summed in acc */
	struct accel_buf text;   /* a finished row in f's format */
	uint64_t done;           /* frames of the whole stretches read */
	size_t sub;              /* frames of a stretch cut from a unit (cpu_units), 0: none */
	size_t sub_at;           /* frames read of the unit being cut */
	/* f->channels > 1: the interleaved stretch being handed out, one
	 * unit per output (r->chan the next), and what its first unit got. */
	struct accel_buf stage;
	unsigned chan;
	int stage_last;
	size_t stage_overlap, stage_hint;
	uint64_t stage_offset;
	/* f->outputs > 1: the rows of a stretch's units until the last
	 * channel's, interleaved by the writer. */
	struct accel_buf *held;
};

/* The sample value zero in a type's encoding, for padding: 0x80 for the
 * offset-binary u8 and cu8, else zero bytes. */
static uint8_t zero_byte(const struct accel_fft *f)
{
	return f->in_type == ACCEL_SAMPLE_U8 || f->in_type == ACCEL_SAMPLE_CU8 ? 0x80 : 0;
}

/* Read up to n bytes of samples into dst, within the WAV data's size.
 * Returns the count (short only at the end), or ACCEL_EIO. */
static ssize_t read_samples(struct fft_run *r, struct accel_input *in, uint8_t *dst, size_t n)
{
	if (r->left >= 0 && (uint64_t)r->left < n)
		n = (size_t)r->left;
	ssize_t got = n ? accel_input_read(in, dst, n) : 0;
	if (got > 0 && r->left >= 0)
		r->left -= got;
	return got;
}

/* Pass over n bytes (samples between frames with --allow-gaps, the frames
 * of rows --decimate drops): those kept in r->tail first. 0 or ACCEL_EIO. */
static int skip_samples(struct fft_run *r, struct accel_input *in, uint64_t n)
{
	/* Mapped, the last unit's overlap is still in the input. */
	r->map_over = n < r->map_over ? r->map_over - (size_t)n : 0;
	size_t t = n < r->tail.len ? (size_t)n : r->tail.len;
	memmove(r->tail.data, r->tail.data + t, r->tail.len - t);
	r->tail.len -= t;
	n -= t;
	while (n) {
		const uint8_t *p;
		size_t ask = n < ((uint64_t)1 << 20) ? (size_t)n : (size_t)1 << 20;
		if (r->left >= 0 && (uint64_t)r->left < ask)
			ask = (size_t)r->left;
		ssize_t got = ask ? accel_input_peek(in, ask, &p) : 0;
		if (got <= 0)
			return (int)got;
		accel_input_consume(in, (size_t)got);
		if (r->left >= 0)
			r->left -= got;
		n -= (uint64_t)got;
	}
	return 0;
}

static int frames_read(struct fft_run *r, struct accel_input *in, struct accel_unit *u, size_t fu, size_t frames,
		       char *err, size_t len);

/* The input bytes of the next stretch of frames into dst (the unit's own
 * input, or r->stage when channels are interleaved): the bytes its frames
 * span, after the part the previous stretch read already (r->tail); from
 * a mapped input, taken where they lie (the unit's own input claims them
 * for the stream to pread, u->in_at; r->stage borrows them; the overlap
 * with the next stretch left unconsumed), but for a last stretch short of
 * a unit (read into dst to be padded). Split,
 * a stretch holds frames of one row only, and the frames of rows not
 * written are skipped after it. Sets u's offset, overlap, hint and last
 * flag for dst. 1, 0 at the end, or an error with a line in err. */
static int read_frames(struct fft_run *r, struct accel_input *in, struct accel_unit *u, struct accel_buf *dst,
		       char *err, size_t len)
{
	const struct accel_fft *f = r->f;
	size_t ss = f->in_bytes, fu = f->unit_frames;
	if (f->split && f->average - r->row_frames < fu)
		fu = f->average - r->row_frames;
	if (r->sub && f->unit_frames - r->sub_at > r->sub)
		fu = r->sub;
	else if (r->sub)
		fu = f->unit_frames - r->sub_at;
	size_t span = ((fu - 1) * f->hop + f->frame) * ss, adv = fu * f->hop * ss, have = r->tail.len;
	size_t frames = fu, over = r->map_over;
	r->map_over = 0;
	if (in->map_len) {
		/* A mapped input: a whole stretch is taken where it lies, its
		 * overlap with the next left unconsumed. */
		const uint8_t *p;
		size_t ask = r->left >= 0 && (uint64_t)r->left < span ? (size_t)r->left : span;
		ssize_t got = accel_input_peek(in, ask, &p);
		if (got < 0) {
			snprintf(err, len, "cannot read: %s", strerror(errno));
			return (int)got;
		}
		if ((size_t)got == span) {
			if (dst == &u->in) {
				/* Its bytes left in the file, read into the
				 * unit's own buffer by the thread that runs it
				 * (u->in_at): every engine copies its input
				 * (into a batch, onto a device), and pread's
				 * copy from the page cache costs less than
				 * faulting the mapping in and copying from it
				 * (a fault and its page-table lock per 16
				 * pages, the pages let go again after). */
				if (!dst->cap)
					dst->data = NULL;
				u->in_at = (int64_t)(p - in->buf);
			} else {
				/* The stage of several channels: borrowed,
				 * each unit copies its channel out. */
				if (dst->cap)
					accel_buf_free(dst);
				dst->data = (uint8_t *)p;
			}
			dst->len = span;
			u->offset = in->offset;
			size_t step = adv < span ? adv : span;
			accel_input_consume(in, step);
			if (r->left >= 0)
				r->left -= (int64_t)step;
			r->map_over = span - step;
			if (adv > span && skip_samples(r, in, adv - span) < 0) {
				snprintf(err, len, "cannot read: %s", strerror(errno));
				return ACCEL_EIO;
			}
			u->in_overlap = over < span ? over : span;
			r->started = 1;
			return frames_read(r, in, u, fu, frames, err, len);
		}
		/* The end: read as from a file, into a buffer of the unit's
		 * own, padded there. */
		dst->len = 0;
	}
	if (accel_buf_reserve(dst, span) < 0)
		return ACCEL_ENOMEM;
	u->offset = in->offset - have;
	if (have)
		memcpy(dst->data, r->tail.data, have);
	ssize_t got = read_samples(r, in, dst->data + have, span - have);
	if (got < 0) {
		snprintf(err, len, "cannot read: %s", strerror(errno));
		return (int)got;
	}
	size_t total = have + (size_t)got;
	r->tail.len = 0;
	if (total == span) {
		dst->len = span;
		if (span > adv) {
			if (accel_buf_reserve(&r->tail, span - adv) < 0)
				return ACCEL_ENOMEM;
			memcpy(r->tail.data, dst->data + adv, span - adv);
			r->tail.len = span - adv;
		} else if (skip_samples(r, in, adv - span) < 0) {
			snprintf(err, len, "cannot read: %s", strerror(errno));
			return ACCEL_EIO;
		}
	} else {
		/* The end of the input: fewer frames than a unit holds (see
		 * final_frames: never more), padded with --pad. A partial
		 * sample is counted from the first sample: skipped bytes too. */
		size_t part = (size_t)((in->offset - r->start) % ss);
		if (part && !f->pad) {
			char what[48];
			if (f->channels > 1)
				snprintf(what, sizeof what, "%u-channel %s", f->channels, accel_sample_name(f->in_type));
			else
				snprintf(what, sizeof what, "%s", accel_sample_name(f->in_type));
			snprintf(err, len, "partial sample at the end of input: %zu of the %zu bytes of a %s sample at byte offset %llu (--pad completes it with zeros)",
				 part, ss, what, (unsigned long long)(in->offset - part));
			return ACCEL_EDATA;
		}
		frames = (size_t)final_frames(f, total / ss + (total % ss != 0), !r->started);
		if (frames == 0)
			return 0;
		size_t copy = ((frames - 1) * f->hop + f->frame) * ss;
		if (total < copy)
			memset(dst->data + total, zero_byte(f), copy - total);
		dst->len = copy;
		u->last = 1;
	}
	have += over;
	u->in_overlap = have < dst->len ? have : dst->len;
	r->started = 1;
	return frames_read(r, in, u, fu, frames, err, len);
}

/* The bookkeeping of a stretch of `frames` frames read into u (of `fu`
 * asked for): the rows counted, the frames of rows not written skipped
 * when split, u's output hint. 1, or ACCEL_EIO with a line in err. */
static int frames_read(struct fft_run *r, struct accel_input *in, struct accel_unit *u, size_t fu, size_t frames,
		       char *err, size_t len)
{
	const struct accel_fft *f = r->f;
	size_t ss = f->in_bytes, vals = row_floats(f);
	if (f->split) {
		/* One row of floats out (the inner job's); a row is counted
		 * when its first frames are read. */
		if (r->row_frames == 0)
			r->rows++;
		r->row_frames += frames;
		u->out_hint = vals * 4;
		if (r->row_frames == f->average && !u->last) {
			/* The next row written, and the bytes of the rows
			 * before it (all that is left when that overflows). */
			uint64_t next = (r->row + f->decimate) / f->decimate * f->decimate, gap;
			if (__builtin_mul_overflow((next - r->row - 1) * f->average, (uint64_t)f->hop * ss, &gap))
				gap = UINT64_MAX;
			r->row_frames = 0;
			r->row = next;
			if (gap && skip_samples(r, in, gap) < 0) {
				snprintf(err, len, "cannot read: %s", strerror(errno));
				return ACCEL_EIO;
			}
		}
		return 1;
	}
	/* Rows of whole units are counted from the stream's start, so the
	 * decimation of the last unit counts right. */
	r->out_at = rows_of(f, r->done) * vals * 4;
	r->rows = rows_of(f, r->done + frames);
	r->done += fu;
	if (r->sub)
		r->sub_at = (r->sub_at + fu) % f->unit_frames;
	u->out_hint = (size_t)(rows_of(f, frames) + 1) * vals * (f->format == ACCEL_FFT_TEXT ? 17 : 4);
	return 1;
}

/* One sample at p of type t as floats: v[0], and v[1] for a complex type. */
static void sample_value(enum accel_sample t, const uint8_t *p, float *v)
{
	float w[2] = { 1, 1 };
	struct accel_fft one = { .type = t, .frame = 1, .win = w, .r2c = !accel_sample_is_complex(t) };
	load_frame(&one, p, 1, 0, v);
}

/* Channel c (counted from 0) of `count` instants of interleaved samples at
 * src into dst as f->type: a copy of its samples, or with f->mix the mean
 * of every channel. */
static void take_channel(const struct accel_fft *f, const uint8_t *src, size_t count, unsigned c, uint8_t *dst)
{
	size_t sb = accel_sample_bytes(f->in_type), cplx = accel_sample_is_complex(f->in_type);
	if (!f->mix) {
		for (size_t i = 0; i < count; i++)
			memcpy(dst + i * sb, src + i * f->in_bytes + c * sb, sb);
		return;
	}
	float *out = (float *)dst;
	for (size_t i = 0; i < count; i++) {
		double re = 0, im = 0;
		for (unsigned k = 0; k < f->channels; k++) {
			float v[2] = { 0, 0 };
			sample_value(f->in_type, src + i * f->in_bytes + k * sb, v);
			re += v[0];
			im += v[1];
		}
		out[i * (cplx + 1)] = (float)(re / f->channels);
		if (cplx)
			out[i * 2 + 1] = (float)(im / f->channels);
	}
}

/* The next unit. One channel: a stretch of frames read into it. Several:
 * a stretch read into r->stage, then units of its channels. */
static int next_frames(void *user, struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	struct fft_run *r = user;
	const struct accel_fft *f = r->f;
	if (f->channels == 1)
		return read_frames(r, in, u, &u->in, err, len);
	if (r->chan == 0) {
		int rc = read_frames(r, in, u, &r->stage, err, len);
		if (rc <= 0)
			return rc;
		r->stage_last = u->last;
		r->stage_overlap = u->in_overlap;
		r->stage_hint = u->out_hint;
		r->stage_offset = u->offset;
	}
	size_t count = r->stage.len / f->in_bytes, bytes = count * f->sample_bytes;
	if (accel_buf_reserve(&u->in, bytes) < 0)
		return ACCEL_ENOMEM;
	take_channel(f, r->stage.data, count, f->pick ? f->pick - 1 : r->chan, u->in.data);
	u->in.len = bytes;
	/* Progress counts input bytes (the stretch's end); statistics count
	 * the unit's own new samples. */
	u->offset = r->stage_offset + r->stage.len - bytes;
	u->in_overlap = r->stage_overlap / f->in_bytes * f->sample_bytes;
	u->out_hint = r->stage_hint;
	r->chan = (r->chan + 1) % f->outputs;
	u->last = r->stage_last && r->chan == 0;
	return 1;
}

/* The writer's side of a run of several outputs (accel_stream_config.write):
 * the rows of a stretch's units held until its last channel's, then row t
 * of every channel in turn (binary), or on one CSV line. */
static int chan_write(void *user, struct accel_output *out, const struct accel_unit *u, char *err,
			  size_t len)
{
	(void)err;
	(void)len;
	struct fft_run *r = user;
	const struct accel_fft *f = r->f;
	unsigned c = (unsigned)(u->seq % f->outputs), last = f->outputs - 1;
	if (c < last) {
		r->held[c].len = 0;
		if (accel_buf_reserve(&r->held[c], u->out.len) < 0)
			return ACCEL_ENOMEM;
		memcpy(r->held[c].data, u->out.data, u->out.len);
		r->held[c].len = u->out.len;
		return 0;
	}
	size_t total = u->out.len;
	for (unsigned k = 0; k < last; k++)
		total += r->held[k].len;
	r->text.len = 0;
	if (accel_buf_reserve(&r->text, total) < 0)
		return ACCEL_ENOMEM;
	uint8_t *o = r->text.data;
	size_t pos[ACCEL_FFT_MAX_CHANNELS] = { 0 };
	for (;;) {
		size_t done = 0;
		for (unsigned k = 0; k <= last; k++) {
			const struct accel_buf *b = k < last ? &r->held[k] : &u->out;
			size_t n = row_floats(f) * sizeof(float);
			if (f->format == ACCEL_FFT_TEXT) {
				const uint8_t *nl = pos[k] < b->len ? memchr(b->data + pos[k], '\n', b->len - pos[k]) : NULL;
				n = nl ? (size_t)(nl - (b->data + pos[k])) + 1 : 0;
			}
			if (pos[k] + n > b->len || !n)
				break;
			memcpy(o, b->data + pos[k], n);
			o += n;
			pos[k] += n;
			if (f->format == ACCEL_FFT_TEXT && k < last)
				o[-1] = ',';
			done++;
		}
		if (done <= last)
			break;
	}
	return accel_output_write(out, r->text.data, (size_t)(o - r->text.data));
}

/* Write the split row summed in r->acc: its mean, in dB when asked, in
 * f's format. 0 or an error of the output. */
static int split_flush(struct fft_run *r, struct accel_output *out)
{
	const struct accel_fft *f = r->f;
	if (!r->acc_frames)
		return 0;
	r->text.len = 0;
	float *row = malloc(f->bins * sizeof *row);
	if (!row)
		return ACCEL_ENOMEM;
	for (size_t b = 0; b < f->bins; b++) {
		double v = r->acc[b] / (double)r->acc_frames;
		row[b] = (float)(f->out == ACCEL_FFT_DB ? 10 * log10(v) + f->db_offset : v);
		r->acc[b] = 0;
	}
	r->acc_frames = 0;
	int rc = put_row(f, row, f->bins, &r->text);
	free(row);
	return rc < 0 ? rc : accel_output_write(out, r->text.data, r->text.len);
}

/* The writer's side of a split run (accel_stream_config.write): a unit's
 * row is the mean of its frames (scaled; power for dB): summed, weighted
 * by its frames, until the row's f->average frames are in. */
static int split_write(void *user, struct accel_output *out, const struct accel_unit *u, char *err,
			  size_t len)
{
	(void)err;
	(void)len;
	struct fft_run *r = user;
	const struct accel_fft *f = r->f;
	size_t frames = accel_fft_unit_frames(f, u->in.len);
	if (u->out.len != f->bins * sizeof(float))
		return ACCEL_EINVAL;
	const float *v = (const float *)u->out.data;
	for (size_t b = 0; b < f->bins; b++)
		r->acc[b] += (double)v[b] * (double)frames;
	r->acc_frames += frames;
	return r->acc_frames >= f->average ? split_flush(r, out) : 0;
}

/* accel_stream_ops.out_at: where unit u's rows go in the job's output.
 * Set only where they follow from its frames (fft_places): binary rows of
 * one output, every row kept, none split across units (a unit's frames
 * are whole rows but for the stream's last: unit_frames and cpu_units'
 * stretches are multiples of the average), so the rows before u are those
 * of the frames before it. */
static int64_t fft_out_at(void *user, const struct accel_unit *u)
{
	(void)u;
	const struct fft_run *r = user;
	return (int64_t)r->out_at;
}

/* Whether f's units have places in the output (fft_out_at). */
static int fft_places(const struct accel_fft *f)
{
	return f->channels == 1 && f->outputs == 1 && !f->split && f->decimate == 1 && f->format != ACCEL_FFT_TEXT &&
	       f->unit_frames % f->average == 0;
}

/* The .npy header (NumPy format version 1.0: magic, version, header
 * length, a Python dict literal padded with spaces to a multiple of 64
 * bytes and ended by '\n'). The shape's row count is written in a field
 * of fixed width, so the header can be rewritten in place. */
static size_t npy_header(const struct accel_fft *f, uint64_t rows, char *buf, size_t len)
{
	char dict[160], outputs[16] = "";
	if (f->outputs > 1)
		snprintf(outputs, sizeof outputs, "%u, ", f->outputs);
	int n = snprintf(dict, sizeof dict, "{'descr': '<%s', 'fortran_order': False, 'shape': (%20llu, %s%zu), }",
			 complex_rows(f) ? "c8" : "f4", (unsigned long long)rows, outputs, f->bins);
	size_t total = 10 + (size_t)n + 1;
	total = (total + 63) / 64 * 64;
	if (total > len)
		return 0;
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	size_t hl = total - 10;
	buf[8] = (char)(hl & 0xff);
	buf[9] = (char)(hl >> 8);
	memcpy(buf + 10, dict, (size_t)n);
	memset(buf + 10 + n, ' ', total - 10 - (size_t)n - 1);
	buf[total - 1] = '\n';
	return total;
}

static int npy_begin(void *user, struct accel_output *out)
{
	struct fft_run *r = user;
	char h[256];
	size_t n = npy_header(r->f, r->header_rows < 0 ? 0 : (uint64_t)r->header_rows, h, sizeof h);
	r->header_len = n;
	return accel_output_write(out, h, n);
}

static int npy_end(void *user, struct accel_output *out)
{
	struct fft_run *r = user;
	if (r->header_rows >= 0 && (uint64_t)r->header_rows == r->rows)
		return 0;
	/* The input's size was unknown, or lied (a WAV data size): rewrite
	 * the header with the rows written. */
	char h[256];
	size_t n = npy_header(r->f, r->rows, h, sizeof h);
	int64_t end = accel_output_seek(out, 0, SEEK_CUR);
	if (end < 0 || accel_output_seek(out, 0, SEEK_SET) < 0)
		return ACCEL_EINVAL;
	int rc = accel_output_write(out, h, n);
	if (!rc && accel_output_seek(out, end, SEEK_SET) < 0)
		rc = ACCEL_EIO;
	return rc;
}

/* The end of a split run: the last row, however few its frames, then the
 * .npy header's row count. */
static int split_end(void *user, struct accel_output *out)
{
	struct fft_run *r = user;
	int rc = split_flush(r, out);
	return rc < 0 || r->f->format != ACCEL_FFT_NPY ? rc : npy_end(user, out);
}

int accel_fft_run(struct accel_ctx *ctx, const struct accel_fft_cfg *cfg, struct accel_fft *f,
		  struct accel_input *in, struct accel_output *out, struct accel_stream_stats *stats,
		  char *err, size_t len)
{
	err[0] = 0;
	if (stats)
		memset(stats, 0, sizeof *stats);
	struct accel_op op = { .name = accel_fft_op_name(f), .ext = f };
	/* Bytes of samples: the input's size less what was read of it (a WAV
	 * header), bounded by the header's data size, which may lie. */
	int64_t avail = in->size >= 0 ? in->size - (int64_t)in->offset : -1;
	int64_t size = cfg->data_size >= 0 ? cfg->data_size : avail;
	if (cfg->data_size >= 0 && avail >= 0 && avail < size)
		size = avail;
	struct fft_run r = { .f = f, .left = cfg->data_size, .start = in->offset, .name = in->name };
	r.header_rows = accel_fft_stream_rows(f, size);
	if (f->format == ACCEL_FFT_NPY && r.header_rows < 0 && accel_output_seek(out, 0, SEEK_CUR) < 0) {
		snprintf(err, len, "--npy needs an input of known size or an output file (the row count goes in the header)");
		return ACCEL_EINVAL;
	}
	/* Split, engines run a job whose rows are the means of a unit's
	 * frames: every frame kept, binary, power for dB. */
	struct accel_fft inner = *f;
	if (f->split) {
		inner.average = (unsigned)f->unit_frames;
		inner.decimate = 1;
		inner.split = 0;
		inner.format = ACCEL_FFT_BINARY;
		if (f->out == ACCEL_FFT_DB)
			inner.out = ACCEL_FFT_POWER;
		op.ext = &inner;
		r.acc = calloc(f->bins, sizeof *r.acc);
		if (!r.acc)
			return ACCEL_ENOMEM;
	}
	struct accel_route route;
	struct accel_route_req req = { &op, cfg->backend, size, NULL };
	int rc = accel_route_job(ctx, &req, cfg->verbose, cfg->report, &route, err, len);
	if (rc < 0) {
		free(r.acc);
		return rc;
	}
	if (cpu_route(ctx, &route))
		cpu_units(f, &r.sub);
	struct accel_stream_ops ops = { next_frames, NULL, NULL, NULL };
	if (fft_places(f))
		ops.out_at = fft_out_at;
	if (f->format == ACCEL_FFT_NPY) {
		ops.begin = npy_begin;
		ops.end = npy_end;
	}
	struct accel_stream_config sc = cfg->stream;
	if (sc.total_size < 0 || cfg->data_size >= 0)
		sc.total_size = size;
	if (f->split) {
		sc.write = split_write;
		ops.end = split_end;
	}
	if (f->outputs > 1) {
		r.held = calloc(f->outputs - 1, sizeof *r.held);
		if (!r.held) {
			free(r.acc);
			return ACCEL_ENOMEM;
		}
		sc.write = chan_write;
	}
	/* A regular file (of 128 KiB or more) is mapped: cutting it into units
	 * is a few sums, so the workers take them themselves, with no reader
	 * handing them over (one channel), and each preads its unit's stretch
	 * from the page cache into the unit (read_frames: u->in_at). Several
	 * channels borrow a stretch of the mapping and deinterleave it. */
	core_input_map_large(in);
	if (f->channels == 1)
		sc.worker_reads = 1;
	/* One unit: started on a worker thread, it would leave the calling
	 * thread waiting for it. */
	if (cfg->inline_one_unit && size >= 0 && f->outputs == 1 &&
	    accel_fft_stream_frames(f, size) <= (int64_t)(r.sub ? r.sub : f->unit_frames)) {
		sc.threads = 1;
		sc.inline_units = 1;
	}
	rc = accel_stream_run(ctx, &sc, &route, &op, &ops, &r, in, out, stats, err, len);
	accel_buf_free(&r.tail);
	accel_buf_free(&r.text);
	accel_buf_free(&r.stage);
	for (unsigned k = 0; r.held && k + 1 < f->outputs; k++)
		accel_buf_free(&r.held[k]);
	free(r.held);
	free(r.acc);
	if (rc == ACCEL_EINVAL && !err[0])
		snprintf(err, len, "cannot rewrite the .npy header: the output is not seekable");
	return rc;
}
