/*
 * encoding.c - base64 as age writes it (RFC 4648 standard alphabet, no
 * padding, canonical: decoding refuses anything another encoder would not
 * have written) and bech32 (BIP 173) for age1... recipients and
 * AGE-SECRET-KEY-1... identities.
 */
#include <ctype.h>
#include <string.h>
#include <sys/types.h>
#include "crypt_format.h"

static const char b64_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t b64_encode(const uint8_t *src, size_t n, char *dst)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)src[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)src[i + 1] << 8;
		if (i + 2 < n)
			v |= src[i + 2];
		dst[o++] = b64_alphabet[v >> 18 & 63];
		dst[o++] = b64_alphabet[v >> 12 & 63];
		if (i + 1 < n)
			dst[o++] = b64_alphabet[v >> 6 & 63];
		if (i + 2 < n)
			dst[o++] = b64_alphabet[v & 63];
	}
	dst[o] = 0;
	return o;
}

static int b64_value(char c)
{
	const char *p = c ? strchr(b64_alphabet, c) : NULL;
	return p ? (int)(p - b64_alphabet) : -1;
}

ssize_t b64_decode(const char *src, size_t n, uint8_t *dst)
{
	if (n % 4 == 1)
		return -1;
	size_t o = 0;
	uint32_t acc = 0;
	int bits = 0;
	for (size_t i = 0; i < n; i++) {
		int v = b64_value(src[i]);
		if (v < 0)
			return -1;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			dst[o++] = (uint8_t)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	/* Leftover bits must be zero: one encoding per byte string. */
	if (acc)
		return -1;
	return (ssize_t)o;
}

static const char b32_charset[] = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";

static uint32_t polymod_step(uint32_t chk, unsigned v)
{
	static const uint32_t gen[5] = { 0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3 };
	uint32_t top = chk >> 25;
	chk = (chk & 0x1ffffff) << 5 ^ v;
	for (int i = 0; i < 5; i++)
		if (top >> i & 1)
			chk ^= gen[i];
	return chk;
}

static uint32_t hrp_polymod(const char *hrp)
{
	uint32_t chk = 1;
	size_t n = strlen(hrp);
	for (size_t i = 0; i < n; i++)
		chk = polymod_step(chk, (unsigned)tolower((unsigned char)hrp[i]) >> 5);
	chk = polymod_step(chk, 0);
	for (size_t i = 0; i < n; i++)
		chk = polymod_step(chk, (unsigned)tolower((unsigned char)hrp[i]) & 31);
	return chk;
}

int bech32_encode(const char *hrp, const uint8_t *data, size_t n, int upper, char *dst, size_t len)
{
	size_t hl = strlen(hrp), ngroups = (n * 8 + 4) / 5;
	if (hl + 1 + ngroups + 6 + 1 > len)
		return -1;
	uint32_t chk = hrp_polymod(hrp);
	size_t o = 0;
	for (size_t i = 0; i < hl; i++)
		dst[o++] = (char)tolower((unsigned char)hrp[i]);
	dst[o++] = '1';
	uint32_t acc = 0;
	int bits = 0;
	for (size_t i = 0; i < n; i++) {
		acc = acc << 8 | data[i];
		bits += 8;
		while (bits >= 5) {
			bits -= 5;
			unsigned v = acc >> bits & 31;
			chk = polymod_step(chk, v);
			dst[o++] = b32_charset[v];
		}
	}
	if (bits) {
		unsigned v = acc << (5 - bits) & 31;
		chk = polymod_step(chk, v);
		dst[o++] = b32_charset[v];
	}
	for (int i = 0; i < 6; i++)
		chk = polymod_step(chk, 0);
	chk ^= 1;
	for (int i = 0; i < 6; i++)
		dst[o++] = b32_charset[chk >> (5 * (5 - i)) & 31];
	dst[o] = 0;
	if (upper)
		for (size_t i = 0; i < o; i++)
			dst[i] = (char)toupper((unsigned char)dst[i]);
	return 0;
}

ssize_t bech32_decode(const char *s, char *hrp, size_t hlen, uint8_t *data, size_t dlen)
{
	size_t n = strlen(s);
	int lower = 0, upper = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 33 || c > 126)
			return -1;
		lower |= islower(c) != 0;
		upper |= isupper(c) != 0;
	}
	if (lower && upper)
		return -1;
	const char *sep = strrchr(s, '1');
	if (!sep || sep == s || (size_t)(s + n - sep - 1) < 6 || (size_t)(sep - s) >= hlen)
		return -1;
	size_t hl = (size_t)(sep - s);
	for (size_t i = 0; i < hl; i++)
		hrp[i] = (char)tolower((unsigned char)s[i]);
	hrp[hl] = 0;
	uint32_t chk = hrp_polymod(hrp);
	const char *d = sep + 1;
	size_t nd = (size_t)(s + n - d);
	uint32_t acc = 0;
	int bits = 0;
	size_t o = 0;
	for (size_t i = 0; i < nd; i++) {
		const char *p = strchr(b32_charset, tolower((unsigned char)d[i]));
		if (!p || !d[i])
			return -1;
		unsigned v = (unsigned)(p - b32_charset);
		chk = polymod_step(chk, v);
		if (i >= nd - 6)
			continue;
		acc = acc << 5 | v;
		bits += 5;
		if (bits >= 8) {
			bits -= 8;
			if (o >= dlen)
				return -1;
			data[o++] = (uint8_t)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	if (chk != 1 || bits >= 5 || acc)
		return -1;
	return (ssize_t)o;
}
