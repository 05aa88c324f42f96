#!/usr/bin/env bash
# Lists the symbols a shared library exports (defined dynamic symbols, demangled) and fails if
# any matches none of the extended regular expressions in ALLOWLIST (one a line; # comments).
# Usage: tools/check_exports.sh LIBRARY ALLOWLIST [NM]
set -euo pipefail
library=$1 allowlist=$2 nm=${3:-nm}
patterns=$(grep -v '^[[:space:]]*\(#\|$\)' "$allowlist")
exported=$("$nm" -D --defined-only --demangle "$library" | cut -d' ' -f3- | sed -E 's/@@?[A-Za-z0-9_.]+$//')
echo "== $(wc -l <<<"$exported") symbols exported by $library"
echo "$exported"
unexpected=$(grep -v -E -x -f <(echo "$patterns") <<<"$exported" || true)
if [[ -n $unexpected ]]; then
  echo "== exported but not in $allowlist:"
  echo "$unexpected"
  exit 1
fi
