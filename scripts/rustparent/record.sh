#!/bin/sh
# Records upstream's Rust parent's verdicts on hostile protocol-2 event
# frames into codec/codecv2/testdata/rustparent/verdicts.jsonl, which
# TestRustParentVerdicts replays. Run from the module root, with the Rust
# parent set up (see README.md):
#   scripts/rustparent/record.sh PEER_DIR SETUP_DIR [N] [SEED]
# PEER_DIR holds monty-rust-parent.cjs and run.sh; SETUP_DIR is what its
# setup.sh installed into. Needs go, node and python3.
set -eu
PEER=$(cd "${1:?usage: record.sh PEER_DIR SETUP_DIR [N] [SEED]}" && pwd)
SETUP=$(cd "${2:?usage: record.sh PEER_DIR SETUP_DIR [N] [SEED]}" && pwd)
N=${3:-3000}
SEED=${4:-23}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
go build -o "$W/fakew" ./scripts/rustparent/fakew
go run ./scripts/rustparent/genframes -dir "$W" -n "$N" -seed "$SEED"
printf '#!/bin/sh\nexec %s/fakew "$@"\n' "$W" > "$W/worker.sh"
chmod +x "$W/worker.sh"
for set in frames probes bases; do
  ls "$W/$set"/*.bin | RPX_WORK="$W" RUST_PARENT_PEER="$PEER" MONTY_BIN="$W/worker.sh" \
    sh "$PEER/run.sh" "$SETUP" scripts/rustparent/driver.cjs > "$W/$set.jsonl"
done
mkdir -p codec/codecv2/testdata/rustparent
python3 scripts/rustparent/record.py codec/codecv2/testdata/rustparent/verdicts.jsonl "$W/frames.jsonl" "$W/probes.jsonl" "$W/bases.jsonl"
wc -l codec/codecv2/testdata/rustparent/verdicts.jsonl
