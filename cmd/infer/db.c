/*
 * db.c - --decode db: the boxes of text in a DB (Differentiable
 * Binarization, Liao et al. 2020) detector's probability map, as
 * PaddleOCR's DBPostProcess finds them with its defaults (score_mode
 * "fast"), each box axis-aligned: the map thresholded, its 8-connected
 * components (Leptonica's pixConnCompBB), a component kept when its
 * rectangle's sides are at least 3 pixels and its mean probability at
 * least box_thresh, then grown on every side by area * unclip / perimeter
 * (what PaddleOCR's polygon offset does to a rectangle), kept when its
 * sides are at least 5, and scaled to the image. Leptonica (and the image
 * libraries it links) is loaded with dlopen when --decode db is asked for.
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "infer.h"

#ifdef INFER_DB
#include <leptonica/allheaders.h>

/* The Leptonica functions db.c calls, resolved once (lept_load). */
static struct {
	__typeof__(pixCreate) *pix_create;
	__typeof__(pixDestroy) *pix_destroy;
	__typeof__(pixGetData) *pix_get_data;
	__typeof__(pixGetWpl) *pix_get_wpl;
	__typeof__(pixConnCompBB) *conn_comp_bb;
	__typeof__(boxaGetCount) *boxa_count;
	__typeof__(boxaGetBoxGeometry) *boxa_geometry;
	__typeof__(boxaDestroy) *boxa_destroy;
	__typeof__(getLeptonicaVersion) *version;
	__typeof__(lept_free) *free;
} lept;

static pthread_once_t lept_once = PTHREAD_ONCE_INIT;
static int lept_rc = ACCEL_ENOTSUP;
static char lept_why[320];

static void lept_load(void)
{
	char why[256];
	void *h = accel_dlopen(INFER_LEPT_SO, why, sizeof why);
	if (!h) {
		snprintf(lept_why, sizeof lept_why, "Leptonica: %s", why);
		return;
	}
	const char *missing = NULL;
#define SYM(field, name) (missing ? 0 : (*(void **)&lept.field = dlsym(h, name)) ? 1 : ((missing = name), 0))
	SYM(pix_create, "pixCreate");
	SYM(pix_destroy, "pixDestroy");
	SYM(pix_get_data, "pixGetData");
	SYM(pix_get_wpl, "pixGetWpl");
	SYM(conn_comp_bb, "pixConnCompBB");
	SYM(boxa_count, "boxaGetCount");
	SYM(boxa_geometry, "boxaGetBoxGeometry");
	SYM(boxa_destroy, "boxaDestroy");
	SYM(version, "getLeptonicaVersion");
	SYM(free, "lept_free");
#undef SYM
	if (missing) {
		snprintf(lept_why, sizeof lept_why, "%s lacks %s, which accel-infer calls", INFER_LEPT_SO, missing);
		dlclose(h);
		return;
	}
	lept_rc = 0;
}

int db_ready(char *err, size_t len)
{
	pthread_once(&lept_once, lept_load);
	if (lept_rc)
		snprintf(err, len, "%s", lept_why);
	return lept_rc;
}

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
	char why[8];
	if (db_ready(why, sizeof why))
		return ACCEL_ENOTSUP;
	if (w < 1 || h < 1)
		return 0;
	src_w = src_w > 0 ? src_w : w;
	src_h = src_h > 0 ? src_h : h;
	PIX *pix = lept.pix_create(w, h, 1);
	if (!pix)
		return ACCEL_ENOMEM;
	l_uint32 *data = lept.pix_get_data(pix);
	int wpl = lept.pix_get_wpl(pix);
	for (int y = 0; y < h; y++) {
		l_uint32 *row = data + (size_t)y * wpl;
		for (int x = 0; x < w; x++)
			if (p[(size_t)y * w + x] > o->thresh)
				SET_DATA_BIT(row, x);
	}
	BOXA *found = lept.conn_comp_bb(pix, 8);
	lept.pix_destroy(&pix);
	if (!found)
		return ACCEL_ENOMEM;
	int n = lept.boxa_count(found);
	n = n > DB_MAX_BOXES ? DB_MAX_BOXES : n;
	struct db_box *v = malloc(((size_t)n + 1) * sizeof *v);
	if (!v) {
		lept.boxa_destroy(&found);
		return ACCEL_ENOMEM;
	}
	int kept = 0;
	for (int i = 0; i < n; i++) {
		l_int32 bx, by, bw, bh;
		if (lept.boxa_geometry(found, i, &bx, &by, &bw, &bh))
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
	lept.boxa_destroy(&found);
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
	char why[320];
	if (db_ready(why, sizeof why)) {
		snprintf(buf, len, "leptonica (%s)\n", why);
		return;
	}
	/* "leptonica-1.82.0" */
	char *v = lept.version();
	const char *dash = v ? strchr(v, '-') : NULL;
	snprintf(buf, len, "leptonica %s\n", dash ? dash + 1 : "?");
	lept.free(v);
}
#else
int db_ready(char *err, size_t len)
{
	snprintf(err, len, "this accel-infer was built without Leptonica (libleptonica-dev)");
	return ACCEL_ENOTSUP;
}

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
