/*
 * accel/ops/fft.h - FFT frames: sample types, windows, plans, WAV input (accel-fft).
 * Part of libaccel's public API; <accel.h> includes every such header.
 */
#ifndef ACCEL_OPS_FFT_H
#define ACCEL_OPS_FFT_H

#include <accel/stream.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/*
 * The FFT operation family (fft.c): sample streams cut into frames of N
 * samples every `hop` samples (frames overlap when hop < N), batched into
 * units of whole frames, transformed by an engine (the fftw plugin), then
 * scaled, turned into magnitude, power or dB, averaged and written by the
 * helpers below, so every engine gives the same bytes for the same
 * spectra. The functions of this section use only their arguments: safe
 * from any thread; a struct accel_fft is read-only once set up.
 *
 * Audio holds several channels interleaved (f->channels). Each channel is
 * a real (or complex) signal of its own: the reader gives engines units of
 * one channel each, taken out of the interleaved input (f->pick), their
 * mean (f->mix), or, for every channel, f->outputs units in a row per
 * stretch of input (unit seq = stretch * outputs + channel), whose rows the
 * writer interleaves: row t holds the spectra of every channel at frame t.
 */

/* Sample types, by SigMF names (SigMF Specification 1.x, core:datatype),
 * little-endian unless named _be. Integers are scaled to [-1, 1): i8 and
 * i16, i24, i32 by 2^7, 2^15, 2^23, 2^31; (u8 - 128) / 128. Complex types
 * hold I then Q. i24 and ci24 (packed 3-byte little-endian integers, as
 * 24-bit WAV and sox's -t s24 hold them) are not SigMF names. */
enum accel_sample {
	ACCEL_SAMPLE_CF32, ACCEL_SAMPLE_CI16, ACCEL_SAMPLE_CI8, ACCEL_SAMPLE_CU8,
	ACCEL_SAMPLE_F32, ACCEL_SAMPLE_I16, ACCEL_SAMPLE_U8, ACCEL_SAMPLE_CF64,
	ACCEL_SAMPLE_F64, ACCEL_SAMPLE_I8, ACCEL_SAMPLE_CI32, ACCEL_SAMPLE_I32,
	ACCEL_SAMPLE_CI24, ACCEL_SAMPLE_I24,
	ACCEL_SAMPLE_CF32_BE, ACCEL_SAMPLE_CI16_BE, ACCEL_SAMPLE_F32_BE, ACCEL_SAMPLE_I16_BE,
	ACCEL_SAMPLE_CF64_BE, ACCEL_SAMPLE_F64_BE, ACCEL_SAMPLE_CI32_BE, ACCEL_SAMPLE_I32_BE,
	ACCEL_SAMPLE_COUNT
};
/* Type by name: "cf32", "ci16_be"; an explicit "_le" names the plain
 * type, and real types may carry SigMF's "r" ("rf32_le" is f32). Returns
 * its value (0 or more), ACCEL_EINVAL for an unknown name, or
 * ACCEL_ENOTSUP for an 8-bit type with a byte order ("cu8_le": SigMF names
 * 8-bit types without _le or _be). */
int accel_sample_parse(const char *name);
/* "cf32", "ci16_be" ... for a type; "?" for a value out of range. */
const char *accel_sample_name(enum accel_sample t);
/* Bytes of one sample (a complex sample: both parts); 0 out of range. */
size_t accel_sample_bytes(enum accel_sample t);
/* 1 for a complex type, 0 for a real one. */
int accel_sample_is_complex(enum accel_sample t);
/* The names, separated by `sep`, into buf[len]: for messages. */
void accel_sample_names(const char *sep, char *buf, size_t len);

enum accel_fft_window {
	ACCEL_WINDOW_RECT, ACCEL_WINDOW_HANN, ACCEL_WINDOW_HAMMING, ACCEL_WINDOW_BLACKMAN,
	ACCEL_WINDOW_BLACKMAN_HARRIS, ACCEL_WINDOW_FLATTOP, ACCEL_WINDOW_KAISER,
};
enum accel_fft_out { ACCEL_FFT_COMPLEX, ACCEL_FFT_MAG, ACCEL_FFT_POWER, ACCEL_FFT_DB };
/* Normalisation, as numpy.fft's `norm`: BACKWARD (the default) scales the
 * inverse by 1/N, FORWARD the forward by 1/N, ORTHO both by 1/sqrt(N),
 * NONE neither (FFTW's own). */
