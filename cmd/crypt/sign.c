/*
 * sign.c - Ed25519 signatures in minisign's formats (jedisct1.github.io/
 * minisign): `keygen --sign`, `sign` and `verify`.
 *
 *   public key:  "untrusted comment: ..." / base64("Ed" || key id (8) || public key (32))
 *   secret key:  "untrusted comment: ..." / base64("Ed" || kdf "\0\0" || "B2" || salt (32) ||
 *                opslimit (8, LE) || memlimit (8, LE) || key id || seed || public key || checksum (32))
 *   signature:   "untrusted comment: ..." / base64("ED" || key id || Ed25519(BLAKE2b-512(file)))
 *                "trusted comment: TEXT" / base64(Ed25519(signature || TEXT))
 *
 * Secret keys are read and written unencrypted (minisign -W): minisign's
 * encrypted keys need BLAKE2b-256, which OpenSSL 3.0 does not offer.
 * Legacy signatures ("Ed", over the file itself) are verified too.
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

#define KEYID_LEN 8
#define PK_LEN 32
#define SIG_LEN 64
#define PUB_BLOB (2 + KEYID_LEN + PK_LEN)
#define SEC_BLOB (2 + 2 + 2 + 32 + 8 + 8 + KEYID_LEN + 64 + 32)
#define SIG_BLOB (2 + KEYID_LEN + SIG_LEN)
#define COMMENT_MAX 1024
/* A minisign file is at most this large. */
#define LINES_CAP (4 * COMMENT_MAX + 1024)
/* Legacy signatures cover the whole file, held in memory: at most this. */
#define LEGACY_MAX ((size_t)1 << 30)

struct mkey {
	uint8_t id[KEYID_LEN];
	uint8_t pk[PK_LEN];
	uint8_t seed[32];      /* secret keys only */
};

/* Padded base64 of a key or signature blob, as libsodium reads it for
 * minisign: the unused bits of the last symbol may be anything. */
static ssize_t b64p_decode(const char *s, uint8_t *out, size_t max)
{
	size_t n = strlen(s), pad = 0;
	char canon[4 * (SEC_BLOB + 2) / 3 + 4];
	if (n % 4 || n >= sizeof canon)
		return -1;
	while (pad < 2 && n > pad && s[n - 1 - pad] == '=')
		pad++;
	n -= pad;
	if (n * 3 / 4 > max)
		return -1;
	memcpy(canon, s, n);
	if (pad) {
		/* 2 or 4 bits of the last symbol follow the last byte. */
		static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		const char *c = canon[n - 1] ? strchr(alphabet, canon[n - 1]) : NULL;
		if (!c)
			return -1;
		canon[n - 1] = alphabet[(c - alphabet) & ~((1 << 2 * pad) - 1)];
	}
	return b64_decode(canon, n, out);
}

static void b64p_encode(const uint8_t *p, size_t n, char *out)
{
	size_t l = b64_encode(p, n, out);
	while (l % 4)
		out[l++] = '=';
	out[l] = 0;
}

/* Cut text[0..n) (a NUL at text[n]) into at most max lines (LF, the CRs
 * before it dropped), in place. Returns the count, or -1 when the text
 * holds a NUL byte. */
static int split_lines(char *text, size_t n, char **lines, int max)
{
	if (memchr(text, 0, n))
		return -1;
	int k = 0;
	for (char *p = text; *p && k < max;) {
		lines[k++] = p;
		char *e = strchr(p, '\n');
		if (!e)
			break;
		*e = 0;
		for (char *c = e; c > p && c[-1] == '\r'; c--)
			c[-1] = 0;
		p = e + 1;
	}
	return k;
}

/* Read a minisign file (at most LINES_CAP bytes) into a malloc'd *buf of
 * *len bytes (a NUL after them). 0, or -1 after a message. */
