#!/usr/bin/env bash
# Regenerates the protobuf Go code and fails if the result differs from what
# is checked in (or if anything under proto/ or internal/pb is uncommitted).
# Runnable from any working directory.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

"$root/scripts/gen-proto.sh"

paths=(proto internal/pb buf.yaml buf.gen.yaml)
status="$(git status --porcelain -- "${paths[@]}")"
if [[ -n "$status" ]]; then
	echo "check-proto: generated code or schema is out of date / uncommitted:" >&2
	echo "$status" >&2
	git --no-pager diff -- "${paths[@]}" >&2 || true
	exit 1
fi
echo "check-proto: OK"
