/*
 * crypt_format.h - accel-crypt's file formats, the parsers of untrusted
 * input among them: the age v1 header (stanzas, header MAC, X25519, scrypt
 * and SSH recipients), base64 and bech32, the ASCII armor, recipients and
 * identities files, SSH keys, minisign key and signature files, checksum
 * lists; and the OpenSSL primitives they use. Formats: age-encryption.org/v1
 * (C2SP age.md), BIP 173 (bech32), RFC 4648 (base64), RFC 7468 (armor),
 * minisign's key and signature files, GNU sha256sum's lists.
 *
 * Internal, not installed: these live in the static archive
 * libaccel-crypt.a (libcore/ops/crypt/crypt.mk), which accel-crypt links
 * (the crypt fuzz targets compile its sources), not in libaccel.so, which
 * loads no libcrypto.
 * Functions return 0 or -1 (a reason in err[len] where they take one)
 * unless their comment says otherwise.
 */
#ifndef ACCEL_CRYPT_FORMAT_H
#define ACCEL_CRYPT_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <accel/io.h>
#include <accel/unit.h>

#define FILE_KEY_LEN 16
#define MAC_LEN 32
#define NONCE_LEN 16
#define X25519_LEN 32
#define SCRYPT_SALT_LEN 16
/* scrypt work factor (log2 N) age writes, and the largest it reads. */
#define SCRYPT_LOG_N 18
#define SCRYPT_LOG_N_MAX 22
/* The largest header accepted (bytes up to the end of the MAC line). age
 * reads a header of any size and lines of any length; 64 MiB (some 90,000
 * ssh-rsa recipients) bounds the memory a hostile file can take. */
#define HEADER_MAX ((size_t)64 << 20)
#define STANZA_ARGS_MAX 16

/* ---- base64 (RFC 4648, standard alphabet) */
/* Encode without padding ("canonical" age form) into dst (4 * n / 3 + 4
 * bytes suffice, NUL-terminated). Returns the length. */
size_t b64_encode(const uint8_t *src, size_t n, char *dst);
/* Decode canonical unpadded base64 (no padding, no other byte, unused bits
 * zero) of n characters into dst (at least n * 3 / 4 bytes). Returns the
 * decoded length, or -1. */
ssize_t b64_decode(const char *src, size_t n, uint8_t *dst);

/* ---- bech32 (BIP 173, without the 90-character limit, as age uses it) */
/* Encode data under hrp into dst[len]; upper: upper case. 0 or -1. */
int bech32_encode(const char *hrp, const uint8_t *data, size_t n, int upper, char *dst, size_t len);
/* Decode s (one case only): hrp into hrp[hlen] (lower case), data into
 * data[dlen]. Returns the data length, or -1. */
ssize_t bech32_decode(const char *s, char *hrp, size_t hlen, uint8_t *data, size_t dlen);

/* ---- primitives (libsodium; scrypt and Ed25519 from OpenSSL EVP); 0 or -1 */
int hkdf_sha256(const uint8_t *ikm, size_t ikm_len, const uint8_t *salt, size_t salt_len, const char *info,
		uint8_t *out, size_t out_len);
int hmac_sha256(const uint8_t *key, size_t key_len, const uint8_t *msg, size_t n, uint8_t mac[MAC_LEN]);
/* ChaCha20-Poly1305 with the all-zero nonce (age's key wrapping): seal n
 * bytes into n + 16, or open n + 16 into n (-1: tag mismatch). */
int wrap_seal(const uint8_t key[32], const uint8_t *src, size_t n, uint8_t *dst);
int wrap_open(const uint8_t key[32], const uint8_t *src, size_t n, uint8_t *dst);
int x25519_public(const uint8_t priv[X25519_LEN], uint8_t pub[X25519_LEN]);
int x25519_shared(const uint8_t priv[X25519_LEN], const uint8_t pub[X25519_LEN], uint8_t out[X25519_LEN]);
/* Ed25519 (RFC 8032) from a 32-byte seed: its public key, a signature of
 * msg[0..n), and a signature's check (-1: it does not verify). */