static int read_file(const char *path, char **buf, size_t *len)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		accel_msg_error("cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	size_t cap = LINES_CAP, n = 0;
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

int minisign_sig_parse(char *text, size_t len, struct minisig *sig)
{
	char *lines[4];
	uint8_t blob[SIG_BLOB + 3], gsig[SIG_LEN + 3];
	int n = split_lines(text, len, lines, 4);
	if (n < 4 || strncmp(lines[0], "untrusted comment: ", 19) || strncmp(lines[2], "trusted comment: ", 17) ||
	    b64p_decode(lines[1], blob, sizeof blob) != SIG_BLOB || b64p_decode(lines[3], gsig, sizeof gsig) != SIG_LEN ||
	    blob[0] != 'E' || (blob[1] != 'D' && blob[1] != 'd'))
		return -1;
	sig->legacy = blob[1] == 'd';
	memcpy(sig->id, blob + 2, KEYID_LEN);
	memcpy(sig->sig, blob + 2 + KEYID_LEN, SIG_LEN);
	memcpy(sig->gsig, gsig, SIG_LEN);
	sig->untrusted = lines[0] + 19;
	sig->trusted = lines[2] + 17;
	return 0;
}

static int read_public(const char *path, const char *b64, struct mkey *k)
{
	char *buf = NULL, *lines[2];
	const char *line = b64;
	if (!b64) {
		size_t len;
		if (read_file(path, &buf, &len) < 0)
			return -1;
		/* The first line is a comment, whatever it says (as minisign). */
		if (split_lines(buf, len, lines, 2) < 2) {
			accel_msg_error("%s: not a minisign public key", path);
			free(buf);
			return -1;
		}
		line = lines[1];
	}
	uint8_t blob[PUB_BLOB + 3];
	ssize_t r = b64p_decode(line, blob, sizeof blob);
	free(buf);
	if (r != PUB_BLOB || blob[0] != 'E' || blob[1] != 'd') {
		accel_msg_error("%s: not a minisign Ed25519 public key", b64 ? "-P" : path);
		return -1;
	}
	memcpy(k->id, blob + 2, KEYID_LEN);
	memcpy(k->pk, blob + 2 + KEYID_LEN, PK_LEN);
	return 0;
}

static int read_secret(const char *path, struct mkey *k)
{
	char *buf = NULL, *lines[2];
	size_t len;
	if (read_file(path, &buf, &len) < 0)
		return -1;
	uint8_t blob[SEC_BLOB + 3];
	ssize_t r = split_lines(buf, len, lines, 2) == 2 ? b64p_decode(lines[1], blob, sizeof blob) : -1;
	wipe(buf, LINES_CAP);
	free(buf);
	int rc = -1;
	if (r != SEC_BLOB || blob[0] != 'E' || blob[1] != 'd' || blob[4] != 'B' || blob[5] != '2') {
		accel_msg_error("%s: not a minisign Ed25519 secret key", path);
	} else if (blob[2] || blob[3]) {
		accel_msg_error("%s: an encrypted minisign secret key; only unencrypted keys are supported "
				"(minisign -G -W, or accel-crypt keygen --sign)", path);
	} else {
		const uint8_t *kn = blob + 2 + 2 + 2 + 32 + 8 + 8;
		uint8_t pk[PK_LEN];
		memcpy(k->id, kn, KEYID_LEN);
		memcpy(k->seed, kn + KEYID_LEN, 32);
		memcpy(k->pk, kn + KEYID_LEN + 32, PK_LEN);
		EVP_PKEY *p = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, k->seed, 32);
		size_t pklen = PK_LEN;
		if (!p || EVP_PKEY_get_raw_public_key(p, pk, &pklen) != 1 || CRYPTO_memcmp(pk, k->pk, PK_LEN))
			accel_msg_error("%s: the secret key does not match its public half", path);
		else
			rc = 0;
		EVP_PKEY_free(p);
	}
	wipe(blob, sizeof blob);
	return rc;
}

