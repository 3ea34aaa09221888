/*
 * progress.c - the progress meter: one line on stderr, redrawn at most five
 * times a second, with bytes done, rate and ETA when the total is known.
 */
#include <stdio.h>
#include <stdlib.h>
#include "core.h"

struct accel_progress {
	const char *label;
	int64_t total;
	double start, last;
	uint64_t done;
};

static void human(char *buf, size_t len, double bytes)
{
	const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int i = 0;
	while (bytes >= 1024 && i < 4) {
		bytes /= 1024;
		i++;
	}
	snprintf(buf, len, i ? "%.1f %s" : "%.0f %s", bytes, unit[i]);
}

struct accel_progress *accel_progress_new(const char *label, int64_t total)
{
	struct accel_progress *p = calloc(1, sizeof *p);
	if (p) {
		p->label = label;
		p->total = total;
		p->start = p->last = accel_now();
	}
	return p;
}

static void draw(struct accel_progress *p, double now)
{
	char done[32], rate[32];
	double dt = now - p->start;
	human(done, sizeof done, (double)p->done);
	human(rate, sizeof rate, dt > 0 ? p->done / dt : 0);
	if (p->total > 0) {
		double frac = (double)p->done / (double)p->total;
		double eta = frac > 0 ? dt / frac - dt : 0;
		fprintf(stderr, "\r%s: %s (%3.0f%%) %s/s ETA %02d:%02d \033[K", p->label, done,
			frac * 100, rate, (int)eta / 60, (int)eta % 60);
	} else {
		fprintf(stderr, "\r%s: %s %s/s \033[K", p->label, done, rate);
	}
}

void accel_progress_update(struct accel_progress *p, uint64_t done)
{
	if (!p)
		return;
	p->done = done;
	double now = accel_now();
	if (now - p->last < 0.2)
		return;
	p->last = now;
	draw(p, now);
}

void accel_progress_end(struct accel_progress *p)
{
	if (!p)
		return;
	draw(p, accel_now());
	fputc('\n', stderr);
	free(p);
}
