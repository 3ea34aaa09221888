/*
 * accel/stream.h - the stream engine: units through engines in parallel, written in order,
 * with fallback.
 * Part of libaccel's public API; <accel.h> includes every such header.
 */
#ifndef ACCEL_STREAM_H
#define ACCEL_STREAM_H

#include <accel/context.h>
#include <accel/io.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* What a program gives the stream engine. The callbacks run on the thread
 * that called accel_stream_run (next on the workers with
 * accel_stream_config.worker_reads), never two at once; begin and end
 * write while no unit of the job is being written. */
struct accel_stream_ops {
	/* Fill u->in with the next unit read from `in` and set u->offset,
	 * u->last and u->out_hint. Return 1 for a unit, 0 at end of input,
	 * ACCEL_STREAM_SERIAL when the next input must be processed
	 * sequentially by the route's backend `stream` function, or a negative
	 * error (ACCEL_EDATA: bad input at u->offset). */
	int (*next)(void *user, struct accel_input *in, struct accel_unit *u,
		    char *err, size_t len);
	/* Optional: write a header before any unit's output. */
	int (*begin)(void *user, struct accel_output *out);
	/* Optional: write a trailer after the last unit's output. */
	int (*end)(void *user, struct accel_output *out);
	/* Optional, called right after next() made u: the byte offset of
	 * u's output from the start of the job's (after begin's header),
	 * where each unit's output size is known before it runs (rows of a
	 * fixed size), else -1. Then, where the output takes writes at a
	 * place (the temporary of an output file, /dev/null: never stdout's
	 * regular file, pipes or a caller's fd), the worker that ran u writes
	 * its output there at once from a buffer of its own, which stays in
	 * its core's cache, rather than into the unit to wait for the units
	 * before it; they are still counted, checked and ended in order: a
	 * unit whose output does not end where the next one's begins fails
	 * the run, and what was written past a cut is cut off. Not with
	 * ACCEL_STREAM_SERIAL regions nor cfg->write. */
	int64_t (*out_at)(void *user, const struct accel_unit *u);
};
#define ACCEL_STREAM_SERIAL 2

/* Statistics for one engine in one run (for -v). */
struct accel_engine_stats {
	char name[40];
	uint64_t units, bytes_in, bytes_out;
	uint64_t failures, retried; /* units failed here; units retried from elsewhere */
	double busy_seconds;
	int dropped;
	int workers;
};

struct accel_stream_stats {
	uint64_t units, serial_regions, bytes_in, bytes_out;
	double seconds;
	int nengines;
	struct accel_engine_stats engines[ACCEL_ROUTE_MAX];
	uint64_t memory_limit;       /* the cap on bytes of units in flight used, 0: none */
	uint64_t unit_bytes;         /* largest bytes of one unit (input + output) */
	uint64_t units_in_flight;    /* most units held at once */
	uint64_t retried;            /* units that failed on an engine and ran again */
	/* 0, or 1 + the byte offset of the input (as accel_input_seek counts
	 * it) where an engine found its format's data ended, the bytes from
	 * there on no data of it (accel_unit.in_end): the run stopped there,
	 * all before it written. */
	uint64_t data_end;
};

struct accel_stream_config {
	int threads;                  /* CPU workers; 0: all cores */
	enum accel_fallback fallback;
	int max_failures;             /* failures before an engine is dropped (0: 3) */
	int progress;                 /* 1: progress meter on stderr */
	int64_t total_size;           /* input size for ETA, -1 unknown */
	const char *prog;             /* program name for messages */
	int verbose;                  /* -1: quiet; 0: first failure of an engine and
	                               * drops; 1: every retried unit, where it ran */
	uint64_t memory_limit; /* cap on bytes of units in flight, 0: default */
	/* Progress in the operation's unit (accel_progress_new_unit): its
	 * name (NULL: bytes) and units per byte of input (0: 1); the meter's
	 * total is total_size times the scale. */
	const char *progress_unit;
	double progress_scale;
	/* Optional: write unit u's output to out in place of u->out as it is
	 * (units in input order, one at a time, on the worker thread that
	 * writes them; `user` the job's, as ops have it). 0 or a negative
	 * ACCEL_E* code, which ends the run with the line the hook wrote in
	 * err[len] (left empty: "cannot write OUTPUT: ..." for the code);
	 * u's output is then not counted as written. */
	int (*write)(void *user, struct accel_output *out, const struct accel_unit *u, char *err, size_t len);
	/* 1: when the run would start one worker, on an engine of the CPU
	 * device (threads 1), run each unit on the calling thread as soon as
	 * it is read, and write it there: no worker thread, no
	 * hand-offs, no reading ahead. For units whose run dwarfs their
	 * reading and whose engine keeps per-thread state warm (inference on
	 * ONNX Runtime's CPU provider, batch after batch). */
	int inline_units;
	/* 1: while a job's input is mapped (accel_input_map), the workers
	 * call ops->next themselves, one at a time under the run's lock,
	 * each taking the next unit as it becomes free: no reader thread
	 * handing units over, no wake-up per unit. For a next that only cuts
	 * the mapping into units (no blocking read, no long copy), on the
	 * job's state alone (it runs on a worker thread); begin and end stay
	 * on the calling thread. 2: always, the input mapped or not, for a
	 * next that makes units of the program's own (accel-crypt hash: a
	 * file name each) and reads nothing from `in`; a job's units then
	 * start on two workers, the others joining once a unit's run has
	 * taken 50 µs (units of a few microseconds, one-line files' hashes,
	 * gain nothing from more workers but the lock's traffic). Not with
	 * inline_units in effect. */
	int worker_reads;
};

