/*
 * test_fft.c - the FFT operation module (libcore/ops/fft.c) and the WAV header
 * reader (libcore/ops/wav.c): sample types, windows, frame and row counts,
 * decimation, what accel_fft_emit makes of transformed frames (scale,
 * power, dB, averaging, shift, text), and WAV headers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>
#include <accel/ops/fft.h>
#include "core.h"

static void job(struct accel_fft *f, size_t n)
{
	memset(f, 0, sizeof *f);
	f->n = n;
	f->type = ACCEL_SAMPLE_CF32;
}

static void sample_types(void **state)
{
	assert_int_equal(accel_sample_parse("cf32"), ACCEL_SAMPLE_CF32);
	assert_int_equal(accel_sample_parse("cu8"), ACCEL_SAMPLE_CU8);
	assert_int_equal(accel_sample_parse("f64"), ACCEL_SAMPLE_F64);
	assert_int_equal(accel_sample_parse("cf16"), ACCEL_EINVAL);
	assert_int_equal(accel_sample_parse(NULL), ACCEL_EINVAL);
	assert_int_equal(accel_sample_bytes(ACCEL_SAMPLE_CF64), 16);
	assert_int_equal(accel_sample_bytes(ACCEL_SAMPLE_CI8), 2);
	assert_int_equal(accel_sample_bytes(ACCEL_SAMPLE_U8), 1);
	assert_true(accel_sample_is_complex(ACCEL_SAMPLE_CI16));
	assert_false(accel_sample_is_complex(ACCEL_SAMPLE_I16));
	assert_string_equal(accel_sample_name(ACCEL_SAMPLE_CI8), "ci8");
	char names[256];
	accel_sample_names(" ", names, sizeof names);
	assert_string_equal(names, "cf32 ci16 ci8 cu8 f32 i16 u8 cf64 f64 i8 ci32 i32 ci24 i24 cf32_be ci16_be f32_be "
			    "i16_be cf64_be f64_be ci32_be i32_be");
	/* SigMF's spellings: _le, _be, the r of real types; none for bytes. */
	assert_int_equal(accel_sample_parse("cf32_le"), ACCEL_SAMPLE_CF32);
	assert_int_equal(accel_sample_parse("cf32_be"), ACCEL_SAMPLE_CF32_BE);
	assert_int_equal(accel_sample_parse("ci16_be"), ACCEL_SAMPLE_CI16_BE);
	assert_int_equal(accel_sample_parse("rf32_le"), ACCEL_SAMPLE_F32);
	assert_int_equal(accel_sample_parse("ri32_be"), ACCEL_SAMPLE_I32_BE);
	assert_int_equal(accel_sample_parse("rf64"), ACCEL_SAMPLE_F64);
	assert_int_equal(accel_sample_parse("ru8"), ACCEL_SAMPLE_U8);
	assert_int_equal(accel_sample_parse("ri8"), ACCEL_SAMPLE_I8);
	assert_int_equal(accel_sample_parse("i24"), ACCEL_SAMPLE_I24);
	assert_int_equal(accel_sample_parse("i24_le"), ACCEL_SAMPLE_I24);
	assert_int_equal(accel_sample_parse("cu8_le"), ACCEL_ENOTSUP);
	assert_int_equal(accel_sample_parse("ri8_be"), ACCEL_ENOTSUP);
	assert_int_equal(accel_sample_parse("i24_be"), ACCEL_EINVAL);
	assert_int_equal(accel_sample_parse("rcf32"), ACCEL_EINVAL);
	assert_int_equal(accel_sample_parse("cf32_be_le"), ACCEL_EINVAL);
	assert_int_equal(accel_sample_parse("_le"), ACCEL_EINVAL);
	assert_int_equal(accel_sample_parse(""), ACCEL_EINVAL);
	assert_int_equal(accel_sample_parse("cf32_be_and_more_than_16"), ACCEL_EINVAL);
	assert_int_equal(accel_sample_bytes(ACCEL_SAMPLE_CI24), 6);
	assert_int_equal(accel_sample_bytes(ACCEL_SAMPLE_I24), 3);
	assert_int_equal(accel_sample_bytes(ACCEL_SAMPLE_CF64_BE), 16);
	assert_true(accel_sample_is_complex(ACCEL_SAMPLE_CI32_BE));
	assert_false(accel_sample_is_complex(ACCEL_SAMPLE_I8));
}

