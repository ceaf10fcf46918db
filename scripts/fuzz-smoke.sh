#!/usr/bin/env bash
# Runs every fuzz target in the module for a short time (default 5s each).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
T="${1:-5s}"
status=0
while IFS= read -r pkg; do
  dir="$(go list -f '{{.Dir}}' "$pkg")"
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz: $pkg $f ($T)"
    if ! go test -run='^$' -fuzz="^${f}\$" -fuzztime="$T" "$pkg" >/tmp/fuzz-$$.log 2>&1; then
      cat /tmp/fuzz-$$.log
      status=1
    fi
  done
done < <(go list ./... )
rm -f /tmp/fuzz-$$.log
exit $status
