/*
 * stream.c - the stream engine: reader -> bounded unit pool -> workers on the
 * route's engines -> reorder buffer -> writer. A unit stays owned by the run
 * until its output is written, so a unit an engine failed is run again on the
 * engine the fallback policy names, and the output stays complete and in order.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hwloc.h>
#include "core.h"

struct slot {                  /* one engine the run may use */
	const struct accel_engine *engine;
	int serving;               /* workers take units for it */
	int ranked;                /* on the route (else only a --fallback cpu target) */
	int failures;
	int dropped;
	struct accel_engine_stats st;
};

struct stream {
	struct accel_ctx *ctx;
	const struct accel_stream_config *cfg;
	const struct accel_op *op;
	struct accel_output *out;
	struct slot slots[ACCEL_ROUTE_MAX + 1];
	int nslots, cpu_slot;

	pthread_mutex_t lock;
	pthread_cond_t cond_free, cond_work, cond_write;
	struct accel_unit *units;
	size_t nunits;
	struct accel_unit **free_list;
	size_t nfree;
	struct accel_unit **queue;     /* FIFO ring of units to run */
	size_t qhead, qlen;
	struct core_reorder reorder;
	uint64_t issued, written;
	int reader_done, stop;
	int rc;
	char *err;
	size_t errlen;
	struct accel_progress *progress;
	uint64_t bytes_in, bytes_out;
};

struct worker {
	pthread_t thread;
	struct stream *s;
	int slot;                      /* the engine it serves */
	void *ctx[ACCEL_ROUTE_MAX + 1];/* per-engine contexts, opened lazily */
	int opened[ACCEL_ROUTE_MAX + 1];
};

