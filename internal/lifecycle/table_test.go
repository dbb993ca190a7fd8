package lifecycle

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/docblock"
)

var update = flag.Bool("update", false, "rewrite the generated diagram in docs/lifecycle.md")

// seedEdges is the edge set of ../shared/seed/global-state-machine.md,
// section 2, written down as data: (from, to, label).
var seedEdges = [][3]string{
	{"planning", "plan_review", "planning succeeded"},
	{"planning", "planning", "re-plan (redo)"},
	{"plan_review", "codegen", "review ok"},
	{"plan_review", "planning", "review needs changes"},
	{"plan_review", "planning", "review blocked"},
	{"codegen", "review", "codegen completed"},
	{"codegen", "planning", "scope mismatch"},
	{"codegen", "plan_review", "plan unclear"},
	{"codegen", "codegen", "re-run codegen"},
	{"review", "test", "review passes"},
	{"review", "codegen", "needs code changes"},
	{"review", "planning", "plan flawed"},
	{"test", "accept", "tests complete"},
	{"test", "codegen", "test failures"},
	{"accept", "done", "accepted"},
	{"accept", "codegen", "requires further changes"},
	{"accept", "review", "unclear / needs review"},
	{"accept", "planning", "upstream problem"},
	{"accept", "revert", "revert requested"},
	{"revert", "done", ""},
}

