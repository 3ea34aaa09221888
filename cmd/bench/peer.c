/*
 * peer.c - the peer tools' runs (zstd, pigz, lz4, sha256sum, age ...): their
 * command lines, their start-up, one run as a child process.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

extern char **environ;


int on_path(const char *prog)
{
	const char *path = getenv("PATH");
	if (!path)
		return 0;
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");
		char full[4096];
		snprintf(full, sizeof full, "%.*s/%s", (int)n, n ? p : ".", prog);
		if (access(full, X_OK) == 0)
			return 1;
		p += n + (p[n] == ':');
	}
	return 0;
}

/* Run argv with stdin from /dev/null, stdout to `out` (NULL: /dev/null)
 * and stderr to /dev/null; its rusage into *ru (may be NULL). Returns the
 * exit status, or -1 when it could not run or died of a signal. */
int spawn(char *const argv[], const char *out, struct rusage *ru)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return -1;
	int st;
	struct rusage r;
	while (wait4(pid, &st, 0, &r) < 0)
		if (errno != EINTR)
			return -1;
	if (ru)
		*ru = r;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* age's key pair for the age peers, once: 0, or -1 when age-keygen
 * cannot make one (no peer then). */
int age_keys(struct bench *b)
{
	if (b->age_peer)
		return b->age_peer > 0 ? 0 : -1;
	b->age_peer = -1;
	char *key = temp_path(b, "age-key.txt"), *rec = temp_path(b, "age-recipient.txt");
	if (!key || !rec || !on_path("age-keygen"))
		return -1;
	char *gen[] = { "age-keygen", "-o", key, NULL }, *pub[] = { "age-keygen", "-y", key, NULL };
	if (spawn(gen, NULL, NULL) != 0 || spawn(pub, rec, NULL) != 0)
		return -1;
	FILE *f = fopen(rec, "re");
	if (!f)
		return -1;
	int ok = fgets(b->age_recipient, sizeof b->age_recipient, f) != NULL;
	fclose(f);
	b->age_recipient[strcspn(b->age_recipient, "\n")] = 0;
	if (!ok || !b->age_recipient[0])
		return -1;
	snprintf(b->age_identity, sizeof b->age_identity, "%s", key);
	b->age_peer = 1;
	return 0;
}

/* The peer's command for case c on `input` into c->peer_argv and
 * c->peer_cmd (shown without file names): 0, or -1 when there is none
 * here. */
int peer_command(struct bench *b, struct kase *c, const char *input)
{
	const struct opdef *op = c->op;
	if (op->fam == FAM_ONNX)
		return onnx_peer_command(b, c);
	if (IS_VIDEO(op->fam))
		return video_peer_command(b, c, input);
	if (!op->peer[0] || !on_path(op->peer[0]))
		return -1;
	if ((op->fam == FAM_AGE_ENCRYPT || op->fam == FAM_AGE_DECRYPT) && age_keys(b) < 0)
		return -1;
	int n = 0;
	size_t used = 0;
	for (int i = 0; op->peer[i] && n < 14; i++) {
		char word[4300];
		const char *w = op->peer[i];
		int shown = 1;
		if (strstr(w, "%T"))
			snprintf(word, sizeof word, "%.*s%d", (int)(strstr(w, "%T") - w), w, b->threads);
		else if (strstr(w, "%L"))
			snprintf(word, sizeof word, "%.*s%d", (int)(strstr(w, "%L") - w), w,
				 accel_compress_default_level(op->format));
		else if (!strcmp(w, "%R"))
			snprintf(word, sizeof word, "%s", b->age_recipient), shown = 0;
		else if (!strcmp(w, "%I"))
			snprintf(word, sizeof word, "%s", b->age_identity), shown = 0;
		else
			snprintf(word, sizeof word, "%s", w);
		if (!(c->peer_argv[n++] = strdup(word)))
			return -1;
		if (shown && used < sizeof c->peer_cmd)
			used += (size_t)snprintf(c->peer_cmd + used, sizeof c->peer_cmd - used, "%s%s", used ? " " : "", word);
	}
	c->peer_in = n;
	if (!(c->peer_argv[n++] = strdup(input)))
		return -1;
	c->peer_argv[n] = NULL;
	return 0;
}

/* The peer's start-up: the median of 3 runs on the empty input of case
 * c (for age -d, an age file of the empty plaintext; for video, the clip of
 * one frame), into c->peer.start; onnx.run's peer starts, its model load
 * its set-up.
 * 0, or -1 when it failed. */
int peer_start(struct bench *b, struct kase *c, const char *input)
{
	const char *tiny = c->tiny;
	if (c->op->fam == FAM_ONNX)
		return onnx_peer_start(b, c);
	if (c->op->fam == FAM_AGE_DECRYPT) {
		char *theirs = temp_path(b, "age-empty.age");
		char *enc[] = { "age", "-r", b->age_recipient, "-o", theirs, (char *)c->tiny, NULL };
		if (!theirs)
			return -1;
		enc[5] = temp_path(b, "empty");
		if (file_size(theirs) < 0 && spawn(enc, NULL, NULL) != 0)
			return -1;
		tiny = theirs;
	}
	int last = c->peer_in;
	char *keep = c->peer_argv[last];
	c->peer_argv[last] = (char *)tiny;
	double t[3];
	int rc = 0;
	for (int i = 0; i < 3 && !rc; i++) {
		double t0 = accel_now();
		rc = spawn(c->peer_argv, NULL, NULL) ? -1 : 0;
		t[i] = accel_now() - t0;
	}
	c->peer_argv[last] = keep;
	qsort(t, 3, sizeof t[0], cmp_double);
	c->peer.start = c->peer.setup = t[1];
	return rc;
}
