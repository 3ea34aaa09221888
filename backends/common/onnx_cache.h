/*
 * onnx_cache.h - what the backends that run ONNX models (onnxruntime,
 * opencv) share: each engine's cache of the models asked of it, one per set
 * of session options (path, threads, --dim values), loaded once by
 * supports() and kept with the reason it cannot be loaded or what the
 * backend read of it; and the pool of its sessions: the one a model was
 * loaded with waits idle for open() (or serves every open() at once, for
 * a library whose runs on one session may overlap), close() gives it
 * back, and the engine's release frees them all. The backend loads and frees sessions
 * (struct onnx_loader); the cache only keeps them.
 */
#ifndef ACCEL_BACKEND_ONNX_CACHE_H
#define ACCEL_BACKEND_ONNX_CACHE_H

#include <pthread.h>
#include <stddef.h>

struct accel_op;
struct accel_onnx_params;

/* How a backend loads a model for an engine and frees what it loaded. */
struct onnx_loader {
	/* Load p->model for engine `owner`: 0 with *session set and, when
	 * info is not NULL, *info (what the backend keeps of the model, as its
	 * inputs and outputs); else a negative ACCEL_E* with one line in
	 * reason[len]. The first load of a model (info not NULL) runs with
	 * the cache's lock held, the others may run at once on several
	 * threads. */
	int (*load)(void *owner, const struct accel_onnx_params *p, void **session, void **info, char *reason,
		    size_t len);
	void (*free_session)(void *session);
	void (*free_info)(void *info);
	/* 1: one session serves every context at once, the library's run
	 * being thread-safe on a session (ONNX Runtime's Run): a model is
	 * loaded once however many workers run it; 0: a session per context
	 * (OpenCV's Net, whose forward() is not). */
	int shared;
};

/* A model asked of an engine. */
struct onnx_model {
	char *key;                 /* path, threads and --dim values */
	char reason[240];          /* why it cannot be loaded, "" when it can */
	void *info;                /* from load, NULL when it cannot be loaded */
	void *idle;                /* a session no context holds, or NULL;
	                            * with a shared loader the one session, held
	                            * by `users` contexts */
	int users;
	struct onnx_model *next;
};

struct onnx_cache {
	const struct onnx_loader *loader;
	void *owner;               /* the engine, passed to load */
	pthread_mutex_t lock;
	struct onnx_model *models;
};

void onnx_cache_init(struct onnx_cache *c, const struct onnx_loader *loader, void *owner);
/* Free every model, with its info and idle session (no context holds one). */
void onnx_cache_free(struct onnx_cache *c);

/* op's parameters when it is onnx.run or onnx.info with a model; else
 * NULL with the reason in reason[len]. */
const struct accel_onnx_params *onnx_op_params(const struct accel_op *op, char *reason, size_t len);

/* For supports(): 0 when p's model loads on the engine (loaded by the
 * first call, kept), else ACCEL_ENOTSUP with the reason in reason[len].
 * Thread-safe. */
int onnx_cache_check(struct onnx_cache *c, const struct accel_onnx_params *p, char *reason, size_t len);
/* The same, for verify() (a load of the whole model: too costly for
 * supports()), the model's first load tried in a child process
 * (accel_call_isolated) and not here, for a library that may crash on a
 * model it cannot read (OpenCV DNN's ONNX importer writes out of bounds on
 * some Gather nodes): a child that dies gives "WHO aborted (SIGABRT)
 * reading the model", and nothing of the model is loaded in this process
 * until open() (onnx_cache_take) needs it. One that takes longer than the
 * probe timeout (a large model) is loaded here as onnx_cache_check does.
 * Thread-safe. */
int onnx_cache_check_isolated(struct onnx_cache *c, const struct accel_onnx_params *p, const char *who,
			      char *reason, size_t len);

/* For open(): p's model and a session of it: with a shared loader the
 * model's one session; else the idle one or a new one from load. Returns
 * 0 with *m and *session set; ACCEL_ENOTSUP when the model cannot be
 * loaded; ACCEL_ENOMEM; or load's code. Thread-safe. */
int onnx_cache_take(struct onnx_cache *c, const struct accel_onnx_params *p, struct onnx_model **m,
		    void **session);

/* For close(): session (NULL: none) back to model m: with a shared loader
 * one user less; else kept as its idle one when it has none, or freed.
 * Thread-safe. */
void onnx_cache_give(struct onnx_cache *c, struct onnx_model *m, void *session);

#endif