#define ED25519_SEED_LEN 32
#define ED25519_PK_LEN 32
#define ED25519_SIG_LEN 64
int ed25519_public(const uint8_t seed[ED25519_SEED_LEN], uint8_t pk[ED25519_PK_LEN]);
int ed25519_sign(const uint8_t seed[ED25519_SEED_LEN], const uint8_t *msg, size_t n, uint8_t sig[ED25519_SIG_LEN]);
int ed25519_verify(const uint8_t pk[ED25519_PK_LEN], const uint8_t *msg, size_t n, const uint8_t sig[ED25519_SIG_LEN]);
int random_bytes(uint8_t *p, size_t n);
int scrypt_key(const char *pass, size_t pass_len, const uint8_t *salt, size_t salt_len, int log_n,
	       uint8_t out[32]);
void wipe(void *p, size_t n);

/* ---- the age header */
struct stanza {
	char *args[STANZA_ARGS_MAX];  /* args[0] is the type */
	int nargs;
	uint8_t *body;
	size_t body_len;
};

struct header {
	struct stanza *stanzas;
	int n;
	size_t mac_off;               /* bytes covered by the MAC: up to "---" */
	size_t len;                   /* bytes of the whole header, MAC line included */
	uint8_t mac[MAC_LEN];
	char *text;                   /* a copy of the header's bytes */
};

/* Parse the header at p[0..n): 0 with h filled (free with header_free);
 * 1 when p ends before the header does (give more bytes); -1 with the
 * reason in err[len] for a header that breaks the spec's rules. */
int header_parse(const uint8_t *p, size_t n, struct header *h, char *err, size_t len);
void header_free(struct header *h);
/* The header MAC key's check of h with file key fk: 0 matches, -1 not. */
int header_mac_check(const struct header *h, const uint8_t fk[FILE_KEY_LEN]);

/* A growable string (the header being written). */
struct text {
	char *p;
	size_t len, cap;
	int oom;
};
void text_add(struct text *t, const void *s, size_t n);
void text_addf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Add a stanza: "-> " args, then the body in base64 lines of 64 columns
 * ending with a shorter line. */
void text_stanza(struct text *t, const char *const *args, int nargs, const uint8_t *body, size_t n);
/* Finish a header: "---", the MAC under file key fk, newline. 0 or -1. */
int text_mac(struct text *t, const uint8_t fk[FILE_KEY_LEN]);

/* ---- recipients and identities files (keys.c) */
/* Key files are at most this large (age's limit for identity files). */
#define KEY_FILE_MAX ((size_t)16 << 20)
/* Read all of path ("-": stdin) into a malloc'd buffer of *len bytes (a NUL
 * after them, not part of the text; wipe and free it); *mode: the
 * permission bits of a regular file, else 0. NULL with errno set (EFBIG:
 * larger than KEY_FILE_MAX). */
char *key_file_read(const char *path, size_t *len, mode_t *mode);
/* The text of an identity file (age's format: AGE-SECRET-KEY-1 lines, '#'
 * comments, blank lines; or an OpenSSH or PEM private key) or of a recipients
 * file (one age1... or SSH key a line, '#' comments, blank lines), p[0..n)
 * (cut in place; a NUL byte anywhere is malformed): appends to the array.
 * 0, or -1 with the reason in err[len] ("line N: ..."); identities_parse
 * returns SSH_KEY_SEALED, appending nothing, for an encrypted OpenSSH or
 * PEM key (ssh_identity_open, with its passphrase, opens it). */
struct identity;
struct recipient;
int identities_parse(char *p, size_t n, struct identity **ids, int *nids, char *err, size_t len);
/* recipients_parse: a well-formed SSH key that is not a recipient (an
 * ECDSA or too short an RSA key) is skipped, skip(skip_arg, line number,
 * its type, why) told (may be NULL); a line that is neither is malformed, its
 * text never in err (it may be a secret: an identity file given as
 * recipients; why: the reason it is refused). */
int recipients_parse(char *p, size_t n, struct recipient **rs, int *nrs,
		     void (*skip)(void *skip_arg, int lineno, const char *type, const char *why), void *skip_arg, char *err, size_t len);
enum key_kind { KEY_X25519, KEY_SSH_ED25519, KEY_SSH_RSA };

struct recipient {
	enum key_kind kind;
	uint8_t pub[X25519_LEN];      /* X25519; ssh-ed25519: its Montgomery form */
	uint8_t *wire;                /* SSH keys: the public key's wire form */
	size_t wire_len;
	void *rsa;                    /* ssh-rsa: its EVP_PKEY */
};

struct identity {
	enum key_kind kind;
	uint8_t priv[X25519_LEN];     /* X25519 scalar (ssh-ed25519: from the seed) */
	uint8_t pub[X25519_LEN];      /* ssh-ed25519: its X25519 public key */
	uint8_t *wire;                /* SSH keys: the public key's wire form */
	size_t wire_len;
	void *rsa;                    /* ssh-rsa: its EVP_PKEY (private) */
};

