/*
 * sign.c - `keygen --sign`, `sign` and `verify`: Ed25519 signatures in
 * minisign's formats (crypt_format.h; minisign.c reads and writes them),
 * over a file's BLAKE2b-512 (or the file itself, for legacy signatures).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include "crypt.h"

/* Legacy signatures cover the whole file, held in memory: at most this. */
#define LEGACY_MAX ((size_t)1 << 30)

/* Read a minisign file (at most MINISIGN_FILE_MAX bytes) into a malloc'd
 * *buf of *len bytes (a NUL after them). 0, or -1 after a message. */
static int read_file(const char *path, char **buf, size_t *len)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		accel_msg_error("cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	size_t cap = MINISIGN_FILE_MAX, n = 0;
	*buf = malloc(cap);
	if (*buf)
		n = fread(*buf, 1, cap - 1, f);
	int bad = ferror(f) || !*buf || !feof(f);
	fclose(f);
	if (bad) {
		accel_msg_error("%s: cannot read, or larger than a minisign file", path);
		free(*buf);
		*buf = NULL;
		return -1;
	}
	(*buf)[n] = 0;
	*len = n;
	return 0;
}

/* The public key: -P's base64 line b64, or the file path. 0, or -1 after
 * a message. */
static int read_public(const char *path, const char *b64, struct minisign_key *k)
{
	if (b64) {
		if (minisign_pub_parse(b64, k) < 0) {
			accel_msg_error("-P: not a minisign Ed25519 public key");
			return -1;
		}
		return 0;
	}
	char *buf, err[200];
	size_t len;
	if (read_file(path, &buf, &len) < 0)
		return -1;
	int rc = minisign_pub_file_parse(buf, len, k, err, sizeof err);
	free(buf);
	if (rc < 0)
		accel_msg_error("%s: %s", path, err);
	return rc;
}

/* The secret key in path, decrypted with the passphrase from passfile,
 * fd passfd or the terminal when it is encrypted. 0, or the exit status
 * after a message (3: a wrong passphrase). */
static int read_secret(const char *path, const char *passfile, int passfd, struct minisign_key *k)
{
	char *buf, err[200];
	size_t len;
	if (read_file(path, &buf, &len) < 0)
		return ACCEL_EXIT_FAILURE;
	struct minisign_sealed s;
	int rc = minisign_sec_file_parse(buf, len, &s, err, sizeof err);
	wipe(buf, MINISIGN_FILE_MAX);
	free(buf);
	if (rc < 0) {
		accel_msg_error("%s: %s", path, err);
		return ACCEL_EXIT_FAILURE;
	}
	size_t plen = 0;
	char *pass = s.encrypted ? passphrase_get(passfile, passfd, 0, NULL, &plen) : NULL;
	if (s.encrypted && !pass) {
		wipe(&s, sizeof s);
		return ACCEL_EXIT_FAILURE;
	}
	rc = minisign_sec_open(&s, pass, plen, k, err, sizeof err);
	wipe(&s, sizeof s);
	if (pass) {
		wipe(pass, plen);
		free(pass);
	}
	if (rc == 1)
		accel_msg_error("%s: wrong passphrase for this key (its checksum does not match)", path);
	else if (rc < 0)
		accel_msg_error("%s: %s", path, err);
	return rc == 1 ? ACCEL_EXIT_DATA : rc < 0 ? ACCEL_EXIT_FAILURE : 0;
}

/* BLAKE2b-512 of a file, or (legacy) the file itself in *whole. */
static int file_digest(const char *path, uint8_t md[64], uint8_t **whole, size_t *wlen)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0)
		return -1;
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	uint8_t *buf = malloc(1 << 20);
	size_t cap = 0, len = 0;
	int rc = c && buf && EVP_DigestInit_ex(c, EVP_blake2b512(), NULL) == 1 ? 0 : -1;
	while (rc == 0) {
		ssize_t r = read(fd, buf, 1 << 20);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = r < 0 ? -1 : 0;
			break;
		}
		if (EVP_DigestUpdate(c, buf, (size_t)r) != 1)
			rc = -1;
		if (whole && rc == 0) {
			if (len + (size_t)r > LEGACY_MAX) {
				errno = EFBIG;
				rc = -1;
				break;
			}
			if (len + (size_t)r > cap) {
				cap = (len + (size_t)r) * 2;
				uint8_t *nw = realloc(*whole, cap);
				if (!nw) {
					rc = -1;
					break;
				}
				*whole = nw;
			}
			memcpy(*whole + len, buf, (size_t)r);
			len += (size_t)r;
		}
		if (r == 0)
			break;
	}
	int e = errno;
	unsigned mdlen = 0;
	if (rc == 0 && (EVP_DigestFinal_ex(c, md, &mdlen) != 1 || mdlen != 64))
		rc = -1;
	if (whole)
		*wlen = len;
	if (fd > 0)
		close(fd);
	free(buf);
	EVP_MD_CTX_free(c);
	errno = e;
	return rc;
}