func TestTableMatchesSeedEdgeSet(t *testing.T) {
	tab := Lifecycle()
	if tab.Initial != Planning {
		t.Errorf("initial phase = %s, seed says planning", tab.Initial)
	}
	var got, want []string
	for _, e := range tab.Edges {
		got = append(got, string(e.From)+" --> "+string(e.To)+": "+e.Label)
	}
	for _, e := range seedEdges {
		want = append(want, e[0]+" --> "+e[1]+": "+e[2])
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("table edges differ from the seed's\n got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestTableInvariants(t *testing.T) {
	tab := Lifecycle()
	conds := map[CondName]bool{}
	for _, e := range tab.Edges {
		if !e.From.Valid() || !e.To.Valid() {
			t.Errorf("edge %v names an unknown phase", e)
		}
		if e.Cond == "" {
			t.Errorf("edge %s → %s has no named condition", e.From, e.To)
		}
		if (e.Kind == Rerun) != (e.From == e.To) {
			t.Errorf("edge %s → %s: only self-loops are re-runs", e.From, e.To)
		}
		if e.Kind == Decided {
			if conds[e.Cond] {
				t.Errorf("condition %s used by two decided edges", e.Cond)
			}
			conds[e.Cond] = true
		}
	}
	for _, p := range Phases() {
		_, fwd := tab.Forward(p)
		if p == Done {
			if len(tab.From(p)) != 0 || fwd {
				t.Errorf("done must have no outgoing edge")
			}
			continue
		}
		if !fwd {
			t.Errorf("phase %s has no forward edge", p)
		}
		if _, ok := tab.Path(p, Done); !ok {
			t.Errorf("done is not reachable from %s", p)
		}
	}
}

func TestPath(t *testing.T) {
	tab := Lifecycle()
	tests := []struct {
		from, to Phase
		want     string
		ok       bool
	}{
		{Planning, PlanReview, "planning plan_review", true},
		{Planning, Test, "planning plan_review codegen review test", true},
		{Accept, Test, "accept review test", true},
		{Accept, Codegen, "accept codegen", true},
		{Test, Planning, "test codegen planning", true},
		{Review, Review, "review", true},
		{Done, Planning, "", false},
		{Revert, Planning, "", false},
		{Revert, Done, "revert done", true},
	}
	for _, tt := range tests {
		path, ok := tab.Path(tt.from, tt.to)
		var names []string
		for _, p := range path {
			names = append(names, string(p))
		}
		if ok != tt.ok || strings.Join(names, " ") != tt.want {
			t.Errorf("Path(%s, %s) = %q, %v; want %q, %v", tt.from, tt.to, names, ok, tt.want, tt.ok)
		}
	}
}

func TestParsePhase(t *testing.T) {
	for in, want := range map[string]Phase{"plan_review": PlanReview, "plan review": PlanReview, " Codegen ": Codegen, "plan-review": PlanReview, "done": Done} {
		if got, err := ParsePhase(in); err != nil || got != want {
			t.Errorf("ParsePhase(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "deploy", "plan__review", "../planning"} {
		if _, err := ParsePhase(in); err == nil || !strings.Contains(err.Error(), "expected one of") {
			t.Errorf("ParsePhase(%q) error = %v, want an 'expected one of' error", in, err)
		}
	}
}

const (
	diagramBegin = "<!-- BEGIN GENERATED: orch diagram (go test ./internal/lifecycle -update) -->"
	diagramEnd   = "<!-- END GENERATED -->"
)

// TestDocsDiagram keeps the diagram in docs/lifecycle.md equal to the one
// generated from the table. Run `go test ./internal/lifecycle -update` to
// regenerate it.
func TestDocsDiagram(t *testing.T) {
	docblock.Check(t, filepath.Join("..", "..", "docs", "lifecycle.md"), diagramBegin, diagramEnd,
		"\n```mermaid\n"+Lifecycle().Mermaid()+"```\n", *update, "go test ./internal/lifecycle -update")
}

func TestMermaidHasEveryEdge(t *testing.T) {
	m := Lifecycle().Mermaid()
	if !strings.HasPrefix(m, "stateDiagram-v2\n    [*] --> planning\n") {
		t.Errorf("diagram header wrong:\n%s", m)
	}
	for _, e := range seedEdges {
		line := "    " + e[0] + " --> " + e[1]
		if e[2] != "" {
			line += ": " + e[2]
		}
		if !strings.Contains(m, line+"\n") {
			t.Errorf("diagram lacks %q", line)
		}
	}
}

// seedPaths are where the seed is read from: the copy kept in docs/, and
// the shared original when this checkout sits beside it.
var seedPaths = []string{
	filepath.Join("..", "..", "docs", "seed", "global-state-machine.md"),
	"/work/shared/seed/global-state-machine.md",
}

var seedEdgeLine = regexp.MustCompile(`^\s*(\w+) --> (\w+)(?::\s*(.*?))?\s*$`)

// seedFileEdges reads the edges of the seed's state diagram (section 2).
func seedFileEdges(t *testing.T, data []byte) [][3]string {
	t.Helper()
	var out [][3]string
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(strings.TrimSpace(line), "stateDiagram-v2"):
			in = true
		case in && strings.HasPrefix(line, "This diagram MUST"):
			return out
		case in:
			if m := seedEdgeLine.FindStringSubmatch(line); m != nil {
				out = append(out, [3]string{m[1], m[2], m[3]})
			}
		}
	}
	if !in {
		t.Fatal("the seed has no stateDiagram-v2 block")
	}
	return out
}

// TestSeedEdgesMatchTheSeedFile: the edge set written down above is the
// one of the seed itself — the copy in docs/seed/, and the shared original
// when it can be read (it must then be identical to the copy).
func TestSeedEdgesMatchTheSeedFile(t *testing.T) {
	var first []byte
	for i, p := range seedPaths {
		data, err := os.ReadFile(p)
		if err != nil {
			if i == 0 {
				t.Fatalf("read the seed's copy: %v", err)
			}
			t.Logf("%s not reachable (%v): checked the copy only", p, err)
			continue
		}
		if i == 0 {
			first = data
		} else if string(data) != string(first) {
			t.Errorf("%s differs from its copy %s: copy it again and check the edges", p, seedPaths[0])
		}
		got := seedFileEdges(t, data)
		if len(got) != len(seedEdges) {
			t.Errorf("%s: %d edges, the test holds %d", p, len(got), len(seedEdges))
		}
		for j := range min(len(got), len(seedEdges)) {
			if got[j] != seedEdges[j] {
				t.Errorf("%s: edge %d is %q, the test holds %q", p, j+1, got[j], seedEdges[j])
			}
		}
	}
}