static void setup_checks(void **state)
{
	struct accel_fft f;
	char err[200];
	job(&f, 1);
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), ACCEL_EINVAL);
	assert_string_equal(err, "the transform size must be at least 2");
	job(&f, 8);
	f.average = 2;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), ACCEL_EINVAL);
	job(&f, 8);
	f.type = ACCEL_SAMPLE_F32;
	f.shift = 1;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), ACCEL_EINVAL);
	job(&f, 9);
	f.type = ACCEL_SAMPLE_F32;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	assert_true(f.r2c);
	assert_int_equal(f.bins, 5);
	assert_string_equal(accel_fft_op_name(&f), "fft.r2c");
	assert_int_equal(f.hop, 9);
	accel_fft_free(&f);
	job(&f, 9);
	f.type = ACCEL_SAMPLE_F32;
	f.inverse = 1;
	f.norm = ACCEL_NORM_BACKWARD;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	assert_false(f.r2c);
	assert_int_equal(f.bins, 9);
	assert_true(fabs(f.scale - 1.0 / 9) < 1e-15);
	accel_fft_free(&f);
	/* The inverse real transform: frames of N/2+1 bins, rows of N reals. */
	job(&f, 9);
	f.inverse = 1;
	f.real = 1;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	assert_true(f.c2r && !f.r2c);
	assert_int_equal(f.frame, 5);
	assert_int_equal(f.hop, 5);
	assert_int_equal(f.bins, 9);
	assert_int_equal(accel_fft_row_values(&f), 9);
	assert_string_equal(accel_fft_op_name(&f), "fft.c2r");
	assert_int_equal(accel_fft_unit_frames(&f, 5 * 8 * 3 + 8), 3);
	assert_int_equal(accel_fft_stream_rows(&f, 5 * 8 * 3 + 8), 3);
	/* Frame 1 of two is the second five cf32 bins. */
	float half[20], row[10];
	for (int i = 0; i < 20; i++)
		half[i] = (float)i;
	assert_int_equal(accel_fft_load(&f, 0, (const uint8_t *)half, sizeof half, 2, 1, 1, row), 1);
	assert_true(row[0] == 10 && row[1] == 11 && row[9] == 19);
	struct accel_buf b = { 0 };
	const float spec[9] = { 9, -9, 18, 0, 0, 0, 0, 0, 4.5f };
	f.format = ACCEL_FFT_TEXT;
	assert_int_equal(accel_fft_emit(&f, spec, 1, &b), 0);
	assert_int_equal(b.len, strlen("1,-1,2,0,0,0,0,0,0.5\n"));
	assert_memory_equal(b.data, "1,-1,2,0,0,0,0,0,0.5\n", b.len);
	accel_buf_free(&b);
	accel_fft_free(&f);
	job(&f, 9);
	f.real = 1;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), ACCEL_EINVAL);
	assert_string_equal(err, "--real needs --inverse (a forward transform of real samples is -t f32)");
	job(&f, 9);
	f.inverse = f.real = 1;
	f.hop = 9;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), ACCEL_EINVAL);
	job(&f, 9);
	f.inverse = f.real = 1;
	f.type = ACCEL_SAMPLE_I16;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), ACCEL_EINVAL);
	/* Units hold whole rows. */
	job(&f, 1024);
	f.out = ACCEL_FFT_POWER;
	f.average = 3;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	assert_int_equal(f.unit_frames % 3, 0);
	assert_true(f.unit_frames * 1024 * 8 <= (16u << 20));
	accel_fft_free(&f);
}

/* --average K beyond what a unit holds splits rows across units: the
 * units, and the memory the job needs, stay those of a bounded unit
 * whatever K is. The input's size and the memory limit are checked
 * before the window (N floats) is made. */
