#!/bin/sh
# Records the requests upstream's Rust parent sends a real worker (see
# requests.cjs) into codec/codecv2/testdata/rustparent/requests.frames, a
# stream of frames that TestRustParentRequestsReencode decodes and encodes
# again. Run from the module root, with the Rust parent set up:
#   scripts/rustparent/record-requests.sh PEER_DIR SETUP_DIR WORKER_BIN
set -eu
PEER=$(cd "${1:?usage: record-requests.sh PEER_DIR SETUP_DIR WORKER_BIN}" && pwd)
SETUP=$(cd "${2:?usage}" && pwd)
BIN=$(cd "$(dirname "${3:?usage}")" && pwd)/$(basename "$3")
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cat > "$W/worker.sh" <<WORKER
#!/bin/sh
tee "$W/req-\$\$.frames" | "$BIN" "\$@"
WORKER
chmod +x "$W/worker.sh"
RUST_PARENT_PEER="$PEER" MONTY_BIN="$W/worker.sh" sh "$PEER/run.sh" "$SETUP" scripts/rustparent/requests.cjs
mkdir -p codec/codecv2/testdata/rustparent
cat "$W"/req-*.frames > codec/codecv2/testdata/rustparent/requests.frames
ls -l codec/codecv2/testdata/rustparent/requests.frames
