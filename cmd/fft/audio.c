/*
 * audio.c - audio files other than WAV (FLAC, W64, AIFF, CAF, Ogg, AU,
 * RIFX) for accel-fft, decoded by libsndfile. The library (and the codec
 * libraries it links: FLAC, Vorbis, Opus, MPEG) is loaded with dlopen only
 * when such a file is read, so a run on raw samples or WAV starts without
 * them. The decoder runs on a thread of its own and writes f32 samples
 * into a pipe, which the transform reads as any other stream.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sndfile.h>
#include "fft.h"

/* libsndfile's functions, resolved once. */
static struct {
	void *lib;
	__typeof__(sf_open_fd) *open_fd;
	__typeof__(sf_open_virtual) *open_virtual;
	__typeof__(sf_readf_float) *readf_float;
	__typeof__(sf_close) *close;
	__typeof__(sf_strerror) *strerror;
	__typeof__(sf_error) *error;
	__typeof__(sf_command) *command;
} sf;

/* Bytes of the start of a pipe kept for libsndfile's seeks back: it reads
 * a format's signature and seeks to 0, and W64 and AIFF readers look past
 * the header for their chunks before seeking back to the samples. */
#define HEAD_MAX (1u << 20)
/* Frames decoded per write into the pipe. */
#define DECODE_FRAMES 4096

const char *fft_audio_magic(const uint8_t *p, size_t n)
{
	/* Sony Wave64's RIFF GUID, 66666972-912E-11CF-A5D6-28DB04C10000, as
	 * the file holds it (little-endian fields). */
	static const uint8_t w64[16] = { 'r', 'i', 'f', 'f', 0x2e, 0x91, 0xcf, 0x11,
					 0xa5, 0xd6, 0x28, 0xdb, 0x04, 0xc1, 0x00, 0x00 };
	if (n < 4)
		return NULL;
	if (!memcmp(p, "fLaC", 4))                  /* FLAC format: stream marker */
		return "FLAC";
	if (!memcmp(p, "OggS", 4))                  /* RFC 3533 capture pattern */
		return "Ogg";
	if (!memcmp(p, "caff", 4))                  /* Apple Core Audio Format */
		return "CAF";
	if (!memcmp(p, ".snd", 4))                  /* Sun/NeXT AU */
		return "AU";
	if (!memcmp(p, "RIFX", 4))                  /* big-endian WAV */
		return "RIFX";
	if (n >= 12 && !memcmp(p, "FORM", 4) && (!memcmp(p + 8, "AIFF", 4) || !memcmp(p + 8, "AIFC", 4)))
		return "AIFF";
	if (n >= 16 && !memcmp(p, w64, 16))
		return "W64";
	return NULL;
}

static int load(char *err, size_t len)
{
	if (sf.lib)
		return 0;
	void *lib = dlopen("libsndfile.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(err, len, "reading this format needs libsndfile (Debian package libsndfile1): %s", dlerror());
		return ACCEL_ENOTSUP;
	}
#define SYM(field, name) (*(void **)&sf.field = dlsym(lib, name))
	if (!SYM(open_fd, "sf_open_fd") || !SYM(open_virtual, "sf_open_virtual") ||
	    !SYM(readf_float, "sf_readf_float") || !SYM(close, "sf_close") || !SYM(strerror, "sf_strerror") ||
	    !SYM(error, "sf_error") || !SYM(command, "sf_command")) {
#undef SYM
		snprintf(err, len, "libsndfile.so.1 lacks a function accel-fft calls: %s", dlerror());
		dlclose(lib);
		return ACCEL_ENOTSUP;
	}
	sf.lib = lib;
	return 0;
}

/* Virtual I/O over a pipe (struct accel_input): reads keep the first
 * HEAD_MAX bytes, seeks go anywhere inside them or forward. */
static sf_count_t v_length(void *user)
{
	struct fft_audio *a = user;
	/* A pipe's length is unknown; libsndfile's W64 and AIFF readers
	 * refuse -1, and a long length lets them read to the samples. */
	return a->src->size >= 0 ? (sf_count_t)(a->src->size + (int64_t)a->src->offset) : (sf_count_t)1 << 62;
}