static void split_and_limits(void **state)
{
	struct accel_fft f;
	char err[200];
	job(&f, 1024);
	f.out = ACCEL_FFT_DB;
	f.average = 4096;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	assert_true(f.split);
	size_t fu = f.unit_frames;
	uint64_t mem = f.memory;
	assert_true(fu < 4096 && fu * 1024 * 8 <= (16u << 20));
	assert_true(mem < (64u << 20));
	accel_fft_free(&f);
	job(&f, 1024);
	f.out = ACCEL_FFT_DB;
	f.average = 1 << 20;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	assert_true(f.split);
	assert_int_equal(f.unit_frames, fu);
	assert_int_equal(f.memory, mem);
	accel_fft_free(&f);
	/* A row that fits is not split: units of whole rows. */
	job(&f, 1024);
	f.out = ACCEL_FFT_DB;
	f.average = 100;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	assert_false(f.split);
	assert_int_equal(f.unit_frames % 100, 0);
	accel_fft_free(&f);
	/* A unit size given below K splits. */
	job(&f, 16);
	f.out = ACCEL_FFT_POWER;
	f.average = 10;
	f.unit_frames = 4;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	assert_true(f.split);
	assert_int_equal(f.unit_frames, 4);
	accel_fft_free(&f);
	/* Ten samples hold no frame of 64: without --pad, no window made. */
	job(&f, 64);
	f.input_bytes = 80;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), ACCEL_EDATA);
	assert_string_equal(err, "10 samples, fewer than one frame of N = 64: no row to write (--pad zero-pads them to one frame, as numpy.fft.fft(x, n=64) does)");
	assert_null(f.win);
	f.pad = 1;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	accel_fft_free(&f);
	/* N = 2^30 over 1 GiB: refused before its 4 GiB window. */
	job(&f, (size_t)1 << 30);
	f.pad = 1;
	f.memory_limit = (uint64_t)1 << 30;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), ACCEL_ENOMEM);
	assert_string_equal(err, "N = 1073741824 needs 44.0 GiB (the window, one unit's samples and rows, an engine's transform buffers), more than the limit of 1.0 GiB");
	assert_null(f.win);
	/* Units shrink to fit a limit. */
	job(&f, 1024);
	f.memory_limit = 2u << 20;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	assert_true(f.memory <= (2u << 20));
	assert_true(f.unit_frames >= 1 && f.unit_frames < 512);
	accel_fft_free(&f);
}

static void windows(void **state)
{
	struct accel_fft f;
	char err[200];
	job(&f, 8);
	assert_int_equal(accel_fft_window_parse(&f, "hann"), 0);
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	/* Periodic: 0 at the start, 1 at N/2, symmetric around it. */
	assert_true(fabsf(f.win[0]) < 1e-7);
	assert_true(fabsf(f.win[4] - 1) < 1e-7);
	assert_true(fabsf(f.win[1] - f.win[7]) < 1e-7);
	accel_fft_free(&f);
	job(&f, 16);
	assert_int_equal(accel_fft_window_parse(&f, "kaiser:0"), 0);
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	for (int i = 0; i < 16; i++)
		assert_true(fabsf(f.win[i] - 1) < 1e-7);
	accel_fft_free(&f);
	job(&f, 16);
	assert_int_equal(accel_fft_window_parse(&f, "kaiser:8.6"), 0);
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	assert_true(fabsf(f.win[8] - 1) < 1e-6);
	assert_true(fabs(f.win[0] - 0.0013325140) < 1e-7);  /* 1 / I0(8.6) */
	accel_fft_free(&f);
	assert_int_equal(accel_fft_window_parse(&f, "kaiser:"), ACCEL_EINVAL);
	assert_int_equal(accel_fft_window_parse(&f, "kaiser:-2"), ACCEL_EINVAL);
	assert_int_equal(accel_fft_window_parse(&f, "kaiser"), ACCEL_EINVAL);
	assert_int_equal(accel_fft_window_parse(&f, "flattop"), 0);
	assert_int_equal(f.window, ACCEL_WINDOW_FLATTOP);
}

