#!/usr/bin/env bash
# Reproduce the README's repository-map figures on the synthetic
# repository: first index, warm map, one-file update, each its own
# process (CPU with git, max RSS). See bench/mapbench/main.go.
# Usage: bench/map.sh [-files N] [-dir D] [-runs N]
# (The binary is orch-mapbench-bin: orch-mapbench is the default -dir.)
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o "${TMPDIR:-/tmp}/orch-mapbench-bin" ./bench/mapbench
exec "${TMPDIR:-/tmp}/orch-mapbench-bin" "$@"
