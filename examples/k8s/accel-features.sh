#!/bin/sh
# accel-features.sh - write this node's accelerator features for
# node-feature-discovery's local source: accel-detect --format nfd into
# DIR/accel (default DIR /etc/kubernetes/node-feature-discovery/features.d,
# which nfd-worker reads), its labels valid for TTL seconds (default 900)
# through NFD's "# +expiry-time=" directive, so that the labels of a node
# whose writer stopped go at nfd-worker's next pass after that time.
# The file is replaced whole (written beside, then renamed).
#
#   sh examples/k8s/accel-features.sh [DIR] [TTL]
#
# daemonset.yaml runs it every 5 minutes on each node. nfd-worker turns
# each line NAME=VALUE into the node label NAME=VALUE; the names are
# accel-detect's, prefixed accel.example/ (see accel-detect(1), FORMATS).
set -eu
dir=${1:-/etc/kubernetes/node-feature-discovery/features.d}
ttl=${2:-900}
case $ttl in '' | *[!0-9]*) echo "accel-features.sh: TTL is seconds: $ttl" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${ACCEL_BUILD:-}" ]; then
	PATH="$(cd "$ACCEL_BUILD" && pwd):$PATH"
elif [ -x "$here/../../build/accel-detect" ]; then
	PATH="$here/../../build:$PATH"
fi
mkdir -p "$dir"
tmp="$dir/.accel.tmp"	# a hidden name: nfd-worker skips it
trap 'rm -f "$tmp"' EXIT
{
	# RFC 3339 in UTC, as NFD parses it (Go's time.RFC3339)
	echo "# +expiry-time=$(date -u -d "@$(($(date +%s) + ttl))" +%Y-%m-%dT%H:%M:%SZ)"
	accel-detect --format nfd
} > "$tmp"
mv "$tmp" "$dir/accel"
trap - EXIT
