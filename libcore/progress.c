/*
 * progress.c - the progress meter: one line on stderr, redrawn at most five
 * times a second, with the amount done in the operation's unit (bytes,
 * samples, frames, seconds of media), the rate, and the ETA when the total
 * is known.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <accel/cli.h>
#include "core.h"

struct accel_progress {
	const char *label;
	char unit[16];       /* "" for bytes */
	double scale;        /* units per byte given to accel_progress_update */
	double total;        /* in units, <= 0 unknown */
	double start, last;
	double done;         /* in units */
	double bytes;        /* < 0: not counted (accel_progress_bytes) */
	int tty;             /* stderr is a terminal: redraw one line */
};

/* An amount in the meter's unit: bytes in B/KiB/MiB..., seconds of media
 * as [h:]mm:ss, other units as a number with k/M/G and the unit's name. */
static void amount(const struct accel_progress *p, char *buf, size_t len, double v)
{
	if (!p->unit[0]) {
		const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
		int i = 0;
		while (v >= 1024 && i < 4) {
			v /= 1024;
			i++;
		}
		snprintf(buf, len, i ? "%.1f %s" : "%.0f %s", v, unit[i]);
		return;
	}
	if (!strcmp(p->unit, "s")) {
		long t = v > 0 ? (long)v : 0;
		if (t >= 3600)
			snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
		else
			snprintf(buf, len, "%02ld:%02ld", t / 60, t % 60);
		return;
	}
	const char *sfx[] = { "", "k", "M", "G", "T" };
	int i = 0;
	while (v >= 1000 && i < 4) {
		v /= 1000;
		i++;
	}
	snprintf(buf, len, i ? "%.1f%s %s" : "%.0f%s %s", v, sfx[i], p->unit);
}

struct accel_progress *accel_progress_new_unit(const char *label, const char *unit, double scale, double total)
{
	struct accel_progress *p = calloc(1, sizeof *p);
	if (p) {
		p->label = label;
		if (unit && strcmp(unit, "B"))
			core_strlcpy(p->unit, unit, sizeof p->unit);
		p->scale = scale > 0 ? scale : 1;
		p->total = total;
		p->bytes = -1;
		p->start = p->last = accel_now();
		p->tty = isatty(2);
	}
	return p;
}

struct accel_progress *accel_progress_new(const char *label, int64_t total)
{
	return accel_progress_new_unit(label, NULL, 1, (double)total);
}

/* The line of a meter that counts bytes besides its unit. */
static int format_bytes(const struct accel_progress *p, double elapsed, char *buf, size_t len)
{
	const struct accel_progress b = { .label = p->label, .unit = "" };
	char bytes[32], rate[32];
	amount(&b, bytes, sizeof bytes, p->bytes);
	amount(&b, rate, sizeof rate, elapsed > 0 ? p->bytes / elapsed : 0);
	if (p->total > 0) {
		double frac = p->done / p->total;
		double eta = frac > 0 && frac < 1 ? elapsed / frac - elapsed : 0;
		return snprintf(buf, len, "%s: %.0f/%.0f %s (%3.0f%%) %s %s/s ETA %02d:%02d", p->label, p->done,
				p->total, p->unit, frac * 100, bytes, rate, (int)eta / 60, (int)eta % 60);
	}
	return snprintf(buf, len, "%s: %.0f %s %s %s/s", p->label, p->done, p->unit, bytes, rate);
}

int accel_progress_format(const struct accel_progress *p, double elapsed, char *buf, size_t len)
{
	if (p->bytes >= 0 && p->unit[0])
		return format_bytes(p, elapsed, buf, len);
	char done[32], rate[32];
	amount(p, done, sizeof done, p->done);
	if (!strcmp(p->unit, "s"))  /* seconds of media per second: a speed */
		snprintf(rate, sizeof rate, "%.2fx", elapsed > 0 ? p->done / elapsed : 0);
	else
		amount(p, rate, sizeof rate, elapsed > 0 ? p->done / elapsed : 0);
	const char *per = strcmp(p->unit, "s") ? "/s" : "";
	if (p->total > 0) {
		double frac = p->done / p->total;
		/* Past the stated total (a size that grew) the ETA is 0. */
		double eta = frac > 0 && frac < 1 ? elapsed / frac - elapsed : 0;
		return snprintf(buf, len, "%s: %s (%3.0f%%) %s%s ETA %02d:%02d", p->label, done, frac * 100, rate, per,
				(int)eta / 60, (int)eta % 60);
	}
	return snprintf(buf, len, "%s: %s %s%s", p->label, done, rate, per);
}

static void draw(struct accel_progress *p, double now)
{
	char line[256];
	accel_progress_format(p, now - p->start, line, sizeof line);
	if (p->tty)
		fprintf(stderr, "\r%s \033[K", line);
	else
		fprintf(stderr, "%s\n", line);
}

void accel_progress_set(struct accel_progress *p, double done)
{
	if (!p)
		return;
	p->done = done;
	double now = accel_now();
	if (now - p->last < (p->tty ? 0.2 : 1.0))
		return;
	p->last = now;
	draw(p, now);
}

void accel_progress_bytes(struct accel_progress *p, uint64_t bytes)
{
	if (p)
		p->bytes = (double)bytes;
}

void accel_progress_update(struct accel_progress *p, uint64_t done)
{
	if (p)
		accel_progress_set(p, (double)done * p->scale);
}

void accel_progress_end(struct accel_progress *p)
{
	if (!p)
		return;
	draw(p, accel_now());
	if (p->tty)
		fputc('\n', stderr);
	free(p);
}