static void frames_and_rows(void **state)
{
	struct accel_fft f;
	char err[200];
	job(&f, 100);
	f.hop = 75;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	assert_int_equal(accel_fft_unit_frames(&f, 99 * 8), 0);
	assert_int_equal(accel_fft_unit_frames(&f, 100 * 8), 1);
	assert_int_equal(accel_fft_unit_frames(&f, 999 * 8 + 7), 12);
	assert_int_equal(accel_fft_stream_rows(&f, 999 * 8), 12);
	assert_int_equal(accel_fft_stream_rows(&f, -1), -1);
	/* --pad: frames until every sample is in one. */
	f.pad = 1;
	assert_int_equal(accel_fft_stream_rows(&f, 999 * 8), 13);
	assert_int_equal(accel_fft_stream_rows(&f, 1), 1);
	/* no sample: one frame of zeros, as numpy.fft.fft(x, n) pads an empty x */
	assert_int_equal(accel_fft_stream_rows(&f, 0), 1);
	assert_int_equal(accel_fft_stream_rows(&f, 100 * 8), 1);
	assert_int_equal(accel_fft_stream_rows(&f, 101 * 8), 2);
	accel_fft_free(&f);
	/* Gaps: a frame every 250 samples, 100 long. */
	job(&f, 100);
	f.hop = 250;
	f.pad = 1;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	assert_int_equal(accel_fft_stream_rows(&f, 250 * 8), 1);
	assert_int_equal(accel_fft_stream_rows(&f, 251 * 8), 2);
	accel_fft_free(&f);
	/* Average and decimate. */
	job(&f, 10);
	f.out = ACCEL_FFT_DB;
	f.average = 3;
	f.decimate = 4;
	f.unit_frames = 6;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	/* 20 frames: rows 0..6, written 0 and 4. */
	assert_int_equal(accel_fft_stream_rows(&f, 200 * 8), 2);
	/* Unit 0 holds rows 0 and 1: row 0 kept; unit 1 rows 2, 3: none;
	 * unit 2 rows 4 and 5: row 4. */
	assert_int_equal(accel_fft_kept_frames(&f, 0, 6), 3);
	assert_int_equal(accel_fft_kept_frames(&f, 1, 6), 0);
	assert_int_equal(accel_fft_kept_frames(&f, 2, 6), 3);
	assert_int_equal(accel_fft_kept_frames(&f, 2, 2), 2);
	/* The same frames by number, for device chains. */
	uint32_t idx[6];
	assert_int_equal(accel_fft_kept_index(&f, 0, 6, idx), 3);
	assert_true(idx[0] == 0 && idx[1] == 1 && idx[2] == 2);
	assert_int_equal(accel_fft_kept_index(&f, 1, 6, idx), 0);
	/* Unit 3 holds rows 6 and 7: none kept; unit 4 rows 8, 9: row 8. */
	assert_int_equal(accel_fft_kept_index(&f, 4, 5, idx), 3);
	assert_true(idx[0] == 0 && idx[2] == 2);
	f.decimate = 1;
	assert_int_equal(accel_fft_kept_index(&f, 7, 4, idx), 4);
	assert_true(idx[3] == 3);
	assert_int_equal(accel_fft_rows(&f, 4), 2);
	assert_int_equal(accel_fft_rows(&f, 6), 2);
	assert_int_equal(accel_fft_rows(&f, 0), 0);
	accel_fft_free(&f);
	/* Finished rows as binary and as text. */
	job(&f, 2);
	f.type = ACCEL_SAMPLE_F32;
	f.out = ACCEL_FFT_POWER;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	const float rows[4] = { 1, 0.5f, -2, 3 };
	struct accel_buf b = { 0 };
	assert_int_equal(accel_fft_put_rows(&f, rows, 2, &b), 0);
	assert_int_equal(b.len, sizeof rows);
	assert_memory_equal(b.data, rows, sizeof rows);
	b.len = 0;
	f.format = ACCEL_FFT_TEXT;
	assert_int_equal(accel_fft_put_rows(&f, rows, 2, &b), 0);
	assert_int_equal(b.len, strlen("1,0.5\n-2,3\n"));
	assert_memory_equal(b.data, "1,0.5\n-2,3\n", b.len);
	accel_buf_free(&b);
	accel_fft_free(&f);
}

