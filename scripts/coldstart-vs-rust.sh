#!/bin/sh
# Cold start (spawn + Configure + first feed of `1 + 2`, up to the result) of
# gomonty beside upstream's Rust parent on the same worker binary: the
# internal/coldcompare driver runs one gomonty op and one Rust-parent op
# (scripts/coldstart-rust.cjs) in turn, N pairs, and prints percentiles and
# the gomonty/Rust ratio.
#
#   scripts/coldstart-vs-rust.sh [N [ROUNDS]]    (defaults: 400 pairs, 3 rounds)
#
# BEFORE=REF also builds the driver with worker/ and session/ taken from REF
# (the committed tree otherwise) and alternates the two drivers, ROUNDS
# times each, to measure a change before and after in the same run.
#
# Needs the Rust parent kit (setup.sh, run.sh, monty-rust-parent.cjs) in
# $RUST_PARENT (default /work/shared/peers/rust-parent), and network access
# for its one-time setup into $RUST_PARENT_ENV. A tool for a person at the
# shell: no test or CI job runs it.
set -eu
N=${1:-400}
ROUNDS=${2:-3}
cd "$(dirname "$0")/.."
RP=${RUST_PARENT:-/work/shared/peers/rust-parent}
ENV=${RUST_PARENT_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/gomonty-rust-parent}
export MONTY_BIN=${MONTY_BIN:-$PWD/.monty/bin/monty}
export RP_LIB=$RP/monty-rust-parent.cjs
[ -x "$MONTY_BIN" ] || { echo "no worker at $MONTY_BIN: run make worker" >&2; exit 1; }
"$RP/setup.sh" "$ENV" >/dev/null
T=$(mktemp -d)
trap 'git worktree remove --force "$T/before" 2>/dev/null || true; rm -rf "$T"' EXIT
go build -o "$T/drv-after" ./internal/coldcompare
drivers=after
if [ -n "${BEFORE:-}" ]; then
  git worktree add -q --detach "$T/before" HEAD
  (cd "$T/before" && git checkout -q "$BEFORE" -- worker/ session/ && go build -o "$T/drv-before" ./internal/coldcompare)
  drivers="before after"
fi
echo "worker $MONTY_BIN; $(uptime)"
for r in $(seq "$ROUNDS"); do
  for d in $drivers; do
    echo "== round $r, gomonty $d"
    "$T/drv-$d" -n "$N" -- "$RP/run.sh" "$ENV" "$PWD/scripts/coldstart-rust.cjs"
  done
done
