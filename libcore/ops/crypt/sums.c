/*
 * sums.c - the lines of a checksum list as GNU sha256sum -c (coreutils 9.1)
 * reads them, for `accel-crypt hash -c`:
 *
 *   [blanks][\]DIGEST BLANK [' '|'*']NAME     (sha256sum's own lines)
 *   [blanks][\]DIGEST BLANK NAME              ("BSD reversed", md5 -r)
 *   [blanks][\]TAG[' '](NAME)[blanks]=[blanks]DIGEST   (--tag, openssl dgst)
 *
 * Blanks are spaces and tabs; a leading backslash marks a NAME with "\\",
 * "\n" and "\r" escapes. '#' lines and empty lines are skipped. The two
 * untagged forms do not mix in one run: the first such line decides.
 * TAG names the line's algorithm, any one of sum_algos as cksum -c (GNU
 * coreutils 9.1) reads them, unless the reader is held to one (as
 * sha256sum -c is); the names openssl dgst writes are TAGs too.
 * One difference: a line holding a NUL byte is improperly formatted
 * (sha256sum would take the name up to the NUL).
 *
 * And the lines `accel-crypt hash` writes, in sha256sum's first form and
 * in its --tag form, with the names escaped as sha256sum escapes them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "crypt_format.h"

const struct sum_algo sum_algos[SUM_NALGOS] = {
	{ "sha256", { "SHA256", "SHA2-256" }, 32 },
	{ "sha512", { "SHA512", "SHA2-512" }, 64 },
	{ "sha3-256", { "SHA3-256" }, 32 },
	{ "blake2b512", { "BLAKE2b", "BLAKE2b-512", "BLAKE2B-512", "BLAKE2b512" }, 64 },
	{ "sha1", { "SHA1" }, 20 },
	{ "md5", { "MD5" }, 16 },
};

static int blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Exactly 2 * len hex digits at s[0..n) into out. 0 or -1. */
static int hex_digest(const char *s, size_t n, size_t len, uint8_t *out)
{
	if (n != 2 * len)
		return -1;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
				       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		if (i % 2 == 0)
			out[i / 2] = (uint8_t)(d << 4);
		else
			out[i / 2] |= (uint8_t)d;
	}
	return 0;
}

/* Undo the escapes of s[0..n) in place, NUL-terminating it. 0, or -1 for
 * a backslash followed by anything but '\\', 'n' or 'r'. */
static int unescape(char *s, size_t n)
{
	char *o = s;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\\') {
			*o++ = s[i];
			continue;
		}
		if (++i == n)
			return -1;
		if (s[i] == '\\')
			*o++ = '\\';
		else if (s[i] == 'n')
			*o++ = '\n';
		else if (s[i] == 'r')
			*o++ = '\r';
		else
			return -1;
	}
	*o = 0;
	return 0;
}

/* TAG's line after "TAG (": NAME) = DIGEST, the last ')' ending NAME.
 * 0, or -1 improperly formatted. */
static int tagged(char *s, size_t n, size_t dlen, int escaped, uint8_t *digest, char **name)
{
	size_t e = n;
	while (e > 0 && s[e - 1] != ')')
		e--;
	if (e == 0)
		return -1;
	size_t i = e;
	while (i < n && blank(s[i]))
		i++;
	if (i == n || s[i] != '=')
		return -1;
	i++;
	while (i < n && blank(s[i]))
		i++;
	if (hex_digest(s + i, n - i, dlen, digest) < 0)
		return -1;
	if (escaped) {
		if (unescape(s, e - 1) < 0)
			return -1;
	} else {
		s[e - 1] = 0;
	}
	*name = s;
	return 0;
}

/* The algorithm whose tag starts s and is followed by ' ' or '(' (the
 * tag's length in *tl), of all or of the only one: its index, or -1. */
