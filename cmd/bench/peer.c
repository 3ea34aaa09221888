/*
 * peer.c - the peer tools' runs (zstd, pigz, igzip, lz4, sha256sum, age,
 * accel-bench-fftw ...; onnx.c and video.c make those of onnx.run and the
 * video stages): which runs, their command lines, their start-up, one run
 * as a child process.
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

/* spawn, with stderr to the file `errs` (NULL: /dev/null) and the wait
 * status into *status (-1 when argv could not run). */
static int spawn_status(char *const argv[], const char *out, const char *errs, struct rusage *ru, int *status)
{
	*status = -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, errs ? errs : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
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
	*status = st;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Run argv with stdin from /dev/null, stdout to `out` (NULL: /dev/null)
 * and stderr to /dev/null; its rusage into *ru (may be NULL). Returns the
 * exit status, or -1 when it could not run or died of a signal. */
int spawn(char *const argv[], const char *out, struct rusage *ru)
{
	int st;
	return spawn_status(argv, out, NULL, ru, &st);
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

/* The program `prog` runs as: for accel-bench-fftw, the helper's path
 * into path[len] ($ACCEL_BENCH_FFTW, else libexec/ beside this program in
 * the build tree, else the folder it is installed in); else prog itself
 * when it is on $PATH. 0, or -1 when it is not here. */
static int peer_program(const char *prog, char *path, size_t len)
{
	if (strcmp(prog, "accel-bench-fftw")) {
		snprintf(path, len, "%s", prog);
		return on_path(prog) ? 0 : -1;
	}
	const char *env = getenv("ACCEL_BENCH_FFTW");
	if (env && *env) {
		snprintf(path, len, "%s", env);
		return access(path, X_OK);
	}
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		*strrchr(exe, '/') = 0;
		if ((size_t)snprintf(path, len, "%.*s/libexec/%s", (int)(len / 2), exe, prog) < len &&
		    access(path, X_OK) == 0)
			return 0;
	}
	snprintf(path, len, "%s/%s", ACCEL_BENCH_LIBEXEC, prog);
	return access(path, X_OK);
}

/* The peer of op that runs here, into path[len]: the first of --peer's
 * LIST that op has and is installed, else the first of op's installed.
 * Its argv template, or NULL. */
static const char *const *choose_peer(const struct bench *b, const struct opdef *op, char *path, size_t len)
{
	for (const char *s = b->job->peer; s && *s;) {
		size_t l = strcspn(s, ",");
		for (int i = 0; i < MAX_PEERS; i++) {
			const char *p = op->peer[i][0];
			if (p && strlen(p) == l && !strncmp(p, s, l) && peer_program(p, path, len) == 0)
				return op->peer[i];
		}
		s += l + (s[l] == ',');
	}
	for (int i = 0; i < MAX_PEERS; i++)
		if (op->peer[i][0] && peer_program(op->peer[i][0], path, len) == 0)
			return op->peer[i];
	return NULL;
}

int peer_list_check(const char *list, char *bad, size_t len)
{
	for (const char *s = list; *s;) {
		size_t l = strcspn(s, ","), hit = 0;
		for (size_t o = 0; o < nops && !hit; o++)
			for (int i = 0; i < MAX_PEERS && !hit; i++)
				hit = ops[o].peer[i][0] && strlen(ops[o].peer[i][0]) == l && !strncmp(ops[o].peer[i][0], s, l);
		if (!hit) {
			snprintf(bad, len, "%.*s", (int)l, s);
			return -1;
		}
		s += l + (s[l] == ',');
	}
	return 0;
}

/* igzip's option for a gzip level: ISA-L's level of the same number for
 * 1-3, as the cpu backend maps them; its best, 3, above (where ours is
 * libdeflate's, which igzip does not reach). */
static int isal_level(int level)
{
	return level < 1 ? 1 : level > 3 ? 3 : level;
}

/* The peer's command for case c on `input` into c->peer_argv and
 * c->peer_cmd (shown without file names): 0, or -1 when there is none
 * here. */
int peer_command(struct bench *b, struct kase *c, const char *input)
{
	const struct opdef *op = c->op;
	char prog[4096];
	const char *const *peer;
	if (op->fam == FAM_ONNX)
		return onnx_peer_command(b, c);
	if (IS_VIDEO(op->fam))
		return video_peer_command(b, c, input);
	if (!(peer = choose_peer(b, op, prog, sizeof prog)))
		return -1;
	if ((op->fam == FAM_AGE_ENCRYPT || op->fam == FAM_AGE_DECRYPT) && age_keys(b) < 0)
		return -1;
	int n = 0;
	size_t used = 0;
	for (int i = 0; peer[i] && n < 14; i++) {
		char word[4300];
		const char *w = peer[i], *pc = strchr(w, '%');
		int shown = 1, level = c->level;
		if (pc && (pc[1] == 'T' || pc[1] == 'L' || pc[1] == 'G' || pc[1] == 'N'))
			snprintf(word, sizeof word, "%.*s%llu", (int)(pc - w), w, (unsigned long long)(
				 pc[1] == 'T' ? (uint64_t)b->threads : pc[1] == 'L' ? (uint64_t)level :
				 pc[1] == 'G' ? (uint64_t)isal_level(level) : c->size));
		else if (!strcmp(w, "%R"))
			snprintf(word, sizeof word, "%s", b->age_recipient), shown = 0;
		else if (!strcmp(w, "%I"))
			snprintf(word, sizeof word, "%s", b->age_identity), shown = 0;
		else
			snprintf(word, sizeof word, "%s", w);
		if (!(c->peer_argv[n++] = strdup(i ? word : prog)))
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

/* The start-up of the program argv (the peer's, or ours), whose word `in`
 * is its input (-1: its last word): the median of 3 runs on the empty
 * input of case c (for age -d, age's file of the empty plaintext; for
 * video, the clip of one frame), into *start. 0, or -1 when it failed. */
int start_up(struct bench *b, struct kase *c, char **argv, int in, double *start, char *input, size_t input_len,
	     char *why, size_t len)
{
	const char *tiny = c->tiny;
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
	int last = in;
	if (last < 0)
		for (last = 0; argv[last + 1]; last++)
			;
	char *keep = argv[last];
	argv[last] = (char *)tiny;
	double t[3];
	int rc = 0, st = 0;
	char *errs = temp_path(b, "start-up.err");
	for (int i = 0; i < 3 && !rc; i++) {
		double t0 = accel_now();
		rc = spawn_status(argv, NULL, errs, NULL, &st) ? -1 : 0;
		t[i] = accel_now() - t0;
	}
	argv[last] = keep;
	if (rc) {
		/* How it failed, and the first line it wrote on stderr. */
		char line[160] = "";
		FILE *f = errs ? fopen(errs, "re") : NULL;
		if (f) {
			if (!fgets(line, sizeof line, f))
				line[0] = 0;
			fclose(f);
			line[strcspn(line, "\n")] = 0;
		}
		long long bytes = file_size(tiny);
		if (st == -1)
			snprintf(why, len, "it could not run");
		else if (WIFSIGNALED(st))
			snprintf(why, len, "killed by signal %d (%s)%s%s", WTERMSIG(st), strsignal(WTERMSIG(st)),
				 line[0] ? ": " : "", line);
		else
			snprintf(why, len, "exit %d%s%s", WEXITSTATUS(st), line[0] ? ": " : "", line);
		if (bytes == 0)
			snprintf(input, input_len, "an empty input");
		else
			snprintf(input, input_len, "its start-up input of %lld bytes", bytes);
		return rc;
	}
	qsort(t, 3, sizeof t[0], cmp_double);
	*start = t[1];
	return 0;
}
