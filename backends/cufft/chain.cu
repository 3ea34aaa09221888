/*
 * chain.cu - accel-fft's chain on a CUDA device, around cuFFT: chain_load
 * turns a unit's raw samples into windowed complex frames, cuFFT
 * transforms them in place, chain_reduce turns the spectra into finished
 * output rows (scaling, magnitude, power or dB, averaging, shift), so that
 * only raw samples go up and rows come down. The formulas are those of
 * accel.h ("For engines that run the whole chain on their device") and of
 * accel_fft_load.
 *
 * Compiled at open by NVRTC (the plugin embeds this file as a string,
 * made by backends/cufft/backend.mk). The same file is also valid C: the
 * unit test tests/unit/test_cufft.c compiles it for the host, where a
 * kernel is one thread running the whole grid-stride loop, and checks it
 * against libcore's host chain.
 */
#ifdef __CUDACC__
#define CHAIN_KERNEL extern "C" __global__ void
#define CHAIN_FN static __device__ __forceinline__
#define CHAIN_FIRST ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x)
#define CHAIN_STRIDE ((unsigned long long)gridDim.x * blockDim.x)
#else
#include <math.h>
typedef struct { float x, y; } float2;
static inline float2 make_float2(float x, float y)
{
	float2 v = { x, y };
	return v;
}
#include <string.h>
#define CHAIN_KERNEL static void
#define CHAIN_FN static inline
#define CHAIN_FIRST 0ULL
#define CHAIN_STRIDE 1ULL
#endif

/* Sample types: the values of enum accel_sample (accel.h). */
#define CHAIN_CF32 0
#define CHAIN_CI16 1
#define CHAIN_CI8 2
#define CHAIN_CU8 3
#define CHAIN_F32 4
#define CHAIN_I16 5
#define CHAIN_U8 6
#define CHAIN_CF64 7
#define CHAIN_F64 8
#define CHAIN_I8 9
#define CHAIN_CI32 10
#define CHAIN_I32 11
#define CHAIN_CI24 12
#define CHAIN_I24 13
#define CHAIN_CF32_BE 14
#define CHAIN_CI16_BE 15
#define CHAIN_F32_BE 16
#define CHAIN_I16_BE 17
#define CHAIN_CF64_BE 18
#define CHAIN_F64_BE 19
#define CHAIN_CI32_BE 20
#define CHAIN_I32_BE 21

/* The bytes of one value at p, `nb` of them (1 to 8), little- or
 * big-endian, as an unsigned integer: for the packed 24-bit types and the
 * big-endian ones, whose values need not be aligned. */
CHAIN_FN unsigned long long chain_bytes(const unsigned char *p, int nb, int be)
{
	unsigned long long u = 0;
	for (int b = 0; b < nb; b++)
		u |= (unsigned long long)p[be ? nb - 1 - b : b] << (8 * b);
	return u;
}

/* A signed integer of nb bytes, scaled to [-1, 1) (divided by 2^(8 nb - 1)). */
CHAIN_FN float chain_int(const unsigned char *p, int nb, int be)
{
	int sh = 64 - 8 * nb;
	long long v = (long long)(chain_bytes(p, nb, be) << sh) >> sh;
	return (float)v * (1.0f / (float)(1ULL << (8 * nb - 1)));
}

/* An IEEE 754 binary32 (nb 4) or binary64 (nb 8) value, as float. */
CHAIN_FN float chain_real(const unsigned char *p, int nb, int be)
{
	unsigned long long u = chain_bytes(p, nb, be);
#ifdef __CUDACC__
	return nb == 4 ? __int_as_float((int)(unsigned int)u) : (float)__longlong_as_double((long long)u);
#else
	if (nb == 4) {
		unsigned int w = (unsigned int)u;
		float f;
		memcpy(&f, &w, 4);
		return f;
	}
	double d;
	memcpy(&d, &u, 8);
	return (float)d;
#endif
}

/*
 * The types read byte by byte: bytes per part (nb), complex or not,
 * integer or floating point, byte order. Returns 0 for the types read as
 * typed values in chain_load's switch.
 */
CHAIN_FN int chain_layout(int type, int *nb, int *cplx, int *is_int, int *be)
{
	*cplx = 0;
	*is_int = 1;
	*be = 0;
	switch (type) {
	case CHAIN_I8: *nb = 1; break;
	case CHAIN_CI32: *nb = 4; *cplx = 1; break;
	case CHAIN_I32: *nb = 4; break;
	case CHAIN_CI24: *nb = 3; *cplx = 1; break;
	case CHAIN_I24: *nb = 3; break;
	case CHAIN_CF32_BE: *nb = 4; *cplx = 1; *is_int = 0; *be = 1; break;
	case CHAIN_CI16_BE: *nb = 2; *cplx = 1; *be = 1; break;
	case CHAIN_F32_BE: *nb = 4; *is_int = 0; *be = 1; break;
	case CHAIN_I16_BE: *nb = 2; *be = 1; break;
	case CHAIN_CF64_BE: *nb = 8; *cplx = 1; *is_int = 0; *be = 1; break;
	case CHAIN_F64_BE: *nb = 8; *is_int = 0; *be = 1; break;
	case CHAIN_CI32_BE: *nb = 4; *cplx = 1; *be = 1; break;
	case CHAIN_I32_BE: *nb = 4; *be = 1; break;
	default: return 0;
	}
	return 1;
}

