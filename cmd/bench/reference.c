/*
 * reference.c - the reference of a case with --vs: `openssl speed -evp ALG`
 * on buffers of age's 64 KiB chunk, in memory (no file, no framing, no
 * stream): a ceiling for age and the hashes rather than a like-for-like
 * peer, read from its machine-readable output (-mr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

/* Bytes per buffer: age's STREAM chunk. */
#define REF_BYTES "65536"

/* The bytes a second of the last "+F:" line of openssl speed -mr's output
 * in `path` (with -multi, the children's lines come as "Got: +F:..." and
 * the sum last): "+F:INDEX:NAME:BYTES_PER_SECOND". 0 when there is none. */
static double speed_of(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	char line[512];
	double v = 0;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "+F:", 3)) {
			char *last = strrchr(line, ':'), *end;
			double x = strtod(last + 1, &end);
			if (end != last + 1 && x > 0)
				v = x;
		}
	fclose(f);
	return v;
}

/* Run case c's reference, once per operation and thread count (the cases
 * of other engines and sizes share it), into c->ref_cmd and c->ref_mbps:
 * 0, or -1 when openssl is not on $PATH, the case ran on another engine
 * than openssl's, or openssl gave no figure (no reference, then). One
 * second: openssl speed's rate settles within it. age's ChaCha20-Poly1305
 * runs on the thread count of ours (-multi), a hash on one thread, as ours
 * hashes one file. */
int reference(struct bench *b, struct kase *c)
{
	const struct opdef *op = c->op;
	/* openssl's names of the hashes are ours. */
	const char *alg = op->fam == FAM_HASH ? op->name : op->fam == FAM_AGE_ENCRYPT || op->fam == FAM_AGE_DECRYPT ?
			  "chacha20-poly1305" : NULL;
	c->ref_cmd[0] = 0;
	/* OpenSSL's rate is the ceiling of OpenSSL's engine only: a case that
	 * ran on another library's (sodium:cpu0's BLAKE2b) has none. */
	if (!alg || !on_path("openssl") || strncmp(c->ran, "openssl:", 8) || strchr(c->ran, '+'))
		return -1;
	int dec = op->fam == FAM_AGE_DECRYPT, multi = op->fam != FAM_HASH && b->threads > 1;
	char threads[16];
	snprintf(threads, sizeof threads, "%d", b->threads);
	char *argv[16] = { "openssl", "speed", "-evp", (char *)alg };
	int n = 4;
	if (dec)
		argv[n++] = "-decrypt";
	argv[n++] = "-bytes", argv[n++] = REF_BYTES, argv[n++] = "-seconds", argv[n++] = "1";
	if (multi)
		argv[n++] = "-multi", argv[n++] = threads;
	argv[n++] = "-mr";
	argv[n] = NULL;
	char *out = temp_path(b, "speed-%s%s-%d", alg, dec ? "-d" : "", b->threads);
	if (!out)
		return -1;
	/* Cached in the file of its output, kept to the end. */
	double bps = file_size(out) > 0 ? speed_of(out) : 0;
	if (!bps && spawn(argv, out, NULL) == 0)
		bps = speed_of(out);
	if (!bps)
		return -1;
	size_t used = 0;
	for (int i = 0; argv[i] && used < sizeof c->ref_cmd; i++)
		used += (size_t)snprintf(c->ref_cmd + used, sizeof c->ref_cmd - used, "%s%s", i ? " " : "", argv[i]);
	c->ref_mbps = bps / 1e6;
	return 0;
}
