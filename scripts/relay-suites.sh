#!/usr/bin/env bash
# Runs the real-worker session, pool and mount suites again with
# `montygo subprocess` as the worker: at protocol 4 (the relay's default,
# negotiated), with the relay restricted to protocol 2 (the parent then
# negotiates down, as it does with the released worker), and with the
# relay serving protocol 5 (what every upstream 1.x worker speaks; the
# relay translates onto the released worker). At 5,
# MONTY_REQUIRE_PROTOCOL=5 makes the session package's protocol-5 tests
# (TestRealV5*: feed and turn limits, the sleep budget, the OS policy's
# fixed clock and seed, positions, dumps) fail instead of skip when the
# session did not negotiate 5.
# montygo is built into a temporary directory with the real `monty` beside
# it, which is where `montygo subprocess` looks for its inner worker when
# it is started, like every upstream parent starts a worker, with an empty
# environment and no argument but `subprocess`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
real="${MONTY_BIN:-$PWD/.monty/bin/monty}"
if [[ ! -x "$real" ]]; then
  echo "relay-suites: no real worker at $real (run make worker)" >&2
  exit 1
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/montygo" ./cmd/montygo
ln -s "$(readlink -f "$real")" "$tmp/monty"
printf '#!/bin/sh\nexec "%s/montygo" "$@" --protocol 2\n' "$tmp" > "$tmp/montygo-v2"
chmod +x "$tmp/montygo-v2"
printf '#!/bin/sh\nexec "%s/montygo" "$@" --protocol 5\n' "$tmp" > "$tmp/montygo-v5"
chmod +x "$tmp/montygo-v5"
pkgs=(./session/ ./pool/ ./mount/)
status=0
for bin in montygo montygo-v2 montygo-v5; do
  require=""
  if [[ "$bin" == montygo-v5 ]]; then
    require=5
  fi
  echo "relay-suites: ${pkgs[*]} with $bin subprocess as the worker"
  if ! MONTY_REQUIRE_PROTOCOL="$require" MONTY_BIN="$tmp/$bin" go test -race -count=1 "$@" "${pkgs[@]}"; then
    status=1
  fi
done
exit $status
