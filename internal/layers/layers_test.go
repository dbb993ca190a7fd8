package layers

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/orchdev/orch/"

// pkg is what `go list -json` says of a package, reduced to what the
// layering needs.
type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

func listModule(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module)
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func local(imports []string) []string {
	var out []string
	for _, imp := range imports {
		if rel, ok := strings.CutPrefix(imp, module); ok {
			out = append(out, rel)
		}
	}
	return out
}

// TestLayers: every package of the module has its place in the table,
// nothing in the table is gone, every import of non-test code points to
// the importer's layer or one below, test-support packages are imported
// by tests only, the pure packages import only what Pure allows, no
// worker imports the engine or the task store (Engine), and no worker
// imports the workers Sideways forbids it.
func TestLayers(t *testing.T) {
	for _, problem := range check(listModule(t), Packages, Pure, Engine, Sideways) {
		t.Error(problem)
	}
}

// check returns what is wrong with pkgs against the table and the pure
// packages' allowances.
func check(pkgs []pkg, table map[string]Layer, pure map[string][]string, engine []string, sideways map[string][]string) []string {
	var problems []string
	seen := map[string]bool{}
	for _, p := range pkgs {
		seen[p.ImportPath] = true
		from, ok := table[p.ImportPath]
		if !ok {
			problems = append(problems, fmt.Sprintf("package %s has no layer: place it in internal/layers.Packages", p.ImportPath))
			continue
		}
		for _, imp := range local(p.Imports) {
			to, ok := table[imp]
			switch {
			case !ok: // reported as the package itself
			case to == TestSupport && from != TestSupport:
				problems = append(problems, fmt.Sprintf("%s (%s) imports the test-support package %s outside its tests", p.ImportPath, from, imp))
			case to > from && to != TestSupport:
				problems = append(problems, fmt.Sprintf("%s (%s) imports %s (%s), a layer above it: dependencies run front → steering → workers → orchestrator → model → base", p.ImportPath, from, imp, to))
			case from == Workers && slices.Contains(engine, imp):
				problems = append(problems, fmt.Sprintf("worker %s imports %s: a worker is given its input and returns its output; the engine locks, commits and records (internal/work)", p.ImportPath, imp))
			}
			if slices.Contains(sideways[p.ImportPath], imp) {
				problems = append(problems, fmt.Sprintf("worker %s imports the worker %s: what it needs of another phase's work is injected (internal/work), not called", p.ImportPath, imp))
			}
			if allowed, ok := pure[p.ImportPath]; ok && !slices.Contains(allowed, imp) {
				problems = append(problems, fmt.Sprintf("%s may import only %v of the module, not %s", p.ImportPath, allowed, imp))
			}
		}
	}
	for path := range table {
		if !seen[path] {
			problems = append(problems, fmt.Sprintf("internal/layers.Packages names %s, which is not a package of the module", path))
		}
	}
	slices.Sort(problems)
	return problems
}

// TestCheck: check finds each kind of problem in made-up packages, and
// none where there is none.
func TestCheck(t *testing.T) {
	table := map[string]Layer{"a/lifecycle": Model, "a/task": Model, "a/gitx": Base, "a/cli": Front, "a/gittest": TestSupport, "a/gone": Base, "a/orchestrator": Orchestrator, "a/planner": Workers, "a/work": Model, "a/codegen": Workers, "a/testphase": Workers}
	pure := map[string][]string{"a/lifecycle": {"a/gitx"}}
	m := func(path string, imports ...string) pkg {
		p := pkg{ImportPath: path}
		for _, imp := range imports {
			p.Imports = append(p.Imports, module+imp)
		}
		return p
	}
	got := check([]pkg{
		m("a/lifecycle", "a/gitx", "a/task"), // impure
		m("a/task", "a/cli", "a/gitx"),       // upward
		m("a/gitx", "a/gittest"),             // test support outside tests
		m("a/cli", "a/task", "a/gitx", "a/gittest"),
		m("a/gittest", "a/cli"), // test support may use anything
		m("a/new"),              // no layer
		m("a/orchestrator", "a/task", "a/work"),
		m("a/planner", "a/orchestrator", "a/task", "a/work", "a/gitx"), // a worker calling the engine
		m("a/work"),
		m("a/codegen", "a/testphase", "a/work"), // a worker calling another sideways
		m("a/testphase", "a/work"),
	}, table, pure, []string{"a/orchestrator", "a/task"}, map[string][]string{"a/codegen": {"a/testphase"}})
	want := []string{
		"a/cli (front) imports the test-support package a/gittest outside its tests",
		"a/gitx (base) imports the test-support package a/gittest outside its tests",
		"a/lifecycle may import only [a/gitx] of the module, not a/task",
		"a/task (model) imports a/cli (front), a layer above it: dependencies run front → steering → workers → orchestrator → model → base",
		"internal/layers.Packages names a/gone, which is not a package of the module",
		"package a/new has no layer: place it in internal/layers.Packages",
		"worker a/codegen imports the worker a/testphase: what it needs of another phase's work is injected (internal/work), not called",
		"worker a/planner imports a/orchestrator: a worker is given its input and returns its output; the engine locks, commits and records (internal/work)",
		"worker a/planner imports a/task: a worker is given its input and returns its output; the engine locks, commits and records (internal/work)",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("check found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
