/*
 * accel-crypt - age v1 encryption and decryption with the payload's STREAM
 * chunks in parallel (age-encryption.org/v1), age keys; file hashes as
 * sha256sum writes and checks them.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <sodium.h>
#include "accel.h"
#include "crypt/crypt.h"

struct job {
	int decrypt, passphrase, armor, passfd;
	const char *passfile, *input;
	const char *sealed;  /* decrypting this identity file (age -p of identities) */
	struct recipient *rs;
	int nrs;
	const char **idfiles;   /* -i FILEs, read after the options */
	int nidfiles;
	struct identity *ids;
	int nids;
	struct sealed_keys later;     /* encrypted OpenSSH keys of -i, opened when a stanza is for them */
	struct accel_common common;   /* -o, -f, --json, -v ... */
	struct accel_report *report;  /* --json: the -v report, on stderr at the end */
};
#define JOB(field) ACCEL_AT(struct job, field)

static void job_free(struct job *job)
{
	keys_free(job->rs, job->nrs, job->ids, job->nids);
	sealed_keys_free(&job->later);
	free(job->idfiles);
}

static int recipient_option(void *v, const char *arg)
{
	struct job *job = v;
	char err[300];
	struct recipient *nr = realloc(job->rs, (size_t)(job->nrs + 1) * sizeof *nr);
	if (!nr) {
		accel_msg_error("out of memory");
		return ACCEL_ENOMEM;
	}
	job->rs = nr;
	if (recipient_parse(arg, &job->rs[job->nrs], err, sizeof err) < 0) {
		accel_msg_usage("-r: %s", err);
		return ACCEL_EINVAL;
	}
	job->nrs++;
	return 0;
}

static int recipients_file_option(void *v, const char *arg)
{
	struct job *job = v;
	return recipients_read(arg, &job->rs, &job->nrs) < 0 ? ACCEL_EIO : 0;
}

static int identity_option(void *v, const char *arg)
{
	struct job *job = v;
	const char **nf = realloc(job->idfiles, (size_t)(job->nidfiles + 1) * sizeof *nf);
	if (!nf) {
		accel_msg_error("out of memory");
		return ACCEL_ENOMEM;
	}
	job->idfiles = nf;
	job->idfiles[job->nidfiles++] = arg;
	return 0;
}

static const struct accel_option options[] = {
	{ 'e', "encrypt", NULL, "encrypt (the default)", ACCEL_SET(JOB(decrypt), 0) },
	{ 'd', "decrypt", NULL, "decrypt (armor is recognised by itself)", ACCEL_SET(JOB(decrypt), 1) },
	{ 'r', "recipient", "RECIPIENT", "encrypt to an age1... or SSH (ssh-ed25519, ssh-rsa) public key (repeatable)", ACCEL_CALL(recipient_option) },
	{ 'R', "recipients-file", "FILE", "encrypt to each recipient listed in FILE, authorized_keys lines too (repeatable)", "file", ACCEL_CALL(recipients_file_option) },
	{ 'i', "identity", "FILE", "decrypt with (with -e: encrypt to) the identities in FILE: AGE-SECRET-KEY-1... lines (or an age file of them encrypted with a passphrase, as age -p makes it) or an OpenSSH or PEM (PKCS#1, PKCS#8) private key, encrypted or not (repeatable)", "file", ACCEL_CALL(identity_option) },
	{ 'p', "passphrase", NULL, "encrypt with a passphrase (scrypt), asked at the terminal twice", ACCEL_SET(JOB(passphrase), 1) },
	{ 0, "passphrase-file", "FILE", "read the passphrase (of the file, of an encrypted identity file, OpenSSH or PEM key) from the first line of FILE", "file", ACCEL_STRING(JOB(passfile)) },
	{ 0, "passphrase-fd", "N", "read the passphrase from the first line of file descriptor N", ACCEL_INT(JOB(passfd), 0, 1 << 20, "a file descriptor") },
	{ 'a', "armor", NULL, "encrypt to ASCII armor (PEM-style text)", ACCEL_SET(JOB(armor), 1) },
	ACCEL_OUTPUT_OPTION,
	{ 'f', "force", NULL, "overwrite FILE; write binary to a terminal", ACCEL_COMMON(ACCEL_OPT_FORCE) },
	ACCEL_BACKEND_OPTION_TEXT("engines to use, in order, joined by , or + (several serve the stream together): auto (the default), openssl or cpu (OpenSSL on the CPU), or those accel-detect --routes age.encrypt lists"),
	ACCEL_RUN_OPTIONS,
	ACCEL_VERBOSE_OPTION_TEXT("say more on stderr: the route, each engine's statistics and MB/s"),
	{ 0, "json", NULL, "the -v report (route, devices, statistics, probes, exit status) as one JSON document on stderr at the end", ACCEL_COMMON(ACCEL_OPT_JSON) },
	ACCEL_QUIET_HELP_OPTIONS,
	{ 0 },
};