static int tag_algo(const char *s, int only, size_t *tl)
{
	for (int a = only < 0 ? 0 : only; a < (only < 0 ? SUM_NALGOS : only + 1); a++)
		for (int t = 0; t < 4 && sum_algos[a].tags[t]; t++) {
			*tl = strlen(sum_algos[a].tags[t]);
			if (!strncmp(s, sum_algos[a].tags[t], *tl) && (s[*tl] == ' ' || s[*tl] == '('))
				return a;
		}
	return -1;
}

int sum_line_parse(struct sum_reader *r, char *s, size_t n, int *algo, uint8_t *digest, char **name)
{
	if (n && s[0] == '#')
		return 0;
	if (n && s[n - 1] == '\n')
		n--;
	if (n && s[n - 1] == '\r')
		n--;
	if (n == 0)
		return 0;
	if (memchr(s, 0, n))
		return -1;
	s[n] = 0;
	size_t i = 0, tl;
	while (blank(s[i]))
		i++;
	int escaped = s[i] == '\\';
	i += (size_t)escaped;
	int a = tag_algo(s + i, r->only, &tl);
	if (a >= 0) {
		i += tl;
		i += s[i] == ' ';
		if (s[i] != '(' || tagged(s + i + 1, n - i - 1, sum_algos[a].dlen, escaped, digest, name) < 0)
			return -1;
		*algo = a;
		return r->from_stdin && !strcmp(*name, "-") ? -1 : 1;
	}
	/* DIGEST, one blank, then at least one more byte. */
	size_t dlen = sum_algos[r->plain].dlen, hl = 2 * dlen;
	if (n - i < hl + 2 || !blank(s[i + hl]) || hex_digest(s + i, hl, dlen, digest) < 0)
		return -1;
	i += hl + 1;
	if (n - i == 1 || (s[i] != ' ' && s[i] != '*')) {
		if (r->reversed == 0)
			return -1;
		r->reversed = 1;
	} else if (r->reversed != 1) {
		r->reversed = 0;
		i++;
	}
	if (escaped && unescape(s + i, n - i) < 0)
		return -1;
	*algo = r->plain;
	*name = s + i;
	return r->from_stdin && !strcmp(*name, "-") ? -1 : 1;
}

char *sum_name_escape(const char *name, int check, int *escaped)
{
	size_t n = strlen(name);
	char *s = malloc(2 * n + 1), *o = s;
	*escaped = 0;
	if (!s)
		return NULL;
	int any = !check || strchr(name, '\n');
	for (const char *c = name; *c; c++) {
		if (any && (*c == '\\' || *c == '\n' || (*c == '\r' && !check))) {
			*o++ = '\\';
			*o++ = *c == '\\' ? '\\' : *c == '\n' ? 'n' : 'r';
			*escaped = 1;
		} else {
			*o++ = *c;
		}
	}
	*o = 0;
	return s;
}

char *sum_line_format(const char *tag, const uint8_t *digest, size_t dlen, const char *name, int mode,
		      size_t *len)
{
	int escaped = 0;
	char *shown = mode & SUM_ZERO ? strdup(name) : sum_name_escape(name, 0, &escaped);
	if (!shown)
		return NULL;
	size_t cap = 1 + (tag ? strlen(tag) : 0) + strlen(shown) + 2 * dlen + 8;
	char *line = malloc(cap), hex[129] = "";
	if (line) {
		for (size_t i = 0; i < dlen; i++)
			snprintf(hex + 2 * i, 3, "%02x", digest[i]);
		int n = tag ? snprintf(line, cap, "%s%s (%s) = %s\n", escaped ? "\\" : "", tag, shown, hex)
			    : snprintf(line, cap, "%s%s %c%s\n", escaped ? "\\" : "", hex, mode & SUM_BINARY ? '*' : ' ',
				       shown);
		if (mode & SUM_ZERO)
			line[n - 1] = 0;
		*len = (size_t)n;
	}
	free(shown);
	return line;
}
