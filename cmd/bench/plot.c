/*
 * plot.c - --plot FILE.svg|FILE.png: the measured throughput against size,
 * one panel per operation and one line per engine, and with --vs the
 * our/peer ratios as bars, drawn by gnuplot from data and a script written
 * to the temporary folder.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

extern char **environ;

/* Pixels of a panel, and of the row of ratio bars. */
#define PANEL_W 560.0
#define PANEL_H 420.0
#define RATIO_H 520.0

/* The gnuplot terminal for FILE's suffix, or NULL. */
static const char *terminal(const char *path)
{
	const char *dot = strrchr(path, '.');
	if (dot && strchr(dot, '/'))
		dot = NULL;
	if (dot && !strcasecmp(dot, ".svg"))
		return "svg";
	if (dot && !strcasecmp(dot, ".png"))
		return "pngcairo";
	return NULL;
}

int plot_check(const struct job *job)
{
	struct stat st;
	if (!terminal(job->plot)) {
		accel_msg_usage("--plot: '%s' does not end in .svg or .png", job->plot);
		return ACCEL_EXIT_USAGE;
	}
	/* As accel_output_open will refuse it, before the measurements. */
	if (!job->common.force && stat(job->plot, &st) == 0 && !S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		accel_msg_error("%s already exists; use -f to overwrite it", job->plot);
		return ACCEL_EXIT_FAILURE;
	}
	return 0;
}

/* s as a gnuplot string: single quotes, a quote inside doubled. */
static void quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++)
		if (*s == '\'')
			fputs("''", f);
		else
			fputc(*s == '\n' ? ' ' : *s, f);
	fputc('\'', f);
}

/* The x axis of the panel of the cases [first, end) of one operation:
 * linear, or logarithmic when the sizes span more than a decade; a tic at
 * each size measured. */
static void x_axis(FILE *f, const struct kase *cs, int first, int end)
{
	double lo = 0, hi = 0;
	for (int i = first; i < end; i++) {
		double s = (double)size_value(&cs[i]);
		if (!cs[i].failed && (lo == 0 || s < lo))
			lo = s;
		if (!cs[i].failed && s > hi)
			hi = s;
	}
	if (hi > 10 * lo)
		fprintf(f, "set logscale x\nset xrange [%.17g:%.17g]\n", lo / 1.5, hi * 1.5);
	else if (hi > lo)
		fprintf(f, "unset logscale x\nset xrange [%.17g:%.17g]\n", lo - (hi - lo) / 10, hi + (hi - lo) / 10);
	else
		fprintf(f, "unset logscale x\nset xrange [%.17g:%.17g]\n", lo / 2, lo * 3 / 2);
	fputs("set xtics (", f);
	int k = 0;
	for (int i = first; i < end; i++) {
		int seen = cs[i].failed;
		for (int j = first; j < i && !seen; j++)
			seen = !cs[j].failed && cs[j].size == cs[i].size;
		if (seen)
			continue;
		char sz[32];
		size_text(&cs[i], sz, sizeof sz);
		fputs(k++ ? ", " : "", f);
		/* "N=1024", "batch=8": the number alone; "640x360" as it is. */
		quoted(f, strchr(sz, '=') ? strchr(sz, '=') + 1 : sz);
		fprintf(f, " %llu", (unsigned long long)size_value(&cs[i]));
	}
	enum family fam = cs[first].op->fam;
	fprintf(f, ")\nset xlabel '%s'\n", fam == FAM_FFT ? "N, samples per transform" : fam == FAM_ONNX ?
		"batch, items per run" : IS_VIDEO(fam) ? "frame, W x H (pixels)" : "input bytes");
}

static int by_size(const void *a, const void *b)
{
	const struct kase *x = *(const struct kase *const *)a, *y = *(const struct kase *const *)b;
	uint64_t p = size_value(x), q = size_value(y);
	return p < q ? -1 : p > q;
}

/* The throughput panel of the cases [first, end) of one operation: its
 * blocks of data (one per engine: size, median, min, max MB/s) appended
 * to `dat` from block *block on. */