/* Output kinds: the values of enum accel_fft_out. */
#define CHAIN_COMPLEX 0
#define CHAIN_MAG 1
#define CHAIN_POWER 2
#define CHAIN_DB 3

/*
 * Kept frame k (k < kept) of the unit: frame idx[k], samples
 * [idx[k] * hop, idx[k] * hop + n) of `in` (samples at or past `avail`
 * read as zero), converted to float (integers scaled to [-1, 1)) and
 * multiplied by the window, into out[k * n ...] as complex values (real
 * samples get a zero imaginary part).
 */
CHAIN_KERNEL chain_load(const unsigned char *in, unsigned long long avail, const unsigned int *idx,
			unsigned long long kept, unsigned long long n, unsigned long long hop, int type,
			const float *win, float2 *out)
{
	unsigned long long total = kept * n;
	for (unsigned long long t = CHAIN_FIRST; t < total; t += CHAIN_STRIDE) {
		unsigned long long k = t / n, i = t - k * n, s = (unsigned long long)idx[k] * hop + i;
		float re = 0.0f, im = 0.0f;
		if (s < avail) {
			switch (type) {
			case CHAIN_CF32:
				re = ((const float *)in)[2 * s];
				im = ((const float *)in)[2 * s + 1];
				break;
			case CHAIN_CI16:
				re = (float)((const short *)in)[2 * s] * (1.0f / 32768);
				im = (float)((const short *)in)[2 * s + 1] * (1.0f / 32768);
				break;
			case CHAIN_CI8:
				re = (float)((const signed char *)in)[2 * s] * (1.0f / 128);
				im = (float)((const signed char *)in)[2 * s + 1] * (1.0f / 128);
				break;
			case CHAIN_CU8:
				re = ((float)in[2 * s] - 128) * (1.0f / 128);
				im = ((float)in[2 * s + 1] - 128) * (1.0f / 128);
				break;
			case CHAIN_F32:
				re = ((const float *)in)[s];
				break;
			case CHAIN_I16:
				re = (float)((const short *)in)[s] * (1.0f / 32768);
				break;
			case CHAIN_U8:
				re = ((float)in[s] - 128) * (1.0f / 128);
				break;
			case CHAIN_CF64:
				re = (float)((const double *)in)[2 * s];
				im = (float)((const double *)in)[2 * s + 1];
				break;
			case CHAIN_F64:
				re = (float)((const double *)in)[s];
				break;
			default: {
				int nb, cplx, is_int, be;
				if (!chain_layout(type, &nb, &cplx, &is_int, &be))
					break;
				const unsigned char *p = in + s * (unsigned long long)(cplx ? 2 * nb : nb);
				re = is_int ? chain_int(p, nb, be) : chain_real(p, nb, be);
				if (cplx)
					im = is_int ? chain_int(p + nb, nb, be) : chain_real(p + nb, nb, be);
				break;
			}
			}
		}
		out[t] = make_float2(re * win[i], im * win[i]);
	}
}

/*
 * Output rows from `kept` transformed frames of n complex values at spec:
 * row r averages frames r * avg .. min(kept, (r + 1) * avg) - 1; its value
 * j is bin c = (j + rot) mod bins, with s the normalisation scale:
 * complex s X (two floats), mag s mean |X|, power s^2 mean |X|^2, dB
 * 10 log10(s^2 mean |X|^2) + db_offset. Sums in double, as accel_fft_emit.
 */
CHAIN_KERNEL chain_reduce(const float2 *spec, unsigned long long kept, unsigned long long n,
			  unsigned long long bins, unsigned long long avg, unsigned long long rot, int kind,
			  double s, double db_offset, float *rows)
{
	unsigned long long total = (kept + avg - 1) / avg * bins;
	for (unsigned long long t = CHAIN_FIRST; t < total; t += CHAIN_STRIDE) {
		unsigned long long r = t / bins, j = t - r * bins, c = j + rot < bins ? j + rot : j + rot - bins;
		unsigned long long first = r * avg, k = kept - first < avg ? kept - first : avg;
		const float2 *x = spec + first * n + c;
		if (kind == CHAIN_COMPLEX) {
			rows[2 * t] = (float)(x->x * s);
			rows[2 * t + 1] = (float)(x->y * s);
			continue;
		}
		double acc = 0;
		for (unsigned long long m = 0; m < k; m++, x += n) {
			double re = x->x, im = x->y, p = re * re + im * im;
			acc += kind == CHAIN_MAG ? sqrt(p) : p;
		}
		double v = acc / (double)k;
		if (kind == CHAIN_MAG)
			v *= s;
		else if (kind == CHAIN_POWER)
			v *= s * s;
		else
			v = 10 * log10(v * (s * s)) + db_offset;
		rows[t] = (float)v;
	}
}
