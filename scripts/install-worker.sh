#!/usr/bin/env bash
# Installs the released monty worker binary (protocol 2) from the npm registry
# into .monty/bin/monty. The tarball is checked against the pinned sha512
# integrity value before anything is unpacked. Idempotent: a binary that is
# already installed with the pinned version is left alone.
set -euo pipefail

PKG="@pydantic/monty-linux-x64-gnu"
VERSION="0.0.23"
# npm's dist.integrity for ${PKG}@${VERSION}.
INTEGRITY="sha512-4+Y4WYPLGixP2+2AFtY4IUGwAXRRPvhixjoV6H6b1lCypd+Af5BiZ0a0vOARTfqGVGXLDtbzqFatfU2fWmwkzg=="

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="${MONTY_INSTALL_DIR:-$ROOT/.monty}"
BIN="$DEST/bin/monty"
STAMP="$DEST/bin/.installed"

if [[ -x "$BIN" && -f "$STAMP" && "$(cat "$STAMP")" == "$PKG@$VERSION $INTEGRITY" ]]; then
  echo "worker: $PKG@$VERSION already installed at $BIN"
  exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
  echo "worker: npm is required to fetch $PKG@$VERSION (install Node.js/npm, or set MONTY_BIN)" >&2
  exit 1
fi

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

if ! (cd "$TMP" && npm pack --silent "$PKG@$VERSION" >"$TMP/name" 2>"$TMP/npm.err"); then
  echo "worker: npm pack $PKG@$VERSION failed (is the npm registry reachable?):" >&2
  cat "$TMP/npm.err" >&2
  exit 1
fi
TARBALL="$TMP/$(tail -n1 "$TMP/name")"

GOT="sha512-$(openssl dgst -sha512 -binary "$TARBALL" | base64 -w0)"
if [[ "$GOT" != "$INTEGRITY" ]]; then
  echo "worker: integrity mismatch for $PKG@$VERSION" >&2
  echo "  want $INTEGRITY" >&2
  echo "  got  $GOT" >&2
  exit 1
fi

mkdir -p "$TMP/x"
tar -xzf "$TARBALL" -C "$TMP/x" package/monty
mkdir -p "$DEST/bin"
install -m 0755 "$TMP/x/package/monty" "$BIN.tmp"
mv -f "$BIN.tmp" "$BIN"
echo "$PKG@$VERSION $INTEGRITY" >"$STAMP"
echo "worker: installed $PKG@$VERSION at $BIN ($("$BIN" --version 2>/dev/null || echo unknown version))"
