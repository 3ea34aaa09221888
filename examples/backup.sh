#!/bin/sh
# backup.sh - a backup pipeline of accel's filters: tar, compress in
# parallel, encrypt in parallel to one or more age recipients, and record
# the archive's sha256 beside it; restore with the identity.
#
#   examples/backup.sh backup DIR OUT.tar.zst.age RECIPIENT...
#   examples/backup.sh restore OUT.tar.zst.age IDENTITY_FILE DEST_DIR
#
# The archive is readable without accel: age -d -i KEY OUT | zstd -d | tar x
set -eu
# The programs: those in $ACCEL_BUILD (a folder) when set, else those of the
# build folder beside this script when it holds them, else those in $PATH.
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${ACCEL_BUILD:-}" ]; then
	PATH="$(cd "$ACCEL_BUILD" && pwd):$PATH"
elif [ -x "$here/../build/accel-detect" ]; then
	PATH="$here/../build:$PATH"
fi
case ${1:-} in
backup)
	[ $# -ge 4 ] || { echo "usage: $0 backup DIR OUT RECIPIENT..." >&2; exit 2; }
	dir=$2 out=$3
	shift 3
	args=""
	for r in "$@"; do args="$args -r $r"; done
	mkdir -p "$(dirname "$out")"
	# shellcheck disable=SC2086
	tar cf - -C "$dir" . | accel-compress -T0 | accel-crypt -T0 $args -o "$out"
	(cd "$(dirname "$out")" && accel-crypt hash "$(basename "$out")") > "$out.sha256.tmp"
	mv "$out.sha256.tmp" "$out.sha256"
	echo "wrote $out and $out.sha256"
	;;
restore)
	[ $# -eq 4 ] || { echo "usage: $0 restore ARCHIVE IDENTITY DEST" >&2; exit 2; }
	(cd "$(dirname "$2")" && accel-crypt hash -c --quiet "$(basename "$2").sha256")
	mkdir -p "$4"
	accel-crypt -d -i "$3" "$2" | accel-compress -d | tar xf - -C "$4"
	echo "restored into $4"
	;;
*)
	echo "usage: $0 backup DIR OUT RECIPIENT... | restore ARCHIVE IDENTITY DEST" >&2
	exit 2
	;;
esac
