/*
 * sysfs.c - helpers for probes that read /sys, /proc and /dev (always under
 * the sysroot, so recorded trees work) and for probes that call drivers which
 * may never return.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <accel/cli.h>
#include "core.h"

static void vpath(char *buf, size_t len, const char *root, const char *fmt, va_list ap)
{
	size_t n = (size_t)snprintf(buf, len, "%s", root);
	if (n < len)
		vsnprintf(buf + n, len - n, fmt, ap);
}

int accel_sysfs_read(const char *root, char *buf, size_t len, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	vpath(path, sizeof path, root, fmt, ap);
	va_end(ap);
	if (len)
		buf[0] = 0;
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int ok = len && fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	accel_text_sanitize(buf);
	return (int)strlen(buf);
}

int accel_sysfs_read_long(const char *root, long *out, const char *fmt, ...)
{
	char path[PATH_MAX], buf[64];
	va_list ap;
	va_start(ap, fmt);
	vpath(path, sizeof path, root, fmt, ap);
	va_end(ap);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int ok = fgets(buf, sizeof buf, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	char *end;
	errno = 0;
	long v = strtol(buf, &end, 10);
	while (*end == ' ' || *end == '\t' || *end == '\n')
		end++;
	/* strtol takes leading blanks and a sign, not an empty number. */
	if (end == buf || *end || errno || !strpbrk(buf, "0123456789"))
		return -1;
	*out = v;
	return 0;
}

int accel_sysfs_link(const char *root, char *buf, size_t len, const char *fmt, ...)
{
	char path[PATH_MAX], target[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	vpath(path, sizeof path, root, fmt, ap);
	va_end(ap);
	if (len)
		buf[0] = 0;
	ssize_t n = readlink(path, target, sizeof target - 1);
	if (n <= 0)
		return -1;
	target[n] = 0;
	const char *slash = strrchr(target, '/');
	core_strlcpy(buf, slash ? slash + 1 : target, len);
	accel_text_sanitize(buf);
	return (int)strlen(buf);
}

void accel_pci_locality(struct accel_device *d, const char *root)
{
	char v[256], ven[16], dev[16];
	const char *a = d->pci_address;
	if (!a[0] || accel_sysfs_read(root, ven, sizeof ven, "/sys/bus/pci/devices/%s/vendor", a) < 0)
		return;
	if (accel_sysfs_read(root, dev, sizeof dev, "/sys/bus/pci/devices/%s/device", a) > 2) {
		char id[40];
		snprintf(id, sizeof id, "%s:%s", ven[0] == '0' && ven[1] == 'x' ? ven + 2 : ven,
			 dev[0] == '0' && dev[1] == 'x' ? dev + 2 : dev);
		accel_device_set(d, "pci_id", id);
	}
	/* -1 (no NUMA) and anything that is not a node number: unknown. */
	long node;
	if (accel_sysfs_read_long(root, &node, "/sys/bus/pci/devices/%s/numa_node", a) == 0)
		d->numa_node = node >= 0 && node < 65536 ? (int)node : -1;
	if (accel_sysfs_read(root, v, sizeof v, "/sys/bus/pci/devices/%s/local_cpulist", a) > 0)
		accel_device_set(d, "local_cpulist", v);
	if (!d->driver[0] && accel_sysfs_link(root, v, sizeof v, "/sys/bus/pci/devices/%s/driver", a) > 0)
		core_strlcpy(d->driver, v, sizeof d->driver);
}

/* Bounded calls: freed by whichever of the caller and the threads is last. */
struct bounded;
struct bounded_call {
	struct bounded *b;
	void *arg;
	int rc, done;
};
struct bounded {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int (*fn)(void *);
	int pending, refs;
	struct bounded_call call[];
};

static void bounded_put(struct bounded *b)
{
	int last = --b->refs == 0;
	pthread_mutex_unlock(&b->lock);
	if (last) {
		pthread_cond_destroy(&b->cond);
		pthread_mutex_destroy(&b->lock);
		free(b);
	}
}

static void *bounded_main(void *x)
{
	struct bounded_call *c = x;
	struct bounded *b = c->b;
	int rc = b->fn(c->arg);
	pthread_mutex_lock(&b->lock);
	c->rc = rc;
	c->done = 1;
	b->pending--;
	pthread_cond_signal(&b->cond);
	bounded_put(b);
	return NULL;
}

/* Calls abandoned so far in this process (accel_exit reads it). */
static int abandoned;

int accel_abandoned_calls(void)
{
	return __atomic_load_n(&abandoned, __ATOMIC_SEQ_CST);
}

int accel_probe_timeout(double *seconds)
{
	const char *env = getenv("ACCEL_PROBE_TIMEOUT");
	*seconds = ACCEL_PROBE_TIMEOUT_DEFAULT;
	if (!env)
		return 0;
	char *end;
	errno = 0;
	double v = strtod(env, &end);
	/* "!(a <= v && v <= b)" is also true for NaN. */
	if (end == env || *end || errno || !(v >= ACCEL_PROBE_TIMEOUT_MIN && v <= ACCEL_PROBE_TIMEOUT_MAX))
		return ACCEL_EINVAL;
	*seconds = v;
	return 0;
}

int accel_call_bounded_all(int (*fn)(void *), void *const *args, int n, double seconds, int *rcs)
{
	/* Outside the range (a malformed variable the program did not refuse,
	 * or a caller's inf) the default: a deadline must be a real time. */
	if (seconds <= 0 || !(seconds <= ACCEL_PROBE_TIMEOUT_MAX))
		accel_probe_timeout(&seconds);
	if (n <= 0)
		return 0;
	struct bounded *b = calloc(1, sizeof *b + (size_t)n * sizeof b->call[0]);
	if (!b)
		return ACCEL_ENOMEM;
	pthread_mutex_init(&b->lock, NULL);
	core_cond_init_monotonic(&b->cond);
	b->fn = fn;
	b->refs = 1;
	pthread_attr_t ta;
	pthread_attr_init(&ta);
	pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
	pthread_mutex_lock(&b->lock);
	for (int i = 0; i < n; i++) {
		struct bounded_call *c = &b->call[i];
		pthread_t t;
		c->b = b;
		c->arg = args[i];
		b->refs++;
		b->pending++;
		if (pthread_create(&t, &ta, bounded_main, c)) {
			/* No thread to spare: run it here, unbounded. */
			b->refs--;
			b->pending--;
			pthread_mutex_unlock(&b->lock);
			c->rc = fn(c->arg);
			pthread_mutex_lock(&b->lock);
			c->done = 1;
		}
	}
	pthread_attr_destroy(&ta);
	struct timespec ts;
	core_deadline(&ts, seconds);
	while (b->pending > 0)
		if (pthread_cond_timedwait(&b->cond, &b->lock, &ts) != 0)
			break;  /* ETIMEDOUT; anything else would only repeat */
	int late = 0;
	for (int i = 0; i < n; i++) {
		rcs[i] = b->call[i].done ? b->call[i].rc : ACCEL_EDEVICE;
		late += !b->call[i].done;
	}
	if (late)
		__atomic_add_fetch(&abandoned, late, __ATOMIC_SEQ_CST);
	bounded_put(b);
	return late;
}

int accel_call_bounded(int (*fn)(void *), void *arg, double seconds)
{
	int rc;
	int late = accel_call_bounded_all(fn, &arg, 1, seconds, &rc);
	return late < 0 ? late : rc;
}
