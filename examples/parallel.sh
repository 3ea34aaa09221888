#!/bin/sh
# parallel.sh - one large file cut into byte ranges that GNU parallel hands
# to accel's filters, on this machine or others (--sshlogin).
#
#   sh examples/parallel.sh compress FILE OUT.zst [BLOCK]
#       compress each BLOCK bytes (default 16M) into zstd frames;
#       zstd frames concatenate, so OUT.zst is one valid stream, byte for
#       byte the file that accel-compress -B BLOCK FILE writes serially
#   sh examples/parallel.sh hash FILE [BLOCK]
#       the SHA-256 of each BLOCK bytes in order, one "DIGEST  -" line
#       each, as split -b BLOCK --filter=sha256sum FILE prints them
#
# parallel --pipepart reads the ranges of FILE itself (no cat through one
# pipe); --recend '' cuts at exact byte offsets, not at line ends; -k keeps
# the outputs in the order of the ranges. The hosts: $ACCEL_SSHLOGIN, as
# parallel's --sshlogin takes it (default ":", this machine; for others
# "8/host1,8/host2,:", each reached by ssh and holding the programs in its
# PATH; the ranges travel over ssh).
set -eu
# The programs: those in $ACCEL_BUILD (a folder) when set, else those of the
# build folder beside this script when it holds them, else those in $PATH.
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${ACCEL_BUILD:-}" ]; then
	PATH="$(cd "$ACCEL_BUILD" && pwd):$PATH"
elif [ -x "$here/../build/accel-detect" ]; then
	PATH="$here/../build:$PATH"
fi
export PATH
logins=${ACCEL_SSHLOGIN:-:}
command -v parallel > /dev/null || { echo "parallel.sh: GNU parallel is not installed" >&2; exit 127; }
case ${1:-} in
compress)
	[ $# -ge 3 ] && [ $# -le 4 ] || { echo "usage: $0 compress FILE OUT [BLOCK]" >&2; exit 2; }
	file=$2 out=$3 block=${4:-16M}
	[ ! -e "$out" ] || { echo "parallel.sh: $out exists" >&2; exit 1; }
	# One frame a range, each range's frame as accel-compress -B writes it
	# (an empty FILE has no range: accel-compress writes its one frame).
	if [ ! -s "$file" ]; then
		accel-compress -q -c "$file" > "$out.part" || { rm -f "$out.part"; exit 1; }
	elif ! parallel --will-cite --pipepart -a "$file" --recend '' --block "$block" -k -S "$logins" \
		accel-compress -q -T1 -B "$block" > "$out.part"; then
		rm -f "$out.part"
		exit 1
	fi
	mv "$out.part" "$out"
	;;
hash)
	[ $# -ge 2 ] && [ $# -le 3 ] || { echo "usage: $0 hash FILE [BLOCK]" >&2; exit 2; }
	parallel --will-cite --pipepart -a "$2" --recend '' --block "${3:-16M}" -k -S "$logins" \
		accel-crypt hash -q
	;;
*)
	echo "usage: $0 compress FILE OUT [BLOCK] | hash FILE [BLOCK]" >&2
	exit 2
	;;
esac
