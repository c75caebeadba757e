#!/bin/bash
# tools/copy-tree.sh DEST -- copy this checkout's source files into DEST:
# what git tracks or would track (not ignored build outputs, packages,
# bench data), or everything when this is not a git checkout.  Used to
# build and test the package from a scratch copy.
set -euo pipefail
dest=${1:?usage: tools/copy-tree.sh DEST}
mkdir -p "$dest"
dest=$(realpath "$dest")
cd "$(dirname "$0")/.."
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ ! -e "$f" ] || printf '%s\0' "$f"; done |
		xargs -0 cp --parents -t "$dest"
else
	cp -a . "$dest"
fi