static const int exit_statuses[] = {
	ACCEL_EXIT_OK, ACCEL_EXIT_FAILURE, ACCEL_EXIT_USAGE, ACCEL_EXIT_DATA, -1,
};

extern const struct accel_cli keygen_cli, hash_cli, sign_cli, verify_cli;

/* The subcommands, each with its own options. */
static const struct accel_subcommand subcommands[] = {
	{ "keygen", &keygen_cli, cmd_keygen },
	{ "hash", &hash_cli, cmd_hash },
	{ "sign", &sign_cli, cmd_sign },
	{ "verify", &verify_cli, cmd_verify },
	{ 0 },
};

/* --version: the OpenSSL the program runs with (its keys, hashes and
 * signatures; the openssl plugin's engine loads the same). */
static void versions(char *buf, size_t len)
{
	snprintf(buf, len, "openssl %s\nlibsodium %s\n", OpenSSL_version(OPENSSL_VERSION_STRING),
		 sodium_version_string());
}

static const struct accel_cli cli = {
	PROG, "[-e] (-r RECIPIENT | -R FILE | -i IDENTITY | -p)... [-a] [-o OUT] [FILE] | -d [-i IDENTITY]... [-o OUT] [FILE] | keygen ... | hash ... | sign ... | verify ...",
	"Encrypt or decrypt FILE (or stdin) in the age v1 format, the payload's chunks in parallel; keygen, hash, sign and verify are subcommands (each has --help).",
	options, exit_statuses, subcommands, NULL,
};

/* The options into job: 0, -1 (exit 0) or the exit status (job_free
 * it either way). */
static int parse_args(int argc, char **argv, struct job *job)
{
	memset(job, 0, sizeof *job);
	job->passfd = -1;
	int rc = accel_parse(&cli, argc, argv, job, &job->common);
	if (rc)
		return rc;
	int nops = job->common.noperands;
	char **ops = job->common.operands;
	if (nops > 1) {
		accel_msg_usage("one input FILE at most ('%s' is a second)", ops[1]);
		return ACCEL_EXIT_USAGE;
	}
	job->input = nops ? ops[0] : "-";
	if (job->passfile && job->passfd >= 0) {
		accel_msg_usage("--passphrase-file and --passphrase-fd exclude each other");
		return ACCEL_EXIT_USAGE;
	}
	if (job->decrypt) {
		if (job->nrs || job->passphrase || job->armor) {
			accel_msg_usage("-r, -R, -p and -a are for encryption (-d reads armor by itself)");
			return ACCEL_EXIT_USAGE;
		}
		return 0;
	}
	/* With -i (encrypt to the identities' recipients, as age -e -i), a
	 * passphrase from a file or fd is theirs (an encrypted key's). */
	if (!job->nidfiles && (job->passfile || job->passfd >= 0))
		job->passphrase = 1;
	if (job->passphrase && (job->nrs || job->nidfiles)) {
		accel_msg_usage("-p and a passphrase cannot be combined with recipients (-r, -R, -i)");
		return ACCEL_EXIT_USAGE;
	}
	if (!job->passphrase && !job->nrs && !job->nidfiles) {
		accel_msg_usage("no recipient: give -r RECIPIENT, -R FILE, -i IDENTITY or -p");
		return ACCEL_EXIT_USAGE;
	}
	return 0;
}

