/*
 * axes.c - the spectrogram with its axes: a .npz of f (Hz), t (s) and Sxx
 * as scipy.signal.spectrogram returns them, and a PNG drawn by gnuplot.
 * Both read the finished rows (binary f32) from a temporary file.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fft.h"

extern char **environ;

double fft_axes_freq(const struct accel_fft *f, double rate, size_t b)
{
	double n = (double)f->n;
	if (f->bins != f->n)            /* half spectrum: numpy.fft.rfftfreq */
		return (double)b * rate / n;
	size_t c = b;
	if (f->shift)
		c = (b + f->bins - f->bins / 2) % f->bins;
	/* numpy.fft.fftfreq: 0 .. (N-1)/2, then -(N/2) .. -1. */
	double k = c < (f->n + 1) / 2 ? (double)c : (double)c - n;
	return k * rate / n;
}

double fft_axes_time(const struct fft_axes *ax, uint64_t row)
{
	uint64_t first = row * ax->decimate * ax->average;
	uint64_t count = ax->average;
	if (ax->frames > first && ax->frames - first < count)
		count = ax->frames - first;
	double centre = ((double)first + (double)(count - 1) / 2) * (double)ax->hop + (double)ax->n / 2;
	return centre / ax->rate;
}

/* Write an array of `count` float64 values v(i) as group g. */
static int put_f64(struct accel_npy_pack *p, int g, const struct accel_fft *f, const struct fft_axes *ax,
		   uint64_t count, char *err, size_t len)
{
	struct accel_tensor t = { .dtype = ACCEL_DTYPE_FLOAT64, .ndim = 1, .dims = { (int64_t)count } };
	int rc = accel_npy_pack_begin(p, g, &t, err, len);
	double buf[512];
	for (uint64_t i = 0; !rc && i < count;) {
		size_t k = 0;
		for (; k < 512 && i < count; k++, i++)
			buf[k] = g == 0 ? fft_axes_freq(f, ax->rate, (size_t)i) : fft_axes_time(ax, i);
		rc = accel_npy_pack_write(p, buf, k * sizeof *buf);
	}
	return rc;
}

int fft_write_npz(const struct accel_fft *f, const struct fft_axes *ax, int fd, uint64_t rows,
		  struct accel_output *out, char *err, size_t len)
{
	static const char *const names[] = { "f", "t", "Sxx" };
	size_t bins = f->bins, chans = f->outputs, row_vals = bins * chans;
	uint64_t bytes = rows * row_vals * sizeof(float);
	struct accel_npy_pack p;
	int rc = accel_npy_pack_open(&p, out, ACCEL_NPY_NPZ, ACCEL_NPY_CONCAT, 3, names, err, len);
	if (rc)
		return rc;
	const float *data = NULL;
	if (bytes) {
		data = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
		if (data == MAP_FAILED) {
			snprintf(err, len, "cannot map the spectra's temporary: %s", strerror(errno));
			accel_npy_pack_free(&p);
			return ACCEL_EIO;
		}
	}
	rc = put_f64(&p, 0, f, ax, bins, err, len);
	if (!rc)
		rc = put_f64(&p, 1, f, ax, rows, err, len);
	/* Sxx[c][b][j] = row j's value b of spectrum c: [freq, time] as
	 * scipy gives it, a leading channel axis for several. */
	struct accel_tensor t = { .dtype = ACCEL_DTYPE_FLOAT32 };
	if (chans > 1)
		t.dims[t.ndim++] = (int64_t)chans;
	t.dims[t.ndim++] = (int64_t)bins;
	t.dims[t.ndim++] = (int64_t)rows;
	if (!rc)
		rc = accel_npy_pack_begin(&p, 2, &t, err, len);
	float buf[4096];
	size_t k = 0;
	for (size_t c = 0; !rc && c < chans; c++)
		for (size_t b = 0; !rc && b < bins; b++)
			for (uint64_t j = 0; !rc && j < rows; j++) {
				buf[k++] = data[j * row_vals + c * bins + b];
				if (k == 4096) {
					rc = accel_npy_pack_write(&p, buf, sizeof buf);
					k = 0;
				}
			}
	if (!rc && k)
		rc = accel_npy_pack_write(&p, buf, k * sizeof *buf);
	if (data)
		munmap((void *)data, bytes);
	if (!rc)
		rc = accel_npy_pack_finish(&p, err, len);
	else if (!err[0])
		snprintf(err, len, "cannot write the .npz: %s", accel_strerror(rc));
	accel_npy_pack_free(&p);
	return rc;
}

