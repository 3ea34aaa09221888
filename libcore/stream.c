/*
 * stream.c - the stream engine: reader -> bounded unit pool -> workers on the
 * route's engines -> reorder buffer -> output, written by the worker that
 * finishes the next unit in order (no writer thread, no hand-off per unit).
 * A unit stays owned by the run until its output is written, so a unit an
 * engine failed is run again on the engine the fallback policy names, and
 * the output stays complete and in order.
 * An engine's workers start when it begins to serve: at the start for the
 * route's serving engines, mid-run for the one taking over from a dropped
 * engine. Units in flight are bounded by the worker count and a memory cap.
 * With cfg->worker_reads, a mapped input's units are read by the workers
 * themselves (no reader hand-off); the calling thread waits for the job.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <accel/cli.h>
#include <accel/stream.h>
#include "core.h"
#include "hwloc_dl.h"

/* Bytes of a mapped input let go of at a time (see
 * write_unit_locked): 128 madvise calls for 256 MiB rather than one per
 * 256 KiB unit, at most this much more of the file mapped into the
 * process. */
#define DROP_BATCH ((size_t)2 << 20)

/* With cfg->worker_reads 2, a job's units start on JOIN_FIRST workers; the
 * others join it once a unit has run JOIN_AFTER seconds (one waiting
 * worker, the scout, looks every JOIN_LOOK). Units of a few microseconds
 * (the hash of a one-line file) gain nothing from more workers but the
 * lock's traffic: 2000 such files on the 16-core host of an H200 took
 * 16.1 ms and 55 ms of CPU on 16 workers, 12.7 ms and 18 ms on 2
 * (sha256sum: 17.6 and 14); joining so, 11.9 ms and 21 ms against 14.2
 * and 48 in the same runs, and 500 files of 200 KiB, 32 of 8 MiB and
 * those mixed took the time they took on 16 workers. Longer units bring
 * every worker in within about JOIN_LOOK. A run is timed from the
 * engine's run() (run_on), its opening left out: timed from the pull,
 * the first unit's opening alone brought every worker in. */
#define JOIN_FIRST 2
#define JOIN_AFTER 50e-6
#define JOIN_LOOK 100e-6

struct slot {                  /* one engine the run may use */
	const struct accel_engine *engine;
	int serving;               /* its workers were started */
	int ranked;                /* on the route (else only a --fallback cpu target) */
	int failures;
	int dropped;
	/* Its backend's verify() (a check the route left to the first use):
	 * 1 to run before the engine is first opened, 0 passed or none, -1
	 * failed (check_why). Written under check_lock and lock both. */
	int check;
	char check_why[160];
	struct accel_engine_stats st;
};

struct worker {
	pthread_t thread;
	struct stream *s;
	int slot;                      /* the engine it serves */
	void *ctx[ACCEL_ROUTE_MAX + 1];/* per-engine contexts, opened lazily */
	int opened[ACCEL_ROUTE_MAX + 1];
	/* The input buffer of the units it reads itself (u->in_at), lent to
	 * each such unit from its read to the end of its run: the worker's
	 * preads land in the same lines of its core's cache every time, as a
	 * program that reads each batch into one buffer has them. */
	struct accel_buf in;
	/* The output buffer of the units whose output it writes at their
	 * place itself (s->direct), lent to each for its run, so the rows
	 * land in the same lines of its core's cache every time, as the
	 * input's do. Session 26: c2c FFTs of 64 MiB to /dev/null on the
	 * 2-core VM took 24.9 ms and 17.9 ms of user time with the output
	 * in the unit (one of 6, written in order, last written by either
	 * core), 23.2 and 13.7 with one buffer a worker; FFTW direct 21.6 and
	 * 14.1. */
	struct accel_buf out;
	int joined;                    /* takes part in the pulling job (s->njoined) */
	double run_since;              /* when its engine began the unit's run, 0: none (atomic) */
};

struct stream {
	struct accel_ctx *ctx;
	const struct accel_stream_config *cfg;
	const struct accel_op *op;
	struct accel_output *out;
	void *user;                    /* the job's, for cfg->write */
	struct accel_input *in;        /* the job's input (mapped: pages dropped behind the writes) */
	const uint8_t *drop_from;      /* its mapped bytes written but not dropped yet start here */
	struct slot slots[ACCEL_ROUTE_MAX + 1];
	int nslots, cpu_slot;
	int cpus;                      /* workers of the CPU engine */

	pthread_mutex_t lock;
	pthread_mutex_t check_lock;    /* one slot's check at a time (check_slot); taken before lock */
	pthread_cond_t cond_free, cond_work;
	struct worker *workers;        /* [0, nworkers) started */
	int nworkers, maxworkers;
	struct accel_unit *units;
	unsigned char *held;           /* held[i]: units[i] holds buffers */
	int64_t *mapped_at;            /* units[i]'s bytes in the mapped input it claimed (in_at), or -1 */
	/* The job's output takes writes at a place (core_output_positioned)
	 * and its ops give each unit's (out_at): out_at[i] is units[i]'s
	 * from direct_base, -1 none; direct_done[i]: its worker wrote it.
	 * direct_pos: the bytes of the units counted in order (the output's
	 * end so far); placing:
	 * workers between deciding to write a unit at its place and having
	 * written it (the job's places end only when none is). */
	int direct, placing, placing_wait;
	uint64_t direct_base, direct_pos;
	int64_t *out_at;
	unsigned char *direct_done;
	const struct accel_stream_ops *job_ops;
	size_t nunits;
	struct accel_unit **free_list; /* a stack: the units used last are used again */
	const struct worker **runner;  /* runner[i]: the worker that ran units[i] last, or NULL */
	size_t nfree;
	size_t busy;                   /* units out of the free list */
	size_t limit;                  /* most units out at once */
	size_t nheld;                  /* units holding buffers */
	size_t busy_max;
	uint64_t mem_limit;            /* cap on bytes of units in flight, 0: none */
	uint64_t unit_bytes;           /* largest bytes (in + out) of one unit seen */
	uint64_t retried;              /* units run again after a failure */
	struct accel_unit **queue;     /* FIFO ring of units to run */
	size_t qhead, qlen;
	struct core_reorder reorder;
	uint64_t issued, written;
	int reader_done, stop;
	int writing;                   /* a thread is writing units (write_ready_locked) */
	int wake_reader;               /* cond_free to signal once the lock is let go (unlock_wake) */
	int rc;
	uint64_t bad_unit;             /* the unit whose data error s->err holds */
	uint64_t cut;                  /* no unit from this one on is written (NO_CUT: none) */
	int end_cut;                   /* the cut is where the data ended (accel_unit.in_end), no error */
	uint64_t data_end;             /* 1 + the input offset where it ended (stats' data_end) */
	char *err;
	size_t errlen;
	struct accel_progress *progress;
	uint64_t bytes_in, bytes_out;  /* of the job being run; input without overlap */
	uint64_t serial_regions;
	struct worker *inline_worker;  /* cfg->inline_units in effect: the calling thread's */
	/* cfg->worker_reads on a mapped input: the job's units are read by
	 * the workers (pull_locked) while `pulling`; how the reading ended
	 * (0 at the end, ACCEL_STREAM_SERIAL or an error, with its errno and
	 * line) for the calling thread, which waits meanwhile. */
	const struct accel_stream_ops *pull_ops;
	void *pull_user;
	struct accel_input *pull_in;
	int pull_job;                  /* this job's units are read by the workers */
	int pulling;
	int pull_rc, pull_errno;
	char pull_err[256];
	int idle_workers;              /* workers waiting on cond_work while pulling */
	/* Workers that may pull the job's units, and those that do; a
	 * worker not needed yet waits on cond_join, one of them (the scout)
	 * looking every JOIN_LOOK whether units run long. */
	int want, njoined;
	const struct worker *scout;
	pthread_cond_t cond_join;
	int wake_worker;               /* cond_work to signal once the lock is let go (unlock_wake) */
};

#define NO_CUT UINT64_MAX

/* Every waiting worker looks again (those waiting to join too). Lock held. */
static void wake_workers(struct stream *s)
{
	pthread_cond_broadcast(&s->cond_work);
	pthread_cond_broadcast(&s->cond_join);
}

