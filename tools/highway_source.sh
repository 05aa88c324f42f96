#!/usr/bin/env bash
# Prints the directory of the Highway 1.4.0 source for the builds against it (presets hwy14 and
# aarch64-clang, via -DFETCHCONTENT_SOURCE_DIR_HIGHWAY): extracts the release archive under
# build/deps/ once, after checking it is the pinned release (the SHA256 of
# cmake/EdgeattnHighway.cmake). No network: the archive comes from HIGHWAY_ARCHIVE, or else
# shared/deps/highway-1.4.0.tar.gz beside the checkout or beside the repository it was cloned
# from (a CI clone of a local repository). Exits with 3 and says so when there is none, with 1
# when HIGHWAY_ARCHIVE names no file or the archive is not the pinned release (any other failure
# exits non-zero too).
set -euo pipefail
cd "$(dirname "$0")/.."
name=highway-1.4.0.tar.gz
candidates=("../shared/deps/$name")
origin=$(git config --get remote.origin.url 2>/dev/null || true)
[ -d "$origin" ] && candidates+=("$origin/../shared/deps/$name")
archive=${HIGHWAY_ARCHIVE:-}
if [ -z "$archive" ]; then
  for candidate in "${candidates[@]}"; do
    [ -f "$candidate" ] && archive=$candidate && break
  done
fi
dir=build/deps/highway-1.4.0
if [ ! -f "$dir/CMakeLists.txt" ]; then
  pinned=$(sed -n 's/.*URL_HASH SHA256=\([0-9a-f]*\).*/\1/p' cmake/EdgeattnHighway.cmake)
  [ -n "$archive" ] && [ -f "$archive" ] || {
    echo "highway_source.sh: no ${archive:-$name} (looked for ${candidates[*]}; set HIGHWAY_ARCHIVE)" >&2
    [ -z "${HIGHWAY_ARCHIVE:-}" ] || exit 1  # one named that is not there: an error
    exit 3
  }
  echo "$pinned  $archive" | sha256sum --check --quiet >&2 || {
    echo "highway_source.sh: $archive is not the pinned Highway release" >&2
    exit 1
  }
  mkdir -p build/deps
  tar -xzf "$archive" -C build/deps
fi
echo "$PWD/$dir"
