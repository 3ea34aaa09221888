/*
 * vmsplice.c - tests/bench/vmsplice.sh's writer: MiB mebibytes to stdout (a
 * pipe grown to 1 MiB) in units of 1 MiB, each unit's bytes written by this
 * process first, as an engine writes a unit's output, then handed to the
 * pipe in one of three ways:
 *   write  one buffer used again for every unit, write(2): the kernel copies
 *          it into the pipe (what the stream engine does);
 *   gift   a fresh mapping per unit, vmsplice(2) with SPLICE_F_GIFT, then
 *          unmapped: the pages move into the pipe, none is written again;
 *   reuse  two buffers in turn, vmsplice(2) without SPLICE_F_GIFT: the pipe
 *          holds references to pages this process writes again two units
 *          later. Unsafe: a reader that passes the pages on (splice(2) to a
 *          file, socket or another pipe: tee, pv, a splicing cat) still holds
 *          them then, and the bytes it delivers change under it.
 * Usage: vmsplice write|gift|reuse MiB. Exit status 0, 1 on a failed write.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define UNIT ((size_t)1 << 20)

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "write") && strcmp(argv[1], "gift") && strcmp(argv[1], "reuse"))) {
		fprintf(stderr, "usage: vmsplice write|gift|reuse MiB\n");
		return 2;
	}
	int gift = !strcmp(argv[1], "gift"), reuse = !strcmp(argv[1], "reuse");
	long units = atol(argv[2]);
	fcntl(1, F_SETPIPE_SZ, (int)UNIT);
	char *buf[2] = { aligned_alloc(4096, UNIT), aligned_alloc(4096, UNIT) };
	for (long i = 0; i < units; i++) {
		char *b = buf[reuse ? i & 1 : 0];
		if (gift && (b = mmap(NULL, UNIT, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
			return 1;
		memset(b, (int)i, UNIT);
		for (size_t done = 0; done < UNIT;) {
			struct iovec v = { b + done, UNIT - done };
			ssize_t w = gift || reuse ? vmsplice(1, &v, 1, gift ? SPLICE_F_GIFT : 0) : write(1, b + done, UNIT - done);
			if (w <= 0) {
				perror("vmsplice: stdout");
				return 1;
			}
			done += (size_t)w;
		}
		if (gift)
			munmap(b, UNIT);
	}
	return 0;
}