static int ed_sign(const struct mkey *k, const uint8_t *msg, size_t n, uint8_t sig[SIG_LEN])
{
	EVP_PKEY *p = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, k->seed, 32);
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	size_t len = SIG_LEN;
	int rc = p && c && EVP_DigestSignInit(c, NULL, NULL, NULL, p) == 1 &&
			 EVP_DigestSign(c, sig, &len, msg, n) == 1 && len == SIG_LEN ? 0 : -1;
	EVP_MD_CTX_free(c);
	EVP_PKEY_free(p);
	return rc;
}

static int ed_verify(const uint8_t pk[PK_LEN], const uint8_t *msg, size_t n, const uint8_t sig[SIG_LEN])
{
	EVP_PKEY *p = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pk, PK_LEN);
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	int rc = p && c && EVP_DigestVerifyInit(c, NULL, NULL, NULL, p) == 1 &&
			 EVP_DigestVerify(c, sig, SIG_LEN, msg, n) == 1 ? 0 : -1;
	EVP_MD_CTX_free(c);
	EVP_PKEY_free(p);
	return rc;
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

/* Key ids are printed as minisign does: the 8 bytes little-endian, in hex. */
static void keyid_hex(const uint8_t id[KEYID_LEN], char out[17])
{
	for (int i = 0; i < KEYID_LEN; i++)
		snprintf(out + 2 * i, 3, "%02X", id[KEYID_LEN - 1 - i]);
}

int minisign_keygen(const char *secpath, const char *pubpath, int quiet)
{
	struct mkey k;
	uint8_t blob[SEC_BLOB];
	char sec[512], pub[256], id[17];
	EVP_PKEY *p = NULL;
	size_t len = PK_LEN;
	secpath = secpath ? secpath : "minisign.key";
	pubpath = pubpath ? pubpath : "minisign.pub";
	if (random_bytes(k.id, KEYID_LEN) < 0 || random_bytes(k.seed, 32) < 0 ||
	    !(p = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, k.seed, 32)) ||
	    EVP_PKEY_get_raw_public_key(p, k.pk, &len) != 1) {
		EVP_PKEY_free(p);
		wipe(&k, sizeof k);
		accel_msg_error("cannot make a key: OpenSSL failed");
		return ACCEL_EXIT_FAILURE;
	}
	EVP_PKEY_free(p);
	memset(blob, 0, sizeof blob);
	memcpy(blob, "Ed\0\0B2", 6);
	uint8_t *kn = blob + 2 + 2 + 2 + 32 + 8 + 8;
	memcpy(kn, k.id, KEYID_LEN);
	memcpy(kn + KEYID_LEN, k.seed, 32);
	memcpy(kn + KEYID_LEN + 32, k.pk, PK_LEN);
	char b64[300];
	b64p_encode(blob, sizeof blob, b64);
	int sn = snprintf(sec, sizeof sec, "untrusted comment: minisign secret key (unencrypted)\n%s\n", b64);
	wipe(blob, sizeof blob);
	wipe(b64, sizeof b64);
	uint8_t pb[PUB_BLOB];
	memcpy(pb, "Ed", 2);
	memcpy(pb + 2, k.id, KEYID_LEN);
	memcpy(pb + 2 + KEYID_LEN, k.pk, PK_LEN);
	b64p_encode(pb, sizeof pb, b64);
	keyid_hex(k.id, id);
	int pn = snprintf(pub, sizeof pub, "untrusted comment: minisign public key %s\n%s\n", id, b64);
	wipe(&k, sizeof k);
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
	const char *seckey, *pubkey, *pubkey_b64, *sigfile, *trusted, *untrusted;
	struct accel_common common;   /* -q */
};
#define SIGN(field) ACCEL_AT(struct sign_opts, field)

