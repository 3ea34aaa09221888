/*
 * db.c - --decode db: the boxes of text in a DB (Differentiable
 * Binarization, Liao et al. 2020) detector's probability map, as
 * PaddleOCR's DBPostProcess finds them with its defaults (score_mode
 * "fast"), each box axis-aligned: the map thresholded, its 8-connected
 * components (Leptonica's pixConnCompBB), a component kept when its
 * rectangle's sides are at least 3 pixels and its mean probability at
 * least box_thresh, then grown on every side by area * unclip / perimeter
 * (what PaddleOCR's polygon offset does to a rectangle), kept when its
 * sides are at least 5, and scaled to the image.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "infer.h"

#ifdef INFER_DB
#include <leptonica/allheaders.h>

/* PaddleOCR's min_size and max_candidates. */
#define DB_MIN_SIZE 3
#define DB_MAX_BOXES 1000

static int by_position(const void *a, const void *b)
{
	const struct db_box *x = a, *y = b;
	if (x->box[1] != y->box[1])
		return x->box[1] < y->box[1] ? -1 : 1;
	return (x->box[0] > y->box[0]) - (x->box[0] < y->box[0]);
}

/* x scaled from a side of n to one of to, rounded and clipped. */
static int scale(double x, int n, int to)
{
	double v = round(x / n * to);
	return v < 0 ? 0 : v > to ? to : (int)v;
}

int db_boxes(const float *p, int w, int h, int src_w, int src_h, const struct db_opts *o, struct db_box **boxes)
{
	*boxes = NULL;
	if (w < 1 || h < 1)
		return 0;
	src_w = src_w > 0 ? src_w : w;
	src_h = src_h > 0 ? src_h : h;
	PIX *pix = pixCreate(w, h, 1);
	if (!pix)
		return ACCEL_ENOMEM;
	l_uint32 *data = pixGetData(pix);
	int wpl = pixGetWpl(pix);
	for (int y = 0; y < h; y++) {
		l_uint32 *row = data + (size_t)y * wpl;
		for (int x = 0; x < w; x++)
			if (p[(size_t)y * w + x] > o->thresh)
				SET_DATA_BIT(row, x);
	}
	BOXA *found = pixConnCompBB(pix, 8);
	pixDestroy(&pix);
	if (!found)
		return ACCEL_ENOMEM;
	int n = boxaGetCount(found);
	n = n > DB_MAX_BOXES ? DB_MAX_BOXES : n;
	struct db_box *v = malloc(((size_t)n + 1) * sizeof *v);
	if (!v) {
		boxaDestroy(&found);
		return ACCEL_ENOMEM;
	}
	int kept = 0;
	for (int i = 0; i < n; i++) {
		l_int32 bx, by, bw, bh;
		if (boxaGetBoxGeometry(found, i, &bx, &by, &bw, &bh))
			continue;
		/* Sides from pixel centre to centre, as for the contour's
		 * points in PaddleOCR. */
		double rw = bw - 1, rh = bh - 1;
		if (rw < DB_MIN_SIZE || rh < DB_MIN_SIZE)
			continue;
		double sum = 0;
		for (int y = by; y < by + bh; y++)
			for (int x = bx; x < bx + bw; x++)
				sum += p[(size_t)y * w + x];
		double score = sum / ((double)bw * bh);
		if (score < o->box_thresh)
			continue;
		double d = rw * rh * o->unclip / (2 * (rw + rh));
		if (rw + 2 * d < DB_MIN_SIZE + 2 || rh + 2 * d < DB_MIN_SIZE + 2)
			continue;
		struct db_box *b = &v[kept++];
		b->box[0] = scale(bx - d, w, src_w);
		b->box[1] = scale(by - d, h, src_h);
		b->box[2] = scale(bx + rw + d, w, src_w);
		b->box[3] = scale(by + rh + d, h, src_h);
		b->score = score;
		if (b->box[0] >= b->box[2] || b->box[1] >= b->box[3])
			kept--;
	}
	boxaDestroy(&found);
	qsort(v, (size_t)kept, sizeof *v, by_position);
	/* Boxes whose tops lie within 10 pixels are one line, left to right
	 * (PaddleOCR's sorted_boxes). */
	for (int i = 0; i + 1 < kept; i++)
		for (int j = i; j >= 0 && abs(v[j + 1].box[1] - v[j].box[1]) < 10 && v[j + 1].box[0] < v[j].box[0]; j--) {
			struct db_box t = v[j];
			v[j] = v[j + 1];
			v[j + 1] = t;
		}
	*boxes = v;
	return kept;
}
void db_versions(char *buf, size_t len)
{
	/* "leptonica-1.82.0" */
	char *v = getLeptonicaVersion();
	const char *dash = v ? strchr(v, '-') : NULL;
	snprintf(buf, len, "leptonica %s\n", dash ? dash + 1 : "?");
	lept_free(v);
}
#else
void db_versions(char *buf, size_t len)
{
	if (len)
		buf[0] = 0;
}

int db_boxes(const float *p, int w, int h, int src_w, int src_h, const struct db_opts *o, struct db_box **boxes)
{
	*boxes = NULL;
	return ACCEL_ENOTSUP;
}
#endif
