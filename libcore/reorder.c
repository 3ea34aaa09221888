/*
 * reorder.c - the reorder buffer: workers finish units in any order, the
 * writer takes them strictly by sequence number. The window is the number of
 * units in flight, so a slot index is seq modulo the capacity.
 */
#include <stdlib.h>
#include "core.h"

int core_reorder_init(struct core_reorder *r, size_t cap)
{
	r->slot = calloc(cap, sizeof *r->slot);
	r->cap = cap;
	r->next = 0;
	return r->slot ? 0 : ACCEL_ENOMEM;
}

void core_reorder_free(struct core_reorder *r)
{
	free(r->slot);
	r->slot = NULL;
}

int core_reorder_put(struct core_reorder *r, struct accel_unit *u)
{
	if (u->seq < r->next || u->seq - r->next >= r->cap)
		return ACCEL_EINVAL;
	struct accel_unit **s = &r->slot[u->seq % r->cap];
	if (*s)
		return ACCEL_EINVAL;
	*s = u;
	return 0;
}

struct accel_unit *core_reorder_take(struct core_reorder *r)
{
	struct accel_unit **s = &r->slot[r->next % r->cap];
	struct accel_unit *u = *s;
	if (!u)
		return NULL;
	*s = NULL;
	r->next++;
	return u;
}