/* The stream's set-up: an input known to fit one age chunk is one unit,
 * run on the calling thread (no worker started for it) unless -T asks
 * for threads. */
static struct accel_stream_config stream_config(const struct job *job, int64_t total)
{
	int one_unit = !job->common.threads && total >= 0 && total <= ACCEL_AGE_CHUNK;
	struct accel_stream_config cfg = {
		.threads = one_unit ? 1 : job->common.threads,
		.inline_units = one_unit,
		.fallback = job->common.fallback,
		.progress = job->common.progress < 0 ? isatty(2) && !job->common.quiet : job->common.progress,
		.total_size = total,
		.prog = PROG,
		.verbose = job->common.quiet ? -1 : job->common.verbose,
	};
	return cfg;
}

/* Legacy names: OpenSSL's first fetch enters every legacy cipher and
 * digest into its name table and copies their names (about 0.6 ms, OpenSSL
 * 3.0), for lookups by legacy name (EVP_get_cipherbyname: PEM's DEK-Info,
 * PKCS#8) that a run whose only use of OpenSSL left is the openssl
 * engine's (ciphers and digests fetched by their provider names) no longer
 * makes. Called before a payload's run, and by hash at its start; where the
 * header already used OpenSSL (ssh-rsa, PEM keys, scrypt) the tables are in
 * and this changes nothing. Not before a sealed identity file's payload:
 * identities are read after it. */
void openssl_no_legacy_names(void)
{
	OPENSSL_init_crypto(OPENSSL_INIT_NO_ADD_ALL_CIPHERS | OPENSSL_INIT_NO_ADD_ALL_DIGESTS, NULL);
}

/* OpenSSL's error strings (about 0.35 ms to enter, at its first
 * configuration load) are read only by the -v and --json reports (a
 * provider that cannot load, accel-detect's line); no message of ours
 * prints them: not entered in a run without either. Before OpenSSL's
 * first use (once it loaded them this changes nothing). */
void openssl_setup(const struct accel_common *common)
{
	if (!common->verbose && !common->json)
		OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS, NULL);
}

/* The header and payload nonce, written before the first chunk. */
struct head {
	struct text text;
	uint8_t nonce[NONCE_LEN];
};

static int write_head(void *user, struct accel_output *out)
{
	struct head *h = user;
	int rc = accel_output_write(out, h->text.p, h->text.len);
	return rc ? rc : accel_output_write(out, h->nonce, NONCE_LEN);
}

/* Open the output: 0, or the exit status after a message. */
static int open_output(struct job *job, struct accel_output *out, int binary)
{
	int rc = accel_output_open(out, job->common.output, job->common.force, binary);
	if (rc == 0)
		return 0;
	if (rc == ACCEL_EEXIST)
		accel_msg_error("%s already exists; use -f to overwrite it", job->common.output);
	else if (rc == ACCEL_EINVAL)
		accel_msg_error("refusing to write encrypted data to a terminal; use -a, -o FILE, a pipe or -f");
	else
		accel_msg_error("cannot write %s: %s", job->common.output ? job->common.output : "stdout", strerror(errno));
	return ACCEL_EXIT_FAILURE;
}