/* Bytes of the head known: read up to `to` (<= HEAD_MAX) when fewer. */
static size_t head_fill(struct fft_audio *a, size_t to)
{
	while (a->head_len < to) {
		ssize_t n = accel_input_read(a->src, a->head + a->head_len, to - a->head_len);
		if (n <= 0)
			break;
		a->head_len += (size_t)n;
	}
	return a->head_len;
}

static sf_count_t v_read(void *dst, sf_count_t count, void *user)
{
	struct fft_audio *a = user;
	uint8_t *d = dst;
	sf_count_t got = 0;
	if (a->pos < HEAD_MAX) {
		size_t end = (size_t)a->pos + (size_t)count;
		if (end > HEAD_MAX)
			end = HEAD_MAX;
		end = head_fill(a, end) < end ? a->head_len : end;
		got = (sf_count_t)end - a->pos;
		memcpy(d, a->head + a->pos, (size_t)got);
		a->pos = (int64_t)end;
		if (a->pos < HEAD_MAX)
			return got;
	}
	while (got < count) {
		ssize_t n = accel_input_read(a->src, d + got, (size_t)(count - got));
		if (n <= 0)
			break;
		got += n;
		a->pos += n;
	}
	return got;
}

static sf_count_t v_seek(sf_count_t offset, int whence, void *user)
{
	struct fft_audio *a = user;
	int64_t to = whence == SEEK_SET ? offset : whence == SEEK_CUR ? a->pos + offset : -1;
	if (to < 0)
		return -1;
	if (to <= HEAD_MAX && (a->pos <= HEAD_MAX || to == a->pos)) {
		if (head_fill(a, (size_t)to) < (size_t)to)
			return -1;
		a->pos = to;
		return to;
	}
	if (to < a->pos)
		return -1;
	/* Forward past the head: read and drop. */
	uint8_t skip[4096];
	while (a->pos < to) {
		sf_count_t want = to - a->pos < (int64_t)sizeof skip ? to - a->pos : (sf_count_t)sizeof skip;
		if (v_read(skip, want, a) != want)
			return -1;
	}
	return to;
}

static sf_count_t v_tell(void *user)
{
	return ((struct fft_audio *)user)->pos;
}

/* Virtual I/O over a regular file by pread whose length is said to be far
 * larger than it is: libsndfile then keeps the frame count the header
 * states (AIFF's COMM, AU's data size ...) instead of cutting it to what
 * the file holds, which is how a file cut short is told. */
struct stated_io {
	int fd;
	off_t start;
	sf_count_t pos;
};

static sf_count_t s_length(void *user)
{
	(void)user;
	return (sf_count_t)1 << 62;
}

static sf_count_t s_seek(sf_count_t offset, int whence, void *user)
{
	struct stated_io *io = user;
	sf_count_t to = whence == SEEK_SET ? offset : whence == SEEK_CUR ? io->pos + offset : -1;
	if (to < 0)
		return -1;
	io->pos = to;
	return to;
}

static sf_count_t s_read(void *dst, sf_count_t count, void *user)
{
	struct stated_io *io = user;
	ssize_t n = pread(io->fd, dst, (size_t)count, io->start + (off_t)io->pos);
	if (n <= 0)
		return 0;
	io->pos += n;
	return n;
}

static sf_count_t s_tell(void *user)
{
	return ((struct stated_io *)user)->pos;
}

/* The frames the data chunk of a Sony Wave64 file states, from its first
 * bytes p[0..n): the chunks after the RIFF header (its GUID, a 64-bit
 * size, the WAVE GUID) are a 16-byte GUID whose first four bytes name it,
 * a 64-bit little-endian size counting those 24 bytes, the body, and
 * padding to 8 bytes; "fmt " holds WAVEFORMATEX (nBlockAlign at byte 12).
 * -1 when p does not reach both, or a size lies. libsndfile derives W64's
 * count from the file's length. */
