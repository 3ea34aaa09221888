/*
 * program.c - our programs' runs beside the peer's (--vs): accel-compress,
 * accel-crypt and accel-fft from accel-bench's own folder, run on the
 * peer's input file as the peer is run, so that the ratio compares a
 * program with a program; for the video stages accel-transcode, whose runs
 * are ours already; none for onnx.run, whose peer runs in one process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench.h"

/* Append the words of `w` (NULL-terminated) to c->prog_argv at *n, and
 * those shown to c->prog_cmd at *used (the first word by its base name).
 * 0, or -1 when out of memory or of room. */
static int add_words(struct kase *c, int *n, size_t *used, const char *const *w, int shown)
{
	for (; *w; w++) {
		if (*n >= (int)(sizeof c->prog_argv / sizeof c->prog_argv[0]) - 2 || !(c->prog_argv[*n] = strdup(*w)))
			return -1;
		const char *text = *n ? *w : strrchr(*w, '/') + 1;
		(*n)++;
		if (shown && *used < sizeof c->prog_cmd)
			*used += (size_t)snprintf(c->prog_cmd + *used, sizeof c->prog_cmd - *used, "%s%s",
						  *used ? " " : "", text);
	}
	return 0;
}

/* Our program's command for case c on `input` (the peer's input file)
 * into c->prog_argv and c->prog_cmd (shown without file names): the
 * program next to accel-bench, on the case's engine, threads and level,
 * with no fallback, as run_op runs the library call. 0, or -1 when there
 * is none (the program is not there; age's keys could not be made). */
int program_command(struct bench *b, struct kase *c, const char *input)
{
	const struct opdef *op = c->op;
	if (op->fam == FAM_ONNX)
		return -1;
	if (IS_VIDEO(op->fam))
		return video_program_command(b, c);
	const char *name = op->fam == FAM_COMPRESS || op->fam == FAM_DECOMPRESS ? "accel-compress" :
			   op->fam == FAM_FFT ? "accel-fft" : "accel-crypt";
	char path[4200], threads[16], level[16], n[32];
	snprintf(path, sizeof path, "%s/%s", b->bindir, name);
	if (!b->bindir[0] || access(path, X_OK) < 0)
		return -1;
	if ((op->fam == FAM_AGE_ENCRYPT || op->fam == FAM_AGE_DECRYPT) && age_keys(b) < 0)
		return -1;
	snprintf(threads, sizeof threads, "%d", b->job->common.threads);
	snprintf(level, sizeof level, "-%d", c->level);
	snprintf(n, sizeof n, "%llu", (unsigned long long)c->size);
	const char *head[] = { path, NULL, NULL };
	const char *route[] = { "-b", c->engine, "--fallback", "none", "-T", threads, NULL };
	const char *compress[] = { "-q", level, "-F", op->format, "-c", NULL };
	const char *decompress[] = { "-q", "-d", "-c", NULL };
	const char *hash[] = { "-a", op->name, NULL };
	const char *encrypt[] = { "-e", "-R", NULL }, *decrypt[] = { "-d", "-i", NULL };
	const char *keyfile[] = { op->fam == FAM_AGE_ENCRYPT ? temp_path(b, "age-recipient.txt") : b->age_identity, NULL };
	const char *fft[] = { "-t", op->fft == FFT_R2C ? "f32" : "cf32", "-n", n, "--plan", "measure", NULL };
	const char *c2r[] = { "-i", "--real", NULL };
	const char *const *tail = op->fam == FAM_COMPRESS ? compress : op->fam == FAM_DECOMPRESS ? decompress :
				  op->fam == FAM_HASH ? hash : op->fam == FAM_AGE_ENCRYPT ? encrypt :
				  op->fam == FAM_AGE_DECRYPT ? decrypt : fft;
	if (op->fam == FAM_HASH)
		head[1] = "hash";
	int k = 0;
	size_t used = 0;
	if (add_words(c, &k, &used, head, 1) < 0 || add_words(c, &k, &used, route, 1) < 0 ||
	    add_words(c, &k, &used, tail, 1) < 0)
		return -1;
	if ((op->fam == FAM_AGE_ENCRYPT || op->fam == FAM_AGE_DECRYPT) && (!keyfile[0] || add_words(c, &k, &used, keyfile, 0) < 0))
		return -1;
	if (op->fam == FAM_FFT && op->fft == FFT_C2R && add_words(c, &k, &used, c2r, 1) < 0)
		return -1;
	if (!(c->prog_argv[k++] = strdup(input)))
		return -1;
	c->prog_argv[k] = NULL;
	return 0;
}