/* A failed run as one line naming the input; the exit status. */
static int run_failed(const struct job *job, const char *what, int rc, const char *err)
{
	if (rc == ACCEL_EPIPE)
		return 0;
	const char *name = strcmp(job->input, "-") ? job->input : "stdin";
	if (rc == ACCEL_EINVAL && !strncmp(err, "--backend", 9)) {
		accel_msg_usage("%s", err);
		return ACCEL_EXIT_USAGE;
	}
	if (rc == ACCEL_EINVAL) {
		accel_msg_error("%s", err);
		return ACCEL_EXIT_USAGE;
	}
	if (rc == ACCEL_EIO && !strncmp(err, "cannot ", 7))
		accel_msg_error("%s", err);
	else
		accel_msg_error("%s: cannot %s: %s", name, what, err[0] ? err : accel_strerror(rc));
	return accel_exit_status(rc) == ACCEL_EXIT_USAGE ? ACCEL_EXIT_FAILURE : accel_exit_status(rc);
}

/* What -v or --json says after a run over `in` (also a failed one). */
static void print_stats(const struct job *job, const struct accel_input *in, int rc,
			const struct accel_stream_stats *stats, double t0)
{
	if (job->report) {
		accel_report_run(job->report, in->name, stats);
		return;
	}
	if (!job->common.verbose || rc < 0)
		return;
	fprintf(stderr, "%s: ", PROG);
	accel_stream_stats_print(stats, stderr);
	double dt = accel_now() - t0;
	fprintf(stderr, "%s: %llu bytes in %.3f s, %.1f MB/s\n", PROG, (unsigned long long)stats->bytes_in, dt,
		dt > 0 ? (double)stats->bytes_in / dt / 1e6 : 0.0);
}

static int encrypt(struct accel_ctx *ctx, struct job *job)
{
	struct accel_input in;
	if (accel_input_open(&in, job->input) < 0) {
		accel_msg_error("cannot read %s: %s", job->input, strerror(errno));
		return ACCEL_EXIT_FAILURE;
	}
	uint8_t fk[FILE_KEY_LEN], key[ACCEL_AGE_KEY_LEN];
	struct head head;
	memset(&head, 0, sizeof head);
	int status = 0;
	if (random_bytes(fk, sizeof fk) < 0 || random_bytes(head.nonce, NONCE_LEN) < 0) {
		accel_msg_error("cannot draw random bytes from OpenSSL");
		status = ACCEL_EXIT_FAILURE;
		goto out;
	}
	text_add(&head.text, "age-encryption.org/v1\n", 22);
	if (job->passphrase) {
		size_t plen;
		char *pass = passphrase_get(job->passfile, job->passfd, 1, NULL, &plen);
		if (!pass) {
			status = ACCEL_EXIT_FAILURE;
			goto out;
		}
		int rc = scrypt_wrap(pass, plen, SCRYPT_LOG_N, fk, &head.text);
		wipe(pass, plen);
		free(pass);
		if (rc < 0) {
			accel_msg_error("cannot wrap the file key with scrypt");
			status = ACCEL_EXIT_FAILURE;
			goto out;
		}
	}
	for (int i = 0; i < job->nrs; i++) {
		const struct recipient *r = &job->rs[i];
		if ((r->kind == KEY_X25519 ? x25519_wrap(r, fk, &head.text) : ssh_wrap(r, fk, &head.text)) < 0) {
			accel_msg_error("cannot wrap the file key for recipient %d", i + 1);
			status = ACCEL_EXIT_FAILURE;
			goto out;
		}
	}
	if (text_mac(&head.text, fk) < 0 ||
	    hkdf_sha256(fk, sizeof fk, head.nonce, NONCE_LEN, "payload", key, sizeof key) < 0) {
		accel_msg_error("cannot make the header MAC or the payload key");
		status = ACCEL_EXIT_FAILURE;
		goto out;
	}
	struct accel_output out, pipe_out, *to = &out;
	struct armor_writer *aw = NULL;
	if ((status = open_output(job, &out, !job->armor)) != 0)
		goto out;
	if (job->armor) {
		if (armor_out_start(&out, &aw, &pipe_out) < 0) {
			accel_msg_error("cannot start the armor writer: %s", strerror(errno));
			accel_output_abort(&out);
			status = ACCEL_EXIT_FAILURE;
			goto out;
		}
		to = &pipe_out;
	}
	struct accel_age_cfg cfg = {
		.backend = job->common.backend,
		.stream = stream_config(job, in.size),
		.verbose = job->common.verbose,
		.report = job->report,
		.key = key,
		.begin = write_head,
		.user = &head,
	};
	struct accel_stream_stats stats;
	char err[512] = "";
	openssl_no_legacy_names();
	double t0 = accel_now();
	int rc = accel_age_encrypt(ctx, &cfg, &in, to, &stats, err, sizeof err);
	if (aw) {
		int arc = armor_out_end(aw, rc < 0);
		if (rc == 0 && arc < 0) {
			rc = arc;
			snprintf(err, sizeof err, "cannot write %s: %s", job->common.output ? job->common.output : "stdout",
				 strerror(out.error ? out.error : EIO));
		}
	}
	print_stats(job, &in, rc, &stats, t0);
	if (rc < 0) {
		status = run_failed(job, "encrypt", rc, err);
		accel_output_abort(&out);
	} else if (out.broken) {
		accel_output_abort(&out);
	} else if (accel_output_commit(&out) < 0) {
		accel_msg_error("cannot write %s: %s", job->common.output ? job->common.output : "stdout",
				strerror(out.error ? out.error : errno));
		status = ACCEL_EXIT_FAILURE;
	}
out:
	wipe(fk, sizeof fk);
	wipe(key, sizeof key);
	free(head.text.p);
	accel_input_close(&in);
	return status;
}

