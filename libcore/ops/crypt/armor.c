/*
 * armor.c - age's ASCII armor (age-encryption.org/v1, "ASCII armor"; the
 * strict PEM of RFC 7468): "-----BEGIN AGE ENCRYPTED FILE-----", the file
 * in padded standard base64 lines of 64 columns (the last one shorter or
 * equal), "-----END AGE ENCRYPTED FILE-----". Whitespace is allowed before
 * the first line and after the last; a CR before each LF is accepted.
 *
 * On an output or an input, armor runs on a thread of its own between the
 * program and a pipe, so the header and the parallel payload are written
 * and read as binary.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "crypt_format.h"

/* Bytes of whitespace allowed around the armor. */
#define SPACE_MAX 1024

static int is_space(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int armor_detect(const uint8_t *p, size_t n)
{
	size_t i = 0;
	while (i < n && is_space(p[i]))
		i++;
	size_t k = n - i < 10 ? n - i : 10;
	return k > 0 && !memcmp(p + i, ARMOR_BEGIN, k);
}

/* One complete line (without its LF, a CR stripped). */
static int armor_line(struct armor_dec *d, struct accel_buf *out, char *err, size_t len)
{
	char *l = d->line;
	size_t n = d->linelen;
	if (n && l[n - 1] == '\r')
		n--;
	l[n] = 0;
	d->lineno++;
	/* A NUL would end the line early for the comparisons below. */
	if (memchr(l, 0, n)) {
		snprintf(err, len, "armor line %llu: a NUL byte", (unsigned long long)d->lineno);
		return -1;
	}
	if (d->state == 0) {
		if (strcmp(l, ARMOR_BEGIN)) {
			snprintf(err, len, "armor line %llu: expected '%s'", (unsigned long long)d->lineno, ARMOR_BEGIN);
			return -1;
		}
		d->state = 1;
		return 0;
	}
	if (d->state == 2) {
		for (size_t i = 0; i < n; i++)
			if (!is_space((uint8_t)l[i]))
				goto trailing;
		return 0;
	}
	if (!strcmp(l, ARMOR_END)) {
		d->state = 2;
		return 0;
	}
	if (d->short_line || d->padded) {
		snprintf(err, len, "armor line %llu: a line follows the last, shorter one", (unsigned long long)d->lineno);
		return -1;
	}
	if (n == 0 || n > 64 || n % 4) {
		snprintf(err, len, "armor line %llu: not a line of base64 in groups of 4, at most 64 columns",
			 (unsigned long long)d->lineno);
		return -1;
	}
	size_t pad = 0;
	while (pad < 2 && n > pad && l[n - 1 - pad] == '=')
		pad++;
	if (accel_buf_reserve(out, out->len + 48)) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	ssize_t r = b64_decode(l, n - pad, out->data + out->len);
	if (r < 0) {
		snprintf(err, len, "armor line %llu: not canonical base64", (unsigned long long)d->lineno);
		return -1;
	}
	out->len += (size_t)r;
	d->short_line = n < 64;
	d->padded = pad > 0;
	return 0;
trailing:
	snprintf(err, len, "armor: data after '%s'", ARMOR_END);
	return -1;
}

int armor_feed(struct armor_dec *d, const uint8_t *p, size_t n, struct accel_buf *out, char *err, size_t len)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t c = p[i];
		if (d->state == 0 && d->linelen == 0 && is_space(c)) {
			if (++d->lead > SPACE_MAX) {
				snprintf(err, len, "armor: too much whitespace before '%s'", ARMOR_BEGIN);
				return -1;
			}
			continue;
		}
		if (d->state == 2) {
			if (!is_space(c)) {
				snprintf(err, len, "armor: data after '%s'", ARMOR_END);
				return -1;
			}
			if (++d->trail > SPACE_MAX) {
				snprintf(err, len, "armor: too much whitespace after '%s'", ARMOR_END);
				return -1;
			}
			continue;
		}
		if (c == '\n') {
			if (armor_line(d, out, err, len) < 0)
				return -1;
			d->linelen = 0;
			continue;
		}
		if (d->linelen >= sizeof d->line - 2) {
			snprintf(err, len, "armor line %llu: longer than 64 columns", (unsigned long long)d->lineno + 1);
			return -1;
		}
		d->line[d->linelen++] = (char)c;
	}
	return 0;
}

int armor_finish(struct armor_dec *d, char *err, size_t len)
{
	if (d->state == 2)
		return 0;
	if (d->state == 1 && d->linelen) {
		/* The END line without its newline. */
		struct accel_buf none = { 0 };
		int rc = armor_line(d, &none, err, len);
		accel_buf_free(&none);
		if (rc < 0)
			return -1;
		if (d->state == 2)
			return 0;
	}
	snprintf(err, len, "armor: truncated (no '%s' line)", ARMOR_END);
	return -1;
}

/* ------------------------------------------------------------ threads */

static int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

struct armor_writer {
	pthread_t thread;
	int rfd, wfd;
	struct accel_output *out;
	int rc;
};