enum accel_fft_norm { ACCEL_NORM_BACKWARD, ACCEL_NORM_FORWARD, ACCEL_NORM_ORTHO, ACCEL_NORM_NONE };
enum accel_fft_format { ACCEL_FFT_BINARY, ACCEL_FFT_TEXT, ACCEL_FFT_NPY };
/* Planning rigor for engines that plan (FFTW's flags of the same names). */
enum accel_fft_plan { ACCEL_PLAN_MEASURE, ACCEL_PLAN_ESTIMATE, ACCEL_PLAN_PATIENT };

/* Channels of an input read at most. */
#define ACCEL_FFT_MAX_CHANNELS 1024
/* A transform job: the caller fills the first block, accel_fft_setup the
 * rest. Handed to engines as accel_op.ext. */
struct accel_fft {
	size_t n;                     /* samples per frame, >= 2 */
	size_t hop;                   /* samples between frame starts, 0: n */
	enum accel_sample type;
	int inverse;                  /* 1: backward transform, exp(+2 pi i jk/N) */
	int full;                     /* 1: all N bins of real input (else N/2+1) */
	enum accel_fft_window window;
	double kaiser_beta;
	enum accel_fft_out out;
	double db_offset;             /* added to every dB value */
	int shift;                    /* 1: DC in the centre (numpy.fft.fftshift) */
	enum accel_fft_norm norm;
	unsigned average;             /* spectra averaged per row (Welch), 0: 1 */
	unsigned decimate;            /* one row written in D, 0: 1 */
	enum accel_fft_format format;
	enum accel_fft_plan plan;
	int pad;                      /* 1: zero-pad a partial sample and frames at the end */
	size_t unit_frames;           /* frames per unit, 0: about 4 MiB of input */
	int real;                     /* with inverse: half spectra to N real samples (fft.c2r) */
	int64_t input_bytes;          /* bytes of samples in the input when known (a regular
	                               * file, a WAV data size); 0 or -1: unknown */
	uint64_t memory_limit;        /* bytes f->memory may reach, 0: not checked */
	unsigned channels;            /* channels interleaved in the input (audio), 0: 1 */
	unsigned pick;                /* with channels > 1: the one channel transformed, counted
	                               * from 1; 0: every channel (see mix) */
	int mix;                      /* with channels > 1: 1, their mean transformed (as f32, or
	                               * cf32 for complex types) */
	/* Set by accel_fft_setup. */
	int r2c;                      /* 1: real-to-complex transform (fft.r2c) */
	size_t bins;                  /* values per transformed frame: complex, N/2+1 (r2c) or N;
	                               * real, N (c2r) */
	size_t sample_bytes;          /* of one sample of a unit (one channel) */
	enum accel_sample in_type;    /* the input's sample type as given (f->type
	                               * becomes f32 or cf32 when mixed) */
	size_t in_bytes;              /* input bytes per instant: its sample times channels */
	unsigned outputs;             /* spectra per frame time: channels when each is
	                               * transformed, else 1 */
	float *win;                   /* N window coefficients (periodic) */
	double scale;                 /* normalisation factor on each value */
	int c2r;                      /* 1: complex-to-real inverse transform (fft.c2r) */
	size_t frame;                 /* input samples per frame: N, or N/2+1 bins (c2r) */
	int split;                    /* 1: a row's frames span several units (see accel_fft_run) */
	int unit_auto;                /* 1: unit_frames was chosen by setup (0 given), so
	                               * accel_fft_run may size units for the route's engines */
	uint64_t memory;              /* bytes of the window, one unit in flight (its samples and
	                               * rows), one engine's transform buffers and the reader's
	                               * overlap: what the job needs at the least */
};

/* Check the job and complete it: 0, or ACCEL_EINVAL with one line in
 * err[len] (N < 2, an unknown type, averaged complex output, a shift of
 * a half spectrum, a negative Kaiser beta, `real` with a forward transform,
 * real input, --full, a window, a hop or an output mode other than
 * complex), ACCEL_EDATA with a line (f->input_bytes of samples hold no
 * whole frame, without f->pad), ACCEL_ENOMEM with a line (f->memory over
 * f->memory_limit), or ACCEL_ENOMEM with none. Both checks come before anything of the
 * job's size is made (the window is N floats). Sets f->unit_frames when
 * 0: about 4 MiB of input and at most 16 MiB of transform buffer per
 * unit, at least one frame; a multiple of f->average when a row fits,
 * else f->split (a unit_frames given below f->average splits too). Free
 * with accel_fft_free. */