/* Read and parse the header of `in`, consuming it. 0, or the exit status
 * with the message's line in msg[len]. */
static int read_header(struct accel_input *in, struct header *h, char *msg, size_t len)
{
	size_t want = 4096;
	char err[300];
	for (;;) {
		const uint8_t *p;
		ssize_t n = accel_input_peek(in, want, &p);
		if (n < 0) {
			snprintf(msg, len, "cannot read %s: %s", in->name, strerror(errno));
			return ACCEL_EXIT_FAILURE;
		}
		int rc = header_parse(p, (size_t)n, h, err, sizeof err);
		if (rc == 0) {
			accel_input_consume(in, h->len);
			return 0;
		}
		if (rc < 0 || (size_t)n < want || want > HEADER_MAX) {
			snprintf(msg, len, "%s: cannot decrypt: %s", in->name,
				 rc < 0 ? err : n == 0 ? "empty input" : "the header is truncated");
			return ACCEL_EXIT_DATA;
		}
		want *= 2;
	}
}

/* Find the file key: 0, or the exit status after a message. */
static int unwrap(struct job *job, const char *name, const struct header *h, uint8_t fk[FILE_KEY_LEN])
{
	char err[300] = "";
	int scrypt = 0;
	for (int i = 0; i < h->n; i++)
		scrypt |= !strcmp(h->stanzas[i].args[0], "scrypt");
	if (scrypt) {
		if (h->n != 1) {
			accel_msg_error("%s: cannot decrypt: an scrypt stanza must be the only one", name);
			return ACCEL_EXIT_DATA;
		}
		if (job->nids || job->later.n) {
			accel_msg_error("%s: cannot decrypt: it is encrypted with a passphrase, not to an identity (-i)",
					name);
			return ACCEL_EXIT_FAILURE;
		}
		size_t plen;
		char *pass = passphrase_get(job->passfile, job->passfd, 0, NULL, &plen);
		if (!pass)
			return ACCEL_EXIT_FAILURE;
		int rc = scrypt_unwrap(pass, plen, &h->stanzas[0], fk, err, sizeof err);
		wipe(pass, plen);
		free(pass);
		if (rc == 1)
			return 0;
		accel_msg_error("%s: cannot decrypt: %s", name, rc < 0 ? err : "wrong passphrase");
		return ACCEL_EXIT_DATA;
	}
	if (job->sealed) {
		accel_msg_error("%s: cannot decrypt: an encrypted identity file must be encrypted with a passphrase (age -p)",
				name);
		return ACCEL_EXIT_DATA;
	}
	if (!job->nids && !job->later.n) {
		accel_msg_error("%s: cannot decrypt: no identity given (-i FILE)", name);
		return ACCEL_EXIT_USAGE;
	}
	/* The identities at hand on every stanza first; then the encrypted
	 * keys a stanza is for, opened (their passphrases asked) only now. */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < h->n; i++) {
			int opened = 0;
			if (pass) {
				int st = sealed_open_for(&job->later, &h->stanzas[i], &job->ids, &job->nids, &opened);
				if (st)
					return st;
			}
			for (int k = pass ? job->nids - opened : 0; k < job->nids; k++) {
				const struct identity *id = &job->ids[k];
				int rc = id->kind == KEY_X25519 ? x25519_unwrap(id, &h->stanzas[i], fk, err, sizeof err)
								: ssh_unwrap(id, &h->stanzas[i], fk, err, sizeof err);
				if (rc == 1)
					return 0;
				if (rc < 0) {
					accel_msg_error("%s: cannot decrypt: %s", name, err);
					return ACCEL_EXIT_DATA;
				}
			}
		}
	}
	accel_msg_error("%s: cannot decrypt: no identity matched any of the recipients (wrong key)", name);
	return ACCEL_EXIT_DATA;
}