static int64_t w64_stated(const uint8_t *p, size_t n)
{
	uint64_t at = 40, align = 0;
	for (int k = 0; k < 64 && at + 24 <= n; k++) {
		uint64_t size = 0;
		for (int i = 7; i >= 0; i--)
			size = size << 8 | p[at + 16 + (size_t)i];
		if (size < 24)
			return -1;
		if (!memcmp(p + at, "fmt ", 4) && at + 24 + 14 <= n)
			align = p[at + 24 + 12] | (uint64_t)p[at + 24 + 13] << 8;
		if (!memcmp(p + at, "data", 4))
			return align && (size - 24) / align < (uint64_t)1 << 45 ? (int64_t)((size - 24) / align) : -1;
		if (size > n || at + size + 7 > n)
			return -1;
		at = (at + size + 7) & ~(uint64_t)7;
	}
	return -1;
}

/* The frames the header of the file at fd (from `start`) states, -1 when
 * it states none (a count derived from the length, FLAC's 0). */
static int64_t stated_frames(int fd, off_t start)
{
	uint8_t head[4096];
	ssize_t hn = pread(fd, head, sizeof head, start);
	if (hn > 0 && fft_audio_magic(head, (size_t)hn) && !strcmp(fft_audio_magic(head, (size_t)hn), "W64"))
		return w64_stated(head, (size_t)hn);
	struct stated_io io = { fd, start, 0 };
	SF_VIRTUAL_IO vio = { s_length, s_seek, s_read, NULL, s_tell };
	SF_INFO info = { 0 };
	SNDFILE *s = sf.open_virtual(&vio, SFM_READ, &info, &io);
	if (!s)
		return -1;
	int64_t n = info.frames > 0 && info.frames < (sf_count_t)1 << 45 ? info.frames : -1;
	sf.close(s);
	return n;
}

int fft_audio_open(struct fft_audio *a, struct accel_input *in, char *err, size_t len)
{
	memset(a, 0, sizeof *a);
	a->wfd = -1;
	int rc = load(err, len);
	if (rc)
		return rc;
	SF_INFO info = { 0 };
	SNDFILE *s = NULL;
	off_t cur = in->fd >= 0 && in->size >= 0 ? lseek(in->fd, 0, SEEK_CUR) : -1;
	if (cur >= 0) {
		/* A regular file: libsndfile reads it by a descriptor of its
		 * own, from the header's start (what `in` has buffered is
		 * not consumed). */
		int fd = fcntl(in->fd, F_DUPFD_CLOEXEC, 3);
		off_t start = cur - (off_t)(in->end - in->start);
		if (fd < 0 || lseek(fd, start, SEEK_SET) != start) {
			snprintf(err, len, "cannot read %s: %s", in->name, strerror(errno));
			if (fd >= 0)
				close(fd);
			return ACCEL_EDATA;
		}
		s = sf.open_fd(fd, SFM_READ, &info, 1);
		/* libsndfile gives SF_COUNT_MAX for a length the header
		 * leaves unknown (FLAC's total samples 0, as a writer to a
		 * pipe leaves it): unknown here too. */
		a->frames = s && info.frames >= 0 && info.frames < (sf_count_t)1 << 45 ? info.frames : -1;
		a->stated = s ? stated_frames(fd, start) : -1;
	} else {
		a->head = malloc(HEAD_MAX);
		if (!a->head) {
			snprintf(err, len, "out of memory");
			return ACCEL_ENOMEM;
		}
		a->src = in;
		SF_VIRTUAL_IO io = { v_length, v_seek, v_read, NULL, v_tell };
		s = sf.open_virtual(&io, SFM_READ, &info, a);
		/* The count a header states is no promise on a pipe (W64's
		 * comes from the length above): the samples end where the
		 * stream does. */
		a->frames = -1;
		/* A count the header states (FLAC's STREAMINFO, AIFF's COMM)
		 * still tells a stream cut short; one derived from the
		 * length above is far larger (2^62 bytes). */
		a->stated = s && info.frames > 0 && info.frames < (sf_count_t)1 << 45 ? info.frames : -1;
		if (s && a->stated < 0 && fft_audio_magic(a->head, a->head_len) &&
		    !strcmp(fft_audio_magic(a->head, a->head_len), "W64"))
			a->stated = w64_stated(a->head, a->head_len);
	}
	if (!s) {
		snprintf(err, len, "%s: %s", in->name, sf.strerror(NULL));
		free(a->head);
		a->head = NULL;
		return ACCEL_EDATA;
	}
	a->sf = s;
	a->channels = (unsigned)info.channels;
	a->rate = (unsigned)info.samplerate;
	static const struct { int sub; unsigned bits; } bits[] = {
		{ SF_FORMAT_PCM_S8, 8 }, { SF_FORMAT_PCM_U8, 8 }, { SF_FORMAT_PCM_16, 16 },
		{ SF_FORMAT_PCM_24, 24 }, { SF_FORMAT_PCM_32, 32 }, { SF_FORMAT_FLOAT, 32 },
		{ SF_FORMAT_DOUBLE, 64 },
	};
	for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
		if ((info.format & SF_FORMAT_SUBMASK) == bits[i].sub)
			a->bits = bits[i].bits;
	SF_FORMAT_INFO fi = { .format = info.format & SF_FORMAT_TYPEMASK };
	if (sf.command(NULL, SFC_GET_FORMAT_INFO, &fi, sizeof fi) == 0 && fi.name)
		snprintf(a->format, sizeof a->format, "%s", fi.name);
	else
		snprintf(a->format, sizeof a->format, "format 0x%x", (unsigned)info.format);
	if (a->channels < 1 || a->channels > ACCEL_FFT_MAX_CHANNELS || a->rate < 1) {
		snprintf(err, len, "%s: %s of %u channels at %u Hz: accel-fft reads 1 to %d channels", in->name,
			 a->format, a->channels, a->rate, ACCEL_FFT_MAX_CHANNELS);
		fft_audio_end(a, NULL, 0);
		return ACCEL_EDATA;
	}
	return 0;
}

