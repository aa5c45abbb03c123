#!/usr/bin/env bash
# Prints the directory where builds shared by every clone of this user are
# kept, NAME under ${XDG_CACHE_HOME:-$HOME/.cache}/quicbench (made 0700 if
# missing): the HTTP/3 servers' cargo target directory, so that a fresh
# clone does not build BoringSSL and quiche again (about 6 minutes here).
# Cargo's fingerprints keep clones of different sources apart there.
#
#   scripts/cache-dir.sh cargo-target
#
# The directory and the one above it must belong to this user and be
# writable by nobody else (as root, a directory another user can write is
# a way into what root builds and runs); where they are not, it prints the
# clone's own .cache/NAME instead and says why on standard error.
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: scripts/cache-dir.sh NAME}
fallback="$PWD/.cache/$name"

base=${XDG_CACHE_HOME:-${HOME:-}/.cache}
if [ -z "${HOME:-}" ] && [ -z "${XDG_CACHE_HOME:-}" ]; then
	echo "$fallback"
	exit 0
fi
dir="$base/quicbench"

# owned_by_me_only DIR: DIR is a directory (not a link), owned by this user,
# not writable by group or others.
owned_by_me_only() {
	[ -d "$1" ] && [ ! -L "$1" ] || return 1
	local owner mode
	read -r owner mode < <(stat -c '%u %a' "$1")
	[ "$owner" = "$(id -u)" ] && [ $((8#$mode & 8#022)) -eq 0 ]
}

mkdir -p -m 0700 "$dir/$name" 2>/dev/null || true
for d in "$base" "$dir" "$dir/$name"; do
	if ! owned_by_me_only "$d"; then
		echo "cache-dir: $d is not a directory of this user's alone; building in $fallback" >&2
		echo "$fallback"
		exit 0
	fi
done
echo "$dir/$name"