/* Parse "age1..." into r. 0 or -1 with the reason in err. */
int recipient_parse(const char *s, struct recipient *r, char *err, size_t len);
/* The age1 string of a public key into buf[len]. */
int recipient_format(const uint8_t pub[X25519_LEN], char *buf, size_t len);
/* "AGE-SECRET-KEY-1..." into id. 0 or -1. */
int identity_parse(const char *s, struct identity *id);
int identity_format(const uint8_t priv[X25519_LEN], char *buf, size_t len);
/* An identity file as age-keygen writes it, into buf[len]:
 *   # created: CREATED (RFC 3339)
 *   # public key: age1...
 *   AGE-SECRET-KEY-1...
 * Its length, or -1 (OpenSSL failed, or buf too small). Wipe buf. */
int identity_file_format(const uint8_t priv[X25519_LEN], const char *created, char *buf, size_t len);

/* Wrap file key fk for X25519 recipient r: a stanza added to t. 0 or -1. */
int x25519_wrap(const struct recipient *r, const uint8_t fk[FILE_KEY_LEN], struct text *t);
/* Try identity id on stanza s: 1 unwrapped into fk, 0 not for this
 * identity, -1 a malformed X25519 stanza (reason in err). */
int x25519_unwrap(const struct identity *id, const struct stanza *s, uint8_t fk[FILE_KEY_LEN], char *err,
		  size_t len);
int scrypt_wrap(const char *pass, size_t n, int log_n, const uint8_t fk[FILE_KEY_LEN], struct text *t);
/* 1 unwrapped, 0 wrong passphrase, -1 malformed (err). */
int scrypt_unwrap(const char *pass, size_t n, const struct stanza *s, uint8_t fk[FILE_KEY_LEN], char *err,
		  size_t len);

/* ---- SSH keys (ssh.c) */
/* An authorized_keys line ([options] ssh-ed25519|ssh-rsa BASE64 [comment]). */
int ssh_recipient_parse(const char *line, struct recipient *r, char *err, size_t len);
/* Whether `line` holds a well-formed SSH public key of any type (as an
 * authorized_keys line: [options] TYPE BASE64 [comment], the blob's first
 * string TYPE): 1 with TYPE in type[len], else 0. For the keys a
 * recipients file may list that age cannot encrypt to (ecdsa-sha2-*,
 * sk-*, an RSA key under 2048 bits), skipped with a warning, as age does. */
int ssh_line_key_type(const char *line, char *type, size_t len);
/* An OpenSSH private key file's text, text[0..n): 0 with an unencrypted
 * key in id; SSH_KEY_SEALED for a well-formed encrypted key that
 * ssh_identity_open can open (bcrypt KDF, AES-CTR or AES-CBC, one
 * ssh-ed25519 or ssh-rsa key; id->kind set, nothing held); -1 with err. */
#define SSH_KEY_SEALED 1
int ssh_identity_parse(const char *text, size_t n, struct identity *id, char *err, size_t len);
/* The public key of the encrypted OpenSSH private key text[0..n), which
 * the format keeps in the clear: its wire form into *wire (malloc'd,
 * *wire_len bytes): 0; -1 for any other text (a PEM key has none). */
int ssh_sealed_public(const char *text, size_t n, uint8_t **wire, size_t *wire_len);
/* The recipient of an SSH public key's wire form wire[0..n) (copied into
 * r->wire): 0, or -1 with err (a key age cannot use). */
int recipient_of_wire(const uint8_t *wire, size_t n, struct recipient *r, char *err, size_t len);
/* The recipient of identity id (age -e -i): an X25519 key's public key,
 * an SSH key's public key. 0, or -1 with err. */
int identity_recipient(const struct identity *id, struct recipient *r, char *err, size_t len);
/* Whether stanza s is for the SSH key of wire form wire[0..n): an
 * ssh-ed25519 or ssh-rsa stanza of its type whose tag is the key's. */