static const char *prog(const struct stream *s)
{
	return s->cfg->prog ? s->cfg->prog : "accel";
}

/* Record the first error of the run and stop everything (a data error
 * that cut_locked recorded stays the one reported: what fails while the
 * units before it are written may as well be a later unit's). Lock held. */
static void fail_locked(struct stream *s, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail_locked(struct stream *s, int rc, const char *fmt, ...)
{
	/* A cut where the data ended is no error: this one is. */
	if (!s->rc || s->end_cut) {
		s->end_cut = 0;
		s->data_end = 0;
		s->rc = rc;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(s->err, s->errlen, fmt, ap);
		va_end(ap);
	}
	s->stop = 1;
	pthread_cond_broadcast(&s->cond_free);
	wake_workers(s);
}

/* Unit u's input is bad (a data error: never run again elsewhere). As a
 * serial run does, and as zstd -d, gzip -d and age do with a file damaged
 * in its middle, the units before it are still run and written whole; the
 * run then fails with its line, and nothing from u on is written but
 * (keep 1) the good output the engine kept in it (u->out_good). Which
 * of those units had been written when it failed would otherwise depend
 * on timing. Of several bad units the first in the stream is reported.
 * Lock held. */
static void cut_locked(struct stream *s, const struct accel_unit *u, int keep, const char *err)
{
	if ((s->rc && s->cut == NO_CUT) || s->stop || (s->cut != NO_CUT && u->seq >= s->bad_unit))
		return;
	s->bad_unit = u->seq;
	s->cut = u->seq + keep;
	s->rc = ACCEL_EDATA;
	s->end_cut = keep && u->in_end;
	s->data_end = s->end_cut ? u->offset + u->in_end + 1 : 0;
	snprintf(s->err, s->errlen, "%s at byte offset %llu (unit %llu)", err[0] ? err : accel_strerror(ACCEL_EDATA),
		 (unsigned long long)u->offset, (unsigned long long)u->seq);
	if (s->written >= s->cut)
		s->stop = 1;
	/* The reader stops reading; idle workers look again. */
	pthread_cond_broadcast(&s->cond_free);
	wake_workers(s);
}

/* Units that may be out of the free list at once: two per worker started
 * plus two, fewer when the memory cap holds fewer units of the largest size
 * seen, never fewer than one. Lock held. */
static void update_limit_locked(struct stream *s)
{
	size_t n = 2 * (size_t)s->nworkers + 2;
	if (s->mem_limit && s->unit_bytes && s->mem_limit / s->unit_bytes < n)
		n = s->mem_limit / s->unit_bytes ? (size_t)(s->mem_limit / s->unit_bytes) : 1;
	if (n > s->nunits)
		n = s->nunits;
	if (n > s->limit) {
		pthread_cond_broadcast(&s->cond_free);
		if (s->idle_workers)
			wake_workers(s);
	}
	s->limit = n;
}

/* Account for the bytes unit u holds or is about to hold: its input and
 * its output buffer, or the output it is expected to need (out_hint, else a
 * compression bound of its input). Lock held. */
static void measure_locked(struct stream *s, struct accel_unit *u)
{
	uint64_t out = u->out_hint ? u->out_hint : u->in.len + u->in.len / 8;
	if (out < u->out.cap)
		out = u->out.cap;
	/* A unit still to be read holds its worker's buffer of in.len. */
	uint64_t bytes = (u->in_at >= 0 && u->in.len > u->in.cap ? u->in.len : u->in.cap) + out;
	size_t i = (size_t)(u - s->units);
	if (!s->held[i] && (u->in.cap || u->out.cap)) {
		s->held[i] = 1;
		s->nheld++;
	}
	if (bytes > s->unit_bytes) {
		s->unit_bytes = bytes;
		update_limit_locked(s);
	}
}

/* Give unit u back to the free list. While more units hold buffers than
 * may be in flight (the cap was lowered), its buffers are freed. The reader
 * waiting for a free unit is woken when it can issue half of the units in
 * flight, at least two (one wake-up per several units: 186 context switches
 * rather than 259 in a 64 MiB r2c N=1024 run on 2 workers), or when none is
 * out (the end of a job), by the next unlock_wake: woken under the lock, it
 * would only block on it. While the workers read the units (s->pull_job),
 * the calling thread waits for the job's end only, and a worker waiting
 * for a free unit is woken as soon as one is free: a worker asleep is a
 * core idle, and one woken only when half the units are free may sleep
 * while the others keep them in use. Lock held. */
static void release_locked(struct stream *s, struct accel_unit *u)
{
	size_t i = (size_t)(u - s->units);
	if (s->held[i] && s->nheld > s->limit) {
		accel_buf_free(&u->in);
		accel_buf_free(&u->out);
		s->held[i] = 0;
		s->nheld--;
	}
	s->free_list[s->nfree++] = u;
	s->busy--;
	size_t batch = s->limit / 2 > 2 ? s->limit / 2 : 2;
	if (s->pull_job) {
		if (!s->busy && !s->pulling)
			s->wake_reader = 1;
		if (s->pulling && s->idle_workers)
			s->wake_worker = 1;
		return;
	}
	if (!s->busy || s->limit <= batch || s->busy + batch <= s->limit)
		s->wake_reader = 1;
}

/* Let go of the lock, then wake the reader, or a worker waiting for a
 * free unit to read, if release_locked asked to. */
static void unlock_wake(struct stream *s)
{
	int wake = s->wake_reader, work = s->wake_worker;
	s->wake_reader = s->wake_worker = 0;
	pthread_mutex_unlock(&s->lock);
	if (wake)
		pthread_cond_signal(&s->cond_free);
	if (work)
		pthread_cond_signal(&s->cond_work);
}

static void *worker_main(void *arg);
static void *device_worker_main(void *arg);

/* Whether engine e runs on the CPU device (the built-in cpu backend or a
 * plugin's CPU engine: FFTW, OpenSSL, ONNX Runtime's CPU provider). */
static int on_cpu(const struct stream *s, const struct accel_engine *e)
{
	const struct accel_device *d = accel_device_at(s->ctx, e->device);
	return e->backend == &accel_backend_cpu || (d && d->cls == ACCEL_CLASS_CPU);
}

/* Workers engine e gets: the configured number of CPU workers for an
 * engine on the CPU device; for a device engine one per unit its backend
 * keeps in flight (queue_depth, at least 1, at most ACCEL_QUEUE_DEPTH_MAX),
 * each with its own context, so upload, compute and download of different
 * units overlap. */
static int engine_workers(const struct stream *s, const struct accel_engine *e)
{
	if (on_cpu(s, e))
		return s->cpus;
	int depth = e->backend->queue_depth;
	return depth < 1 ? 1 : depth > ACCEL_QUEUE_DEPTH_MAX ? ACCEL_QUEUE_DEPTH_MAX : depth;
}

/* Start the workers of slot i (engine_workers). A thread that cannot be
 * created ends the run. Returns 0, or ACCEL_ENOMEM. Lock held. */
static int serve_locked(struct stream *s, int i)
{
	struct slot *sl = &s->slots[i];
	if (sl->serving)
		return 0;
	sl->serving = 1;
	int cpu = on_cpu(s, sl->engine);
	for (int j = 0; j < engine_workers(s, sl->engine) && s->nworkers < s->maxworkers; j++) {
		struct worker *w = &s->workers[s->nworkers];
		w->s = s;
		w->slot = i;
		int rc = pthread_create(&w->thread, NULL, cpu ? worker_main : device_worker_main, w);
		if (rc) {
			fail_locked(s, ACCEL_ENOMEM, "cannot start a worker thread for %s: %s",
				    sl->engine->name, strerror(rc));
			return ACCEL_ENOMEM;
		}
		s->nworkers++;
		sl->st.workers++;
	}
	update_limit_locked(s);
	return 0;
}

/* Slot i's check deferred by the route (verify), run once for the whole
 * stream: a worker that needs it while another runs it waits for that
 * answer. 0, or ACCEL_ENOTSUP with the reason in err. */
static int check_slot(struct stream *s, int i, char *err, size_t len)
{
	struct slot *sl = &s->slots[i];
	pthread_mutex_lock(&s->check_lock);
	if (sl->check > 0) {
		char why[sizeof sl->check_why] = "";
		int rc = sl->engine->backend->verify(sl->engine, s->op, why, sizeof why);
		pthread_mutex_lock(&s->lock);
		if (rc < 0)
			core_strlcpy(sl->check_why, why[0] ? why : "cannot run this operation", sizeof sl->check_why);
		sl->check = rc < 0 ? -1 : 0;
		pthread_mutex_unlock(&s->lock);
	}
	int rc = sl->check < 0 ? ACCEL_ENOTSUP : 0;
	if (rc)
		snprintf(err, len, "%s", sl->check_why);
	pthread_mutex_unlock(&s->check_lock);
	return rc;
}

/* Run u on slot i once: fault injection, lazy open (after the slot's
 * check), the backend's run. */
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
		int rc = b->verify ? check_slot(s, i, err, len) : 0;
		if (rc < 0)
			return rc;
		rc = b->open(sl->engine, s->op, &w->ctx[i]);
		if (rc < 0) {
			snprintf(err, len, "cannot open engine: %s", accel_strerror(rc));
			return rc == ACCEL_EDATA ? ACCEL_EDEVICE : rc;
		}
		w->opened[i] = 1;
	}
	u->out.len = 0;
	double t0 = accel_now(), none = 0;
	/* For the scout (wait_to_join_locked): the run's start, the engine's
	 * opening left out. */
	__atomic_store(&w->run_since, &t0, __ATOMIC_RELAXED);
	int rc = b->run(w->ctx[i], u, err, len);
	__atomic_store(&w->run_since, &none, __ATOMIC_RELAXED);
	double dt = accel_now() - t0;
	pthread_mutex_lock(&s->lock);
	sl->st.busy_seconds += dt;
	if (rc == 0) {
		sl->st.units++;
		sl->st.bytes_in += u->in.len - u->in_overlap;
		sl->st.bytes_out += u->out.len;
		u->engine = sl->engine;
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* The engine to run a unit on after slot i failed it or was dropped, or -1;
 * never one the unit failed on already (bit k of tried: slot k). Lock held. */
static int retry_slot(struct stream *s, int i, uint64_t tried)
{
	switch (s->cfg->fallback) {
	case ACCEL_FALLBACK_NONE:
		return -1;
	case ACCEL_FALLBACK_CPU: {
		int c = s->cpu_slot;
		return c >= 0 && c != i && !s->slots[c].dropped && !(tried >> c & 1) ? c : -1;
	}
	case ACCEL_FALLBACK_NEXT:
		/* The next live engine of the route, wrapping around: in a
		 * shared route a unit may have started on any of them. */
		for (int d = 1; d < s->nslots; d++) {
			int k = (i + d) % s->nslots;
			if (s->slots[k].ranked && !s->slots[k].dropped && !(tried >> k & 1))
				return k;
		}
		return -1;
	}
	return -1;
}

/* -v: where a unit that failed somewhere ran in the end. */
static void report_retried(struct stream *s, const struct accel_unit *u, int i, uint64_t tried)
{
	char list[512] = "";
	size_t n = 0;
	for (int k = 0; k < s->nslots && n < sizeof list; k++)
		if (tried >> k & 1)
			n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", s->slots[k].engine->name);
	fprintf(stderr, "%s: unit %llu (byte offset %llu) ran on %s after failing on %s\n", prog(s),
		(unsigned long long)u->seq, (unsigned long long)u->offset, s->slots[i].engine->name, list);
}

/* Run u, moving to other engines as the policy says. */
static int process(struct worker *w, struct accel_unit *u)
{
	struct stream *s = w->s;
	char err[256];
	uint64_t tried = 0;
	int i = w->slot;
	pthread_mutex_lock(&s->lock);
	if (s->slots[i].dropped && (i = retry_slot(s, i, 0)) < 0) {
		pthread_mutex_unlock(&s->lock);
		return ACCEL_ENOENGINE;
	}
	pthread_mutex_unlock(&s->lock);
	for (;;) {
		err[0] = 0;
		u->out_good = 0;
		u->in_end = 0;
		int rc = run_on(w, i, u, err, sizeof err);
		if (rc == 0) {
			if (tried && s->cfg->verbose > 0)
				report_retried(s, u, i, tried);
			return 0;
		}
		pthread_mutex_lock(&s->lock);
		if (rc == ACCEL_EDATA) {
			/* The good output before the bad part is written as
			 * the unit's, in its turn; then the run ends. */
			int keep = (u->out_good && u->out_good <= u->out.len) || (u->in_end && u->in_end <= u->in.len);
			if (u->out_good > u->out.len)
				u->out_good = 0;
			cut_locked(s, u, keep, err);
			pthread_mutex_unlock(&s->lock);
			if (!keep)
				return rc;
			u->out.len = u->out_good;
			return 0;
		}
		/* A unit after a cut is not written: its failure fails
		 * nothing (a cut where the data ended stays no error). */
		if (u->seq >= s->cut) {
			pthread_mutex_unlock(&s->lock);
			return rc;
		}
		if (rc == ACCEL_ENOMEM) {
			fail_locked(s, rc, "%s at byte offset %llu (unit %llu)", err[0] ? err : accel_strerror(rc),
				    (unsigned long long)u->offset, (unsigned long long)u->seq);
			pthread_mutex_unlock(&s->lock);
			return rc;
		}
		struct slot *sl = &s->slots[i];
		if (!tried)
			s->retried++;
		tried |= (uint64_t)1 << i;
		sl->st.failures++;
		int max = s->cfg->max_failures > 0 ? s->cfg->max_failures : 3;
		/* An engine that failed its check fails every unit: dropped
		 * at once. */
		int dropped_now = (++sl->failures >= max || sl->check < 0) && !sl->dropped;
		if (dropped_now) {
			sl->dropped = sl->st.dropped = 1;
			wake_workers(s);
		}
		int r = retry_slot(s, i, tried);
		if (r < 0) {
			fail_locked(s, ACCEL_EDEVICE, "%s: unit %llu (byte offset %llu) failed: %s; %s",
				    sl->engine->name, (unsigned long long)u->seq, (unsigned long long)u->offset, err,
				    s->cfg->fallback == ACCEL_FALLBACK_NONE ? "--fallback none" : "no engine left to retry on");
			pthread_mutex_unlock(&s->lock);
			return ACCEL_EDEVICE;
		}
		s->slots[r].st.retried++;
		if (s->cfg->verbose > 0 || (s->cfg->verbose == 0 && (sl->failures == 1 || dropped_now)))
			accel_msg_warn("%s: unit %llu failed: %s; retrying on %s%s", sl->engine->name,
				       (unsigned long long)u->seq, err, s->slots[r].engine->name,
				       dropped_now ? " (engine dropped for the rest of the run)" : "");
		/* The units the dropped engine would have taken go to the
		 * engine the policy names, with all of its workers (inline:
		 * the calling thread's next units go there). */
		if (dropped_now && !s->slots[r].serving && !s->inline_worker) {
			if (serve_locked(s, r) < 0) {
				pthread_mutex_unlock(&s->lock);
				return ACCEL_ENOMEM;
			}
			if (s->cfg->verbose > 0)
				fprintf(stderr, "%s: %s dropped: %s takes its units with %d worker%s\n", prog(s),
					sl->engine->name, s->slots[r].engine->name, s->slots[r].st.workers,
					s->slots[r].st.workers == 1 ? "" : "s");
		}
		pthread_mutex_unlock(&s->lock);
		i = r;
	}
}

/* Write unit u's output (cfg->write, else as it is) and give it back.
 * 0, or the write's error, which ends the run. Lock held (dropped while
 * writing); one thread at a time writes (s->writing, or inline the calling
 * thread, the only one). */
static int write_unit_locked(struct stream *s, struct accel_unit *u)
{
	size_t k = (size_t)(u - s->units);
	int direct = s->direct, done = direct && s->direct_done[k];
	uint64_t pos = s->direct_pos;
	unlock_wake(s);
	char why[512] = "";
	int rc;
	if (done) {
		/* Its worker wrote it at its place: where the units before
		 * it ended, or the output would have a gap or an overlap. */
		rc = (uint64_t)s->out_at[k] == pos ? 0 : ACCEL_EDEVICE;
		if (rc)
			snprintf(why, sizeof why,
				 "internal error: unit %llu's output was placed at byte %lld, the units before it end at %llu",
				 (unsigned long long)u->seq, (long long)s->out_at[k], (unsigned long long)pos);
	} else if (direct) {
		rc = core_output_pwrite(s->out, u->out.data, u->out.len, s->direct_base + pos);
	} else {
		rc = s->cfg->write ? s->cfg->write(s->user, s->out, u, why, sizeof why) :
				     accel_output_write(s->out, u->out.data, u->out.len);
	}
	int werr = errno;   /* before the drop's madvise */
	/* A unit that borrowed a mapped input is done with it: its pages
	 * leave the mapping DROP_BATCH bytes at a time (each drop is a TLB
	 * shoot-down on every core the workers run on). Units are written in
	 * order, so what lies before the end of this one is done with, but
	 * for the page it shares with the next. */
	const uint8_t *mapped = u->in.data && !u->in.cap ? u->in.data : NULL;
	int64_t at = s->mapped_at[u - s->units];
	/* A unit that claimed its bytes (preads them) touched none of the
	 * mapping, but whatever walked the frames to cut it did. */
	if (!mapped && at >= 0 && s->in && s->in->map_len && (uint64_t)at + u->in.len <= s->in->map_len)
		mapped = s->in->buf + at;
	if (mapped && u->in.len && s->in) {
		const uint8_t *end = mapped + u->in.len;
		if (!s->drop_from)
			s->drop_from = mapped;
		if ((size_t)(end - s->drop_from) >= DROP_BATCH) {
			core_input_drop(s->in, s->drop_from, (size_t)(end - s->drop_from));
			s->drop_from = (const uint8_t *)((uintptr_t)end & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1));
		}
	}
	pthread_mutex_lock(&s->lock);
	if (rc < 0 && why[0]) {
		fail_locked(s, rc, "%s", why);
		return rc;
	}
	if (rc < 0) {
		fail_locked(s, rc, "cannot write %s: %s", s->out->path ? s->out->path : "stdout",
			    rc == ACCEL_EIO ? strerror(werr) : accel_strerror(rc));
		return rc;
	}
	s->bytes_in += u->in.len - u->in_overlap;
	s->bytes_out += u->out.len;
	if (direct)
		s->direct_pos += u->out.len;
	if (s->progress)
		accel_progress_update(s->progress, u->offset + u->in.len);
	measure_locked(s, u);
	release_locked(s, u);
	/* The units before a bad one are all written: the run ends. */
	if (++s->written >= s->cut) {
		s->stop = 1;
		pthread_cond_broadcast(&s->cond_free);
		wake_workers(s);
	}
	return 0;
}

