#!/bin/sh
# Write the seed corpus of the buildid fuzz target into
# tests/fuzz/corpus/buildid: small shared objects built here (no libc, one
# function, stripped) with a SHA-1 build-id, an MD5 one, none, and a
# property note before the build-id (a PT_NOTE aligned to 8, where the
# compiler offers -fcf-protection); then ones whose headers lie: counts,
# offsets and note sizes past the file, a note of another type, another
# ELF class, a cut file and one that is not ELF.
# Usage: tests/fuzz/corpus-buildid.sh [CC]  (default cc)
set -eu
cd "$(dirname "$0")/../.."
cc=${1:-cc}
out=tests/fuzz/corpus/buildid
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
printf 'int accel_seed(void) { return 7; }\n' > "$tmp/seed.c"
so() {
	name=$1
	shift
	"$cc" -shared -fPIC -nostdlib -s -Wl,-z,noseparate-code "$@" -o "$out/$name.so" "$tmp/seed.c"
}
so sha1 -Wl,--build-id=sha1
so md5 -Wl,--build-id=md5
so none -Wl,--build-id=none
so property -Wl,--build-id=sha1 -fcf-protection=full 2> /dev/null || true
python3 - "$out" <<'PY'
import struct, sys
out = sys.argv[1]
src = open(out + '/sha1.so', 'rb').read()
def wr(name, b): open('%s/%s.so' % (out, name), 'wb').write(bytes(b))
# ELF64 little-endian (x86-64, arm64): e_phoff at 32, e_phentsize 54,
# e_phnum 56; program headers of 56 bytes, p_type 0, p_offset 8,
# p_filesz 32, p_align 48 (System V gABI).
phoff = struct.unpack_from('<Q', src, 32)[0]
phnum = struct.unpack_from('<H', src, 56)[0]
note = [phoff + 56 * i for i in range(phnum) if struct.unpack_from('<I', src, phoff + 56 * i)[0] == 4][0]
noff = struct.unpack_from('<Q', src, note + 8)[0]
def patch(name, fmt, off, val):
    b = bytearray(src)
    struct.pack_into(fmt, b, off, val)
    wr(name, b)
patch('phnum-huge', '<H', 56, 0xffff)
patch('phnum-zero', '<H', 56, 0)
patch('phoff-past-end', '<Q', 32, len(src) - 8)
patch('phentsize-other', '<H', 54, 32)
patch('note-offset-past-end', '<Q', note + 8, len(src) - 4)
patch('note-filesz-huge', '<Q', note + 32, 1 << 62)
# The note segment runs past the 4 KiB the reader reads at once (into
# the section headers): read with a pread of its own.
patch('note-beyond-head', '<Q', note + 32, 4096 - noff + 200)
patch('note-align-16', '<Q', note + 48, 16)
patch('note-namesz-huge', '<I', noff, 0xffffffff)
patch('note-descsz-huge', '<I', noff + 4, 0x7fffffff)
patch('note-descsz-zero', '<I', noff + 4, 0)
patch('note-descsz-65', '<I', noff + 4, 65)
patch('note-type-other', '<I', noff + 8, 4)
patch('class-32', 'B', 4, 1)
patch('big-endian', 'B', 5, 2)
wr('cut-in-phdrs', src[:phoff + 30])
wr('cut-in-note', src[:noff + 20])
wr('header-only', src[:64])
wr('not-elf', b'not an ELF file\n')
wr('empty', b'')
PY