int accel_fft_setup(struct accel_fft *f, char *err, size_t len);
/* Whether `bytes` of samples (known: 0 and more) hold one whole frame of
 * the job set up by accel_fft_setup, or f->pad makes one: 0, or
 * ACCEL_EDATA with the line accel_fft_setup gives for f->input_bytes (it
 * takes 0 there for unknown: this says it of a FILE known to be empty). */
int accel_fft_check_samples(const struct accel_fft *f, int64_t bytes, char *err, size_t len);
/* Free what accel_fft_setup made (the window); f itself is the caller's.
 * Safe twice, and on a zeroed job that setup failed or never ran for. */
void accel_fft_free(struct accel_fft *f);
/* "fft.r2c", "fft.c2r" or "fft.c2c". */
const char *accel_fft_op_name(const struct accel_fft *f);
/* Parse a window name ("hann", "kaiser:8.6") into f->window and
 * f->kaiser_beta: 0 or ACCEL_EINVAL. */
int accel_fft_window_parse(struct accel_fft *f, const char *s);
/* Output values per row: f->bins (complex pairs for complex output, one
 * float each otherwise), valid after accel_fft_setup. */
size_t accel_fft_row_values(const struct accel_fft *f);
/* Frames a unit of `len` input bytes holds: whole frames only (the
 * stream's reader pads the last unit itself with --pad). */
size_t accel_fft_unit_frames(const struct accel_fft *f, size_t len);
/* Of the `frames` frames of unit number `seq` (units of f->unit_frames
 * frames each but the last), how many are transformed: --decimate leaves
 * out the frames of the rows not written. */
size_t accel_fft_kept_frames(const struct accel_fft *f, uint64_t seq, size_t frames);
/* Convert and window kept frames first .. first + count - 1 of unit `seq`
 * (raw samples at in[len] holding `frames` frames, frame i starting at
 * sample i * hop) into dst: N floats per frame for r2c, else f->frame
 * interleaved complex floats (N, or the N/2+1 bins of c2r). Returns the number of frames written (fewer than count
 * past the unit's kept frames). */
size_t accel_fft_load(const struct accel_fft *f, uint64_t seq, const uint8_t *in, size_t len, size_t frames,
		      size_t first, size_t count, float *dst);
/* Frames an engine should transform at once so that a batch's buffers stay
 * in cache (about 256 KiB of complex floats): a multiple of f->average (a
 * row at least), at most the kept frames of a whole unit. Give
 * accel_fft_emit whole batches: rows never straddle them. */
size_t accel_fft_batch_frames(const struct accel_fft *f);
/* Turn `kept` transformed frames (f->bins interleaved complex floats each;
 * N real floats for c2r) into output rows appended to out: scaling, magnitude, power or dB,
 * averaging of f->average frames per row (the last row of a stream may
 * average fewer), shift, and the format (binary, or CSV text). 0 or
 * ACCEL_ENOMEM. */
int accel_fft_emit(const struct accel_fft *f, const float *spec, size_t kept, struct accel_buf *out);
/* dst[i] = src[i] * s for the n floats (dst may be src): the scaling of
 * --norm, as accel_fft_emit applies it (one float multiply a value, the
 * same bits however it is run), in SIMD blocks of 8. */
void accel_fft_scale(float *dst, const float *src, size_t n, float s);
/*
 * For engines that run the whole chain on their device (conversion,
 * window, transform, scaling, magnitude, power or dB, averaging, shift),
 * so that only raw samples go up and finished rows come down:
 *
 * accel_fft_kept_index writes into idx (room for `frames` entries) the
 * unit's frame numbers that are transformed, in order (frame i starts at
 * sample i * hop of the unit's input; --decimate leaves rows out), and
 * returns their count, accel_fft_kept_frames. Frame numbers fit in 32 bits
 * (a unit holds at most 16 MiB of transform buffer).
 *
 * accel_fft_rows: output rows made of `kept` transformed frames, one per
 * f->average of them (the last row of a stream may average fewer: row r
 * averages min(average, kept - r * average) frames).
 *
 * Row j's value for output bin b, with rot = bins - bins / 2 when f->shift
 * (else 0) and bin c = (b + rot) mod bins, s = f->scale, X the frame's
 * unscaled transform at bin c and k the frames of the row:
 *   complex: s X (interleaved re, im; no averaging)
 *   mag:     s * mean |X|
 *   power:   s^2 * mean |X|^2
 *   db:      10 log10(s^2 * mean |X|^2) + f->db_offset
 *
 * accel_fft_put_rows appends `nrows` finished rows (accel_fft_row_values
 * values each, two floats a value for complex output) to out in f's format
 * (binary or CSV text), as accel_fft_emit does. 0 or ACCEL_ENOMEM.
 */