/* Write the finished units that are next in order, on the calling thread,
 * until the next one is not finished yet: the worker that finishes the next
 * unit writes it and what followed it, so no unit waits on a hand-off to a
 * writer thread. While another thread writes, it does nothing: that thread
 * takes the units put in the reorder buffer before it lets go. A write that
 * fails stops the run. Lock held (dropped while writing). */
static void write_ready_locked(struct stream *s)
{
	if (s->writing)
		return;
	s->writing = 1;
	struct accel_unit *u;
	while (!s->stop && (u = core_reorder_take(&s->reorder)))
		if (write_unit_locked(s, u) < 0)
			break;
	s->writing = 0;
	if (s->placing_wait)
		pthread_cond_broadcast(&s->cond_free);
}

/* A free unit taken for the next read, numbered and emptied. A worker
 * that reads the unit itself (w) takes the free unit it ran last, if there
 * is one: its buffers are still in that core's caches, where the read and
 * the engine find them. Any other free unit was last written by another
 * core, whose caches each of its lines is fetched from. On 16 cores of an
 * H100's host, FFTs of 1 GiB took a quarter more CPU, FFTW's and pread's
 * alike, with units taken from the top of the stack. Lock held, a unit free
 * (s->busy < s->limit). */
static struct accel_unit *take_unit_locked(struct stream *s, const struct worker *w)
{
	for (size_t j = s->nfree; w && j-- > 0;) {
		struct accel_unit *own = s->free_list[j];
		if (s->runner[own - s->units] == w) {
			s->free_list[j] = s->free_list[s->nfree - 1];
			s->free_list[s->nfree - 1] = own;
			break;
		}
	}
	struct accel_unit *u = s->free_list[--s->nfree];
	if (++s->busy > s->busy_max)
		s->busy_max = s->busy;
	u->seq = s->issued;
	u->last = 0;
	u->out_hint = 0;
	u->in_overlap = 0;
	u->in_at = -1;
	u->part = 0;
	u->in.len = u->out.len = 0;
	s->mapped_at[u - s->units] = -1;
	return u;
}

