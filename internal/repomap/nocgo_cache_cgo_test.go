//go:build cgo

package repomap

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCacheSharedWithBuildWithoutCgo: orch built without cgo (no
// tree-sitter: Go's definitions only) and orch built with it share one
// cache folder. Each build takes from the other's index file only what
// is complete for it: this build parses again the files the other left
// without definitions (every language but Go, and a Go file go/parser
// rejects), and reuses the rest; the build without cgo reuses
// everything this build indexed, definitions included. The build without
// cgo is this package's test binary compiled with CGO_ENABLED=0.
func TestCacheSharedWithBuildWithoutCgo(t *testing.T) {
	files := maps.Clone(fixture)
	// go/parser rejects this file; tree-sitter still finds Salvaged.
	files["broken/broken.go"] = "package broken\n\nfunc Salvaged() int { return 1 }\n\nfunc (\n"
	dir := newRepo(t, files)
	cache := filepath.Join(t.TempDir(), "cache")
	names := []string{"NewBackoff", "Fetcher", "makeClient", "Engine", "Store", "Salvaged"}

	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	bin := filepath.Join(t.TempDir(), "repomap-nocgo.test")
	build := exec.Command(goCmd, "test", "-c", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the test binary without cgo: %v\n%s", err, out)
	}
	noCgo := func(step string) helperIndexed {
		t.Helper()
		cmd := exec.Command(bin, "-test.run=^$")
		cmd.Env = append(os.Environ(), "REPOMAP_HELPER="+strings.Join(append([]string{"index", dir, cache}, names...), "\n"))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: the build without cgo: %v\n%s", step, err, out)
		}
		var got helperIndexed
		if err := json.Unmarshal(out, &got); err != nil || got.Definitions {
			t.Fatalf("%s: the build without cgo printed %s (%v); want DefinitionsAvailable false", step, out, err)
		}
		return got
	}
	withCgo := func() helperIndexed {
		t.Helper()
		ix, err := Build(t.Context(), dir, Options{CacheDir: cache, Fresh: true, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		got := helperIndexed{Definitions: DefinitionsAvailable, Stats: ix.Stats(), Defs: map[string]int{}}
		for _, name := range names {
			got.Defs[name] = len(ix.Definitions(name))
		}
		return got
	}
	all := map[string]int{"NewBackoff": 1, "Fetcher": 1, "makeClient": 1, "Engine": 1, "Store": 1, "Salvaged": 1}
	check := func(step string, got helperIndexed, parsed, cached int, defs map[string]int) {
		t.Helper()
		if got.Stats.Parsed != parsed || got.Stats.Cached != cached || got.Stats.Damaged != 0 {
			t.Errorf("%s: parsed %d, cached %d, damaged %d; want parsed %d, cached %d", step, got.Stats.Parsed, got.Stats.Cached, got.Stats.Damaged, parsed, cached)
		}
		if !maps.Equal(got.Defs, defs) {
			t.Errorf("%s: definitions found %v, want %v", step, got.Defs, defs)
		}
	}

	// 12 source files: 3 Go files go/parser reads, 9 that need tree-sitter.
	check("first build, without cgo", noCgo("first"), 12, 0,
		map[string]int{"NewBackoff": 1, "Fetcher": 0, "makeClient": 0, "Engine": 0, "Store": 0, "Salvaged": 0})
	check("then with cgo", withCgo(), 9, 3, all)
	check("again without cgo", noCgo("again"), 0, 12, all)
	check("again with cgo", withCgo(), 0, 12, all)
}
