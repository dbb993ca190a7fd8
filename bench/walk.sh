#!/usr/bin/env bash
# Measure the walk of README's "Layout of the code": which of orch's
# packages run during one `orch codegen`, `orch test` and `orch next`.
# orch is built with coverage (go build -cover) and each command run once
# on the fixture of internal/cli/testdata/script/agent_code.txtar (the
# script provider answers for the model); a package counts as crossed when
# any of its statements ran. Also prints the static numbers: the packages
# importing the engine and the artifact.Load* calls in worker packages.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
m=github.com/orchdev/orch/
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -cover -coverpkg="${m}..." -o "$tmp/bin/orch" ./cmd/orch
export PATH="$tmp/bin:$PATH"

# The fixture: the files of the testscript.
mkdir "$tmp/repo"
awk -v dir="$tmp/repo" '/^-- .* --$/ {f=dir "/" $2; next} f {print > f}' internal/cli/testdata/script/agent_code.txtar
cd "$tmp/repo"
# A home of its own for orch and git; go keeps its caches.
export GOMODCACHE=$(go env GOMODCACHE) GOCACHE=$(go env GOCACHE) GOPATH=$(go env GOPATH)
export HOME=$tmp/home XDG_CACHE_HOME=$tmp/cache GIT_AUTHOR_NAME=w GIT_AUTHOR_EMAIL=w@x GIT_COMMITTER_NAME=w GIT_COMMITTER_EMAIL=w@x
mkdir -p "$HOME" "$tmp/cov/setup"
export GOCOVERDIR=$tmp/cov/setup # the setup's own coverage, not counted
git init -q && git add -A && git commit -qm base
orch init >/dev/null
cp config.toml .orch/config.toml
orch new --id fix 'make Add add' >/dev/null
cp plan.json .orch/tasks/fix/planning/planning.ai.json
orch next --override 'plan reviewed on paper' --to codegen >/dev/null

# blocks DIR: the code blocks that ran, one per line (file:range).
blocks() {
	go tool covdata textfmt -i "$1" -o "$1.txt"
	awk 'NR > 1 && $3 > 0 {print $1}' "$1.txt" | sort -u
}
# Package initialisation runs in every package linked in: what runs for
# `orch --help` is the baseline, not counted.
mkdir -p "$tmp/cov/base"
GOCOVERDIR="$tmp/cov/base" orch --help >/dev/null 2>&1 || true
blocks "$tmp/cov/base" >"$tmp/base.blocks"
crossed() { # crossed NAME COMMAND...: run COMMAND, list the packages of the blocks it ran beyond the baseline
	local name=$1 dir
	shift
	dir="$tmp/cov/$(echo "$name" | tr ' ' _)"
	mkdir -p "$dir"
	GOCOVERDIR="$dir" "$@" >/dev/null 2>&1 || true
	blocks "$dir" | comm -23 - "$tmp/base.blocks" | sed -e "s|^$m||" -e 's|/[^/]*\.go:.*||' | sort -u >"$dir.pkgs"
	printf '%-14s %2d packages: %s\n' "$name" "$(wc -l <"$dir.pkgs")" "$(tr '\n' ' ' <"$dir.pkgs")"
}
crossed "orch codegen" orch codegen
crossed "orch next" orch next
orch review code >/dev/null 2>&1
orch next >/dev/null 2>&1
echo '[test]' >>.orch/config.toml
echo 'sandbox = "none"' >>.orch/config.toml
crossed "orch test" orch test

cd "$root"
echo
echo "packages importing internal/orchestrator: $(go list -f '{{.ImportPath}} {{join .Imports " "}}' ./... | awk -v o="${m}internal/orchestrator" '{for (i = 2; i <= NF; i++) if ($i == o) {n++; break}} END {print n}')"
n=0
for d in internal/agent internal/agent/planner internal/agent/review internal/agent/codegen internal/agent/advisor internal/agent/tools internal/testphase internal/landing; do
	c=$(cat $(ls $d/*.go | grep -v _test.go) | { grep -o 'artifact\.Load[A-Za-z]*(' || true; } | wc -l)
	n=$((n + c))
done
echo "artifact.Load* calls in worker packages: $n"
echo "artifact.Load* calls in all packages: $(grep -rho 'artifact\.Load[A-Za-z]*(' --include=*.go --exclude=*_test.go internal cmd | wc -l)"