/* Unit u's input read from in's file where ops->next left it (u->in_at),
 * outside the lock, into u->in grown to u->in.len here first (a fresh
 * unit's buffer is allocated on the thread that fills it, not under the
 * lock, where 16 workers' first units waited on each other's mmap): 0,
 * or ACCEL_EIO or ACCEL_ENOMEM with a line in err. */
static int fill_unit(struct accel_input *in, struct accel_unit *u, char *err, size_t len)
{
	if (u->in_at >= 0 && u->in.cap < u->in.len) {
		/* Nothing in it to keep: len says what is to be read. */
		size_t want = u->in.len;
		u->in.len = 0;
		if (accel_buf_reserve_fill(&u->in, want) < 0) {
			snprintf(err, len, "out of memory");
			return ACCEL_ENOMEM;
		}
		u->in.len = want;
	}
	for (size_t done = 0; u->in_at >= 0 && done < u->in.len;) {
		ssize_t n = pread(in->fd, u->in.data + done, u->in.len - done, (off_t)(u->in_at + (int64_t)done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, len, "cannot read %s: %s", in->name, strerror(errno));
			return ACCEL_EIO;
		}
		if (n == 0) {
			snprintf(err, len, "%s: input file shrank while being read", in->name);
			return ACCEL_EIO;
		}
		done += (size_t)n;
	}
	u->in_at = -1;
	return 0;
}

/* Unit u, filled by ops->next, counted as issued. Lock held. */
static void issue_locked(struct stream *s, struct accel_unit *u)
{
	size_t i = (size_t)(u - s->units);
	s->mapped_at[i] = s->in && s->in->map_len ? u->in_at : -1;
	s->out_at[i] = s->direct ? s->job_ops->out_at(s->user, u) : -1;
	s->direct_done[i] = 0;
	if (u->in_overlap > u->in.len)
		u->in_overlap = u->in.len;
	s->issued++;
}

/* Read the job's next unit on a worker (s->pulling): a free unit filled
 * by ops->next under the lock, so units are numbered in the order they are
 * read. Returns it, or NULL when the reading ended (the last unit was read
 * before; the end, ACCEL_STREAM_SERIAL or an error: s->pull_rc, the
 * calling thread woken to act on it). Lock held, a unit free
 * (s->busy < s->limit). */
static struct accel_unit *pull_locked(struct stream *s, const struct worker *w)
{
	struct accel_unit *u = take_unit_locked(s, w);
	s->pull_err[0] = 0;
	int r = s->pull_ops->next(s->pull_user, s->pull_in, u, s->pull_err, sizeof s->pull_err);
	int e = errno;
	measure_locked(s, u);
	if (r == 1) {
		issue_locked(s, u);
		/* After the last unit the job ends when every unit is
		 * written: release_locked wakes the calling thread. */
		if (u->last)
			s->pulling = 0;
		return u;
	}
	s->pulling = 0;
	s->pull_rc = r;
	s->pull_errno = e;
	release_locked(s, u);
	s->wake_reader = 0;
	pthread_cond_signal(&s->cond_free);
	return NULL;
}

/* Whether worker w takes part in the pulling job: it does, or joins now
 * while fewer than s->want do. Lock held. */
static int join_locked(struct stream *s, struct worker *w)
{
	if (!w->joined && s->njoined < s->want) {
		w->joined = 1;
		s->njoined++;
	}
	return w->joined;
}

