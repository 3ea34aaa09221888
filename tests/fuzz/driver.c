/*
 * driver.c - replays fuzz inputs without libFuzzer: each FILE operand, or
 * every file in each folder operand, goes once through the target's
 * LLVMFuzzerTestOneInput. `make check` runs it over tests/fuzz/corpus.
 * Prints "N inputs"; a failing input aborts (the target's message names it).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "fuzz.h"

static int replay(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 1 << 16, len = 0, r;
	uint8_t *buf = malloc(cap);
	while (buf && (r = fread(buf + len, 1, cap - len, f)) > 0) {
		len += r;
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	int err = ferror(f);
	fclose(f);
	if (!buf || err) {
		fprintf(stderr, "%s: cannot read\n", path);
		free(buf);
		return -1;
	}
	fprintf(stderr, "replay %s\n", path);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 1;
}

int main(int argc, char **argv)
{
	long n = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (replay(argv[i]) < 0)
				return 1;
			n++;
			continue;
		}
		struct dirent **names;
		int k = scandir(argv[i], &names, NULL, alphasort);
		if (k < 0) {
			perror(argv[i]);
			return 1;
		}
		for (int j = 0; j < k; j++) {
			char path[4096];
			if (names[j]->d_name[0] != '.') {
				snprintf(path, sizeof path, "%s/%s", argv[i], names[j]->d_name);
				if (replay(path) < 0)
					return 1;
				n++;
			}
			free(names[j]);
		}
		free(names);
	}
	printf("%ld inputs\n", n);
	return 0;
}
