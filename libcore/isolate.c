/*
 * isolate.c - probes that may kill the process (a driver that calls abort()
 * when /sys is masked, or crashes) run in a child process first; what each
 * API's start-up did there is kept for the life of the process, so the
 * probes that need the driver in-process run only where it survived.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <accel/cli.h>
#include "core.h"

/* What the start-up of each API did in a child, once known. */
static struct outcome {
	char api[16];
	int rc;                  /* 0 survived, ACCEL_EDEVICE not */
	char why[96];
} outcomes[8];
static int noutcomes;
static pthread_mutex_t outcomes_lock = PTHREAD_MUTEX_INITIALIZER;

/* The outcome recorded for api, copied, or 0 when none is. */
static int outcome_get(const char *api, struct outcome *o)
{
	int found = 0;
	pthread_mutex_lock(&outcomes_lock);
	for (int i = 0; i < noutcomes && !found; i++)
		if (!strcmp(outcomes[i].api, api)) {
			*o = outcomes[i];
			found = 1;
		}
	pthread_mutex_unlock(&outcomes_lock);
	return found;
}

/* Record an outcome for api: a failure replaces a success, not the reverse. */
static void outcome_put(const char *api, int rc, const char *why)
{
	pthread_mutex_lock(&outcomes_lock);
	int i = 0;
	while (i < noutcomes && strcmp(outcomes[i].api, api))
		i++;
	if (i == noutcomes && noutcomes < (int)(sizeof outcomes / sizeof outcomes[0])) {
		noutcomes++;
		core_strlcpy(outcomes[i].api, api, sizeof outcomes[i].api);
		outcomes[i].rc = 0;
	}
	if (i < noutcomes && outcomes[i].rc == 0) {
		outcomes[i].rc = rc;
		core_strlcpy(outcomes[i].why, why, sizeof outcomes[i].why);
	}
	pthread_mutex_unlock(&outcomes_lock);
}

static int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p = (const char *)p + k;
		n -= (size_t)k;
	}
	return 0;
}

/* The child: no handler of the parent's (one that removes the parent's
 * temporary output on SIGINT), no core file for an expected abort, stdin
 * from /dev/null and stdout and stderr into the pipe, so it never takes
 * the parent's input or writes into its output. Never returns. */
static void child(int (*fn)(void *), void *arg, size_t size, int res, int out)
{
	struct sigaction sa;
	for (int sig = 1; sig < NSIG; sig++)
		if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN) {
			sa.sa_handler = SIG_DFL;
			sa.sa_flags = 0;
			sigaction(sig, &sa, NULL);
		}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct rlimit no_core = { 0, 0 };
	setrlimit(RLIMIT_CORE, &no_core);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
		_exit(127);
	int rc = fn(arg);
	if (write_all(res, &rc, sizeof rc) < 0 || write_all(res, arg, size) < 0)
		_exit(126);
	_exit(0);
}

/* Why a child that gave no result ended, from its wait status. */
static void ended(int status, int waited, char *why, size_t len)
{
	if (!waited)
		snprintf(why, len, "ended without a result");
	else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT)
		snprintf(why, len, "aborted (SIGABRT)");
	else if (WIFSIGNALED(status))
		snprintf(why, len, "was killed by SIG%s", sigabbrev_np(WTERMSIG(status)) ?
			 sigabbrev_np(WTERMSIG(status)) : "?");
	else
		snprintf(why, len, "exited with status %d without a result", WEXITSTATUS(status));
}

/* The last non-empty line of what the child printed, sanitised, in said[len]. */
static void last_line(const char *buf, size_t n, char *said, size_t len)
{
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		n--;
	size_t start = n;
	while (start && buf[start - 1] != '\n')
		start--;
	snprintf(said, len, "%.*s", (int)(n - start), buf + start);
	accel_text_sanitize(said);
}

/* What the parent reads from a child: its result and the end of its output. */
struct reading {
	char *res;
	size_t want, got;
	char out[2048];
	size_t nout;
};