/* Worker w is not needed by the pulling job yet: it waits. One such
 * worker, the scout, wakes every JOIN_LOOK, and when a unit has run
 * JOIN_AFTER or longer every worker joins (s->want unbounded). Lock
 * held. */
static void wait_to_join_locked(struct stream *s, struct worker *w)
{
	if (s->scout) {
		pthread_cond_wait(&s->cond_join, &s->lock);
		return;
	}
	s->scout = w;
	struct timespec ts;
	core_deadline(&ts, JOIN_LOOK);
	pthread_cond_timedwait(&s->cond_join, &s->lock, &ts);
	s->scout = NULL;
	double now = accel_now();
	for (int i = 0; i < s->nworkers; i++) {
		const struct worker *o = &s->workers[i];
		double since;
		__atomic_load(&o->run_since, &since, __ATOMIC_RELAXED);
		if (o->joined && since > 0 && now - since >= JOIN_AFTER) {
			s->want = INT_MAX;
			pthread_cond_broadcast(&s->cond_join);
			break;
		}
	}
}

/* A worker: takes units from the queue, or reads them itself (pull_locked),
 * runs them (process) and writes those that are next in order
 * (write_ready_locked). */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct stream *s = w->s;
	for (;;) {
		struct accel_unit *u = NULL;
		struct accel_input *in = NULL;
		pthread_mutex_lock(&s->lock);
		/* A dropped engine's workers end: others serve its units. */
		while (!s->stop && !s->slots[w->slot].dropped && !u) {
			if (s->qlen && s->queue[s->qhead]->seq < s->cut) {
				u = s->queue[s->qhead];
				s->qhead = (s->qhead + 1) % s->nunits;
				s->qlen--;
			} else if (s->pulling && s->busy < s->limit && s->cut == NO_CUT && join_locked(s, w)) {
				in = s->pull_in;
				u = pull_locked(s, w);
			} else if (s->reader_done) {
				break;
			} else if (s->pulling && !w->joined && s->cut == NO_CUT) {
				wait_to_join_locked(s, w);
			} else {
				s->idle_workers += s->pulling;
				int counted = s->pulling;
				pthread_cond_wait(&s->cond_work, &s->lock);
				s->idle_workers -= counted;
			}
		}
		if (!u) {
			unlock_wake(s);
			break;
		}
		unlock_wake(s);

		/* A unit the worker read itself: its bytes left in the file
		 * (u->in_at) are read here, beside the other workers' reads. */
		char ferr[256];
		int lent = in && u->in_at >= 0 && !u->in.cap;
		if (lent) {
			u->in.data = w->in.data;
			u->in.cap = w->in.cap;
		}
		int frc = in ? fill_unit(in, u, ferr, sizeof ferr) : 0;
		/* A unit whose output has a place: written there by this
		 * worker, from its own buffer. */
		size_t k = (size_t)(u - s->units);
		int lent_out = s->out_at[k] >= 0 && !u->out.cap;
		if (lent_out) {
			u->out.data = w->out.data;
			u->out.cap = w->out.cap;
		}
		int prc = frc < 0 ? frc : process(w, u);
		int wrc = 0, werr = 0;
		if (lent_out) {
			pthread_mutex_lock(&s->lock);
			int place = prc == 0 && u->seq < s->cut && !s->stop;
			s->placing += place;
			pthread_mutex_unlock(&s->lock);
			if (place) {
				wrc = core_output_pwrite(s->out, u->out.data, u->out.len,
							 s->direct_base + (uint64_t)s->out_at[k]);
				werr = errno;
				pthread_mutex_lock(&s->lock);
				s->direct_done[k] = !wrc;
				if (!--s->placing && s->placing_wait)
					pthread_cond_broadcast(&s->cond_free);
				pthread_mutex_unlock(&s->lock);
			}
			/* Written, or never to be (a failed unit, one from a
			 * cut on, a run stopping): the buffer goes back to
			 * the worker. */
			w->out.data = u->out.data;
			w->out.cap = u->out.cap;
			u->out.data = NULL;
			u->out.cap = 0;
			if (!place)
				u->out.len = 0;
		}
		if (lent) {
			/* Its input is done with (the writer needs its length
			 * only): the buffer goes back to the worker. */
			w->in.data = u->in.data;
			w->in.cap = u->in.cap;
			u->in.data = NULL;
			u->in.cap = 0;
		}
		/* A unit past a cut is never written: its failure fails
		 * nothing (nor a run that ended where its data did). */
		if (frc < 0) {
			pthread_mutex_lock(&s->lock);
			if (u->seq < s->cut)
				fail_locked(s, frc, "%s", ferr);
			pthread_mutex_unlock(&s->lock);
			break;
		}
		if (prc < 0) {
			pthread_mutex_lock(&s->lock);
			if (!s->rc && u->seq < s->cut)
				fail_locked(s, ACCEL_ENOENGINE, "no engine left to run unit %llu",
					    (unsigned long long)u->seq);
			pthread_mutex_unlock(&s->lock);
			break;
		}
		if (wrc < 0) {
			/* Past a cut its bytes were never to stay: no failure
			 * (nor of a run that ended where its data did). */
			pthread_mutex_lock(&s->lock);
			int counts = u->seq < s->cut;
			if (counts)
				fail_locked(s, wrc, "cannot write %s: %s", s->out->path ? s->out->path : "stdout",
					    strerror(werr));
			pthread_mutex_unlock(&s->lock);
			if (counts)
				break;
		}
		pthread_mutex_lock(&s->lock);
		s->runner[u - s->units] = w;
		if (core_reorder_put(&s->reorder, u) < 0)
			fail_locked(s, ACCEL_EINVAL, "internal error: unit %llu outside the reorder window",
				    (unsigned long long)u->seq);
		else if (u->seq == s->reorder.next)
			write_ready_locked(s);
		unlock_wake(s);
	}
	/* Its place in the pulling job goes to a worker waiting for one. */
	pthread_mutex_lock(&s->lock);
	if (w->joined) {
		w->joined = 0;
		s->njoined--;
		pthread_cond_broadcast(&s->cond_join);
	}
	pthread_mutex_unlock(&s->lock);
	for (int i = 0; i < s->nslots; i++)
		if (w->opened[i])
			s->slots[i].engine->backend->close(w->ctx[i]);
	accel_buf_free(&w->in);
	accel_buf_free(&w->out);
	return NULL;
}

/* Bind a device engine's worker near the device's NUMA node (hwloc). Only
 * where there is more than one node: elsewhere the scheduler knows best. */