static const struct accel_option sign_options[] = {
	{ 's', "secret-key", "FILE", "the minisign secret key (default minisign.key)", "file", ACCEL_STRING(SIGN(seckey)) },
	{ 'x', "signature", "FILE", "where the signature goes (default FILE.minisig; one FILE only)", "file", ACCEL_STRING(SIGN(sigfile)) },
	{ 't', "trusted-comment", "TEXT", "the trusted (signed) comment (default timestamp:T<TAB>file:NAME<TAB>hashed)", ACCEL_STRING(SIGN(trusted)) },
	{ 'c', "comment", "TEXT", "the untrusted comment", ACCEL_STRING(SIGN(untrusted)) },
	{ 'q', "quiet", NULL, "print nothing but errors", ACCEL_COMMON(ACCEL_OPT_QUIET) },
	ACCEL_HELP_OPTIONS,
	{ 0 },
};

static const struct accel_option verify_options[] = {
	{ 'p', "public-key", "FILE", "the minisign public key (default minisign.pub)", "file", ACCEL_STRING(SIGN(pubkey)) },
	{ 'P', "public-key-string", "KEY", "the public key itself (its base64 line)", ACCEL_STRING(SIGN(pubkey_b64)) },
	{ 'x', "signature", "FILE", "the signature (default FILE.minisig)", "file", ACCEL_STRING(SIGN(sigfile)) },
	{ 'q', "quiet", NULL, "print nothing; the exit status tells", ACCEL_COMMON(ACCEL_OPT_QUIET) },
	ACCEL_HELP_OPTIONS,
	{ 0 },
};

static const int sign_exit[] = { ACCEL_EXIT_OK, ACCEL_EXIT_FAILURE, ACCEL_EXIT_USAGE, ACCEL_EXIT_DATA, -1 };

const struct accel_cli sign_cli = {
	PROG " sign", "[-s SECKEY] [-t TRUSTED] [-c UNTRUSTED] [-x SIGFILE] FILE...",
	"Sign FILEs with a minisign key: FILE.minisig, which minisign -V verifies.", sign_options, sign_exit, NULL,
};

const struct accel_cli verify_cli = {
	PROG " verify", "[-p PUBKEY | -P KEY] [-x SIGFILE] [-q] FILE",
	"Verify FILE's minisign signature (minisign's or ours) and print its trusted comment.", verify_options, sign_exit, NULL,
};

/* A comment must be one line. */
static int one_line(const char *what, const char *s)
{
	if (s && (strchr(s, '\n') || strchr(s, '\r') || strlen(s) > COMMENT_MAX)) {
		accel_msg_usage("%s must be one line of at most %d bytes", what, COMMENT_MAX);
		return -1;
	}
	return 0;
}