/* Decrypt file (open; closed here) to `to` (NULL: job's output, opened
 * and committed here). 0, or the exit status after a message. */
static int decrypt(struct accel_ctx *ctx, struct job *job, struct accel_input *file, struct accel_output *to)
{
	struct accel_input bin, *in = file;
	struct armor_reader *ar = NULL;
	const uint8_t *p;
	ssize_t n = accel_input_peek(file, 64, &p);
	if (n > 0 && armor_detect(p, (size_t)n)) {
		if (armor_in_start(file, &ar, &bin) < 0) {
			accel_msg_error("cannot start the armor reader: %s", strerror(errno));
			accel_input_close(file);
			return ACCEL_EXIT_FAILURE;
		}
		in = &bin;
	}
	struct header h = { 0 };
	uint8_t fk[FILE_KEY_LEN], key[ACCEL_AGE_KEY_LEN], nonce[NONCE_LEN];
	char err[512] = "";
	struct accel_output own, *o = to ? to : &own;
	char hmsg[400] = "";
	int status = read_header(in, &h, hmsg, sizeof hmsg), opened = 0, rc = 0;
	if (status && !ar)
		accel_msg_error("%s", hmsg);
	if (!status)
		status = unwrap(job, in->name, &h, fk);
	if (!status && header_mac_check(&h, fk) < 0) {
		accel_msg_error("%s: cannot decrypt: header MAC mismatch (damaged or tampered header)", in->name);
		status = ACCEL_EXIT_DATA;
	}
	if (!status) {
		ssize_t r = accel_input_read(in, nonce, NONCE_LEN);
		if (r != NONCE_LEN) {
			accel_msg_error("%s: cannot decrypt: the payload nonce is truncated", in->name);
			status = ACCEL_EXIT_DATA;
		}
	}
	if (!status && hkdf_sha256(fk, sizeof fk, nonce, NONCE_LEN, "payload", key, sizeof key) < 0) {
		accel_msg_error("cannot derive the payload key");
		status = ACCEL_EXIT_FAILURE;
	}
	if (!status && (to || !(status = open_output(job, &own, 0))))
		opened = 1;
	if (!status) {
		struct accel_age_cfg cfg = {
			.backend = job->common.backend,
			.stream = stream_config(job, file->size),
			.verbose = job->common.verbose,
			.report = job->report,
			.key = key,
		};
		struct accel_stream_stats stats;
		if (!to)
			openssl_no_legacy_names();
		double t0 = accel_now();
		rc = accel_age_decrypt(ctx, &cfg, in, o, &stats, err, sizeof err);
		print_stats(job, file, rc, &stats, t0);
	}
	if (ar) {
		char aerr[256];
		int bad = armor_in_end(ar, &bin, aerr, sizeof aerr) < 0;
		if (bad && (rc == 0 || rc == ACCEL_EDATA) && (!status || hmsg[0])) {
			/* The armor's own fault explains what followed it. */
			if (!status && rc == 0)
				rc = ACCEL_EDATA;
			snprintf(err, sizeof err, "%s", aerr);
			if (status)
				accel_msg_error("%s: cannot decrypt: %s", file->name, aerr);
		} else if (hmsg[0]) {
			accel_msg_error("%s", hmsg);
		}
	}
	if (!status && rc < 0)
		status = run_failed(job, "decrypt", rc, err);
	if (opened && !to) {
		if (status || own.broken) {
			accel_output_abort(&own);
		} else if (accel_output_commit(&own) < 0) {
			accel_msg_error("cannot write %s: %s", job->common.output ? job->common.output : "stdout",
					strerror(own.error ? own.error : errno));
			status = ACCEL_EXIT_FAILURE;
		}
	}
	wipe(fk, sizeof fk);
	wipe(key, sizeof key);
	header_free(&h);
	accel_input_close(file);
	return status;
}

