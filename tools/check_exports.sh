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
# grep exits 1 when every symbol is allowed, 2 on a bad pattern: only 1 may pass (an `|| true`
# here took an allowlist grep could not read for one that allows everything).
status=0
unexpected=$(grep -v -E -x -f <(echo "$patterns") <<<"$exported") || status=$?
if ((status > 1)); then
  echo "== grep cannot use the patterns of $allowlist (exit $status)" >&2
  exit 1
fi
if [[ -n $unexpected ]]; then
  echo "== exported but not in $allowlist:"
  echo "$unexpected"
  exit 1
fi
