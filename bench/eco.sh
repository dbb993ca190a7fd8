#!/usr/bin/env bash
# Reproduce the README's test-phase figures: `orch test` against the same
# test runner by hand, per ecosystem, on warm caches (see
# bench/ecobench/main.go). Usage: bench/eco.sh [-runs N] [-only NAME]
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./bench/ecobench "$@"
