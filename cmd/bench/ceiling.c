/*
 * ceiling.c - the machine's ceiling stated beside the cases: memcpy's
 * bandwidth over buffers far larger than the caches, on one thread and on
 * every core this process may use, and that core count.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

/* Bytes copied per pass: 64 MiB, read once and written once. */
#define CEILING_BYTES ((size_t)64 << 20)
#define CEILING_PASSES 5

struct slice {
	char *dst;
	const char *src;
	size_t len;
};

static void *copy_slice(void *arg)
{
	struct slice *s = arg;
	memcpy(s->dst, s->src, s->len);
	return NULL;
}

/* The best MB/s of CEILING_PASSES copies of src to dst, cut in `threads`
 * slices copied at once (a slice whose thread cannot start is copied by
 * this one). */
static double best_mbps(char *dst, const char *src, int threads)
{
	struct slice *s = calloc((size_t)threads, sizeof *s);
	pthread_t *tid = calloc((size_t)threads, sizeof *tid);
	int *started = calloc((size_t)threads, sizeof *started);
	double best = 0;
	if (!s || !tid || !started)
		goto out;
	size_t per = CEILING_BYTES / (size_t)threads;
	for (int i = 0; i < threads; i++)
		s[i] = (struct slice){ dst + (size_t)i * per, src + (size_t)i * per,
				       i == threads - 1 ? CEILING_BYTES - (size_t)i * per : per };
	for (int p = 0; p < CEILING_PASSES; p++) {
		double t0 = accel_now();
		for (int i = 1; i < threads; i++)
			started[i] = pthread_create(&tid[i], NULL, copy_slice, &s[i]) == 0;
		copy_slice(&s[0]);
		for (int i = 1; i < threads; i++)
			if (started[i])
				pthread_join(tid[i], NULL);
			else
				copy_slice(&s[i]);
		double dt = accel_now() - t0;
		if (dt > 0 && (double)CEILING_BYTES / dt / 1e6 > best)
			best = (double)CEILING_BYTES / dt / 1e6;
	}
out:
	free(s);
	free(tid);
	free(started);
	return best;
}

/* Measure the ceiling into b->ceiling; figures stay 0 when the buffers
 * cannot be had. */
void measure_ceiling(struct bench *b)
{
	b->ceiling.cores = accel_cpu_count();
	char *src = malloc(CEILING_BYTES), *dst = malloc(CEILING_BYTES);
	if (src && dst) {
		/* Touch every page first: the passes copy, not fault. */
		memset(src, 0x5a, CEILING_BYTES);
		memset(dst, 0, CEILING_BYTES);
		b->ceiling.mbps_1t = best_mbps(dst, src, 1);
		b->ceiling.mbps_all = best_mbps(dst, src, b->ceiling.cores > 0 ? b->ceiling.cores : 1);
	}
	free(src);
	free(dst);
}