static void load_types(void **state)
{
	struct accel_fft f;
	char err[200];
	float out[8];
	job(&f, 4);
	f.type = ACCEL_SAMPLE_CU8;
	f.full = 1;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	const uint8_t cu8[8] = { 128, 0, 255, 192, 64, 128, 0, 0 };
	assert_int_equal(accel_fft_load(&f, 0, cu8, 8, 1, 0, 1, out), 1);
	assert_true(out[0] == 0 && out[1] == -1 && out[2] == 127.0f / 128 && out[3] == 0.5f && out[4] == -0.5f);
	accel_fft_free(&f);
	job(&f, 2);
	f.type = ACCEL_SAMPLE_I16;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	const uint8_t i16[4] = { 0x00, 0x80, 0xff, 0x7f };
	assert_int_equal(accel_fft_load(&f, 0, i16, 4, 1, 0, 1, out), 1);
	assert_true(out[0] == -1 && out[1] == 32767.0f / 32768);
	accel_fft_free(&f);
	/* Big-endian, 24- and 32-bit integers: full scale is 2^15, 2^23, 2^31. */
	static const struct {
		enum accel_sample t;
		uint8_t raw[8];
		float v[2];
	} cases[] = {
		{ ACCEL_SAMPLE_I16_BE, { 0x80, 0x00, 0x7f, 0xff }, { -1, 32767.0f / 32768 } },
		{ ACCEL_SAMPLE_I24, { 0x00, 0x00, 0x80, 0xff, 0xff, 0x7f }, { -1, 8388607.0f / 8388608 } },
		{ ACCEL_SAMPLE_I24, { 0x01, 0x00, 0x00, 0xff, 0xff, 0xff }, { 0x1p-23f, -0x1p-23f } },
		{ ACCEL_SAMPLE_I32, { 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x40 }, { -1, 0.5f } },
		{ ACCEL_SAMPLE_I32_BE, { 0x80, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff }, { -1, -0x1p-31f } },
		{ ACCEL_SAMPLE_F32_BE, { 0x3f, 0x80, 0x00, 0x00, 0xc0, 0x20, 0x00, 0x00 }, { 1, -2.5f } },
		{ ACCEL_SAMPLE_I8, { 0x80, 0x7f }, { -1, 127.0f / 128 } },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		job(&f, 2);
		f.type = cases[i].t;
		f.full = 1;
		assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
		assert_int_equal(accel_fft_load(&f, 0, cases[i].raw, 2 * f.sample_bytes, 1, 0, 1, out), 1);
		assert_true(out[0] == cases[i].v[0] && out[1] == 0 && out[2] == cases[i].v[1] && out[3] == 0);
		accel_fft_free(&f);
	}
	/* Complex: I then Q, both scaled. */
	job(&f, 2);
	f.type = ACCEL_SAMPLE_CI24;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	const uint8_t ci24[12] = { 0, 0, 0x40, 0, 0, 0xc0, 0xff, 0xff, 0x7f, 0, 0, 0x80 };
	assert_int_equal(accel_fft_load(&f, 0, ci24, 12, 1, 0, 1, out), 1);
	assert_true(out[0] == 0.5f && out[1] == -0.5f && out[2] == 8388607.0f / 8388608 && out[3] == -1);
	accel_fft_free(&f);
	job(&f, 2);
	f.type = ACCEL_SAMPLE_CF64_BE;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	const uint8_t cf64be[32] = { 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0,
				     0x3f, 0xe0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	assert_int_equal(accel_fft_load(&f, 0, cf64be, 32, 1, 0, 1, out), 1);
	assert_true(out[0] == 1 && out[1] == -2 && out[2] == 0.5f && out[3] == 0);
	accel_fft_free(&f);
}

static void emit_modes(void **state)
{
	struct accel_fft f;
	char err[200];
	struct accel_buf b = { 0 };
	/* Two frames of 4 bins: (1,1) ... */
	const float spec[16] = { 1, 1, 2, 0, 0, 0, 0, 3, 3, 1, 0, 2, 0, 0, 1, 0 };
	job(&f, 4);
	f.out = ACCEL_FFT_POWER;
	f.average = 2;
	f.norm = ACCEL_NORM_FORWARD;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	assert_int_equal(accel_fft_emit(&f, spec, 2, &b), 0);
	assert_int_equal(b.len, 16);
	const float *v = (const float *)b.data;
	/* mean(2, 10) / 16, mean(4, 4) / 16, mean(0, 0), mean(9, 1) / 16 */
	assert_true(fabsf(v[0] - 6.0f / 16) < 1e-7 && fabsf(v[1] - 4.0f / 16) < 1e-7 && v[2] == 0 &&
		    fabsf(v[3] - 5.0f / 16) < 1e-7);
	accel_fft_free(&f);
	/* dB, shifted: bins 2, 3, 0, 1; the last row averages one frame. */
	b.len = 0;
	job(&f, 4);
	f.out = ACCEL_FFT_DB;
	f.shift = 1;
	f.db_offset = 1;
	f.average = 2;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	assert_int_equal(accel_fft_emit(&f, spec, 1, &b), 0);
	assert_int_equal(b.len, 16);
	v = (const float *)b.data;
	assert_true(isinf(v[0]) && v[0] < 0);
	assert_true(fabsf(v[1] - (float)(10 * log10(9.0) + 1)) < 1e-5);
	assert_true(fabsf(v[2] - (float)(10 * log10(2.0) + 1)) < 1e-5);
	accel_fft_free(&f);
	/* Complex text: re,im pairs, scaled by 1/sqrt(N). */
	b.len = 0;
	job(&f, 4);
	f.norm = ACCEL_NORM_ORTHO;
	f.format = ACCEL_FFT_TEXT;
	assert_int_equal(accel_fft_setup(&f, err, sizeof err), 0);
	assert_int_equal(accel_fft_emit(&f, spec, 1, &b), 0);
	assert_int_equal(b.len, strlen("0.5,0.5,1,0,0,0,0,1.5\n"));
	assert_memory_equal(b.data, "0.5,0.5,1,0,0,0,0,1.5\n", b.len);
	accel_fft_free(&f);
	accel_buf_free(&b);
}

static void wav_headers(void **state)
{
	/* sox -n -r 8000 -b 16 -c 1 x.wav, the first 44 bytes (data size 2). */
	static const uint8_t h[] = "RIFF\x26\0\0\0WAVEfmt \x10\0\0\0\x01\0\x01\0\x40\x1f\0\0\x80\x3e\0\0\x02\0\x10\0data\x02\0\0\0\x01\x02";
	struct accel_wav w;
	size_t need;
	char err[200];
	assert_int_equal(accel_wav_parse(h, sizeof h - 1, &w, &need, err, sizeof err), 1);
	assert_int_equal(w.type, ACCEL_SAMPLE_I16);
	assert_int_equal(w.rate, 8000);
	assert_int_equal(w.data_offset, 44);
	assert_int_equal(w.data_size, 2);
	assert_int_equal(accel_wav_parse(h, 30, &w, &need, err, sizeof err), ACCEL_ENOTSUP);
	assert_int_equal(need, 36);
	assert_int_equal(accel_wav_parse(h, 3, &w, &need, err, sizeof err), ACCEL_ENOTSUP);
	assert_int_equal(need, 12);
	/* RIFX is refused, not read as samples, once 12 bytes are there. */
	assert_int_equal(accel_wav_parse((const uint8_t *)"RIFX", 4, &w, &need, err, sizeof err), ACCEL_ENOTSUP);
	assert_int_equal(need, 12);
	assert_int_equal(accel_wav_parse((const uint8_t *)"RIFX\0\0\0\x26WAVE", 12, &w, &need, err, sizeof err), ACCEL_EDATA);
	assert_string_equal(err, "WAV header: RIFX (big-endian RIFF) is not supported (RIFF, RF64 and BW64 are)");
	assert_int_equal(accel_wav_parse((const uint8_t *)"\x01\x02", 2, &w, &need, err, sizeof err), 0);
	uint8_t bad[sizeof h];
	memcpy(bad, h, sizeof h);
	bad[34] = 12;  /* 12-bit */
	assert_int_equal(accel_wav_parse(bad, sizeof h - 1, &w, &need, err, sizeof err), ACCEL_EDATA);
	assert_string_equal(err, "WAV header: format 1 with 12-bit samples is not supported (8-, 16-, 24- or 32-bit PCM, 32- or 64-bit float)");
	/* 24- and 32-bit PCM, mono, stereo and 6 channels (block align 3,
	 * 6, 18; 4, 8, 24): a channel's sample type, never I/Q. */
	static const struct {
		unsigned ch, bits;
		enum accel_sample t;
	} pcm[] = {
		{ 1, 24, ACCEL_SAMPLE_I24 }, { 2, 24, ACCEL_SAMPLE_I24 }, { 6, 24, ACCEL_SAMPLE_I24 },
		{ 1, 32, ACCEL_SAMPLE_I32 }, { 2, 32, ACCEL_SAMPLE_I32 }, { 6, 32, ACCEL_SAMPLE_I32 },
	};
	for (size_t i = 0; i < sizeof pcm / sizeof pcm[0]; i++) {
		memcpy(bad, h, sizeof h);
		bad[22] = (uint8_t)pcm[i].ch;
		bad[32] = (uint8_t)(pcm[i].ch * pcm[i].bits / 8);
		bad[34] = (uint8_t)pcm[i].bits;
		assert_int_equal(accel_wav_parse(bad, sizeof h - 1, &w, &need, err, sizeof err), 1);
		assert_int_equal(w.type, pcm[i].t);
		assert_int_equal(w.bits, pcm[i].bits);
		assert_int_equal(w.channels, pcm[i].ch);
	}
	/* sox -b 24: WAVE_FORMAT_EXTENSIBLE, sub-format PCM, 24 valid bits. */
	static const uint8_t ext[] = "RIFF\x38\x01\0\0WAVEfmt \x28\0\0\0\xfe\xff\x01\0\x40\x1f\0\0\xc0\x5d\0\0\x03\0\x18\0"
				     "\x16\0\x18\0\x04\0\0\0\x01\0\0\0\0\0\x10\0\x80\0\0\xaa\0\x38\x9b\x71"
				     "data\x06\0\0\0\x01\x02\x03\x04\x05\x06";
	assert_int_equal(accel_wav_parse(ext, sizeof ext - 1, &w, &need, err, sizeof err), 1);
	assert_int_equal(w.type, ACCEL_SAMPLE_I24);
	assert_int_equal(w.data_offset, 68);
	assert_int_equal(w.data_size, 6);
	memcpy(bad, h, sizeof h);
	memset(bad + 40, 0xff, 4);  /* data size 0xFFFFFFFF: to the end */
	assert_int_equal(accel_wav_parse(bad, sizeof h - 1, &w, &need, err, sizeof err), 1);
	assert_int_equal(w.data_size, -1);
	memcpy(bad, h, sizeof h);
	memcpy(bad + 12, "junk", 4);  /* fmt skipped as another chunk: data first */
	assert_int_equal(accel_wav_parse(bad, sizeof h - 1, &w, &need, err, sizeof err), ACCEL_EDATA);
	assert_string_equal(err, "WAV header: data chunk before the fmt chunk");
	/* RF64: ds64 (28 bytes: RIFF size, data size 2^32 + 2, sample
	 * count, table length 0), then h's chunks with the data size
	 * 0xFFFFFFFF; the data chunk's own size when it is not. */
	uint8_t rf[sizeof h + 36];
	memcpy(rf, "RF64\xff\xff\xff\xffWAVEds64\x1c\0\0\0", 20);
	memset(rf + 20, 0, 28);
	rf[28] = 2;
	rf[32] = 1;
	memcpy(rf + 48, h + 12, sizeof h - 12);
	memset(rf + 76, 0xff, 4);
	assert_int_equal(accel_wav_parse(rf, sizeof rf - 1, &w, &need, err, sizeof err), 1);
	assert_string_equal(w.form, "RF64");
	assert_int_equal(w.data_offset, 80);
	assert_int_equal(w.data_size, ((int64_t)1 << 32) + 2);
	assert_int_equal(accel_wav_parse(rf, 40, &w, &need, err, sizeof err), ACCEL_ENOTSUP);
	assert_int_equal(need, 48);
	memcpy(rf + 76, "\x02\0\0\0", 4);
	assert_int_equal(accel_wav_parse(rf, sizeof rf - 1, &w, &need, err, sizeof err), 1);
	assert_int_equal(w.data_size, 2);
	memcpy(rf + 12, "junk", 4);
	assert_int_equal(accel_wav_parse(rf, sizeof rf - 1, &w, &need, err, sizeof err), ACCEL_EDATA);
	assert_string_equal(err, "WAV header: an RF64 or BW64 file without a ds64 chunk first");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sample_types),
		cmocka_unit_test(setup_checks),
		cmocka_unit_test(windows),
		cmocka_unit_test(frames_and_rows),
		cmocka_unit_test(load_types),
		cmocka_unit_test(emit_modes),
		cmocka_unit_test(wav_headers),
		cmocka_unit_test(split_and_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
