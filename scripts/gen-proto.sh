#!/usr/bin/env bash
# Lints the protobuf schemas under proto/ and regenerates the Go code under
# internal/pb with buf (built from the tools module) and protoc-gen-go (a
# tool of the main module). Runnable from any working directory.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

buf() {
	go tool -modfile=tools/go.mod buf "$@"
}

buf lint

# buf.gen.yaml does not use `clean` because internal/pb also holds
# hand-written tests and golden files. Remove only generated files so that a
# deleted or renamed .proto file cannot leave stale output behind.
find internal/pb -name '*.pb.go' -type f -delete 2>/dev/null || true

buf generate