int ssh_stanza_for(const uint8_t *wire, size_t n, const struct stanza *s);
/* Open an encrypted private key, text[0..n), with the passphrase
 * pass[0..plen) into id: 0; 1 when the passphrase is wrong (the key does
 * not decrypt); -1 with err. An OpenSSH key is opened by libssh
 * (libssh.so.4, loaded by the first call: bcrypt_pbkdf, which OpenSSL
 * lacks), which may be missing or unable to give the key back (libssh
 * 0.10 cannot for ssh-rsa keys: the message tells how to convert the key
 * FILE named name to PEM, which pem_identity_open reads); a PEM key
 * (pem_key_begin finds one, and no OpenSSH key) by pem_identity_open. The
 * decrypted copies are wiped. An unencrypted key is parsed as
 * ssh_identity_parse or pem_identity_parse does (pass unused). */
int ssh_identity_open(const char *text, size_t n, const char *pass, size_t plen, const char *name,
		      struct identity *id, char *err, size_t len);
/* The kind, X25519 form (ssh-ed25519) and public RSA key (ssh-rsa: an
 * EVP_PKEY into *rsa, to free) of an SSH public key's wire form,
 * blob[0..n). Keys age cannot use (other types, RSA under 2048 bits) are
 * refused with a reason. */
int ssh_public_from_wire(const uint8_t *blob, size_t n, enum key_kind *kind, uint8_t pub[32], void **rsa, char *err,
			 size_t len);

/* ---- PEM private keys as SSH identities (pem.c): "RSA PRIVATE KEY"
 * (PKCS#1, plain or with Proc-Type/DEK-Info encryption), "PRIVATE KEY"
 * (PKCS#8: RSA or Ed25519), "ENCRYPTED PRIVATE KEY" (PKCS#8). */
/* The first "-----BEGIN [WORDS ]PRIVATE KEY-----" line of text[0..n) that
 * is not OpenSSH's, or NULL. */
const char *pem_key_begin(const char *text, size_t n);
/* The PEM key at pem_key_begin: 0 with a plain key's identity in id (an
 * ssh-rsa or ssh-ed25519 one, its SSH public key derived); SSH_KEY_SEALED
 * for an encrypted one whose cipher and structure this OpenSSL can undo
 * (nothing held); -1 with err (malformed; other key types, EC and DSA,
 * refused). Never asks for a passphrase. */
int pem_identity_parse(const char *text, size_t n, struct identity *id, char *err, size_t len);
/* The same, an encrypted key opened with pass[0..plen): 0; 1 when the
 * passphrase is wrong; -1 with err. */
int pem_identity_open(const char *text, size_t n, const char *pass, size_t plen, struct identity *id, char *err,
		      size_t len);
/* Free recipients and identities (SSH keys' buffers and RSA keys), wiping
 * the identities; either array may be NULL. */
void keys_free(struct recipient *rs, int nrs, struct identity *ids, int nids);
int ssh_wrap(const struct recipient *r, const uint8_t fk[FILE_KEY_LEN], struct text *t);
/* 1 unwrapped, 0 not for this key, -1 malformed (err). */
int ssh_unwrap(const struct identity *id, const struct stanza *s, uint8_t fk[FILE_KEY_LEN], char *err, size_t len);

/* ---- armor (age's PEM-style "AGE ENCRYPTED FILE") */
#define ARMOR_BEGIN "-----BEGIN AGE ENCRYPTED FILE-----"
#define ARMOR_END "-----END AGE ENCRYPTED FILE-----"
/* Incremental armor decoder: feed bytes, get binary. */
struct armor_dec {
	int state;                 /* 0 before BEGIN, 1 in the body, 2 after END */
	char line[80];
	size_t linelen;
	int short_line;            /* a line shorter than 64 seen: it must be the last */
	int padded;                /* a line with '=' seen */
	size_t lead;               /* whitespace bytes before BEGIN */
	size_t trail;              /* bytes after END */
	uint64_t lineno;
};
/* Decode n bytes of p, appending binary to out. 0, or -1 with the reason
 * in err (naming the line). */
int armor_feed(struct armor_dec *d, const uint8_t *p, size_t n, struct accel_buf *out, char *err, size_t len);
/* End of input: 0 when the armor was complete, else -1 with err. */
int armor_finish(struct armor_dec *d, char *err, size_t len);
/* Whether p[0..n) begins like armor (whitespace, then BEGIN line start). */
int armor_detect(const uint8_t *p, size_t n);

/* Armor on an output: binary written to *pipe_out is encoded by a thread
 * into `out`. armor_out_end closes the pipe, waits, and returns 0 or the
 * thread's ACCEL_E* code. */
