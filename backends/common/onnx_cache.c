/*
 * onnx_cache.c - the models of an ONNX engine and its idle sessions, for
 * the onnxruntime and opencv backends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <accel/backend.h>
#include <accel/ops/tensor.h>
#include "onnx_cache.h"

void onnx_cache_init(struct onnx_cache *c, const struct onnx_loader *loader, void *owner)
{
	memset(c, 0, sizeof *c);
	c->loader = loader;
	c->owner = owner;
	pthread_mutex_init(&c->lock, NULL);
}

void onnx_cache_free(struct onnx_cache *c)
{
	struct onnx_model *m = c->models, *next;
	for (; m; m = next) {
		next = m->next;
		if (m->idle)
			c->loader->free_session(m->idle);
		if (m->info)
			c->loader->free_info(m->info);
		free(m->key);
		free(m);
	}
	c->models = NULL;
	pthread_mutex_destroy(&c->lock);
}

const struct accel_onnx_params *onnx_op_params(const struct accel_op *op, char *reason, size_t len)
{
	const struct accel_onnx_params *p = op->ext;
	if (strcmp(op->name, "onnx.run") && strcmp(op->name, "onnx.info")) {
		snprintf(reason, len, "only onnx.run and onnx.info");
		return NULL;
	}
	if (!p || !p->model) {
		snprintf(reason, len, "no model given");
		return NULL;
	}
	return p;
}

/* The key of a model under the session options of p. NULL: out of memory. */
static char *model_key(const struct accel_onnx_params *p)
{
	size_t len = strlen(p->model) + 32;
	for (int i = 0; i < p->ndims; i++)
		len += strlen(p->dim_names[i]) + 24;
	char *k = malloc(len);
	if (!k)
		return NULL;
	size_t n = (size_t)snprintf(k, len, "%s|%d", p->model, p->intra_threads);
	for (int i = 0; i < p->ndims; i++)
		n += (size_t)snprintf(k + n, len - n, "|%s=%lld", p->dim_names[i], (long long)p->dim_values[i]);
	return k;
}

/* The model of key in the cache, or NULL; the lock is held. */
static struct onnx_model *lookup(const struct onnx_cache *c, const char *key)
{
	struct onnx_model *m = c->models;
	while (m && strcmp(m->key, key))
		m = m->next;
	return m;
}

/* The model of p, loaded on first use; the lock is held. NULL when out of
 * memory. */
static struct onnx_model *find_model(struct onnx_cache *c, const struct accel_onnx_params *p)
{
	char *key = model_key(p);
	if (!key)
		return NULL;
	struct onnx_model *m = lookup(c, key);
	if (m) {
		free(key);
		return m;
	}
	m = calloc(1, sizeof *m);
	if (!m) {
		free(key);
		return NULL;
	}
	m->key = key;
	if (c->loader->load(c->owner, p, &m->idle, &m->info, m->reason, sizeof m->reason) < 0) {
		m->idle = m->info = NULL;
		if (!m->reason[0])
			snprintf(m->reason, sizeof m->reason, "cannot load the model");
	} else {
		m->reason[0] = 0;
	}
	m->next = c->models;
	c->models = m;
	return m;
}

int onnx_cache_check(struct onnx_cache *c, const struct accel_onnx_params *p, char *reason, size_t len)
{
	pthread_mutex_lock(&c->lock);
	struct onnx_model *m = find_model(c, p);
	int rc = 0;
	if (!m) {
		snprintf(reason, len, "out of memory");
		rc = ACCEL_ENOTSUP;
	} else if (m->reason[0]) {
		snprintf(reason, len, "%s", m->reason);
		rc = ACCEL_ENOTSUP;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* A model's trial load in a child process (onnx_cache_check_isolated):
 * what comes back is its result and reason, plain data. */
struct trial {
	struct onnx_cache *c;
	const struct accel_onnx_params *p;
	int rc;
	char reason[240];
};

static int trial_load(void *arg)
{
	struct trial *t = arg;
	void *session = NULL, *info = NULL;
	t->reason[0] = 0;
	t->rc = t->c->loader->load(t->c->owner, t->p, &session, &info, t->reason, sizeof t->reason);
	/* The child ends here: what it loaded goes with it. */
	return 0;
}

int onnx_cache_check_isolated(struct onnx_cache *c, const struct accel_onnx_params *p, const char *who,
			      char *reason, size_t len)
{
	char *key = model_key(p);
	if (!key) {
		snprintf(reason, len, "out of memory");
		return ACCEL_ENOTSUP;
	}
	pthread_mutex_lock(&c->lock);
	struct onnx_model *m = lookup(c, key);
	pthread_mutex_unlock(&c->lock);
	if (!m) {
		struct trial t = { c, p, 0, "" };
		int crc = 0;
		char why[120];
		int rc = accel_call_isolated(NULL, trial_load, &t, sizeof t, &crc, why, sizeof why, NULL, 0);
		if (rc < 0 && strstr(why, "in time")) {
			/* Slow, not dead (a large model): loaded here. */
			free(key);
			return onnx_cache_check(c, p, reason, len);
		}
		if (!(m = calloc(1, sizeof *m))) {
			free(key);
			snprintf(reason, len, "out of memory");
			return ACCEL_ENOTSUP;
		}
		m->key = key;
		key = NULL;
		if (rc < 0)
			snprintf(m->reason, sizeof m->reason, "%s %s reading the model", who, why);
		else if (t.rc < 0)
			snprintf(m->reason, sizeof m->reason, "%s", t.reason[0] ? t.reason : "cannot load the model");
		pthread_mutex_lock(&c->lock);
		/* Another thread's check may have added it meanwhile: one
		 * entry a key. */
		struct onnx_model *had = lookup(c, m->key);
		if (had) {
			free(m->key);
			free(m);
			m = had;
		} else {
			m->next = c->models;
			c->models = m;
		}
		pthread_mutex_unlock(&c->lock);
	}
	free(key);
	pthread_mutex_lock(&c->lock);
	int rc = m->reason[0] ? ACCEL_ENOTSUP : 0;
	if (rc)
		snprintf(reason, len, "%s", m->reason);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int onnx_cache_take(struct onnx_cache *c, const struct accel_onnx_params *p, struct onnx_model **out,
		    void **session)
{
	*out = NULL;
	*session = NULL;
	pthread_mutex_lock(&c->lock);
	struct onnx_model *m = find_model(c, p);
	/* Checked in a child only: its first load here, as find_model's. */
	if (m && !m->reason[0] && !m->info &&
	    c->loader->load(c->owner, p, &m->idle, &m->info, m->reason, sizeof m->reason) < 0) {
		m->idle = m->info = NULL;
		if (!m->reason[0])
			snprintf(m->reason, sizeof m->reason, "cannot load the model");
	}
	int rc = !m ? ACCEL_ENOMEM : m->reason[0] ? ACCEL_ENOTSUP : 0;
	if (!rc) {
		*session = m->idle;
		if (c->loader->shared && m->idle)
			m->users++;
		else
			m->idle = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	/* Another session, loaded while other contexts open theirs. */
	if (!rc && !*session) {
		char why[240];
		rc = c->loader->load(c->owner, p, session, NULL, why, sizeof why);
	}
	if (!rc)
		*out = m;
	return rc;
}

void onnx_cache_give(struct onnx_cache *c, struct onnx_model *m, void *session)
{
	if (!session)
		return;
	pthread_mutex_lock(&c->lock);
	if (c->loader->shared && session == m->idle) {
		m->users--;
		session = NULL;
	} else if (!m->idle) {
		m->idle = session;
		session = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	if (session)
		c->loader->free_session(session);
}