/* Bytes of memory this process may use: the smaller of /proc/meminfo's
 * MemAvailable (MemTotal without it) and the cgroup v2 memory.max of the
 * process, read under ctx's sysroot (the answer kept by ctx for a second,
 * so that the program and the stream engine asking at a run's start read
 * them once); 0 when neither can be read. */
uint64_t accel_memory_available(const struct accel_ctx *ctx);

/*
 * Run a chunked stream: a reader fills units (ops->next) into a bounded pool,
 * workers run them on the route's engines, and outputs are written in input
 * order by the worker that finishes the next unit in order (it writes that
 * unit and the finished ones after it; no writer thread). A unit failed by an engine is run again according to cfg->fallback
 * (cpu: the best engine on the CPU device, accel_cpu_engine_for; next: the
 * next live engine of the route, wrapping around, never one the unit
 * failed on); an engine failing cfg->max_failures
 * times is dropped, its workers end, and the engine the policy names serves
 * in its place with all its workers (cfg->threads for the CPU engine).
 *
 * Memory: units_in_flight = max(1, min(2 * workers + 2, memory / unit)),
 * where workers counts the worker threads started, memory is
 * cfg->memory_limit (0: a quarter of the smaller of MemAvailable and the
 * cgroup's memory limit, no cap when neither is known) and unit is the
 * largest unit seen: its input buffer plus its output (out_hint, else the
 * input size + 1/8 before it runs; the output buffer after). In all,
 * memory in use ~ units_in_flight * (in + out per unit) + the input buffer
 * + each engine context's own state. A cap that holds no whole unit still
 * runs one unit at a time.
 *
 * A worker thread that cannot be created ends the run with
 * ACCEL_ENOMEM. Fault injection: $ACCEL_FAULT (see accel(7)). Returns 0 or
 * the first error, with a message in err[len] naming the byte offset for
 * ACCEL_EDATA: ACCEL_EINVAL (malformed $ACCEL_FAULT), ACCEL_ENOENGINE (no
 * engine to run or retry a unit on), ACCEL_EDEVICE (a unit failed with no
 * engine left to retry on, or under --fallback none), ACCEL_EDATA,
 * ACCEL_EIO, ACCEL_EPIPE, ACCEL_ENOMEM, or a callback's code. stats may be
 * NULL. With cfg->verbose >= 0, engine failures are warned about on stderr.
 *
 * Threads: ops run on the calling thread (the reader; with
 * cfg->worker_reads and a mapped input, or worker_reads 2, next runs on
 * the workers); engine
 * contexts are opened, run and closed on worker threads, which also write
 * `out` (one at a time, in order; cfg->write runs there) and draw the
 * progress meter (with cfg->inline_units, where it applies, all of that on
 * the calling thread).
 * An engine's busy_seconds count its runs only, not the writes its workers
 * do. in, out and user belong to the run until
 * it returns. Several runs may share ctx and route at once on other
 * threads (the engines are only read), as long as no thread probes ctx.
 */
int accel_stream_run(struct accel_ctx *ctx, const struct accel_stream_config *cfg,
		     const struct accel_route *route, const struct accel_op *op,
		     const struct accel_stream_ops *ops, void *user,
		     struct accel_input *in, struct accel_output *out,
		     struct accel_stream_stats *stats, char *err, size_t len);
/*
 * Several inputs in one run (hashing many files, compressing FILE...): one
 * job per input, in order, through the same engines, worker threads and
 * engine contexts (opened once per run, not once per input). Each job has
 * its own input, output and `user` for ops; its units are numbered from 0
 * (u->seq), ops->begin and ops->end are called around its units, and it
 * ends when its last unit's output is written, before the next job starts
 * (so outputs never interleave, and one output may serve every job).
 * Engine failures and drops carry over from job to job. start and finish
 * run on the calling thread, while no unit is in flight.
 */
