/*
 * buildid.c - the GNU build-id of an ELF file (its NT_GNU_BUILD_ID note),
 * which the plugin manifest (manifest.c) records to know a plugin by its
 * content. A small reader, not libelf: it runs for every listed plugin at
 * every program's start, so it reads the head of the file once (the ELF
 * header, the program headers and the notes sit there in a shared object
 * ld writes) and only what lies beyond with one more pread. Every offset
 * and size is checked against the file's size before use; anything odd is
 * refused, never followed.
 *
 * Layouts: the System V gABI, "ELF Header", "Program Header" and "Note
 * Section" (namesz, descsz, type; name and desc each padded to the
 * segment's alignment, 4 or 8); the note's name "GNU", type
 * NT_GNU_BUILD_ID (3) from the LSB / binutils (<elf.h>).
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "core.h"

#define HEAD_BYTES 4096            /* read at once from offset 0 */
#define MAX_PHDRS 64               /* a shared object has about ten */
#define MAX_NOTE_BYTES 4096        /* of one PT_NOTE segment */

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NATIVE_DATA ELFDATA2LSB
#else
#define NATIVE_DATA ELFDATA2MSB
#endif
#if __SIZEOF_POINTER__ == 8
#define NATIVE_CLASS ELFCLASS64
#else
#define NATIVE_CLASS ELFCLASS32
#endif

/* Read n bytes at off into buf: 0, or -1 on an error or a short file. */
static int pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	char *p = buf;
	while (n) {
		ssize_t k = pread(fd, p, n, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

/* Bytes [off, off + len) of the file: from head when they lie in its hbytes,
 * else read into buf[cap]; NULL when they do not lie in the file's size or
 * cannot be read. */
static const unsigned char *bytes_at(int fd, uint64_t size, const unsigned char *head, size_t hbytes,
				     uint64_t off, uint64_t len, unsigned char *buf, size_t cap)
{
	if (off > size || len > size - off)
		return NULL;
	if (off <= hbytes && len <= hbytes - off)
		return head + off;
	if (len > cap || pread_all(fd, buf, (size_t)len, off))
		return NULL;
	return buf;
}

/* off rounded up to a multiple of align (4 or 8). */
static uint64_t round_up(uint64_t off, uint64_t align)
{
	return (off + align - 1) / align * align;
}

/* Find the build-id among the notes p[len] aligned to align: its length
 * (copied to id[cap]), 0 when none is there, -1 when a note's sizes pass
 * the segment's end or the build-id is empty or longer than cap. The
 * name and the desc each start at a multiple of align from the segment's
 * start (which is so aligned). */
static int find_note(const unsigned char *p, uint64_t len, uint64_t align, unsigned char *id, size_t cap)
{
	uint64_t pos = 0;
	while (len - pos >= 12) {
		uint32_t namesz, descsz, type;
		memcpy(&namesz, p + pos, 4);
		memcpy(&descsz, p + pos + 4, 4);
		memcpy(&type, p + pos + 8, 4);
		/* 64-bit sums of a position under 4 KiB and 32-bit sizes: no
		 * overflow. */
		uint64_t name = pos + 12, desc = round_up(name + namesz, align);
		if (desc > len || descsz > len - desc)
			return -1;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(p + name, "GNU", 4)) {
			if (!descsz || descsz > cap)
				return -1;
			memcpy(id, p + desc, descsz);
			return (int)descsz;
		}
		/* The last note's padding may be left out of the segment. */
		pos = round_up(desc + descsz, align);
		if (pos > len)
			pos = len;
	}
	return 0;
}

int core_elf_build_id(int fd, uint64_t size, unsigned char *id, size_t cap)
{
	unsigned char head[HEAD_BYTES];
	size_t hbytes = size < sizeof head ? (size_t)size : sizeof head;
	ElfW(Ehdr) eh;
	if (hbytes < sizeof eh || pread_all(fd, head, hbytes, 0))
		return -1;
	memcpy(&eh, head, sizeof eh);
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != NATIVE_CLASS ||
	    eh.e_ident[EI_DATA] != NATIVE_DATA || eh.e_ident[EI_VERSION] != EV_CURRENT ||
	    eh.e_phentsize != sizeof(ElfW(Phdr)) || !eh.e_phnum || eh.e_phnum > MAX_PHDRS)
		return -1;
	_Static_assert(MAX_PHDRS * sizeof(ElfW(Phdr)) <= MAX_NOTE_BYTES, "one buffer for both");
	unsigned char buf[MAX_NOTE_BYTES];
	ElfW(Phdr) ph[MAX_PHDRS];
	const unsigned char *p = bytes_at(fd, size, head, hbytes, eh.e_phoff,
					  (uint64_t)eh.e_phnum * sizeof *ph, buf, sizeof buf);
	if (!p)
		return -1;
	memcpy(ph, p, eh.e_phnum * sizeof *ph);
	for (int i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_NOTE)
			continue;
		uint64_t align = ph[i].p_align <= 4 ? 4 : ph[i].p_align;
		if (align != 4 && align != 8)
			return -1;
		p = bytes_at(fd, size, head, hbytes, ph[i].p_offset, ph[i].p_filesz, buf, sizeof buf);
		if (!p)
			return -1;
		int n = find_note(p, ph[i].p_filesz, align, id, cap);
		if (n)
			return n;
	}
	return 0;
}
