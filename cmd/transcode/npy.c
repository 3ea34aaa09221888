/*
 * npy.c - the header of one NumPy .npy array (format version 1.0, as
 * numpy.lib.format describes it: "\x93NUMPY", major 1, minor 0, a
 * little-endian uint16 header length, then a Python dict literal padded
 * with spaces and ended by '\n' so that the data starts on a multiple of 64
 * bytes).
 */
#include <stdio.h>
#include <string.h>
#include "transcode.h"

int tc_npy_header(char *buf, size_t len, const char *descr, const int64_t *shape, int ndim)
{
	char dict[256];
	int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
	for (int i = 0; i < ndim && n > 0 && (size_t)n < sizeof dict; i++)
		n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld%s", (long long)shape[i],
			      ndim == 1 ? "," : i + 1 < ndim ? ", " : "");
	if (n <= 0 || (size_t)n + 8 >= sizeof dict)
		return -1;
	n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
	size_t total = 10 + (size_t)n + 1;
	size_t padded = (total + 63) / 64 * 64;
	if (padded > len || padded - 10 > 65535)
		return -1;
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (char)((padded - 10) & 0xff);
	buf[9] = (char)((padded - 10) >> 8);
	memcpy(buf + 10, dict, (size_t)n);
	memset(buf + 10 + n, ' ', padded - total);
	buf[padded - 1] = '\n';
	return (int)padded;
}