int minisign_keygen(const char *secpath, const char *pubpath, int quiet)
{
	struct minisign_key k;
	char sec[512], pub[256], b64[MINISIGN_PUB_B64_LEN];
	secpath = secpath ? secpath : "minisign.key";
	pubpath = pubpath ? pubpath : "minisign.pub";
	int sn = -1, pn = -1;
	if (random_bytes(k.id, MINISIGN_KEYID_LEN) == 0 && random_bytes(k.seed, sizeof k.seed) == 0 &&
	    ed25519_public(k.seed, k.pk) == 0) {
		sn = minisign_sec_format(&k, sec, sizeof sec);
		pn = minisign_pub_format(&k, pub, sizeof pub);
		minisign_pub_b64(&k, b64);
	}
	wipe(&k, sizeof k);
	if (sn < 0 || pn < 0) {
		wipe(sec, sizeof sec);
		accel_msg_error("cannot make a key: OpenSSL failed");
		return ACCEL_EXIT_FAILURE;
	}
	int sfd = secret_create(secpath);
	if (sfd < 0) {
		wipe(sec, sizeof sec);
		return ACCEL_EXIT_FAILURE;
	}
	int pfd = open(pubpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (pfd < 0) {
		accel_msg_error(errno == EEXIST ? "%s already exists; not overwriting a key file" : "cannot create %s: %s",
				pubpath, strerror(errno));
		close(sfd);
		unlink(secpath);
		wipe(sec, sizeof sec);
		return ACCEL_EXIT_FAILURE;
	}
	int rc = secret_finish(sfd, secpath, sec, (size_t)sn);
	wipe(sec, sizeof sec);
	if (rc < 0) {
		close(pfd);
		unlink(pubpath);
		return ACCEL_EXIT_FAILURE;
	}
	if (secret_finish(pfd, pubpath, pub, (size_t)pn) < 0) {
		unlink(secpath);
		return ACCEL_EXIT_FAILURE;
	}
	if (!quiet)
		fprintf(stderr, "Public key: %s\nSecret key (unencrypted, mode 0600): %s\nVerify with: minisign -Vm <file> -P %s\n",
			pubpath, secpath, b64);
	return 0;
}

/* ------------------------------------------------------------ sign */

/* The options of sign and verify. */
struct sign_opts {
	const char *seckey, *pubkey, *pubkey_b64, *sigfile, *trusted, *untrusted, *passfile;
	int passfd;
	char **files;    /* -m's FILEs, then the operands */
	int nfiles;
	struct accel_common common;   /* -q */
};
#define SIGN(field) ACCEL_AT(struct sign_opts, field)

/* -m FILE, minisign's way of naming the file (repeatable). */
static int message_option(void *v, const char *arg)
{
	struct sign_opts *o = v;
	char **nf = realloc(o->files, (size_t)(o->nfiles + 1) * sizeof *nf);
	if (!nf) {
		accel_msg_error("out of memory");
		return ACCEL_ENOMEM;
	}
	o->files = nf;
	o->files[o->nfiles++] = (char *)arg;
	return 0;
}

/* Parse sign's or verify's arguments; the operands after -m's FILEs in
 * o->files. 0, -1 (exit 0) or the exit status; free o->files either way. */
static int sign_parse(const struct accel_cli *cli, int argc, char **argv, struct sign_opts *o)
{
	int st = accel_parse(cli, argc, argv, o, &o->common);
	if (st)
		return st;
	char **nf = realloc(o->files, (size_t)(o->nfiles + o->common.noperands + 1) * sizeof *nf);
	if (!nf) {
		accel_msg_error("out of memory");
		return ACCEL_EXIT_FAILURE;
	}
	o->files = nf;
	for (int i = 0; i < o->common.noperands; i++)
		o->files[o->nfiles++] = o->common.operands[i];
	return 0;
}

static const struct accel_option sign_options[] = {
	{ 'm', "message", "FILE", "a file to sign, as minisign -S -m names it (repeatable; FILE operands too)", "file", ACCEL_CALL(message_option) },
	{ 's', "secret-key", "FILE", "the minisign secret key (default minisign.key), unencrypted or encrypted as minisign -G writes it", "file", ACCEL_STRING(SIGN(seckey)) },
	{ 0, "passphrase-file", "FILE", "an encrypted key's passphrase: the first line of FILE (default: asked at the terminal)", "file", ACCEL_STRING(SIGN(passfile)) },
	{ 0, "passphrase-fd", "N", "an encrypted key's passphrase: the first line of file descriptor N", ACCEL_INT(SIGN(passfd), 0, 1 << 20, "a file descriptor") },
	{ 'x', "signature", "FILE", "where the signature goes (default FILE.minisig; one FILE only)", "file", ACCEL_STRING(SIGN(sigfile)) },
	{ 't', "trusted-comment", "TEXT", "the trusted (signed) comment (default timestamp:T<TAB>file:NAME<TAB>hashed)", ACCEL_STRING(SIGN(trusted)) },
	{ 'c', "comment", "TEXT", "the untrusted comment", ACCEL_STRING(SIGN(untrusted)) },
	{ 'q', "quiet", NULL, "print nothing but errors", ACCEL_COMMON(ACCEL_OPT_QUIET) },
	ACCEL_HELP_OPTIONS,
	{ 0 },
};

static const struct accel_option verify_options[] = {
	{ 'm', "message", "FILE", "the file to verify, as minisign -V -m names it (or the FILE operand)", "file", ACCEL_CALL(message_option) },
	{ 'p', "public-key", "FILE", "the minisign public key (default minisign.pub)", "file", ACCEL_STRING(SIGN(pubkey)) },
	{ 'P', "public-key-string", "KEY", "the public key itself (its base64 line)", ACCEL_STRING(SIGN(pubkey_b64)) },
	{ 'x', "signature", "FILE", "the signature (default FILE.minisig)", "file", ACCEL_STRING(SIGN(sigfile)) },
	{ 'q', "quiet", NULL, "print nothing; the exit status tells", ACCEL_COMMON(ACCEL_OPT_QUIET) },
	ACCEL_HELP_OPTIONS,
	{ 0 },
};

static const int sign_exit[] = { ACCEL_EXIT_OK, ACCEL_EXIT_FAILURE, ACCEL_EXIT_USAGE, ACCEL_EXIT_DATA, -1 };

const struct accel_cli sign_cli = {
	PROG " sign", "[-s SECKEY] [-t TRUSTED] [-c UNTRUSTED] [-x SIGFILE] [-m] FILE...",
	"Sign FILEs with a minisign key: FILE.minisig, which minisign -V verifies.", sign_options, sign_exit, NULL, NULL,
};

const struct accel_cli verify_cli = {
	PROG " verify", "[-p PUBKEY | -P KEY] [-x SIGFILE] [-q] [-m] FILE",
	"Verify FILE's minisign signature (minisign's or ours) and print its trusted comment.", verify_options, sign_exit, NULL, NULL,
};

/* A comment must be one line. */
static int one_line(const char *what, const char *s)
{
	if (s && (strchr(s, '\n') || strchr(s, '\r') || strlen(s) > MINISIGN_COMMENT_MAX)) {
		accel_msg_usage("%s must be one line of at most %d bytes", what, MINISIGN_COMMENT_MAX);
		return -1;
	}
	return 0;
}

static int sign_files(struct sign_opts *o)
{
	if (!o->nfiles) {
		accel_msg_usage("no FILE to sign");
		return ACCEL_EXIT_USAGE;
	}
	if (o->sigfile && o->nfiles > 1) {
		accel_msg_usage("-x names the signature of one FILE only");
		return ACCEL_EXIT_USAGE;
	}
	if (one_line("-t", o->trusted) < 0 || one_line("-c", o->untrusted) < 0)
		return ACCEL_EXIT_USAGE;
	if (o->passfile && o->passfd >= 0) {
		accel_msg_usage("--passphrase-file and --passphrase-fd exclude each other");
		return ACCEL_EXIT_USAGE;
	}
	struct minisign_key k;
	int status = read_secret(o->seckey ? o->seckey : "minisign.key", o->passfile, o->passfd, &k);
	if (status)
		return status;
	for (int i = 0; i < o->nfiles && !status; i++) {
		const char *file = o->files[i];
		uint8_t md[64];
		if (file_digest(file, md, NULL, NULL) < 0) {
			accel_msg_error("cannot read %s: %s", file, strerror(errno));
			status = ACCEL_EXIT_FAILURE;
			break;
		}
		char trusted[MINISIGN_COMMENT_MAX + 64];
		const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
		if (o->trusted)
			snprintf(trusted, sizeof trusted, "%s", o->trusted);
		else
			snprintf(trusted, sizeof trusted, "timestamp:%lld\tfile:%s\thashed", (long long)time(NULL), base);
		if (one_line("the file name in the trusted comment", trusted) < 0) {
			status = ACCEL_EXIT_USAGE;
			break;
		}
		char sigpath[4096], text[4 * MINISIGN_COMMENT_MAX];
		int n = minisign_sig_format(&k, md, o->untrusted ? o->untrusted : "signature from minisign secret key",
					    trusted, text, sizeof text);
		if (n < 0) {
			accel_msg_error("cannot sign %s: OpenSSL failed", file);
			status = ACCEL_EXIT_FAILURE;
			break;
		}
		snprintf(sigpath, sizeof sigpath, "%s", o->sigfile ? o->sigfile : "");
		if (!o->sigfile)
			snprintf(sigpath, sizeof sigpath, "%s.minisig", strcmp(file, "-") ? file : "stdin");
		struct accel_output out;
		/* A signature replaces an older one, as minisign -S does. */
		if (accel_output_open(&out, sigpath, 1, 0) < 0 || accel_output_write(&out, text, (size_t)n) < 0 ||
		    accel_output_commit(&out) < 0) {
			accel_msg_error("cannot write %s: %s", sigpath, strerror(out.error ? out.error : errno));
			accel_output_abort(&out);
			status = ACCEL_EXIT_FAILURE;
		}
	}
	wipe(&k, sizeof k);
	return status;
}

int cmd_sign(int argc, char **argv)
{
	struct sign_opts o = { .passfd = -1 };
	int st = sign_parse(&sign_cli, argc, argv, &o);
	if (!st)
		st = sign_files(&o);
	free(o.files);
	return st < 0 ? 0 : st;
}

static int verify_file(struct sign_opts *o)
{
	if (o->nfiles != 1) {
		accel_msg_usage("verify takes one FILE (the operand or -m FILE)");
		return ACCEL_EXIT_USAGE;
	}
	if (o->pubkey && o->pubkey_b64) {
		accel_msg_usage("-p and -P exclude each other");
		return ACCEL_EXIT_USAGE;
	}
	const char *file = o->files[0];
	struct minisign_key k;
	if (read_public(o->pubkey ? o->pubkey : "minisign.pub", o->pubkey_b64, &k) < 0)
		return ACCEL_EXIT_FAILURE;
	char sigpath[4096];
	if (o->sigfile)
		snprintf(sigpath, sizeof sigpath, "%s", o->sigfile);
	else
		snprintf(sigpath, sizeof sigpath, "%s.minisig", file);
	char *buf = NULL;
	size_t len;
	if (read_file(sigpath, &buf, &len) < 0)
		return ACCEL_EXIT_FAILURE;
	struct minisig sig;
	int status = ACCEL_EXIT_DATA;
	const char *why = NULL;
	if (minisign_sig_parse(buf, len, &sig) < 0) {
		why = "not a minisign signature file";
	} else if (CRYPTO_memcmp(sig.id, k.id, MINISIGN_KEYID_LEN)) {
		char a[17], b[17];
		minisign_keyid_hex(sig.id, a);
		minisign_keyid_hex(k.id, b);
		accel_msg_error("%s: signed by key %s, not by the key given (%s)", sigpath, a, b);
		free(buf);
		return ACCEL_EXIT_DATA;
	} else {
		uint8_t md[64], *whole = NULL;
		size_t wlen = 0;
		int legacy = sig.legacy;
		if (file_digest(file, md, legacy ? &whole : NULL, &wlen) < 0) {
			accel_msg_error("cannot read %s: %s", file, strerror(errno));
			free(whole);
			free(buf);
			return ACCEL_EXIT_FAILURE;
		}
		int rc = legacy ? minisign_sig_verify(&sig, k.pk, whole, wlen) : minisign_sig_verify(&sig, k.pk, md, sizeof md);
		free(whole);
		if (rc == 1) {
			why = "signature verification failed (the file or the signature was changed)";
		} else if (rc < 0) {
			why = "out of memory";
		} else if (rc == 2) {
			why = "the trusted comment's signature failed (the comment was changed)";
		} else {
			status = 0;
			if (!o->common.quiet)
				printf("Signature and comment signature verified\nTrusted comment: %s\n", sig.trusted);
		}
	}
	if (why)
		accel_msg_error("%s: %s", why[0] == 'n' ? sigpath : file, why);
	free(buf);
	if (fflush(stdout) != 0 && errno != EPIPE) {
		accel_msg_error("cannot write stdout: %s", strerror(errno));
		return ACCEL_EXIT_FAILURE;
	}
	return status;
}

int cmd_verify(int argc, char **argv)
{
	struct sign_opts o = { 0 };
	int st = sign_parse(&verify_cli, argc, argv, &o);
	if (!st)
		st = verify_file(&o);
	free(o.files);
	return st < 0 ? 0 : st;
}