static void op_panel(FILE *f, FILE *dat, const char *datpath, const struct kase *cs, int first, int end, int *block)
{
	fputs("set title ", f);
	quoted(f, cs[first].op->name);
	fputs("\nset ylabel 'MB/s (median, min-max)'\nset yrange [0:*]\nset key below\nset grid\n", f);
	x_axis(f, cs, first, end);
	fputs("plot ", f);
	int lines = 0;
	for (int i = first; i < end; i++) {
		int seen = cs[i].failed;
		for (int j = first; j < i && !seen; j++)
			seen = !cs[j].failed && !strcmp(cs[j].engine, cs[i].engine);
		if (seen)
			continue;
		const struct kase *same[MAX_SIZES];
		int n = 0;
		for (int j = i; j < end && n < MAX_SIZES; j++)
			if (!cs[j].failed && !strcmp(cs[j].engine, cs[i].engine))
				same[n++] = &cs[j];
		qsort(same, (size_t)n, sizeof same[0], by_size);
		for (int j = 0; j < n; j++) {
			struct stats3 r = rate(&same[j]->ours, (double)same[j]->bytes / 1e6);
			fprintf(dat, "%llu %.9g %.9g %.9g\n", (unsigned long long)size_value(same[j]), r.median, r.min,
				r.max);
		}
		fputs("\n\n", dat);
		fputs(lines++ ? ", " : "", f);
		quoted(f, datpath);
		fprintf(f, " index %d using 1:2:3:4 with yerrorlines lw 2 pt 7 title ", (*block)++);
		quoted(f, cs[i].engine);
	}
	fputc('\n', f);
}

/* The bars of ours/peer, one per case with a peer, into `dat` (index,
 * ratio); the case's name shows its engine when its operation ran on
 * several, its size when several were measured. */
static void ratio_panel(FILE *f, FILE *dat, const char *datpath, const struct kase *cs, int n, int nsizes)
{
	double top = 1, low = 1;
	int k = 0;
	fputs("set title 'ours/peer: the median MB/s of ours over the peer tool''s'\nunset logscale x\nset grid\n"
	      "set ylabel 'ours/peer'\nunset xlabel\nset style fill solid 0.6\nset boxwidth 0.6\nunset key\n"
	      "set xtics rotate by 90 right (", f);
	for (int i = 0; i < n; i++) {
		if (cs[i].failed || !cs[i].peer_cmd[0])
			continue;
		int engines = 0;
		for (int j = 0; j < n; j++)
			engines |= cs[j].op == cs[i].op && cs[j].peer_cmd[0] && strcmp(cs[j].engine, cs[i].engine);
		char sz[32], name[256];
		const char *peer = strrchr(cs[i].peer_argv[0], '/') ? strrchr(cs[i].peer_argv[0], '/') + 1 :
				   cs[i].peer_argv[0];
		size_text(&cs[i], sz, sizeof sz);
		snprintf(name, sizeof name, "%s%s%s%s%s vs %s", cs[i].op->name, engines ? " " : "",
			 engines ? cs[i].engine : "", nsizes > 1 ? " " : "", nsizes > 1 ? sz : "", peer);
		fputs(k ? ", " : "", f);
		quoted(f, name);
		double r = ratio(&cs[i]);
		fprintf(f, " %d", k);
		fprintf(dat, "%d %.9g\n", k++, r);
		if (r > top)
			top = r;
		if (r > 0 && r < low)
			low = r;
	}
	fprintf(f, ")\nset xrange [-0.6:%g]\n", k - 0.4);
	/* Ratios over more than a decade: a logarithmic axis, 2x as far from
	 * the line at 1 as 0.5x. */
	if (top > 10 * low)
		fprintf(f, "set logscale y\nset yrange [%.9g:%.9g]\n", low / 2, top * 2);
	else
		fprintf(f, "set yrange [0:%.9g]\n", top * 1.25);
	fputs("set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dashtype 2 lw 2\nplot ", f);
	quoted(f, datpath);
	fputs(" using 1:2 with boxes, '' using 1:2:(sprintf('%.2fx', $2)) with labels offset 0,0.7\n", f);
}

/* gnuplot's messages on one line: blanks and line ends squeezed, the
 * last 240 bytes when longer. */
static void messages(const char *path, char *buf, size_t len)
{
	char raw[4096];
	size_t n = 0, o = 0;
	FILE *f = fopen(path, "re");
	if (f) {
		if (fseek(f, -(long)(sizeof raw - 1), SEEK_END) < 0)
			rewind(f);
		n = fread(raw, 1, sizeof raw - 1, f);
		fclose(f);
	}
	for (size_t i = 0; i < n; i++) {
		char ch = raw[i] == '\n' || raw[i] == '\t' || raw[i] == '\r' ? ' ' : raw[i];
		if (ch == ' ' && (o == 0 || raw[o - 1] == ' '))
			continue;
		raw[o++] = ch;
	}
	while (o && raw[o - 1] == ' ')
		o--;
	raw[o] = 0;
	snprintf(buf, len, "%s%.240s", o > 240 ? "..." : "", raw + (o > 240 ? o - 240 : 0));
}

