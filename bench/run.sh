#!/usr/bin/env bash
# Reproduce the performance figures of the README's "Performance" section:
# builds orch, builds the fixtures in a temporary folder, runs each command
# repeatedly as a whole process and prints medians and peak memory.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./bench/orchbench "$@"
