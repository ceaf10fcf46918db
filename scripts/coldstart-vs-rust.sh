#!/bin/sh
# Cold start (spawn + Configure + first feed of `1 + 2`, up to the result) of
# gomonty beside upstream's Rust parent on the same worker binary, in
# alternating rounds of the same run: each round runs BenchmarkColdStart
# (the raw Go floor and gomonty's session) and then the Rust parent, N cold
# starts each, and prints the median op of each. The summary is the median
# over rounds of each column and of the per-round gomonty/Rust ratio.
#
#   scripts/coldstart-vs-rust.sh [ROUNDS [N]]      (defaults: 10 rounds of 100)
#
# BEFORE=REF adds a column: the same benchmark built with worker/ taken
# from REF (the committed tree otherwise), to measure a change of the
# worker package before and after in the same run.
#
# Needs the Rust parent kit (setup.sh, run.sh, monty-rust-parent.cjs) in
# $RUST_PARENT (default /work/shared/peers/rust-parent), and network access
# for its one-time setup into $RUST_PARENT_ENV. A tool for a person at the
# shell: no test or CI job runs it.
set -eu
ROUNDS=${1:-10}
N=${2:-100}
cd "$(dirname "$0")/.."
RP=${RUST_PARENT:-/work/shared/peers/rust-parent}
ENV=${RUST_PARENT_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/gomonty-rust-parent}
BIN=${MONTY_BIN:-$PWD/.monty/bin/monty}
[ -x "$BIN" ] || { echo "no worker at $BIN: run make worker" >&2; exit 1; }
"$RP/setup.sh" "$ENV" >/dev/null
T=$(mktemp -d)
trap 'git worktree remove --force "$T/before" 2>/dev/null || true; rm -rf "$T"' EXIT
go test -c -o "$T/after.test" ./session/
if [ -n "${BEFORE:-}" ]; then
  git worktree add -q --detach "$T/before" HEAD
  (cd "$T/before" && git checkout -q "$BEFORE" -- worker/ && go test -c -o "$T/before.test" ./session/)
fi
p50() { # the p50-ns/op of benchmark $2 in output $1, in µs
  echo "$1" | awk -v b="$2" '$1 ~ b { for (i = 1; i < NF; i++) if ($(i+1) == "p50-ns/op") printf "%.0f", $i / 1e3 }'
}
echo "worker $BIN; $ROUNDS rounds of $N cold starts; median op of each round in µs"
printf '%-5s %7s %7s %7s %7s %8s\n' round floor before gomonty rust go/rust
for r in $(seq "$ROUNDS"); do
  g=$(MONTY_BIN=$BIN "$T/after.test" -test.run '^$' -test.bench 'ColdStart' -test.benchtime="${N}x" -test.benchmem)
  b=-
  if [ -n "${BEFORE:-}" ]; then
    b=$(p50 "$(MONTY_BIN=$BIN "$T/before.test" -test.run '^$' -test.bench 'ColdStart/session' -test.benchtime="${N}x")" ColdStart/session)
  fi
  ru=$(RP_LIB=$RP/monty-rust-parent.cjs MONTY_BIN=$BIN "$RP/run.sh" "$ENV" scripts/coldstart-rust.cjs "$N" |
    sed -n 's/.*p50-ns\/op=\([0-9]*\).*/\1/p')
  echo "$r $(p50 "$g" ColdStart/floor) $b $(p50 "$g" ColdStart/session) $((ru / 1000))" |
    awk '{ printf "%-5s %7s %7s %7s %7s %8.3f\n", $1, $2, $3, $4, $5, $4 / $5 }' | tee -a "$T/rounds"
done
awk '{ for (c = 2; c <= 6; c++) v[c, NR] = $c }
  END {
    printf "%-5s", "p50"
    for (c = 2; c <= 6; c++) {
      n = 0; for (i = 1; i <= NR; i++) if (v[c, i] != "-") a[++n] = v[c, i] + 0
      for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] > x; j--) a[j+1] = a[j]; a[j+1] = x }
      m = n ? (n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2) : "-"
      printf(c == 6 ? " %8.3f\n" : " %7s", m)
    }
  }' "$T/rounds"