struct armor_writer;
int armor_out_start(struct accel_output *out, struct armor_writer **w, struct accel_output *pipe_out);
int armor_out_end(struct armor_writer *w, int abandon);
/* Armor on an input: a thread decodes `in` into a pipe opened as *bin.
 * armor_in_end closes bin, waits, and returns 0 or -1 with the decoder's
 * reason in err. */
struct armor_reader;
int armor_in_start(struct accel_input *in, struct armor_reader **r, struct accel_input *bin);
int armor_in_end(struct armor_reader *r, struct accel_input *bin, char *err, size_t len);

/* ---- minisign files (minisign.c; jedisct1.github.io/minisign)
 *
 *   public key:  "untrusted comment: ..." / base64("Ed" || key id (8) || public key (32))
 *   secret key:  "untrusted comment: ..." / base64("Ed" || kdf ("\0\0" or "Sc") || "B2" ||
 *                salt (32) || opslimit (8, LE) || memlimit (8, LE) ||
 *                [key id || seed || public key || checksum (32)])
 *   signature:   "untrusted comment: ..." / base64("ED" || key id || Ed25519(BLAKE2b-512(file)))
 *                "trusted comment: TEXT" / base64(Ed25519(signature || TEXT))
 *
 * An encrypted secret key ("Sc", as minisign writes it by default) holds
 * the bracketed part XORed with libsodium's scrypt (salsa20/8, SHA-256) of
 * the passphrase, salt and limits; its checksum, BLAKE2b-256 of "Ed" ||
 * key id || seed || public key, tells a wrong passphrase (libsodium gives
 * both; OpenSSL 3.0 has no BLAKE2b-256). Keys are written unencrypted
 * (minisign -W), the checksum zero as minisign -W leaves it. Legacy
 * signatures ("Ed", over the file itself) are read too. */
#define MINISIGN_KEYID_LEN 8
/* The longest comment line written (bytes), and the largest minisign file
 * read (bytes). */
#define MINISIGN_COMMENT_MAX 1024
#define MINISIGN_FILE_MAX (4 * MINISIGN_COMMENT_MAX + 1024)
/* The base64 line of a public key (NUL included). */
#define MINISIGN_PUB_B64_LEN 60

struct minisign_key {
	uint8_t id[MINISIGN_KEYID_LEN];
	uint8_t pk[ED25519_PK_LEN];
	uint8_t seed[ED25519_SEED_LEN];  /* secret keys only */
};

/* A parsed .minisig file (its strings point into the text parsed). */
struct minisig {
	int legacy;                 /* "Ed": the signature covers the file itself */
	uint8_t id[MINISIGN_KEYID_LEN];
	uint8_t sig[ED25519_SIG_LEN];   /* of BLAKE2b-512(file), or of the file (legacy) */
	uint8_t gsig[ED25519_SIG_LEN];  /* of sig || trusted */
	const char *untrusted, *trusted;
};
/* Parse the text of a .minisig file, text[0..n) with a NUL at text[n]
 * (cut in place; a NUL byte in it is malformed): 0, or -1 when it is not
 * one. */
int minisign_sig_parse(char *text, size_t n, struct minisig *sig);
/* Check sig with public key pk over msg[0..n) (the file's BLAKE2b-512, or
 * the file itself when sig->legacy), then its trusted comment: 0 both
 * verify, 1 the signature does not, 2 the comment's signature does not,
 * -1 out of memory. */
int minisign_sig_verify(const struct minisig *sig, const uint8_t pk[ED25519_PK_LEN], const uint8_t *msg, size_t n);
/* Sign md (a file's BLAKE2b-512) and the trusted comment with secret key
 * k: the text of a .minisig file into buf[len], comments one line each.
 * Its length, or -1 (OpenSSL failed, or buf too small). */
int minisign_sig_format(const struct minisign_key *k, const uint8_t md[64], const char *untrusted,
			const char *trusted, char *buf, size_t len);

/* A public key's base64 line (minisign -P) into k. 0, or -1 when it is
 * not an Ed25519 one. */
int minisign_pub_parse(const char *line, struct minisign_key *k);
/* The text of a public key file, text[0..n) with a NUL at text[n] (cut in
 * place); its first line is a comment, whatever it says. 0, or -1 with
 * the reason in err[len]. */
