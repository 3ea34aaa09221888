/*
 * ctx_pool.c - a process's idle worker contexts of the GPU backends
 * (ctx_pool.h).
 */
#include <string.h>
#include "ctx_pool.h"

/* Kept context i removed, the order of the others kept. Lock held. */
static void *remove_at(struct ctx_pool *p, int i)
{
	void *ctx = p->kept[i].ctx;
	memmove(&p->kept[i], &p->kept[i + 1], (size_t)(p->n - i - 1) * sizeof p->kept[0]);
	p->n--;
	return ctx;
}

void *ctx_pool_take(struct ctx_pool *p, const void *engine, int (*fits)(void *ctx, const void *job),
		    const void *job)
{
	void *ctx = NULL;
	pthread_mutex_lock(&p->lock);
	for (int i = p->n; !ctx && i-- > 0;)
		if (p->kept[i].engine == engine && fits(p->kept[i].ctx, job))
			ctx = remove_at(p, i);
	pthread_mutex_unlock(&p->lock);
	return ctx;
}

void ctx_pool_put(struct ctx_pool *p, const void *engine, void *ctx)
{
	void *old = NULL;
	int max = p->max < 1 ? 1 : p->max > CTX_POOL_MAX ? CTX_POOL_MAX : p->max;
	pthread_mutex_lock(&p->lock);
	if (p->n == max)
		old = remove_at(p, 0);
	p->kept[p->n].engine = engine;
	p->kept[p->n].ctx = ctx;
	p->n++;
	pthread_mutex_unlock(&p->lock);
	if (old)
		p->close(old);
}

void ctx_pool_drop(struct ctx_pool *p, const void *engine)
{
	for (;;) {
		void *ctx = NULL;
		pthread_mutex_lock(&p->lock);
		for (int i = 0; !ctx && i < p->n; i++)
			if (p->kept[i].engine == engine)
				ctx = remove_at(p, i);
		pthread_mutex_unlock(&p->lock);
		if (!ctx)
			return;
		p->close(ctx);
	}
}
