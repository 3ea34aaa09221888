/*
 * chain.c - the host's part of the chain (vkfft.h): its sizes, and per unit
 * the kept frames and the bytes that go up. Built into each companion.
 */
#include <stdlib.h>
#include <string.h>
#include "vkfft.h"

void vkfft_chain_sizes(struct vkfft_chain *ch, const struct accel_fft *f, int host_f64)
{
	memset(ch, 0, sizeof *ch);
	ch->type = f->type;
	/* Big-endian doubles are always converted here. */
	ch->host_f64 = (host_f64 && (f->type == ACCEL_SAMPLE_CF64 || f->type == ACCEL_SAMPLE_F64)) ||
		       f->type == ACCEL_SAMPLE_CF64_BE || f->type == ACCEL_SAMPLE_F64_BE;
	ch->f64_be = f->type == ACCEL_SAMPLE_CF64_BE || f->type == ACCEL_SAMPLE_F64_BE;
	if (ch->host_f64)
		ch->type = accel_sample_is_complex(f->type) ? ACCEL_SAMPLE_CF32 : ACCEL_SAMPLE_F32;
	ch->sample_bytes = accel_sample_bytes(ch->type);
	ch->frames = f->unit_frames;
	ch->batch = accel_fft_kept_frames(f, 0, f->unit_frames);
	ch->rows = accel_fft_rows(f, ch->batch);
	ch->vals = f->out == ACCEL_FFT_COMPLEX ? 2 * f->bins : f->bins;
	size_t span = (ch->frames - 1) * f->hop + f->n;
	ch->in_bytes = (span * ch->sample_bytes + 3) & ~(size_t)3;
	ch->rot = f->shift ? f->bins - f->bins / 2 : 0;
	ch->scale = (float)f->scale;
	ch->scale2 = (float)(f->scale * f->scale);
}

int vkfft_chain_init(struct vkfft_chain *ch, const struct accel_fft *f, int host_f64)
{
	vkfft_chain_sizes(ch, f, host_f64);
	ch->idx = malloc(ch->frames * sizeof *ch->idx);
	ch->stage = ch->host_f64 ? malloc(ch->in_bytes) : NULL;
	if (!ch->idx || (ch->host_f64 && !ch->stage)) {
		vkfft_chain_free(ch);
		return ACCEL_ENOMEM;
	}
	return 0;
}

void vkfft_chain_free(struct vkfft_chain *ch)
{
	free(ch->idx);
	free(ch->stage);
	ch->idx = NULL;
	ch->stage = NULL;
}

int vkfft_shape_init(struct vkfft_shape *s, const struct accel_fft *f, int host_f64)
{
	memset(s, 0, sizeof *s);
	vkfft_chain_sizes(&s->ch, f, host_f64);
	s->n = f->n;
	s->hop = f->hop;
	s->bins = f->bins;
	s->average = f->average;
	s->out = f->out;
	s->db_offset = f->db_offset;
	if (!(s->win = malloc(f->n * sizeof *s->win)))
		return ACCEL_ENOMEM;
	memcpy(s->win, f->win, f->n * sizeof *s->win);
	return 0;
}

int vkfft_shape_equal(const struct vkfft_shape *a, const struct vkfft_shape *b)
{
	const struct vkfft_chain *x = &a->ch, *y = &b->ch;
	/* Floats by their bits: -0 is not 0, a NaN equals itself. */
	return x->type == y->type && x->sample_bytes == y->sample_bytes && x->host_f64 == y->host_f64 &&
	       x->f64_be == y->f64_be && x->frames == y->frames && x->batch == y->batch && x->rows == y->rows &&
	       x->vals == y->vals && x->in_bytes == y->in_bytes && x->rot == y->rot &&
	       !memcmp(&x->scale, &y->scale, sizeof x->scale) && !memcmp(&x->scale2, &y->scale2, sizeof x->scale2) &&
	       a->n == b->n && a->hop == b->hop && a->bins == b->bins && a->average == b->average &&
	       a->out == b->out && !memcmp(&a->db_offset, &b->db_offset, sizeof a->db_offset) &&
	       !memcmp(a->win, b->win, a->n * sizeof *a->win);
}

void vkfft_shape_free(struct vkfft_shape *s)
{
	free(s->win);
	s->win = NULL;
}

size_t vkfft_chain_unit(struct vkfft_chain *ch, const struct accel_fft *f, const struct accel_unit *u,
			const void **raw, size_t *bytes, size_t *avail)
{
	size_t frames = accel_fft_unit_frames(f, u->in.len);
	if (frames > ch->frames)
		frames = ch->frames;
	size_t kept = accel_fft_kept_index(f, u->seq, frames, ch->idx);
	size_t samples = u->in.len / f->sample_bytes;
	size_t max = ch->in_bytes / ch->sample_bytes;
	if (samples > max)
		samples = max;
	*avail = samples;
	*bytes = samples * ch->sample_bytes;
	*raw = u->in.data;
	if (ch->host_f64) {
		/* Doubles to floats: a value per 8 bytes. */
		size_t vals = *bytes / 4;
		for (size_t i = 0; i < vals; i++) {
			uint8_t b[8];
			double d;
			for (int k = 0; k < 8; k++)
				b[k] = u->in.data[8 * i + (ch->f64_be ? 7 - k : k)];
			memcpy(&d, b, 8);
			ch->stage[i] = (float)d;
		}
		*raw = ch->stage;
	}
	return kept;
}