/* Read from fd (0 the result, 1 the output); 0 at the end, 1 for more. */
static int read_some(struct reading *r, int which, int fd)
{
	ssize_t k;
	if (which == 0) {
		char sink[256];
		/* More than the result is the child's error: read and drop it. */
		k = r->got < r->want ? read(fd, r->res + r->got, r->want - r->got) : read(fd, sink, sizeof sink);
		if (k > 0)
			r->got += r->got < r->want ? (size_t)k : 0;
	} else {
		/* Keep the last half when full: what it said before it died. */
		if (r->nout == sizeof r->out) {
			memmove(r->out, r->out + sizeof r->out / 2, sizeof r->out / 2);
			r->nout = sizeof r->out / 2;
		}
		k = read(fd, r->out + r->nout, sizeof r->out - r->nout);
		if (k > 0)
			r->nout += (size_t)k;
	}
	return k > 0 || (k < 0 && errno == EINTR);
}

int accel_call_isolated(const char *api, int (*fn)(void *), void *arg, size_t size, int *rc, char *why, size_t len,
			char *said, size_t said_len)
{
	double seconds;
	accel_probe_timeout(&seconds);
	if (said_len)
		said[0] = 0;
	struct reading r = { .want = sizeof *rc + size };
	int res[2] = { -1, -1 }, out[2] = { -1, -1 };
	pid_t pid = -1;
	if ((r.res = malloc(r.want)) && pipe2(res, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0)
		pid = fork();
	if (pid == 0)
		child(fn, arg, size, res[1], out[1]);
	int err = r.res ? errno : ENOMEM;
	for (int i = 0; i < 2; i++) {
		if (res[i] >= 0 && (pid < 0 || i == 1))
			close(res[i]);
		if (out[i] >= 0 && (pid < 0 || i == 1))
			close(out[i]);
	}
	if (pid < 0) {
		free(r.res);
		snprintf(why, len, "cannot start a child process: %s", strerror(err));
		if (api)
			outcome_put(api, ACCEL_EDEVICE, why);
		return ACCEL_EDEVICE;
	}
	/* Until both pipes end, or the deadline (then the child is killed). */
	struct pollfd pf[2] = { { res[0], POLLIN, 0 }, { out[0], POLLIN, 0 } };
	double end = accel_now() + seconds;
	int late = 0;
	while (pf[0].fd >= 0 || pf[1].fd >= 0) {
		double left = end - accel_now();
		if (left <= 0) {
			late = 1;
			break;
		}
		int k = poll(pf, 2, (int)(left * 1000) + 1);
		if (k < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2 && k > 0; i++)
			if (pf[i].fd >= 0 && pf[i].revents && !read_some(&r, i, pf[i].fd)) {
				close(pf[i].fd);
				pf[i].fd = -1;
			}
	}
	if (late)
		kill(pid, SIGKILL);
	for (int i = 0; i < 2; i++)
		if (pf[i].fd >= 0)
			close(pf[i].fd);
	int status = 0;
	pid_t w;
	while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	/* With SIGCHLD ignored there is no status: the result decides. */
	int waited = w == pid;
	if (said_len)
		last_line(r.out, r.nout, said, said_len);
	int ok = !late && r.got == r.want && (!waited || (WIFEXITED(status) && !WEXITSTATUS(status)));
	if (ok) {
		memcpy(rc, r.res, sizeof *rc);
		if (size)
			memcpy(arg, r.res + sizeof *rc, size);
	} else if (late) {
		snprintf(why, len, "did not answer in time (ACCEL_PROBE_TIMEOUT)");
	} else {
		ended(status, waited, why, len);
	}
	if (api)
		outcome_put(api, ok ? 0 : ACCEL_EDEVICE, ok ? "" : why);
	free(r.res);
	return ok ? 0 : ACCEL_EDEVICE;
}

int accel_api_survives(const char *api, int (*trial)(void *), void *arg, char *why, size_t len)
{
	struct outcome o;
	if (outcome_get(api, &o)) {
		if (o.rc)
			snprintf(why, len, "%s", o.why);
		return o.rc;
	}
	int rc;
	return accel_call_isolated(api, trial, arg, 0, &rc, why, len, NULL, 0);
}
