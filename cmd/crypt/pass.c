/*
 * pass.c - passphrases, never from the command line: the first line of a
 * file, of a file descriptor, or typed at the terminal (/dev/tty) with echo
 * off, twice when a new one is chosen.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include "crypt.h"

#define PASS_MAX 4096

/* The first line of fd (without CR LF) into a malloc'd buffer of *len
 * bytes (a NUL after them), or NULL with errno set. Reads byte by byte so
 * nothing past the line is taken. */
static char *read_line(int fd, size_t *len)
{
	char *buf = malloc(PASS_MAX + 1);
	size_t n = 0;
	if (!buf)
		return NULL;
	for (;;) {
		char c;
		ssize_t r = read(fd, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			wipe(buf, n);
			free(buf);
			errno = e;
			return NULL;
		}
		if (r == 0 || c == '\n')
			break;
		if (n == PASS_MAX) {
			wipe(buf, n);
			free(buf);
			errno = EFBIG;
			return NULL;
		}
		buf[n++] = c;
	}
	if (n && buf[n - 1] == '\r')
		n--;
	buf[n] = 0;
	*len = n;
	return buf;
}

static char *ask(int tty, const char *prompt, size_t *len)
{
	struct termios old, quiet;
	if (write(tty, prompt, strlen(prompt)) < 0)
		return NULL;
	int echo_off = tcgetattr(tty, &old) == 0;
	if (echo_off) {
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		quiet.c_lflag |= ECHONL;
		tcsetattr(tty, TCSANOW, &quiet);
	}
	char *p = read_line(tty, len);
	int e = errno;
	if (echo_off)
		tcsetattr(tty, TCSANOW, &old);
	errno = e;
	return p;
}

char *passphrase_get(const char *file, int fd, int confirm, const char *of, size_t *len)
{
	char *p = NULL;
	const char *from = file;
	if (file) {
		int f = open(file, O_RDONLY | O_CLOEXEC);
		if (f >= 0) {
			p = read_line(f, len);
			close(f);
		}
	} else if (fd >= 0) {
		from = "--passphrase-fd";
		p = read_line(fd, len);
	} else {
		from = "/dev/tty";
		int tty = open("/dev/tty", O_RDWR | O_CLOEXEC);
		if (tty < 0) {
			accel_msg_error("no terminal to ask for the passphrase; use --passphrase-file or --passphrase-fd");
			return NULL;
		}
		char prompt[PATH_MAX + 32];
		/* As age asks for an encrypted SSH key's. */
		if (of)
			snprintf(prompt, sizeof prompt, "Enter passphrase for \"%s\": ", of);
		p = ask(tty, of ? prompt : "Enter passphrase: ", len);
		if (p && confirm) {
			size_t alen = 0;
			char *again = ask(tty, "Confirm passphrase: ", &alen);
			if (!again || alen != *len || memcmp(again, p, alen)) {
				if (again) {
					wipe(again, alen);
					free(again);
				}
				wipe(p, *len);
				free(p);
				close(tty);
				accel_msg_error("the passphrases do not match");
				return NULL;
			}
			wipe(again, alen);
			free(again);
		}
		close(tty);
	}
	if (!p) {
		accel_msg_error("cannot read the passphrase from %s: %s", from, strerror(errno));
		return NULL;
	}
	const char *why = !*len ? "is empty" : memchr(p, 0, *len) ? "holds a NUL byte" : NULL;
	if (why) {
		wipe(p, *len);
		free(p);
		accel_msg_error("the passphrase from %s %s", from, why);
		return NULL;
	}
	return p;
}