size_t accel_fft_kept_index(const struct accel_fft *f, uint64_t seq, size_t frames, uint32_t *idx);
size_t accel_fft_rows(const struct accel_fft *f, size_t kept);
int accel_fft_put_rows(const struct accel_fft *f, const float *rows, size_t nrows, struct accel_buf *out);
/* Output rows of a stream of `bytes` input bytes (-1: unknown, returns -1). */
int64_t accel_fft_stream_rows(const struct accel_fft *f, int64_t bytes);
/* Frames of a stream of `bytes` input bytes (-1: unknown, returns -1):
 * the frames its rows average, those of rows --decimate drops included. */
int64_t accel_fft_stream_frames(const struct accel_fft *f, int64_t bytes);

/* A WAV file's header (RIFF WAVE, "fmt " and "data" chunks; Microsoft
 * Multimedia Standards Update 1994 and WAVE_FORMAT_EXTENSIBLE), also as
 * RF64 (EBU Tech 3306) or BW64 (ITU-R BS.2088): 64-bit sizes in "ds64". */
struct accel_wav {
	char form[5];             /* "RIFF", "RF64" or "BW64" */
	enum accel_sample type;   /* of one channel's sample: u8, i16, i24, i32, f32 or f64 */
	unsigned channels, rate, bits;   /* channels interleaved, 1 or more */
	uint64_t data_offset;     /* bytes before the samples */
	int64_t data_size;        /* bytes of samples stated, -1: to the end of input */
};
/* Parse the header at p[0..n). Returns 1 with *w set, 0 when p does not
 * start with a RIFF-like header, ACCEL_ENOTSUP with *need set to the
 * bytes it must see when n is too short (need <= 1 MiB), or ACCEL_EDATA
 * with one line in err[len] (unsupported encoding, malformed chunk, an
 * RF64 or BW64 file without ds64 first, RIFX, Sony Wave64). The data
 * size is the data chunk's, or ds64's where that holds 0xFFFFFFFF; 0, or
 * 0xFFFFFFFF without ds64 (a writer that streamed), means to the end of
 * input. Never reads past p[n). */
int accel_wav_parse(const uint8_t *p, size_t n, struct accel_wav *w, size_t *need, char *err, size_t len);

/* How accel_fft_run runs. */
struct accel_fft_cfg {
	const char *backend;          /* --backend list; NULL: $ACCEL_BACKEND, else auto */
	struct accel_stream_config stream;
	int verbose;                  /* > 0: print the route on stderr */
	struct accel_report *report;  /* non-NULL: the route goes to this report
	                               * (accel_report_route) instead of stderr */
	int64_t data_size;            /* bytes of samples in the input (WAV), -1: to its end */
	/* 1: an input of known size that makes one unit of one output runs
	 * on the calling thread (stream threads 1, inline_units): no worker
	 * is started for it. For a caller whose threads are not fixed above
	 * one. */
	int inline_one_unit;
};

/*
 * Run the transform job f (set up) over `in` (its position at the first
 * sample) to `out`: frames batched into units, in parallel on the route's
 * engines, rows in input order; --npy writes its header first (rows from
 * the input's size, else a header rewritten at the end, which needs a
 * seekable output). With f->split (--average K of more frames than a
 * unit holds) a unit holds part of one row: engines make its mean (power
 * for dB) as a row of its own, and the writer sums them, weighted by their
 * frames, into the row; the frames of rows --decimate drops are skipped
 * unread. Memory does not grow with K. When only CPU engines serve the
 * stream and setup chose the units (f->unit_auto), units shrink to whole
 * batches near 256 KiB of input where no output byte changes (f's
 * unit_frames and memory are updated). Returns 0; ACCEL_EDATA (a partial sample at the end
 * without f->pad; err names the byte offset); ACCEL_EINVAL (malformed
 * backend list or $ACCEL_FAULT, --npy to a pipe from an input of unknown
 * size); ACCEL_ENOENGINE; ACCEL_EIO; ACCEL_EPIPE; ACCEL_ENOMEM;
 * ACCEL_EDEVICE. One line in err[len]; stats may be NULL. Memory and threads
 * as accel_stream_run.
 */
int accel_fft_run(struct accel_ctx *ctx, const struct accel_fft_cfg *cfg, struct accel_fft *f,
		  struct accel_input *in, struct accel_output *out, struct accel_stream_stats *stats,
		  char *err, size_t len);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