static void *decode_main(void *arg)
{
	struct fft_audio *a = arg;
	/* A reader that stops early (a usage error, a failed run) closes the
	 * pipe: write then fails with EPIPE in this thread, and no SIGPIPE
	 * ends the process (a blocked, thread-directed one dies with it). */
	sigset_t pipe_set;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, NULL);
	size_t cap = (size_t)DECODE_FRAMES * a->channels;
	float *buf = malloc(cap * sizeof *buf);
	if (!buf) {
		snprintf(a->err, sizeof a->err, "out of memory");
		goto done;
	}
	int64_t decoded = 0;
	for (;;) {
		sf_count_t got = sf.readf_float(a->sf, buf, DECODE_FRAMES);
		if (got <= 0) {
			if (sf.error(a->sf))
				snprintf(a->err, sizeof a->err, "%s", sf.strerror(a->sf));
			else if (a->stated >= 0 && decoded < a->stated)
				snprintf(a->err, sizeof a->err, "the file ends after %lld of the %lld frames its header states",
					 (long long)decoded, (long long)a->stated);
			break;
		}
		decoded += got;
		const uint8_t *p = (const uint8_t *)buf;
		size_t left = (size_t)got * a->channels * sizeof *buf;
		while (left) {
			ssize_t n = write(a->wfd, p, left);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				goto done;    /* the reader stopped: its status says why */
			p += n;
			left -= (size_t)n;
		}
	}
done:
	free(buf);
	close(a->wfd);
	a->wfd = -1;
	return NULL;
}

int fft_audio_start(struct fft_audio *a, int *rfd)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return ACCEL_EIO;
	a->wfd = fds[1];
	int rc = pthread_create(&a->thread, NULL, decode_main, a);
	if (rc) {
		close(fds[0]);
		close(fds[1]);
		a->wfd = -1;
		errno = rc;
		return ACCEL_ENOMEM;
	}
	a->started = 1;
	*rfd = fds[0];
	return 0;
}

int fft_audio_end(struct fft_audio *a, char *err, size_t len)
{
	int rc = 0;
	if (a->started) {
		pthread_join(a->thread, NULL);
		a->started = 0;
		if (a->err[0]) {
			if (err)
				snprintf(err, len, "%s: %s", a->format, a->err);
			rc = ACCEL_EDATA;
		}
	}
	if (a->wfd >= 0)
		close(a->wfd);
	a->wfd = -1;
	if (a->sf)
		sf.close(a->sf);
	a->sf = NULL;
	free(a->head);
	a->head = NULL;
	return rc;
}
