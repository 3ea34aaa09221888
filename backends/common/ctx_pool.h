/*
 * ctx_pool.h - what the GPU backends that keep worker contexts between
 * jobs share (cufft, vkfft): a process's pool of contexts idle since their
 * job ended, each with the engine it was opened on. A later job's open
 * takes one its backend finds fit for the job (the same shape: what the
 * context was made of), rather than making a device context, buffers,
 * kernels and a plan again; close puts one back, the oldest closed when
 * the pool is full; the engine's release closes its own. The backend
 * decides what fits and closes contexts; the pool only keeps them.
 */
#ifndef ACCEL_BACKEND_CTX_POOL_H
#define ACCEL_BACKEND_CTX_POOL_H

#include <pthread.h>

#define CTX_POOL_MAX 8

struct ctx_pool {
	pthread_mutex_t lock;
	int max;                       /* contexts kept at most, up to CTX_POOL_MAX */
	void (*close)(void *ctx);      /* the backend's: frees a context for good */
	int n;                         /* kept now, the newest last (under lock) */
	struct {
		const void *engine;
		void *ctx;
	} kept[CTX_POOL_MAX];
};
/* A pool of `max` contexts closed by `close`, for a static definition. */
#define CTX_POOL_INIT(max_, close_) { PTHREAD_MUTEX_INITIALIZER, (max_), (close_), 0, { { 0, 0 } } }

/* An idle context of `engine` for which fits(ctx, job) says 1 (the newest
 * first), taken out of the pool; fits may make the context serve the job
 * when it says 1 (it runs under the pool's lock). NULL when none fits. */
void *ctx_pool_take(struct ctx_pool *p, const void *engine, int (*fits)(void *ctx, const void *job),
		    const void *job);
/* Keep ctx, opened on `engine`, for a later job: the oldest kept is
 * closed when the pool is full. */
void ctx_pool_put(struct ctx_pool *p, const void *engine, void *ctx);
/* Close every context kept of `engine` (its release, before the device
 * state they were made from goes). */
void ctx_pool_drop(struct ctx_pool *p, const void *engine);

#endif