/* Run gnuplot on `script` with its standard output into `fd` and its
 * messages into `err`. Returns its exit status, or -errno when it could
 * not start, or -EINTR when a signal ended it. */
static int run_gnuplot(const char *script, int fd, const char *err)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fd, 1);
	posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	/* -d: no initialisation file (~/.gnuplot) changes the plot. */
	char *argv[] = { "gnuplot", "-d", (char *)script, NULL };
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ), st;
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return -rc;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -EINTR;
}

int plot(struct bench *b, struct kase *cs, int n)
{
	const char *path = b->job->plot;
	char *gp = temp_path(b, "plot.gp"), *dat = temp_path(b, "plot.dat"), *rat = temp_path(b, "ratio.dat");
	char *err = temp_path(b, "gnuplot.err");
	if (!gp || !dat || !rat || !err) {
		accel_msg_error("out of memory");
		return -1;
	}
	int nop = 0, bars = 0, rc = 0;
	for (int i = 0; i < n; i++) {
		if (cs[i].failed)
			continue;
		int seen = 0;
		for (int j = 0; j < i && !seen; j++)
			seen = !cs[j].failed && cs[j].op == cs[i].op;
		nop += !seen;
		bars += cs[i].peer_cmd[0] != 0;
	}
	if (!nop) {
		accel_msg_error("cannot draw %s: no case was measured", path);
		return -1;
	}
	/* Panels of PANEL_W x PANEL_H pixels, cols a row; the bars a row
	 * of their own below, RATIO_H high. */
	int cols = nop == 1 ? (bars ? 2 : 1) : nop <= 4 ? 2 : 3, rows = (nop + cols - 1) / cols;
	double w = PANEL_W * cols, h = PANEL_H * rows + (bars ? RATIO_H : 0);
	FILE *f = fopen(gp, "we"), *d = fopen(dat, "we"), *r = fopen(rat, "we");
	if (f && d && r) {
		fprintf(f, "set terminal %s noenhanced size %.0f,%.0f font 'sans,10' background rgb 'white'\n"
			"set multiplot\n", terminal(path), w, h);
		int block = 0, k = 0;
		for (int i = 0; i < n;) {
			int end = i + 1, any = 0;
			while (end < n && cs[end].op == cs[i].op)
				end++;
			for (int j = i; j < end; j++)
				any |= !cs[j].failed;
			if (any) {
				fprintf(f, "set origin %.6f,%.6f\nset size %.6f,%.6f\n", PANEL_W * (k % cols) / w,
					1 - PANEL_H * (k / cols + 1) / h, PANEL_W / w, PANEL_H / h);
				op_panel(f, d, dat, cs, i, end, &block);
				k++;
			}
			i = end;
		}
		if (bars) {
			fprintf(f, "set origin 0,0\nset size 1,%.6f\n", RATIO_H / h);
			ratio_panel(f, r, rat, cs, n, b->job->nsizes);
		}
		fputs("unset multiplot\n", f);
	}
	int werr = !f || !d || !r ? errno : 0;
	if (f && fclose(f) && !werr)
		werr = errno;
	if (d && fclose(d) && !werr)
		werr = errno;
	if (r && fclose(r) && !werr)
		werr = errno;
	if (werr) {
		accel_msg_error("cannot write the plot's data in %s: %s", b->dir, strerror(werr));
		return -1;
	}
	struct accel_output out;
	if ((rc = accel_output_open(&out, path, b->job->common.force, 1)) < 0) {
		if (rc == ACCEL_EEXIST)
			accel_msg_error("%s already exists; use -f to overwrite it", path);
		else
			accel_msg_error("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	rc = run_gnuplot(gp, out.fd, err);
	if (rc) {
		char msg[300];
		messages(err, msg, sizeof msg);
		accel_output_abort(&out);
		if (rc == -ENOENT)
			accel_msg_error("cannot draw %s: gnuplot is not on PATH (Debian package gnuplot-nox)", path);
		else if (rc < 0)
			accel_msg_error("cannot draw %s: gnuplot: %s", path, rc == -EINTR ? "killed by a signal" : strerror(-rc));
		else
			accel_msg_error("cannot draw %s: gnuplot exited with status %d%s%s", path, rc, msg[0] ? ": " : "", msg);
		return -1;
	}
	if (accel_output_commit(&out) < 0) {
		accel_msg_error("cannot write %s: %s", path, strerror(out.error ? out.error : errno));
		return -1;
	}
	return 0;
}