struct accel_stream_jobs {
	size_t n;                 /* number of jobs */
	void *arg;                /* passed to start and finish */
	/* Start job k (0 .. n-1) when the previous one has ended: set *in (an
	 * open input), *out and *user. Return 0; 1 to skip job k (nothing of
	 * it runs, finish is not called for it: an input that cannot be
	 * opened, reported by the callback, among inputs that go on without
	 * it); or a negative ACCEL_E* code that ends the run, with a line in
	 * err[len] (may be left empty when the callback reported it itself).
	 * Runs on the calling thread. */
	int (*start)(void *arg, size_t k, struct accel_input **in, struct accel_output **out,
		     void **user, char *err, size_t len);
	/* Optional: job k has ended with rc (0, or the run's first error with
	 * its line in err) and the job's own statistics (units, bytes, time,
	 * per-engine counts of this job). Called for every job started, on the
	 * calling thread, before the next starts: the place to close the
	 * job's input or print its -v line. */
	void (*finish)(void *arg, size_t k, int rc, const struct accel_stream_stats *stats, const char *err);
};
/* Run the jobs; the progress meter (cfg->progress) is one per job, its
 * total the job's in->size. Returns 0 or the first error (a job's, or
 * start's code), its line in err[len]; the jobs after it are not started.
 * Same memory bound and threads as accel_stream_run, which is this with
 * one job. */
int accel_stream_run_jobs(struct accel_ctx *ctx, const struct accel_stream_config *cfg,
			  const struct accel_route *route, const struct accel_op *op,
			  const struct accel_stream_ops *ops, const struct accel_stream_jobs *jobs,
			  char *err, size_t len);
/* Check $ACCEL_FAULT (accel(7), TESTING) once the route is known: 0, or
 * ACCEL_EINVAL with a line naming the bad part in err[len] for a malformed
 * value ("ACCEL_FAULT is malformed: empty unit number in 'cpu:1,,2'") or a
 * rule whose engine names no backend of ctx, nor an engine of a backend
 * already probed. accel_stream_run() checks it too. $ACCEL_FAULT is read
 * and parsed once per process, on first use (by this or by a run): later
 * changes to it have no effect. Reads ctx (NULL: only the form is
 * checked) as the context section says. */
int accel_fault_check(const struct accel_ctx *ctx, char *err, size_t len);
/* Print a run's statistics and one line per engine to f (-v). */
void accel_stream_stats_print(const struct accel_stream_stats *s, FILE *f);

/* Reader helper: fill u->in with up to `size` bytes, set u->offset and
 * u->last (true when the input ends with this chunk), reading until the
 * chunk is full or the input ends. Returns 1, 0 at end of input (no bytes
 * and u->seq > 0), ACCEL_EIO or ACCEL_ENOMEM. An empty input yields one
 * empty last chunk, so formats can write an empty frame. From a mapped
 * input (accel_input_map) u->in borrows its bytes from the mapping (cap 0,
 * read-only: an engine that writes into its input reserves a copy first).
 * Called from ops->next, on the reader's thread. */
int accel_read_chunk(struct accel_input *in, struct accel_unit *u, size_t size);
/* accel_read_chunk for a unit whose engine reads each byte once (a
 * cipher, a hash): from a mapped input its bytes are claimed, not
 * borrowed (u->in_at: the stream preads them into the unit on the worker
 * that runs it), and no page of the mapping is touched. Faulting a mapping
 * in costs more than pread's copy where page faults are dear: age
 * encryption of 256 MiB took 219 ms of user time borrowing the mapping, 96
 * from a pipe (the 2-core VM, whose page faults cost 10.7 us). Else, and
 * for a short last chunk, as accel_read_chunk. Same returns. */
int accel_read_chunk_claim(struct accel_input *in, struct accel_unit *u, size_t size);
/* Timed flush, the reader helper for a `next` callback that must emit a
 * partial batch when the stream pauses (accel-infer --max-wait): like
 * accel_read_chunk, but once the unit's first byte has arrived (waited for
 * as long as it takes) it waits at most `max_wait` seconds for the rest,
 * then returns the unit with what came (accel_input_peek_until: poll(), no
 * busy waiting). u->last is set only when the input is known to have
 * ended; after a partial unit the next call returns 0 at end of input.
 * max_wait <= 0: accel_read_chunk. Returns 1, 0, ACCEL_EIO or ACCEL_ENOMEM. */
int accel_read_chunk_until(struct accel_input *in, struct accel_unit *u, size_t size, double max_wait);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
