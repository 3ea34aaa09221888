/*
 * fft.h - accel-fft's pieces: audio files other than WAV decoded by
 * libsndfile (audio.c), and the spectrogram's axes written as a .npz or
 * drawn as a PNG (axes.c).
 */
#ifndef ACCEL_FFT_CMD_H
#define ACCEL_FFT_CMD_H

#include <pthread.h>
#include <stdint.h>
#include "accel.h"

/* The audio format whose signature p[0..n) starts with, among those
 * libsndfile reads and our WAV parser does not: "FLAC", "W64", "AIFF",
 * "CAF", "Ogg", "AU", "RIFX"; NULL for none (RIFF, RF64 and BW64 WAV are
 * ours). n >= 16 tells W64 from others; fewer bytes may miss it. */
const char *fft_audio_magic(const uint8_t *p, size_t n);

/* A file decoded by libsndfile on a thread of its own into interleaved
 * f32 samples (integers scaled to [-1, 1) as accel-fft scales them) on a
 * pipe, which the transform reads as a stream. */
struct fft_audio {
	void *sf;                     /* its SNDFILE */
	struct accel_input *src;      /* the file, when read through virtual I/O */
	uint8_t *head;                /* virtual I/O: the first bytes, for seeks back */
	size_t head_len;
	int64_t pos;                  /* virtual I/O: position in the file */
	int wfd;                      /* the pipe's end the decoder writes */
	pthread_t thread;
	int started;
	char err[256];                /* the decoder's error, "" for none */
	/* What the file holds (filled by fft_audio_open). */
	unsigned channels, rate, bits;  /* bits: 0 for a compressed or float format */
	int64_t frames;               /* -1: unknown (a pipe) */
	int64_t stated;               /* frames the header states, -1: none; fewer decoded
	                               * is an error (a file cut short) */
	char format[64];              /* "FLAC (Free Lossless Audio Codec)" ... */
};

/* Open the audio file whose first bytes `in` holds (peeked, not consumed):
 * loads libsndfile, reads the header (from a regular file by its
 * descriptor, from a pipe through virtual I/O over `in`, whose first MiB
 * is kept for the seeks back that headers need). Returns 0, or
 * ACCEL_ENOTSUP (libsndfile is not installed) or ACCEL_EDATA (libsndfile
 * refused the file) with one line in err[len]. */
int fft_audio_open(struct fft_audio *a, struct accel_input *in, char *err, size_t len);
/* Start decoding into a new pipe: its read end in *rfd (the caller's to
 * close). 0, or ACCEL_EIO / ACCEL_ENOMEM with errno kept. */
int fft_audio_start(struct fft_audio *a, int *rfd);
/* Wait for the decoder (close the read end first when the reader stops
 * early) and free everything. Returns 0, or ACCEL_EDATA with libsndfile's
 * line in err[len] when decoding failed before the end of the file.
 * Safe on a zeroed struct. */
int fft_audio_end(struct fft_audio *a, char *err, size_t len);

/* The time and frequency axes of the spectra written, as
 * scipy.signal.spectrogram gives them. */
struct fft_axes {
	double rate;                  /* samples per second, 1 when unknown (scipy's fs) */
	size_t hop, n, average, decimate;
	uint64_t frames;              /* frames transformed in all (the last row may average fewer) */
};
/* Frequency of output bin b of f (set up): rfftfreq for half spectra,
 * fftfreq, fftshifted with --shift, for full ones; Hz. */
double fft_axes_freq(const struct accel_fft *f, double rate, size_t b);
/* Time of written row j: the mean of the centres of the frames it
 * averages, frame k's centre at (k hop + N / 2) / rate; seconds. */
double fft_axes_time(const struct fft_axes *ax, uint64_t row);

/* From the binary f32 rows in fd (rows of f->outputs spectra of
 * f->bins values, real output), write out (open, ".npz") as arrays f, t
 * and Sxx ([freq, time], or [channel, freq, time] for several spectra a
 * row). 0, or an ACCEL_E* code with one line in err[len]. */
int fft_write_npz(const struct accel_fft *f, const struct fft_axes *ax, int fd, uint64_t rows,
		  struct accel_output *out, char *err, size_t len);
/* Draw the dB rows in fd as a spectrogram PNG into out (open) with
 * gnuplot: time across, frequency up, viridis. 0, or -1 with one line in
 * err[len]. */
int fft_draw_png(const struct accel_fft *f, const struct fft_axes *ax, const char *rows_path,
		 uint64_t rows, const char *dir, struct accel_output *out, char *err, size_t len);

#endif