int cmd_sign(int argc, char **argv)
{
	struct sign_opts o = { 0 };
	int st = accel_parse(&sign_cli, argc, argv, &o, &o.common);
	if (st)
		return st < 0 ? 0 : st;
	if (!o.common.noperands) {
		accel_msg_usage("no FILE to sign");
		return ACCEL_EXIT_USAGE;
	}
	if (o.sigfile && o.common.noperands > 1) {
		accel_msg_usage("-x names the signature of one FILE only");
		return ACCEL_EXIT_USAGE;
	}
	if (one_line("-t", o.trusted) < 0 || one_line("-c", o.untrusted) < 0)
		return ACCEL_EXIT_USAGE;
	struct mkey k;
	if (read_secret(o.seckey ? o.seckey : "minisign.key", &k) < 0)
		return ACCEL_EXIT_FAILURE;
	int status = 0;
	for (int i = 0; i < o.common.noperands && !status; i++) {
		const char *file = o.common.operands[i];
		uint8_t md[64], blob[SIG_BLOB], gsig[SIG_LEN];
		if (file_digest(file, md, NULL, NULL) < 0) {
			accel_msg_error("cannot read %s: %s", file, strerror(errno));
			status = ACCEL_EXIT_FAILURE;
			break;
		}
		memcpy(blob, "ED", 2);
		memcpy(blob + 2, k.id, KEYID_LEN);
		char trusted[COMMENT_MAX + 64];
		const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
		if (o.trusted)
			snprintf(trusted, sizeof trusted, "%s", o.trusted);
		else
			snprintf(trusted, sizeof trusted, "timestamp:%lld\tfile:%s\thashed", (long long)time(NULL), base);
		if (one_line("the file name in the trusted comment", trusted) < 0) {
			status = ACCEL_EXIT_USAGE;
			break;
		}
		uint8_t gmsg[SIG_LEN + sizeof trusted];
		size_t tl = strlen(trusted);
		if (ed_sign(&k, md, sizeof md, blob + 2 + KEYID_LEN) < 0) {
			accel_msg_error("cannot sign %s: OpenSSL failed", file);
			status = ACCEL_EXIT_FAILURE;
			break;
		}
		memcpy(gmsg, blob + 2 + KEYID_LEN, SIG_LEN);
		memcpy(gmsg + SIG_LEN, trusted, tl);
		if (ed_sign(&k, gmsg, SIG_LEN + tl, gsig) < 0) {
			accel_msg_error("cannot sign %s: OpenSSL failed", file);
			status = ACCEL_EXIT_FAILURE;
			break;
		}
		char b1[200], b2[120], sigpath[4096];
		b64p_encode(blob, sizeof blob, b1);
		b64p_encode(gsig, sizeof gsig, b2);
		snprintf(sigpath, sizeof sigpath, "%s", o.sigfile ? o.sigfile : "");
		if (!o.sigfile)
			snprintf(sigpath, sizeof sigpath, "%s.minisig", strcmp(file, "-") ? file : "stdin");
		struct accel_output out;
		char text[4 * COMMENT_MAX];
		int n = snprintf(text, sizeof text, "untrusted comment: %s\n%s\ntrusted comment: %s\n%s\n",
				 o.untrusted ? o.untrusted : "signature from minisign secret key", b1,
				 trusted, b2);
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

int cmd_verify(int argc, char **argv)
{
	struct sign_opts o = { 0 };
	int st = accel_parse(&verify_cli, argc, argv, &o, &o.common);
	if (st)
		return st < 0 ? 0 : st;
	if (o.common.noperands != 1) {
		accel_msg_usage("verify takes one FILE");
		return ACCEL_EXIT_USAGE;
	}
	if (o.pubkey && o.pubkey_b64) {
		accel_msg_usage("-p and -P exclude each other");
		return ACCEL_EXIT_USAGE;
	}
	const char *file = o.common.operands[0];
	struct mkey k;
	if (read_public(o.pubkey ? o.pubkey : "minisign.pub", o.pubkey_b64, &k) < 0)
		return ACCEL_EXIT_FAILURE;
	char sigpath[4096];
	if (o.sigfile)
		snprintf(sigpath, sizeof sigpath, "%s", o.sigfile);
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
	} else if (CRYPTO_memcmp(sig.id, k.id, KEYID_LEN)) {
		char a[17], b[17];
		keyid_hex(sig.id, a);
		keyid_hex(k.id, b);
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
		int ok = legacy ? ed_verify(k.pk, whole, wlen, sig.sig) == 0 : ed_verify(k.pk, md, sizeof md, sig.sig) == 0;
		free(whole);
		const char *tc = sig.trusted;
		size_t tl = strlen(tc);
		uint8_t *gmsg = malloc(SIG_LEN + tl + 1);
		if (!ok) {
			why = "signature verification failed (the file or the signature was changed)";
		} else if (!gmsg) {
			why = "out of memory";
		} else {
			memcpy(gmsg, sig.sig, SIG_LEN);
			memcpy(gmsg + SIG_LEN, tc, tl);
			if (ed_verify(k.pk, gmsg, SIG_LEN + tl, sig.gsig) < 0) {
				why = "the trusted comment's signature failed (the comment was changed)";
			} else {
				status = 0;
				if (!o.common.quiet)
					printf("Signature and comment signature verified\nTrusted comment: %s\n", tc);
			}
		}
		free(gmsg);
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