/* Record the first error of the run and stop everything. Lock held. */
static void fail_locked(struct stream *s, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail_locked(struct stream *s, int rc, const char *fmt, ...)
{
	if (!s->rc) {
		s->rc = rc;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(s->err, s->errlen, fmt, ap);
		va_end(ap);
	}
	s->stop = 1;
	pthread_cond_broadcast(&s->cond_free);
	pthread_cond_broadcast(&s->cond_work);
	pthread_cond_broadcast(&s->cond_write);
}

/* Run u on slot i once: fault injection, lazy open, the backend's run. */
static int run_on(struct worker *w, int i, struct accel_unit *u, char *err, size_t len)
{
	struct stream *s = w->s;
	struct slot *sl = &s->slots[i];
	const struct accel_backend *b = sl->engine->backend;
	if (core_fault_hit(sl->engine->name, u->seq)) {
		snprintf(err, len, "injected fault (ACCEL_FAULT)");
		return ACCEL_EDEVICE;
	}
	if (!w->opened[i]) {
		int rc = b->open(sl->engine, s->op, &w->ctx[i]);
		if (rc < 0) {
			snprintf(err, len, "cannot open engine: %s", accel_strerror(rc));
			return rc == ACCEL_EDATA ? ACCEL_EDEVICE : rc;
		}
		w->opened[i] = 1;
	}
	u->out.len = 0;
	double t0 = accel_now();
	int rc = b->run(w->ctx[i], u, err, len);
	double dt = accel_now() - t0;
	pthread_mutex_lock(&s->lock);
	sl->st.busy_seconds += dt;
	if (rc == 0) {
		sl->st.units++;
		sl->st.bytes_in += u->in.len;
		sl->st.bytes_out += u->out.len;
		u->engine = sl->engine;
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* The engine to retry on after slot i failed, or -1. Lock held. */
static int retry_slot(struct stream *s, int i)
{
	switch (s->cfg->fallback) {
	case ACCEL_FALLBACK_NONE:
		return -1;
	case ACCEL_FALLBACK_CPU:
		return s->cpu_slot >= 0 && i != s->cpu_slot && !s->slots[s->cpu_slot].dropped ? s->cpu_slot : -1;
	case ACCEL_FALLBACK_NEXT:
		for (int k = i + 1; k < s->nslots; k++)
			if (s->slots[k].ranked && !s->slots[k].dropped)
				return k;
		return -1;
	}
	return -1;
}

/* Run u, moving to other engines as the policy says. */
static int process(struct worker *w, struct accel_unit *u)
{
	struct stream *s = w->s;
	char err[256];
	int i = w->slot;
	pthread_mutex_lock(&s->lock);
	if (s->slots[i].dropped) {
		int r = retry_slot(s, i);
		if (r < 0) {
			pthread_mutex_unlock(&s->lock);
			return ACCEL_ENOENGINE;
		}
		i = r;
	}
	pthread_mutex_unlock(&s->lock);
	for (;;) {
		err[0] = 0;
		int rc = run_on(w, i, u, err, sizeof err);
		if (rc == 0)
			return 0;
		pthread_mutex_lock(&s->lock);
		if (rc == ACCEL_EDATA || rc == ACCEL_ENOMEM) {
			fail_locked(s, rc, "%s at byte offset %llu (unit %llu)", err[0] ? err : accel_strerror(rc),
				    (unsigned long long)u->offset, (unsigned long long)u->seq);
			pthread_mutex_unlock(&s->lock);
			return rc;
		}
		struct slot *sl = &s->slots[i];
		sl->st.failures++;
		int max = s->cfg->max_failures > 0 ? s->cfg->max_failures : 3;
		int dropped_now = ++sl->failures >= max && !sl->dropped;
		if (dropped_now)
			sl->dropped = sl->st.dropped = 1;
		int r = retry_slot(s, i);
		if (r < 0) {
			fail_locked(s, ACCEL_EDEVICE, "%s: unit %llu (byte offset %llu) failed: %s; %s",
				    sl->engine->name, (unsigned long long)u->seq, (unsigned long long)u->offset, err,
				    s->cfg->fallback == ACCEL_FALLBACK_NONE ? "--fallback none" : "no engine left to retry on");
			pthread_mutex_unlock(&s->lock);
			return ACCEL_EDEVICE;
		}
		s->slots[r].st.retried++;
		if (s->cfg->verbose >= 0 && (sl->failures == 1 || dropped_now))
			accel_msg_warn("%s: unit %llu failed: %s; retrying on %s%s", sl->engine->name,
				       (unsigned long long)u->seq, err, s->slots[r].engine->name,
				       dropped_now ? " (engine dropped for the rest of the run)" : "");
		pthread_mutex_unlock(&s->lock);
		i = r;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct stream *s = w->s;
	for (;;) {
		pthread_mutex_lock(&s->lock);
		while (!s->stop && !s->qlen && !s->reader_done)
			pthread_cond_wait(&s->cond_work, &s->lock);
		if (s->stop || !s->qlen) {
			pthread_mutex_unlock(&s->lock);
			break;
		}
		struct accel_unit *u = s->queue[s->qhead];
		s->qhead = (s->qhead + 1) % s->nunits;
		s->qlen--;
		pthread_mutex_unlock(&s->lock);

		if (process(w, u) < 0) {
			pthread_mutex_lock(&s->lock);
			if (!s->rc)
				fail_locked(s, ACCEL_ENOENGINE, "no engine left to run unit %llu",
					    (unsigned long long)u->seq);
			pthread_mutex_unlock(&s->lock);
			break;
		}
		pthread_mutex_lock(&s->lock);
		if (core_reorder_put(&s->reorder, u) < 0)
			fail_locked(s, ACCEL_EINVAL, "internal error: unit %llu outside the reorder window",
				    (unsigned long long)u->seq);
		pthread_cond_signal(&s->cond_write);
		pthread_mutex_unlock(&s->lock);
	}
	for (int i = 0; i < s->nslots; i++)
		if (w->opened[i])
			s->slots[i].engine->backend->close(w->ctx[i]);
	return NULL;
}

static void *writer_main(void *arg)
{
	struct stream *s = arg;
	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct accel_unit *u = s->stop ? NULL : core_reorder_take(&s->reorder);
		if (u) {
			pthread_mutex_unlock(&s->lock);
			int rc = accel_output_write(s->out, u->out.data, u->out.len);
			pthread_mutex_lock(&s->lock);
			if (rc < 0) {
				fail_locked(s, rc, "cannot write %s: %s", s->out->path ? s->out->path : "stdout",
					    rc == ACCEL_EIO ? strerror(errno) : accel_strerror(rc));
				break;
			}
			s->bytes_in += u->in.len;
			s->bytes_out += u->out.len;
			if (s->progress)
				accel_progress_update(s->progress, u->offset + u->in.len);
			s->free_list[s->nfree++] = u;
			s->written++;
			pthread_cond_signal(&s->cond_free);
			continue;
		}
		if (s->stop || (s->reader_done && s->written == s->issued))
			break;
		pthread_cond_wait(&s->cond_write, &s->lock);
	}
	pthread_cond_broadcast(&s->cond_free);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Bind a device engine's worker near the device's NUMA node (hwloc). Only
 * where there is more than one node: elsewhere the scheduler knows best. */
static void place_worker(const struct accel_device *d)
{
	if (d->numa_node < 0 || access("/sys/devices/system/node/node1", F_OK) != 0)
		return;
	hwloc_topology_t topo;
	if (hwloc_topology_init(&topo) < 0)
		return;
	if (hwloc_topology_load(topo) == 0) {
		hwloc_obj_t node = hwloc_get_numanode_obj_by_os_index(topo, (unsigned)d->numa_node);
		if (node && node->cpuset)
			hwloc_set_cpubind(topo, node->cpuset, HWLOC_CPUBIND_THREAD);
	}
	hwloc_topology_destroy(topo);
}

static void *device_worker_main(void *arg)
{
	struct worker *w = arg;
	struct stream *s = w->s;
	place_worker(accel_device_at(s->ctx, s->slots[w->slot].engine->device));
	return worker_main(arg);
}

static int setup_slots(struct stream *s, const struct accel_route *route)
{
	s->cpu_slot = -1;
	for (int i = 0; i < route->nranked; i++) {
		struct slot *sl = &s->slots[s->nslots++];
		sl->engine = route->entries[i].engine;
		sl->ranked = 1;
		sl->serving = route->shared || i == 0;
		if (sl->engine->backend == &accel_backend_cpu)
			s->cpu_slot = s->nslots - 1;
	}
	if (s->cpu_slot < 0) {
		const struct accel_engine *cpu = accel_cpu_engine(s->ctx);
		if (cpu) {
			char why[128];
			double prior;
			if (cpu->backend->supports(cpu, s->op, &prior, why, sizeof why) == 0) {
				s->slots[s->nslots].engine = cpu;
				s->cpu_slot = s->nslots++;
			}
		}
	}
	for (int i = 0; i < s->nslots; i++)
		core_strlcpy(s->slots[i].st.name, s->slots[i].engine->name, sizeof s->slots[i].st.name);
	return s->nslots ? 0 : ACCEL_ENOENGINE;
}

/* Process input the route cannot cut into units, on the first engine whose
 * backend has a stream function. Called with every issued unit written. */
static int run_serial(struct stream *s, struct accel_input *in, void **ctx, int *ctx_slot)
{
	int i = -1;
	for (int k = 0; k < s->nslots && i < 0; k++)
		if (s->slots[k].engine->backend->stream && !s->slots[k].dropped)
			i = k;
	if (i < 0) {
		pthread_mutex_lock(&s->lock);
		fail_locked(s, ACCEL_ENOENGINE, "no engine on the route can process this input sequentially");
		pthread_mutex_unlock(&s->lock);
		return ACCEL_ENOENGINE;
	}
	const struct accel_backend *b = s->slots[i].engine->backend;
	if (*ctx_slot != i) {
		if (*ctx_slot >= 0)
			s->slots[*ctx_slot].engine->backend->close(*ctx);
		*ctx_slot = -1;
		int rc = b->open(s->slots[i].engine, s->op, ctx);
		if (rc < 0) {
			pthread_mutex_lock(&s->lock);
			fail_locked(s, rc, "%s: cannot open engine: %s", s->slots[i].engine->name, accel_strerror(rc));
			pthread_mutex_unlock(&s->lock);
			return rc;
		}
		*ctx_slot = i;
	}
	char err[256] = "";
	uint64_t off = in->offset, w0 = s->out->written;
	double t0 = accel_now();
	int rc = b->stream(*ctx, in, s->out, err, sizeof err);
	int read_errno = errno;
	pthread_mutex_lock(&s->lock);
	struct slot *sl = &s->slots[i];
	sl->st.busy_seconds += accel_now() - t0;
	sl->st.bytes_in += in->offset - off;
	sl->st.bytes_out += s->out->written - w0;
	s->bytes_in += in->offset - off;
	s->bytes_out += s->out->written - w0;
	if (rc == ACCEL_EIO && !err[0] && s->out->error)
		fail_locked(s, rc, "cannot write %s: %s", s->out->path ? s->out->path : "stdout",
			    strerror(s->out->error));
	else if (rc == ACCEL_EIO && !err[0])
		fail_locked(s, rc, "cannot read %s: %s", in->name, strerror(read_errno));
	else if (rc < 0)
		fail_locked(s, rc, "%s", err[0] ? err : accel_strerror(rc));
	if (s->progress)
		accel_progress_update(s->progress, in->offset);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int accel_stream_run(struct accel_ctx *ctx, const struct accel_stream_config *cfg,
		     const struct accel_route *route, const struct accel_op *op,
		     const struct accel_stream_ops *ops, void *user,
		     struct accel_input *in, struct accel_output *out,
		     struct accel_stream_stats *stats, char *err, size_t len)
{
	struct stream st, *s = &st;
	memset(s, 0, sizeof st);
	s->ctx = ctx;
	s->cfg = cfg;
	s->op = op;
	s->out = out;
	s->err = err;
	s->errlen = len;
	err[0] = 0;
	if (stats)
		memset(stats, 0, sizeof *stats);
	if (accel_fault_check(ctx, err, len) < 0)
		return ACCEL_EINVAL;
	if (setup_slots(s, route) < 0) {
		snprintf(err, len, "no engine can run %s", op->name);
		return ACCEL_ENOENGINE;
	}
	int cpus = cfg->threads > 0 ? cfg->threads : accel_cpu_count();
	int nworkers = 0;
	for (int i = 0; i < s->nslots; i++) {
		if (!s->slots[i].serving)
			continue;
		s->slots[i].st.workers = s->slots[i].engine->backend == &accel_backend_cpu ? cpus : 1;
		nworkers += s->slots[i].st.workers;
	}
	s->nunits = (size_t)nworkers * 2 + 2;
	s->units = calloc(s->nunits, sizeof *s->units);
	s->free_list = calloc(s->nunits, sizeof *s->free_list);
	s->queue = calloc(s->nunits, sizeof *s->queue);
	struct worker *workers = calloc((size_t)nworkers, sizeof *workers);
	if (!s->units || !s->free_list || !s->queue || !workers || core_reorder_init(&s->reorder, s->nunits)) {
		free(s->units); free(s->free_list); free(s->queue); free(workers);
		snprintf(err, len, "out of memory");
		return ACCEL_ENOMEM;
	}
	for (size_t i = 0; i < s->nunits; i++)
		s->free_list[s->nfree++] = &s->units[i];
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond_free, NULL);
	pthread_cond_init(&s->cond_work, NULL);
	pthread_cond_init(&s->cond_write, NULL);
	if (cfg->progress)
		s->progress = accel_progress_new(op->name, cfg->total_size);
	double t0 = accel_now();

	int rc = ops->begin ? ops->begin(user, out) : 0;
	if (rc < 0)
		fail_locked(s, rc, "cannot write the header: %s", accel_strerror(rc));

	pthread_t writer;
	int nstarted = 0;
	pthread_create(&writer, NULL, writer_main, s);
	for (int i = 0, k = 0; i < s->nslots; i++) {
		for (int j = 0; s->slots[i].serving && j < s->slots[i].st.workers; j++, k++) {
			workers[k].s = s;
			workers[k].slot = i;
			int dev = s->slots[i].engine->backend != &accel_backend_cpu;
			if (pthread_create(&workers[k].thread, NULL, dev ? device_worker_main : worker_main,
					   &workers[k]) == 0)
				nstarted = k + 1;
		}
	}

	/* The reader runs on the calling thread. */
	void *serial_ctx = NULL;
	int serial_slot = -1;
	char rerr[256];
	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		while (!s->stop && !s->nfree)
			pthread_cond_wait(&s->cond_free, &s->lock);
		if (s->stop)
			break;
		struct accel_unit *u = s->free_list[--s->nfree];
		pthread_mutex_unlock(&s->lock);
		u->seq = s->issued;
		u->last = 0;
		u->out_hint = 0;
		u->in.len = u->out.len = 0;
		rerr[0] = 0;
		int r = ops->next(user, in, u, rerr, sizeof rerr);
		pthread_mutex_lock(&s->lock);
		if (r == 1) {
			s->queue[(s->qhead + s->qlen++) % s->nunits] = u;
			s->issued++;
			pthread_cond_signal(&s->cond_work);
			if (u->last)
				break;
			continue;
		}
		s->free_list[s->nfree++] = u;
		if (r == 0)
			break;
		if (r == ACCEL_STREAM_SERIAL) {
			while (!s->stop && s->written != s->issued)
				pthread_cond_wait(&s->cond_free, &s->lock);
			if (s->stop)
				break;
			pthread_mutex_unlock(&s->lock);
			run_serial(s, in, &serial_ctx, &serial_slot);
			pthread_mutex_lock(&s->lock);
			if (stats)
				stats->serial_regions++;
			continue;
		}
		if (r == ACCEL_EIO)
			fail_locked(s, r, "cannot read %s: %s", in->name, strerror(errno));
		else if (strstr(rerr, "byte offset"))
			fail_locked(s, r, "%s: %s", in->name, rerr);
		else
			fail_locked(s, r, "%s: %s at byte offset %llu", in->name, rerr[0] ? rerr : accel_strerror(r),
				    (unsigned long long)in->offset);
	}
	s->reader_done = 1;
	pthread_cond_broadcast(&s->cond_work);
	pthread_cond_broadcast(&s->cond_write);
	pthread_mutex_unlock(&s->lock);

	for (int k = 0; k < nstarted; k++)
		pthread_join(workers[k].thread, NULL);
	/* Workers may all have quit (every engine dropped) with units queued. */
	pthread_mutex_lock(&s->lock);
	if (!s->rc && s->qlen)
		fail_locked(s, ACCEL_ENOENGINE, "no engine left to run the remaining units");
	pthread_cond_broadcast(&s->cond_write);
	pthread_mutex_unlock(&s->lock);
	pthread_join(writer, NULL);
	if (serial_slot >= 0)
		s->slots[serial_slot].engine->backend->close(serial_ctx);

	if (!s->rc && ops->end && (rc = ops->end(user, out)) < 0)
		fail_locked(s, rc, "cannot write the trailer: %s", accel_strerror(rc));
	if (s->progress)
		accel_progress_end(s->progress);
	if (stats) {
		stats->units = s->written;
		stats->bytes_in = s->bytes_in;
		stats->bytes_out = s->bytes_out;
		stats->seconds = accel_now() - t0;
		stats->nengines = s->nslots;
		for (int i = 0; i < s->nslots; i++)
			stats->engines[i] = s->slots[i].st;
	}
	for (size_t i = 0; i < s->nunits; i++) {
		accel_buf_free(&s->units[i].in);
		accel_buf_free(&s->units[i].out);
	}
	free(s->units);
	free(s->free_list);
	free(s->queue);
	free(workers);
	core_reorder_free(&s->reorder);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond_free);
	pthread_cond_destroy(&s->cond_work);
	pthread_cond_destroy(&s->cond_write);
	return s->rc;
}

void accel_stream_stats_print(const struct accel_stream_stats *s, FILE *f)
{
	fprintf(f, "%llu units, %llu bytes in, %llu bytes out in %.3f s (%.1f MB/s of input)\n",
		(unsigned long long)s->units, (unsigned long long)s->bytes_in,
		(unsigned long long)s->bytes_out, s->seconds,
		s->seconds > 0 ? s->bytes_in / s->seconds / 1e6 : 0.0);
	if (s->serial_regions)
		fprintf(f, "  %llu region(s) processed sequentially (not cut into units)\n",
			(unsigned long long)s->serial_regions);
	for (int i = 0; i < s->nengines; i++) {
		const struct accel_engine_stats *e = &s->engines[i];
		fprintf(f, "  %-16s workers %d, units %llu, in %llu B, out %llu B, busy %.3f s, failures %llu, retried here %llu%s\n",
			e->name, e->workers, (unsigned long long)e->units, (unsigned long long)e->bytes_in,
			(unsigned long long)e->bytes_out, e->busy_seconds, (unsigned long long)e->failures,
			(unsigned long long)e->retried, e->dropped ? ", dropped" : "");
	}
}
