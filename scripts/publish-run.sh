#!/usr/bin/env bash
# publish-run.sh OUT FILE.tar.xz: pack the runs in OUT (a run directory,
# or a reproduction's, with its decide rounds and sequential.json) as
# they can be published and resumed on another machine: each results.db
# as one compact file (SQLite's VACUUM INTO, consistent even while the
# run goes on), each spec.yaml and the reproduction's sequential.json.
# Left out: the testbeds' keys and certificates, artifacts (captures,
# HARs), locks and SQLite's side files. Unpacked into an empty directory
# (tar -xJf FILE -C DIR), it is a run `quicbench reproduce ... --out DIR`
# or `quicbench run ... --out DIR --resume` continues (docs/reproduce.md,
# "A run across machines"). FILE is replaced whole, through FILE.new.
set -euo pipefail
if [ $# -ne 2 ] || [ ! -d "$1" ] || [ -L "$1" ] || [[ "$2" != *.tar.xz ]]; then
	echo "usage: scripts/publish-run.sh OUT FILE.tar.xz (OUT: a run or reproduction directory, not a link)" >&2
	exit 2
fi
out=$(cd "$1" && pwd -P)
file=$(realpath -m "$2")
stage=$(mktemp -d) # removed on any exit
trap 'rm -rf "$stage" "$file.new"' EXIT
chmod 755 "$stage" # its mode is the pack's top directory's, given to DIR when unpacked
cd "$out"
# -P: never follow a link; only regular files are copied.
find -P . -type f \( -name results.db -o -name spec.yaml -o -name sequential.json \) -not -path '*/artifacts/*' -print0 |
	while IFS= read -r -d '' f; do
		mkdir -p "$stage/$(dirname "$f")"
		case "$f" in
		*/results.db)
			python3 - "$f" "$stage/$f" <<'EOF'
import sqlite3, sys
src = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
src.execute("VACUUM INTO ?", (sys.argv[2],))
src.close()
EOF
			;;
		*) cp -P "$f" "$stage/$f" ;;
		esac
	done
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner -cJf "$file.new" .
mv "$file.new" "$file"