int minisign_pub_file_parse(char *text, size_t n, struct minisign_key *k, char *err, size_t len);
/* A secret key file as read, before its passphrase. */
#define MINISIGN_SEC_BLOB 158
struct minisign_sealed {
	int encrypted;              /* kdf "Sc": minisign_sec_open needs the passphrase */
	uint8_t blob[MINISIGN_SEC_BLOB];
};
/* The scrypt work an encrypted key may ask for: minisign's own (libsodium's
 * "sensitive" limits: 2^25 operations, 1 GiB of memory). */
#define MINISIGN_OPSLIMIT_MAX (1ULL << 25)
#define MINISIGN_MEMLIMIT_MAX (1ULL << 30)
/* Parse the text of a secret key file, text[0..n) with a NUL at text[n]
 * (cut in place): 0, or -1 with the reason in err when it is not a
 * minisign Ed25519 secret key, names another KDF, or asks for more scrypt
 * work than the limits above. Wipe s after use. */
int minisign_sec_file_parse(char *text, size_t n, struct minisign_sealed *s, char *err, size_t len);
/* Open a parsed secret key into k, decrypting it with the passphrase
 * pass[0..plen) when it is encrypted (pass unused when not). 0; 1 when
 * the passphrase is wrong (the checksum does not match); -1 with the
 * reason in err: scrypt failed (out of memory), or the secret key does
 * not match its public half. Memory: up to the key's memlimit. */
int minisign_sec_open(const struct minisign_sealed *s, const char *pass, size_t plen, struct minisign_key *k,
		      char *err, size_t len);
/* The base64 line of k's public key into b64. */
void minisign_pub_b64(const struct minisign_key *k, char b64[MINISIGN_PUB_B64_LEN]);
/* The text of k's public key file, or of its secret key file
 * (unencrypted), into buf[len]. Its length, or -1 when buf is too small. */
int minisign_pub_format(const struct minisign_key *k, char *buf, size_t len);
int minisign_sec_format(const struct minisign_key *k, char *buf, size_t len);
/* A key id as minisign prints it: the 8 bytes little-endian, in hex. */
void minisign_keyid_hex(const uint8_t id[MINISIGN_KEYID_LEN], char out[17]);

/* ---- checksum lists (sums.c): the lines sha256sum writes and -c reads */
/* An algorithm of `accel-crypt hash`: its operation name, the tags a
 * tagged line names it by (tags[0] as sha256sum --tag writes it, then
 * openssl dgst's names, OpenSSL 3's and 1.1's), its digest bytes. */
struct sum_algo {
	const char *name;
	const char *tags[4];
	size_t dlen;
};
#define SUM_NALGOS 6
extern const struct sum_algo sum_algos[SUM_NALGOS];
struct sum_reader {
	int plain;             /* the algorithm (index) of untagged lines */
	int only;              /* -1: tagged lines may name any algorithm;
				  else the only one they may name */
	int from_stdin;        /* the list is stdin: a "-" NAME is improper */
	int reversed;          /* -1 at first; then 0 after a "DIGEST  NAME" line,
				  1 after a "DIGEST NAME" one (for the whole run) */
};
/* Parse one line of a list, s[0..n) as read (its LF included), s[n]
 * writable. Returns 1 with the line's algorithm in *algo, its digest in
 * digest[sum_algos[*algo].dlen] and *name pointing into s (cut and
 * unescaped in place, NUL-terminated), 0 for a line to skip ('#'
 * comment, empty), or -1 for an improperly formatted line. */
int sum_line_parse(struct sum_reader *r, char *s, size_t n, int *algo, uint8_t *digest, char **name);
/* A name as sha256sum writes it: in a list line (check 0) '\' as "\\",
 * LF as "\n", CR as "\r"; in -c's report (check 1) only when it holds a
 * LF, and then '\' and LF only. *escaped set when any byte was (the line
 * then starts with '\'). A malloc'd string, or NULL out of memory. */
char *sum_name_escape(const char *name, int check, int *escaped);
/* The line sha256sum writes for a file: "DIGEST  NAME" (tag NULL;
 * "DIGEST *NAME" with SUM_BINARY, sha256sum --binary), or "TAG (NAME) =
 * DIGEST" (tag: the --tag name); DIGEST (dlen bytes, at most 64) in
 * lower-case hex, NAME escaped, LF-terminated (with SUM_ZERO, sha256sum
 * -z: NUL-terminated, NAME as it is). A malloc'd string of *len bytes, or
 * NULL out of memory. */
#define SUM_BINARY 1
#define SUM_ZERO 2
char *sum_line_format(const char *tag, const uint8_t *digest, size_t dlen, const char *name, int mode,
		      size_t *len);

#endif