static void *writer_main(void *arg)
{
	struct armor_writer *w = arg;
	uint8_t in[48 * 1024 + 48];
	char text[sizeof in / 48 * 65 + 8];
	size_t have = 0;
	int rc = accel_output_write(w->out, ARMOR_BEGIN "\n", sizeof ARMOR_BEGIN);
	for (;;) {
		ssize_t r = read(w->rfd, in + have, sizeof in - 48 - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		size_t full = have / 48 * 48, t = 0;
		for (size_t i = 0; i < full; i += 48) {
			t += b64_encode(in + i, 48, text + t);
			text[t++] = '\n';
		}
		if (!rc && t)
			rc = accel_output_write(w->out, text, t);
		memmove(in, in + full, have - full);
		have -= full;
	}
	size_t t = 0;
	if (have) {
		t = b64_encode(in, have, text);
		while (t % 4)
			text[t++] = '=';
		text[t++] = '\n';
	}
	memcpy(text + t, ARMOR_END "\n", sizeof ARMOR_END);
	t += sizeof ARMOR_END;
	if (!rc)
		rc = accel_output_write(w->out, text, t);
	w->rc = rc;
	return NULL;
}

int armor_out_start(struct accel_output *out, struct armor_writer **wp, struct accel_output *pipe_out)
{
	struct armor_writer *w = calloc(1, sizeof *w);
	int fds[2];
	if (!w)
		return ACCEL_ENOMEM;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		free(w);
		return ACCEL_EIO;
	}
	fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
	w->rfd = fds[0];
	w->wfd = fds[1];
	w->out = out;
	if (pthread_create(&w->thread, NULL, writer_main, w)) {
		close(fds[0]);
		close(fds[1]);
		free(w);
		return ACCEL_ENOMEM;
	}
	accel_output_fd(pipe_out, fds[1]);
	*wp = w;
	return 0;
}

int armor_out_end(struct armor_writer *w, int abandon)
{
	close(w->wfd);
	pthread_join(w->thread, NULL);
	close(w->rfd);
	int rc = w->rc;
	free(w);
	return abandon ? 0 : rc;
}

struct armor_reader {
	pthread_t thread;
	int rfd, wfd;
	struct accel_input *in;
	char err[200];
	int failed;
};

static void *reader_main(void *arg)
{
	struct armor_reader *r = arg;
	struct armor_dec d;
	struct accel_buf out = { 0 };
	uint8_t buf[64 * 1024];
	/* The last byte decoded is held back until the armor's end has been
	 * checked: a STREAM chunk short of a byte fails its authentication,
	 * so no plaintext of the last chunk is released when the armor is
	 * bad (age releases only the chunks before it). */
	uint8_t held = 0;
	int holding = 0;
	memset(&d, 0, sizeof d);
	for (;;) {
		ssize_t n = accel_input_read(r->in, buf, sizeof buf);
		if (n < 0) {
			snprintf(r->err, sizeof r->err, "cannot read: %s", strerror(errno));
			r->failed = 1;
			break;
		}
		if (n == 0) {
			if (armor_finish(&d, r->err, sizeof r->err) < 0)
				r->failed = 1;
			else if (holding)
				write_all(r->wfd, &held, 1);
			break;
		}
		out.len = 0;
		int rc = armor_feed(&d, buf, (size_t)n, &out, r->err, sizeof r->err);
		/* What decoded before an error still goes out (but the last
		 * byte): the reader sees it end early and asks us why. */
		if (out.len) {
			if ((holding && write_all(r->wfd, &held, 1) < 0) ||
			    write_all(r->wfd, out.data, out.len - 1) < 0)
				break;   /* the program stopped reading */
			held = out.data[out.len - 1];
			holding = 1;
		}
		if (rc < 0) {
			r->failed = 1;
			break;
		}
	}
	accel_buf_free(&out);
	close(r->wfd);
	r->wfd = -1;
	return NULL;
}

int armor_in_start(struct accel_input *in, struct armor_reader **rp, struct accel_input *bin)
{
	struct armor_reader *r = calloc(1, sizeof *r);
	int fds[2];
	if (!r)
		return ACCEL_ENOMEM;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		free(r);
		return ACCEL_EIO;
	}
	fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
	r->rfd = fds[0];
	r->wfd = fds[1];
	r->in = in;
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
	int rc = accel_input_open(bin, path);
	close(fds[0]);
	if (rc < 0) {
		close(fds[1]);
		free(r);
		return rc;
	}
	bin->name = in->name;
	if (pthread_create(&r->thread, NULL, reader_main, r)) {
		accel_input_close(bin);
		close(fds[1]);
		free(r);
		return ACCEL_ENOMEM;
	}
	*rp = r;
	return 0;
}

int armor_in_end(struct armor_reader *r, struct accel_input *bin, char *err, size_t len)
{
	/* Closing our end first lets a thread blocked on a full pipe go. */
	accel_input_close(bin);
	pthread_join(r->thread, NULL);
	int rc = r->failed ? -1 : 0;
	if (rc)
		snprintf(err, len, "%s", r->err);
	free(r);
	return rc;
}
