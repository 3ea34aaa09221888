/*
 * plugin-manifest - write the plugin manifest of a folder to stdout: each
 * plugin (accel_NAME.so) loaded once to read its table (manifest.c says
 * the format). Run by `make` over $(B)/plugins; not installed.
 *
 * Usage: plugin-manifest DIR > DIR/plugins.manifest
 * Exit status: 0, 1 when DIR cannot be read or stdout written, 2 usage.
 */
#include <stdio.h>
#include "core.h"

int main(int argc, char **argv)
{
	char err[512] = "";
	if (argc != 2) {
		fprintf(stderr, "usage: plugin-manifest DIR\n");
		return 2;
	}
	if (core_manifest_write(stdout, argv[1], err, sizeof err) < 0 || fclose(stdout)) {
		fprintf(stderr, "plugin-manifest: %s\n", err[0] ? err : "cannot write stdout");
		return 1;
	}
	return 0;
}