static void place_worker(const struct accel_device *d)
{
	if (d->numa_node < 0 || access("/sys/devices/system/node/node1", F_OK) != 0)
		return;
	const struct core_hwloc *h = core_hwloc(NULL, 0);
	hwloc_topology_t topo;
	if (!h || core_hwloc_topology(h, &topo) < 0)
		return;
	int n = core_hwloc_count(h, topo, HWLOC_OBJ_NUMANODE);
	for (int i = 0; i < n; i++) {
		hwloc_obj_t node = core_hwloc_obj(h, topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
		if (node && node->os_index == (unsigned)d->numa_node && node->cpuset) {
			h->set_cpubind(topo, node->cpuset, HWLOC_CPUBIND_THREAD);
			break;
		}
	}
	h->topology_destroy(topo);
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
	/* --fallback cpu: the best-ranked engine on the CPU device the route
	 * holds, else the best one the CPU device has for the operation
	 * (built-in or a plugin's). */
	s->cpu_slot = -1;
	for (int i = 0; i < route->nranked; i++) {
		struct slot *sl = &s->slots[s->nslots++];
		sl->engine = route->entries[i].engine;
		sl->ranked = 1;
		sl->check = route->entries[i].check;
		const struct accel_device *d = accel_device_at(s->ctx, sl->engine->device);
		if (s->cpu_slot < 0 && d && d->cls == ACCEL_CLASS_CPU && !sl->engine->software)
			s->cpu_slot = s->nslots - 1;
	}
	if (s->cpu_slot < 0) {
		const struct accel_engine *cpu = accel_cpu_engine_for(s->ctx, s->op);
		if (cpu) {
			s->slots[s->nslots].engine = cpu;
			s->slots[s->nslots].check = cpu->backend->verify != NULL;
			s->cpu_slot = s->nslots++;
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
		char why[256];
		int rc = b->verify ? check_slot(s, i, why, sizeof why) : 0;
		if (rc < 0) {
			pthread_mutex_lock(&s->lock);
			fail_locked(s, rc, "%s: %s", s->slots[i].engine->name, why);
			pthread_mutex_unlock(&s->lock);
			return rc;
		}
		rc = b->open(s->slots[i].engine, s->op, ctx);
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

/* The first number in file root/path after `key` (a /proc/meminfo line,
 * "MemAvailable:"; "" for a file that is one number), times `unit`; 0 when
 * absent, not a number ("max") or beyond 2^60 (no limit). */
static uint64_t read_number(const char *root, const char *path, const char *key, uint64_t unit)
{
	char name[4096], line[256];
	snprintf(name, sizeof name, "%s%s", root, path);
	FILE *f = fopen(name, "re");
	if (!f)
		return 0;
	uint64_t v = 0;
	while (fgets(line, sizeof line, f)) {
		size_t k = strlen(key);
		if (strncmp(line, key, k))
			continue;
		char *p = line + k, *end;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			break;
		errno = 0;
		unsigned long long n = strtoull(p, &end, 10);
		if (!errno && n < (1ULL << 60) / unit)
			v = n * unit;
		break;
	}
	fclose(f);
	return v;
}

/* The smallest memory limit of this process's cgroup and its ancestors
 * (v2 memory.max, v1 memory.limit_in_bytes), 0 when none. */
static uint64_t cgroup_memory(const char *root)
{
	char name[4096], line[4096];
	snprintf(name, sizeof name, "%s/proc/self/cgroup", root);
	FILE *f = fopen(name, "re");
	if (!f)
		return 0;
	uint64_t best = 0;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		char *ctl = strchr(line, ':'), *path = ctl ? strchr(ctl + 1, ':') : NULL;
		if (!path)
			continue;
		*path++ = 0;
		ctl++;
		const char *base, *file;
		char ctls[256];
		snprintf(ctls, sizeof ctls, ",%s,", ctl);
		if (!*ctl) {
			base = "/sys/fs/cgroup";
			file = "memory.max";
		} else if (strstr(ctls, ",memory,")) {
			base = "/sys/fs/cgroup/memory";
			file = "memory.limit_in_bytes";
		} else {
			continue;
		}
		/* Walk up from the cgroup to the root of the hierarchy; in a
		 * container the cgroup's own path may not be visible. */
		char dir[2048];
		snprintf(dir, sizeof dir, "%s%s", base, path);
		for (;;) {
			size_t n = strlen(dir);
			while (n > strlen(base) && dir[n - 1] == '/')
				dir[--n] = 0;
			char file_path[2100];
			snprintf(file_path, sizeof file_path, "%s/%s", dir, file);
			uint64_t v = read_number(root, file_path, "", 1);
			if (v && (!best || v < best))
				best = v;
			if (n <= strlen(base))
				break;
			char *slash = strrchr(dir, '/');
			if (!slash || (size_t)(slash - dir) < strlen(base))
				break;
			*slash = 0;
		}
	}
	fclose(f);
	return best;
}

uint64_t accel_memory_available(const struct accel_ctx *ctx)
{
	/* The program and the stream engine both ask at a run's start: one
	 * read of /proc and the cgroup files (~0.15 ms) serves both. */
	struct accel_ctx *c = (struct accel_ctx *)ctx;
	double now = accel_now();
	pthread_mutex_lock(&c->lock);
	uint64_t kept = c->mem_available_at > 0 && now - c->mem_available_at < 1.0 ? c->mem_available : 0;
	pthread_mutex_unlock(&c->lock);
	if (kept)
		return kept;
	const char *root = ctx->sysroot;
	uint64_t ram = read_number(root, "/proc/meminfo", "MemAvailable:", 1024);
	if (!ram)
		ram = read_number(root, "/proc/meminfo", "MemTotal:", 1024);
	uint64_t cg = cgroup_memory(root);
	if (cg && (!ram || cg < ram))
		ram = cg;
	pthread_mutex_lock(&c->lock);
	c->mem_available = ram;
	c->mem_available_at = now;
	pthread_mutex_unlock(&c->lock);
	return ram;
}

/* Wait until every unit issued is written, or the run stops. Lock held. */
static void wait_written_locked(struct stream *s)
{
	while (!s->stop && s->written != s->issued)
		pthread_cond_wait(&s->cond_free, &s->lock);
}

/* Stop the run for ops->next's error r on `in` (errno set for ACCEL_EIO),
 * with its line rerr. Lock held. */
static void read_failed_locked(struct stream *s, struct accel_input *in, int r, const char *rerr)
{
	/* As a serial run does, and as zstd -d and gzip -d do with a file
	 * cut short: the units read before the bad part are run and written
	 * whole first, then the run fails. Which of them had been written
	 * when the reader stopped would otherwise depend on timing. An
	 * engine's data error in one of them is earlier in the stream: it is
	 * the one reported. */
	int e = errno;
	wait_written_locked(s);
	errno = e;
	/* A unit read before this failed or ended the data: what could not
	 * be read lies past it (a cut where the data ended stays no error). */
	if (s->cut != NO_CUT)
		return;
	if (r == ACCEL_EIO)
		fail_locked(s, r, "cannot read %s: %s", in->name, strerror(errno));
	else if (strstr(rerr, "byte offset"))
		fail_locked(s, r, "%s: %s", in->name, rerr);
	else
		fail_locked(s, r, "%s: %s at byte offset %llu", in->name, rerr[0] ? rerr : accel_strerror(r),
			    (unsigned long long)in->offset);
}

/* A sequential region of `in` (ops->next said ACCEL_STREAM_SERIAL): once
 * every unit issued is written, run on the calling thread (run_serial).
 * Lock held on entry and return; -1 when the run was stopped first. */
static int end_direct_locked(struct stream *s);

static int serial_region_locked(struct stream *s, struct accel_input *in, void **serial_ctx, int *serial_slot)
{
	wait_written_locked(s);
	if (s->stop)
		return -1;
	/* The region writes in order from the output's position: the
	 * units' places end here. */
	if (end_direct_locked(s) < 0)
		return -1;
	pthread_mutex_unlock(&s->lock);
	run_serial(s, in, serial_ctx, serial_slot);
	pthread_mutex_lock(&s->lock);
	s->serial_regions++;
	return 0;
}

/* The job's units written at their places from here on (s->direct), where
 * its ops place them and its output takes it. Lock held. */
static void start_direct_locked(struct stream *s, const struct accel_stream_ops *ops)
{
	uint64_t base;
	s->direct = ops->out_at && !s->cfg->write && !s->inline_worker && core_output_positioned(s->out, &base);
	if (s->direct) {
		s->job_ops = ops;
		s->direct_base = base;
		s->direct_pos = 0;
	}
}

/* The end of the places: the output's position after the units counted,
 * anything written past it (units after a cut) cut off. 0, or -1 with the
 * run failed. Lock held. */
static int end_direct_locked(struct stream *s)
{
	if (!s->direct)
		return 0;
	/* A worker that saw no cut yet may still be writing a unit after
	 * one (its bytes are cut off once written), and after a failure a
	 * worker may still be writing units in order. */
	s->placing_wait = 1;
	while (s->placing || s->writing)
		pthread_cond_wait(&s->cond_free, &s->lock);
	s->placing_wait = 0;
	s->direct = 0;
	if (core_output_place(s->out, s->direct_base + s->direct_pos, s->direct_pos) < 0) {
		fail_locked(s, ACCEL_EIO, "cannot write %s: %s", s->out->path ? s->out->path : "stdout",
			    strerror(s->out->error));
		return -1;
	}
	return 0;
}

/* The reader's side of one job: units from `in` until its end, an error or
 * a stop; then every unit issued is written. With cfg->worker_reads on a
 * mapped input the workers read the units, and the calling thread waits
 * for the reading to end. Called and returns with the lock held. */
static void read_job(struct stream *s, const struct accel_stream_ops *ops, void *user, struct accel_input *in,
		     void **serial_ctx, int *serial_slot)
{
	char rerr[256];
	/* A unit was queued: a worker waiting for one is woken once the lock
	 * is let go (woken under it, it would only block on it). */
	int wake_worker = 0;
	s->pull_job = (s->cfg->worker_reads == 2 || (s->cfg->worker_reads && in->map_len)) && !s->inline_worker;
	while (!s->stop && s->pull_job) {
		/* The workers read the units until the reading ends, then the
		 * end, a sequential region or an error is dealt with here. */
		s->pull_ops = ops;
		s->pull_user = user;
		s->pull_in = in;
		s->pull_rc = 0;
		/* Who pulls starts again with each job. */
		s->want = s->cfg->worker_reads == 2 ? JOIN_FIRST : INT_MAX;
		s->njoined = 0;
		for (int i = 0; i < s->nworkers; i++)
			s->workers[i].joined = 0;
		s->pulling = 1;
		wake_workers(s);
		while (!s->stop && (s->pulling || (!s->pull_rc && s->written != s->issued)))
			pthread_cond_wait(&s->cond_free, &s->lock);
		s->pulling = 0;
		int r = s->pull_rc;
		if (s->stop || r == 0)
			break;
		if (r == ACCEL_STREAM_SERIAL) {
			if (serial_region_locked(s, in, serial_ctx, serial_slot) < 0)
				break;
			continue;
		}
		errno = s->pull_errno;
		read_failed_locked(s, in, r, s->pull_err);
	}
	while (!s->stop && !s->pull_job) {
		while (!s->stop && s->busy >= s->limit) {
			if (wake_worker)
				pthread_cond_signal(&s->cond_work);
			wake_worker = 0;
			pthread_cond_wait(&s->cond_free, &s->lock);
		}
		if (s->stop || s->cut != NO_CUT)
			break;
		struct accel_unit *u = take_unit_locked(s, NULL);
		pthread_mutex_unlock(&s->lock);
		if (wake_worker)
			pthread_cond_signal(&s->cond_work);
		wake_worker = 0;
		rerr[0] = 0;
		int r = ops->next(user, in, u, rerr, sizeof rerr);
		int frc = r == 1 ? fill_unit(in, u, rerr, sizeof rerr) : 0;
		if (frc < 0) {
			/* Never issued: given back, the run ended with the line. */
			pthread_mutex_lock(&s->lock);
			measure_locked(s, u);
			release_locked(s, u);
			fail_locked(s, frc, "%s", rerr);
			break;
		}
		pthread_mutex_lock(&s->lock);
		measure_locked(s, u);
		if (r == 1) {
			issue_locked(s, u);
			if (s->inline_worker) {
				/* Run and write it here: nothing else is in flight. */
				pthread_mutex_unlock(&s->lock);
				int prc = process(s->inline_worker, u);
				pthread_mutex_lock(&s->lock);
				if (prc < 0) {
					if (!s->rc)
						fail_locked(s, ACCEL_ENOENGINE, "no engine left to run unit %llu",
							    (unsigned long long)u->seq);
					break;
				}
				if (write_unit_locked(s, u) < 0 || u->last)
					break;
				continue;
			}
			s->queue[(s->qhead + s->qlen++) % s->nunits] = u;
			wake_worker = 1;
			if (u->last)
				break;
			continue;
		}
		release_locked(s, u);
		if (r == 0)
			break;
		if (r == ACCEL_STREAM_SERIAL) {
			if (serial_region_locked(s, in, serial_ctx, serial_slot) < 0)
				break;
			continue;
		}
		read_failed_locked(s, in, r, rerr);
	}
	if (wake_worker)
		pthread_cond_signal(&s->cond_work);
	/* The job ends when its last unit is written: the next job's units
	 * start again from sequence number 0, into another output. */
	wait_written_locked(s);
	s->pull_job = 0;
}

/* A job's statistics: what the run's counters gained since `base` (the
 * engines' counters when the job started). Lock held. */
static void job_stats(const struct stream *s, const struct accel_engine_stats *base, double t0,
		      struct accel_stream_stats *stats)
{
	memset(stats, 0, sizeof *stats);
	stats->units = s->written;
	stats->serial_regions = s->serial_regions;
	stats->bytes_in = s->bytes_in;
	stats->bytes_out = s->bytes_out;
	stats->seconds = accel_now() - t0;
	stats->nengines = s->nslots;
	for (int i = 0; i < s->nslots; i++) {
		struct accel_engine_stats *e = &stats->engines[i];
		const struct accel_engine_stats *b = &base[i];
		*e = s->slots[i].st;
		e->units -= b->units;
		e->bytes_in -= b->bytes_in;
		e->bytes_out -= b->bytes_out;
		e->failures -= b->failures;
		e->retried -= b->retried;
		e->busy_seconds -= b->busy_seconds;
	}
	stats->memory_limit = s->mem_limit;
	stats->unit_bytes = s->unit_bytes;
	stats->units_in_flight = s->busy_max;
	stats->retried = s->retried;
	stats->data_end = s->data_end;
}

/* The one job of accel_stream_run. */
struct single {
	struct accel_input *in;
	struct accel_output *out;
	void *user;
	struct accel_stream_stats *stats;
};

static int single_start(void *arg, size_t k, struct accel_input **in, struct accel_output **out, void **user,
			char *err, size_t len)
{
	(void)k;
	(void)err;
	(void)len;
	struct single *one = arg;
	*in = one->in;
	*out = one->out;
	*user = one->user;
	return 0;
}

static void single_finish(void *arg, size_t k, int rc, const struct accel_stream_stats *stats, const char *err)
{
	(void)k;
	(void)rc;
	(void)err;
	struct single *one = arg;
	if (one->stats)
		*one->stats = *stats;
}

static int run_jobs(struct accel_ctx *ctx, const struct accel_stream_config *cfg,
		    const struct accel_route *route, const struct accel_op *op,
		    const struct accel_stream_ops *ops, const struct accel_stream_jobs *jobs,
		    int single_total, char *err, size_t len)
{
	struct stream st, *s = &st;
	memset(s, 0, sizeof st);
	s->ctx = ctx;
	s->cfg = cfg;
	s->op = op;
	s->err = err;
	s->errlen = len;
	s->cut = NO_CUT;
	err[0] = 0;
	if (accel_fault_check(ctx, err, len) < 0)
		return ACCEL_EINVAL;
	if (setup_slots(s, route) < 0) {
		snprintf(err, len, "no engine can run %s", op->name);
		return ACCEL_ENOENGINE;
	}
	s->cpus = cfg->threads > 0 ? cfg->threads : accel_cpu_count();
	/* Room for every engine's workers: an engine that is not serving
	 * at the start may take over from a dropped one. */
	for (int i = 0; i < s->nslots; i++)
		s->maxworkers += engine_workers(s, s->slots[i].engine);
	int nserve = route->nserving > 0 ? route->nserving : route->shared ? route->nranked : 1;
	/* Inline: one worker on a CPU engine, which is the calling thread. */
	struct worker inline_worker = { .s = s };
	if (cfg->inline_units && nserve == 1 && s->slots[0].ranked && s->cpus == 1 && on_cpu(s, s->slots[0].engine))
		s->inline_worker = &inline_worker;
	/* The default cap: a quarter of the memory this process can have
	 * (none when that is not known; none inline: one unit at a time). */
	s->mem_limit = cfg->memory_limit ? cfg->memory_limit :
		       s->inline_worker ? 0 : accel_memory_available(ctx) / 4;
	s->nunits = (size_t)s->maxworkers * 2 + 2;
	s->units = calloc(s->nunits, sizeof *s->units);
	s->held = calloc(s->nunits, 1);
	s->mapped_at = calloc(s->nunits, sizeof *s->mapped_at);
	s->free_list = calloc(s->nunits, sizeof *s->free_list);
	s->runner = calloc(s->nunits, sizeof *s->runner);
	s->queue = calloc(s->nunits, sizeof *s->queue);
	s->workers = calloc((size_t)s->maxworkers, sizeof *s->workers);
	s->out_at = calloc(s->nunits, sizeof *s->out_at);
	s->direct_done = calloc(s->nunits, 1);
	if (!s->units || !s->held || !s->mapped_at || !s->free_list || !s->runner || !s->queue || !s->workers ||
	    !s->out_at || !s->direct_done || core_reorder_init(&s->reorder, s->nunits)) {
		free(s->units); free(s->held); free(s->mapped_at); free(s->free_list); free(s->runner); free(s->queue); free(s->workers);
		free(s->out_at); free(s->direct_done);
		snprintf(err, len, "out of memory");
		return ACCEL_ENOMEM;
	}
	/* Pushed in reverse, so units[0] is used first. */
	for (size_t i = s->nunits; i-- > 0;) {
		s->free_list[s->nfree++] = &s->units[i];
		s->mapped_at[i] = -1;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->check_lock, NULL);
	pthread_cond_init(&s->cond_free, NULL);
	pthread_cond_init(&s->cond_work, NULL);
	core_cond_init_monotonic(&s->cond_join);
	s->want = INT_MAX;
	pthread_mutex_lock(&s->lock);

	/* The workers of the engines that serve from the start: the first of
	 * the route, all of a shared route, or the first route->nserving
	 * (auto: those the profile says help together). They serve every job:
	 * engine contexts are opened once per run. */
	int rc = 0;
	if (s->inline_worker) {
		s->slots[0].serving = 1;
		s->slots[0].st.workers = 1;
		update_limit_locked(s);
	}
	for (int i = 0; i < s->nslots && !s->stop && !s->inline_worker; i++)
		if (s->slots[i].ranked && i < nserve)
			serve_locked(s, i);

	/* The reader runs on the calling thread, one job after another. */
	void *serial_ctx = NULL;
	int serial_slot = -1;
	struct accel_engine_stats base[ACCEL_ROUTE_MAX + 1];
	/* A job that failed is finished once the workers have stopped: units still running may borrow its input (a mapped file
	 * that finishing it unmaps). */
	size_t failed_job = SIZE_MAX;
	double failed_t0 = 0;
	for (size_t k = 0; k < jobs->n && !s->stop; k++) {
		struct accel_input *in = NULL;
		struct accel_output *out = NULL;
		void *user = NULL;
		char jerr[512] = "";
		pthread_mutex_unlock(&s->lock);
		rc = jobs->start(jobs->arg, k, &in, &out, &user, jerr, sizeof jerr);
		pthread_mutex_lock(&s->lock);
		if (rc < 0) {
			fail_locked(s, rc, "%s", jerr);
			break;
		}
		if (rc > 0)
			continue;
		/* No unit is being written between jobs: all of the last
		 * job is written. */
		s->out = out;
		s->user = user;
		s->in = in;
		s->drop_from = NULL;
		s->issued = s->written = 0;
		s->reorder.next = 0;
		s->bytes_in = s->bytes_out = s->serial_regions = 0;
		for (int i = 0; i < s->nslots; i++)
			base[i] = s->slots[i].st;
		double t0 = accel_now();
		if (cfg->progress) {
			double scale = cfg->progress_scale > 0 ? cfg->progress_scale : 1;
			int64_t total = single_total ? cfg->total_size : in->size;
			s->progress = accel_progress_new_unit(op->name, cfg->progress_unit, scale,
							      total > 0 ? (double)total * scale : -1);
		}
		pthread_mutex_unlock(&s->lock);
		rc = ops->begin ? ops->begin(user, out) : 0;
		pthread_mutex_lock(&s->lock);
		if (rc < 0)
			fail_locked(s, rc, "cannot write the header: %s", accel_strerror(rc));
		else
			start_direct_locked(s, ops);
		read_job(s, ops, user, in, &serial_ctx, &serial_slot);
		end_direct_locked(s);
		/* Where the data ended, a run of one job ends: every unit
		 * before the cut is written. With more jobs the workers have
		 * stopped, and it stays the data error it is to them. */
		if (s->rc == ACCEL_EDATA && s->end_cut && jobs->n == 1) {
			s->rc = 0;
			s->end_cut = 0;
			s->err[0] = 0;
		}
		if (!s->rc && ops->end) {
			pthread_mutex_unlock(&s->lock);
			rc = ops->end(user, out);
			pthread_mutex_lock(&s->lock);
			if (rc < 0)
				fail_locked(s, rc, "cannot write the trailer: %s", accel_strerror(rc));
		}
		if (s->progress) {
			accel_progress_end(s->progress);
			s->progress = NULL;
		}
		if (jobs->finish && s->rc) {
			failed_job = k;
			failed_t0 = t0;
		} else if (jobs->finish) {
			struct accel_stream_stats js;
			job_stats(s, base, t0, &js);
			int jrc = s->rc;
			pthread_mutex_unlock(&s->lock);
			jobs->finish(jobs->arg, k, jrc, &js, jrc ? err : "");
			pthread_mutex_lock(&s->lock);
		}
	}
	s->reader_done = 1;
	wake_workers(s);

	/* Workers may start others (for an engine that takes over from a
	 * dropped one) until they end: join until no more were started. */
	for (int k = 0; k < s->nworkers; k++) {
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->workers[k].thread, NULL);
		pthread_mutex_lock(&s->lock);
	}
	/* Workers may all have quit (every engine dropped) with units queued
	 * (those past a cut are not to be run). */
	if (!s->rc && s->qlen && s->cut == NO_CUT)
		fail_locked(s, ACCEL_ENOENGINE, "no engine left to run the remaining units");
	pthread_mutex_unlock(&s->lock);
	if (failed_job != SIZE_MAX) {
		struct accel_stream_stats js;
		pthread_mutex_lock(&s->lock);
		job_stats(s, base, failed_t0, &js);
		pthread_mutex_unlock(&s->lock);
		jobs->finish(jobs->arg, failed_job, s->rc, &js, err);
	}
	for (int i = 0; i < s->nslots; i++)
		if (inline_worker.opened[i])
			s->slots[i].engine->backend->close(inline_worker.ctx[i]);
	if (serial_slot >= 0)
		s->slots[serial_slot].engine->backend->close(serial_ctx);
	if (s->progress)
		accel_progress_end(s->progress);
	for (size_t i = 0; i < s->nunits; i++) {
		accel_buf_free(&s->units[i].in);
		accel_buf_free(&s->units[i].out);
	}
	free(s->units);
	free(s->held);
	free(s->mapped_at);
	free(s->free_list);
	free(s->runner);
	free(s->queue);
	free(s->workers);
	free(s->out_at);
	free(s->direct_done);
	core_reorder_free(&s->reorder);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->check_lock);
	pthread_cond_destroy(&s->cond_free);
	pthread_cond_destroy(&s->cond_work);
	pthread_cond_destroy(&s->cond_join);
	return s->rc;
}

int accel_stream_run_jobs(struct accel_ctx *ctx, const struct accel_stream_config *cfg,
			  const struct accel_route *route, const struct accel_op *op,
			  const struct accel_stream_ops *ops, const struct accel_stream_jobs *jobs,
			  char *err, size_t len)
{
	return run_jobs(ctx, cfg, route, op, ops, jobs, 0, err, len);
}

int accel_stream_run(struct accel_ctx *ctx, const struct accel_stream_config *cfg,
		     const struct accel_route *route, const struct accel_op *op,
		     const struct accel_stream_ops *ops, void *user,
		     struct accel_input *in, struct accel_output *out,
		     struct accel_stream_stats *stats, char *err, size_t len)
{
	struct single one = { in, out, user, stats };
	struct accel_stream_jobs jobs = { 1, &one, single_start, single_finish };
	if (stats)
		memset(stats, 0, sizeof *stats);
	return run_jobs(ctx, cfg, route, op, ops, &jobs, 1, err, len);
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
	if (s->retried)
		fprintf(f, "  %llu unit(s) failed on an engine and ran again\n", (unsigned long long)s->retried);
	if (s->units) {
		fprintf(f, "  at most %llu unit(s) in flight, the largest %.1f MiB (input + output); ",
			(unsigned long long)s->units_in_flight, s->unit_bytes / 1048576.0);
		if (s->memory_limit)
			fprintf(f, "memory cap %.1f MiB\n", s->memory_limit / 1048576.0);
		else
			fprintf(f, "no memory cap\n");
	}
}