/* s as a gnuplot string: single quotes, a quote inside doubled. */
static void quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

/* gnuplot's last message line from the file at path, into buf[len]. */
static void last_message(const char *path, char *buf, size_t len)
{
	char line[512];
	buf[0] = 0;
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		if (line[strspn(line, " \t^")])
			snprintf(buf, len, "%s", line + strspn(line, " \t"));
	}
	fclose(f);
}

/* The viridis colour map (matplotlib's, at nine evenly spaced points). */
static const char viridis[] = "set palette defined (0 '#440154', 1 '#472d7b', 2 '#3b528b', 3 '#2c728e', "
			      "4 '#21918c', 5 '#28ae80', 6 '#5ec962', 7 '#addc30', 8 '#fde725')\n";

int fft_draw_png(const struct accel_fft *f, const struct fft_axes *ax, const char *rows_path,
		 uint64_t rows, const char *dir, struct accel_output *out, char *err, size_t len)
{
	if (!rows) {
		snprintf(err, len, "no spectrum to draw: the input holds no whole frame");
		return -1;
	}
	char gp[4096], msgs[4096];
	snprintf(gp, sizeof gp, "%s/plot.gp", dir);
	snprintf(msgs, sizeof msgs, "%s/gnuplot.err", dir);
	FILE *s = fopen(gp, "we");
	if (!s) {
		snprintf(err, len, "cannot write %s: %s", gp, strerror(errno));
		return -1;
	}
	double t0 = fft_axes_time(ax, 0), f0 = fft_axes_freq(f, ax->rate, 0);
	double dt = rows > 1 ? (double)(ax->decimate * ax->average * ax->hop) / ax->rate : (double)ax->n / ax->rate;
	double df = ax->rate / (double)f->n;
	int unit = ax->rate != 1;
	fprintf(s, "set terminal pngcairo size 1000,600 noenhanced font 'sans,10' background rgb 'white'\n"
		"unset key\nset tics out\n%s"
		"set xlabel '%s'\nset ylabel '%s'\nset cblabel 'dB'\n"
		"set xrange [%.9g:%.9g]\nset yrange [%.9g:%.9g]\n",
		viridis, unit ? "time (s)" : "time (samples)", unit ? "frequency (Hz)" : "frequency (cycles/sample)",
		t0 - dt / 2, t0 + ((double)rows - 0.5) * dt, f0 - df / 2, f0 + ((double)f->bins - 0.5) * df);
	fputs("plot ", s);
	quoted(s, rows_path);
	fprintf(s, " binary array=%llux%zu format='%%float' scan=yx dx=%.9g dy=%.9g origin=(%.9g,%.9g) with image\n",
		(unsigned long long)rows, f->bins, dt, df, t0, f0);
	if (fclose(s)) {
		snprintf(err, len, "cannot write %s: %s", gp, strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out->fd, 1);
	posix_spawn_file_actions_addopen(&fa, 2, msgs, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	/* -d: no initialisation file (~/.gnuplot) changes the plot. */
	char *argv[] = { "gnuplot", "-d", gp, NULL };
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ), st = 0;
	posix_spawn_file_actions_destroy(&fa);
	if (rc == ENOENT) {
		snprintf(err, len, "gnuplot is not on PATH (Debian package gnuplot-nox)");
		return -1;
	}
	if (rc) {
		snprintf(err, len, "cannot run gnuplot: %s", strerror(rc));
		return -1;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			snprintf(err, len, "gnuplot: %s", strerror(errno));
			return -1;
		}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		char m[300];
		last_message(msgs, m, sizeof m);
		if (WIFEXITED(st))
			snprintf(err, len, "gnuplot exited with status %d%s%s", WEXITSTATUS(st), m[0] ? ": " : "", m);
		else
			snprintf(err, len, "gnuplot was killed by signal %d", WTERMSIG(st));
		return -1;
	}
	return 0;
}