/* The identities of an age file of them, sealed with a passphrase (age
 * -p of an identity file), buf[0..len) read from path, decrypted into a
 * memory file: appended to job's. 0, or the exit status after a message. */
static int read_sealed_identities(struct accel_ctx *ctx, struct job *job, const char *path, const char *buf,
				  size_t len)
{
	struct accel_input in;
	struct accel_output out;
	int fd = memfd_create("accel-crypt-identities", MFD_CLOEXEC);
	if (fd < 0 || accel_input_mem(&in, buf, len, path) < 0 || accel_output_fd(&out, fd) < 0) {
		accel_msg_error("cannot decrypt %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return ACCEL_EXIT_FAILURE;
	}
	struct job sub = *job;
	sub.sealed = path;
	sub.nids = 0;
	sub.later = (struct sealed_keys){ 0 };
	sub.common.verbose = 0;
	sub.common.progress = 0;
	sub.report = NULL;
	int status = decrypt(ctx, &sub, &in, &out);
	if (!status && accel_output_commit(&out) < 0) {
		accel_msg_error("cannot decrypt %s: %s", path, strerror(out.error ? out.error : errno));
		status = ACCEL_EXIT_FAILURE;
	}
	off_t n = status ? 0 : lseek(fd, 0, SEEK_CUR);
	char *text = n > 0 && (size_t)n <= KEY_FILE_MAX ? malloc((size_t)n + 1) : NULL;
	if (!status && (!text || pread(fd, text, (size_t)n, 0) != n)) {
		accel_msg_error("%s: %s", path, n > 0 && (size_t)n > KEY_FILE_MAX ? "the identities in it are larger than a key file"
				: n <= 0 ? "no identity in it" : "cannot read it back");
		status = ACCEL_EXIT_FAILURE;
	}
	close(fd);
	if (!status) {
		text[n] = 0;
		status = identities_take(path, text, (size_t)n, 0, &(struct pass_from){ job->passfile, job->passfd },
					 &job->ids, &job->nids, &job->later);
	}
	if (text) {
		wipe(text, (size_t)n);
		free(text);
	}
	return status;
}

/* Whether buf[0..len) is an age file, binary or armored (whitespace
 * before the BEGIN line, as age allows). */
static int age_file(const char *buf, size_t len)
{
	static const char bin[] = "age-encryption.org/v1\n", armor[] = "-----BEGIN AGE ENCRYPTED FILE-----";
	size_t i = 0;
	if (len >= sizeof bin - 1 && !memcmp(buf, bin, sizeof bin - 1))
		return 1;
	while (i < len && strchr(" \t\r\n", buf[i]) && buf[i])
		i++;
	return len - i >= sizeof armor - 1 && !memcmp(buf + i, armor, sizeof armor - 1);
}

/* Read job's -i files: identities, or age files of them sealed with a
 * passphrase. 0, or the exit status after a message. */
static int read_identities(struct accel_ctx *ctx, struct job *job)
{
	for (int i = 0; i < job->nidfiles; i++) {
		const char *path = job->idfiles[i];
		size_t len;
		mode_t mode;
		char *buf = key_file_read(path, &len, &mode);
		if (!buf) {
			accel_msg_error("cannot read %s: %s", path, strerror(errno));
			return ACCEL_EXIT_FAILURE;
		}
		int status;
		if (age_file(buf, len))
			status = read_sealed_identities(ctx, job, path, buf, len);
		else
			status = identities_take(path, buf, len, mode, &(struct pass_from){ job->passfile, job->passfd },
						 &job->ids, &job->nids, &job->later);
		wipe(buf, len);
		free(buf);
		if (status)
			return status;
	}
	return 0;
}

/* -e -i: the recipient of each identity read (an encrypted OpenSSH key's
 * from its public key, no passphrase asked), added to job's recipients.
 * 0, or the exit status after a message. */
static int identities_as_recipients(struct job *job)
{
	int n = job->nids + job->later.n;
	struct recipient *nr = realloc(job->rs, (size_t)(job->nrs + n) * sizeof *nr);
	if (!nr && n) {
		accel_msg_error("out of memory");
		return ACCEL_EXIT_FAILURE;
	}
	if (nr)
		job->rs = nr;
	char err[300];
	for (int i = 0; i < n; i++) {
		int rc = i < job->nids ? identity_recipient(&job->ids[i], &job->rs[job->nrs], err, sizeof err)
				       : recipient_of_wire(job->later.v[i - job->nids].wire,
							   job->later.v[i - job->nids].wire_len, &job->rs[job->nrs], err,
							   sizeof err);
		if (rc < 0) {
			accel_msg_error("%s", err);
			return ACCEL_EXIT_FAILURE;
		}
		job->nrs++;
	}
	return 0;
}

static int crypt_main(int argc, char **argv)
{
	accel_msg_prog(PROG);
	/* The armor threads write pipes: a reader gone is EPIPE, not death. */
	signal(SIGPIPE, SIG_IGN);
	if (argc > 1)
		for (const struct accel_subcommand *s = subcommands; s->name; s++)
			if (!strcmp(argv[1], s->name))
				return s->run(argc - 1, argv + 1);
	struct job job;
	int rc = parse_args(argc, argv, &job);
	if (rc) {
		job_free(&job);
		return rc < 0 ? 0 : rc;
	}
	openssl_setup(&job.common);
	struct accel_ctx *ctx = accel_common_ctx(&job.common);
	if (!ctx) {
		job_free(&job);
		accel_msg_error("out of memory");
		return ACCEL_EXIT_FAILURE;
	}
	if (job.common.json && !(job.report = accel_report_run_start(ctx, PROG, accel_now()))) {
		accel_msg_error("out of memory");
		accel_ctx_free(ctx);
		job_free(&job);
		return ACCEL_EXIT_FAILURE;
	}
	int status = job.nidfiles ? read_identities(ctx, &job) : 0;
	if (!status && !job.decrypt)
		status = identities_as_recipients(&job);
	if (!status && job.decrypt) {
		struct accel_input file;
		if (accel_input_open(&file, job.input) < 0) {
			accel_msg_error("cannot read %s: %s", job.input, strerror(errno));
			status = ACCEL_EXIT_FAILURE;
		} else {
			status = decrypt(ctx, &job, &file, NULL);
		}
	} else if (!status) {
		status = encrypt(ctx, &job);
	}
	/* After any error line: the route and its reasons say why. */
	status = accel_report_run_end(job.report, ctx, status);
	accel_ctx_free(ctx);
	job_free(&job);
	return status;
}

int main(int argc, char **argv)
{
	/* No OpenSSL_cleanup at exit: it only frees what the process is about
	 * to lose anyway (keys are wiped and freed where they are used). */
	OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
	accel_cli_libraries("hwloc", versions);
	accel_exit(crypt_main(argc, argv));
}
