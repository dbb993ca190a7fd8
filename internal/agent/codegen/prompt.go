package codegen

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/repomap"
)

// codegenInput is the data of the codegen prompt (prompts/codegen.md).
// Everything in it is derived from files, so the same inputs give the same
// prompt and the call cache can answer a re-run.
type codegenInput struct {
	Base     string
	Plan     string // planning/planning.ai.json as written
	FilePlan string // the file plan, one line per path
	Files    string // the planned files' content at the base
	Failures string // what went wrong before; "" on a first attempt
	Context  string // the repository's file list and neighbouring files
	// FixFrom names the history folders Failures comes from.
	FixFrom []string
}

// buildCodegenInput gathers the prompt's content within the configured
// byte budget: the plan, the planned files at base, the failures of the
// previous attempt, then neighbouring files.
//
// With withFiles false (the model reads files with its tools) the planned
// files are not included.
func buildCodegenInput(ctx context.Context, rt *agent.Runtime, repo *gitx.Repo, taskDir, base string, fp artifact.FilePlan, withFiles bool) (codegenInput, error) {
	budget := rt.Config.Context.MaxContextBytes
	if budget <= 0 {
		budget = agent.DefaultCodeContextBytes
	}
	in := codegenInput{Base: base}
	planText, ok := agent.ReadFileHead(taskDir, artifact.PlanFile, budget/4)
	if !ok {
		return in, fmt.Errorf("codegen: read %s", artifact.PlanFile)
	}
	in.Plan = planText
	in.FilePlan = agent.RenderFilePlan(fp)

	fails := agent.GatherFailures(taskDir, budget/10)
	in.Failures = agent.RenderFailures(fails)
	if s := clip.Head(in.Failures, budget/5); len(s) < len(in.Failures) {
		in.Failures = s + "\n… (cut)\n"
	}
	in.FixFrom = fails.From()

	used := len(in.Plan) + len(in.FilePlan) + len(in.Failures)
	if withFiles {
		files, err := renderPlannedFiles(ctx, repo, base, fp, budget*3/4-used)
		if err != nil {
			return in, err
		}
		in.Files = files
		used += len(in.Files)
	}

	if left := budget - used; left > 1000 {
		policy, err := rt.Policy()
		if err != nil {
			return in, err
		}
		// The plain file list, should the map fail.
		rc, err := agent.GatherContext(ctx, repo.Dir, policy, nil, nil, min(left, 16<<10))
		if err != nil {
			return in, fmt.Errorf("codegen: repository context: %w", err)
		}
		rc.Files = nil // with tools the model reads what it needs
		if !withFiles {
			rt.WithMap(ctx, &rc, repo.Dir, base, codegenSeeds(taskDir, fp))
		} else {
			// Without tools: the map and the map's top-ranked
			// neighbours of the planned files, whole.
			atBase := func(p string) ([]byte, bool) {
				data, ok, err := repo.ShowFile(ctx, base, p)
				return data, ok && err == nil
			}
			if tc, err := rt.TaskContext(ctx, repo.Dir, base, codegenSeeds(taskDir, fp), 0, atBase); err == nil {
				rc.Map = tc.Map
				rc.Files = rankedNeighbours(tc.Ranked, fp, min(left, NeighbourBytes), atBase)
			}
		}
		in.Context = rc.Render()
	}
	return in, nil
}

// Neighbours: a codegen without tools sees at most MaxNeighbours whole
// files besides the planned ones, the map's top-ranked that fit in
// NeighbourBytes together.
const (
	MaxNeighbours  = 3
	NeighbourBytes = 24 << 10
)

// rankedNeighbours returns the top-ranked files (ranked, most relevant
// first) that are not planned, are text and fit in budget bytes together,
// at most MaxNeighbours, read through read.
func rankedNeighbours(ranked []string, fp artifact.FilePlan, budget int, read func(string) ([]byte, bool)) []agent.FileContent {
	planned := fp.Paths()
	var out []agent.FileContent
	for _, p := range ranked {
		if len(out) >= MaxNeighbours {
			break
		}
		if _, ok := planned[p]; ok {
			continue
		}
		data, ok := read(p)
		if !ok || len(data)+len(p)+32 > budget || !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
			continue
		}
		budget -= len(data) + len(p) + 32
		out = append(out, agent.FileContent{Path: p, Content: string(data)})
	}
	return out
}

// renderPlannedFiles shows each planned file as it is at base, within
// budget bytes; what does not fit is named and marked.
func renderPlannedFiles(ctx context.Context, repo *gitx.Repo, base string, fp artifact.FilePlan, budget int) (string, error) {
	var b strings.Builder
	for _, f := range fp.Files {
		data, ok, err := repo.ShowFile(ctx, base, f.Path)
		if err != nil {
			fmt.Fprintf(&b, "\n--- %s: cannot be shown (%v) ---\n", f.Path, err)
			continue
		}
		switch {
		case !ok:
			fmt.Fprintf(&b, "\n--- %s: does not exist at the base ---\n", f.Path)
		case !utf8.Valid(data) || strings.ContainsRune(string(data), 0):
			fmt.Fprintf(&b, "\n--- %s: binary file (%d bytes), not shown; codegen writes text files only ---\n", f.Path, len(data))
		default:
			left := budget - b.Len() - len(f.Path) - 64
			text := clip.Head(string(data), max(left, 0))
			if len(text) < len(data) {
				fmt.Fprintf(&b, "\n--- %s (first %d of %d bytes: the rest did not fit) ---\n", f.Path, len(text), len(data))
			} else {
				fmt.Fprintf(&b, "\n--- %s ---\n", f.Path)
			}
			b.WriteString(text)
			if !strings.HasSuffix(text, "\n") {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "--- end of %s ---\n", f.Path)
		}
	}
	return b.String(), nil
}

// codegenSeeds are what the plan names, for the repository map.
func codegenSeeds(taskDir string, fp artifact.FilePlan) repomap.Seeds {
	var s repomap.Seeds
	if p := artifact.LoadPlan(taskDir); p.OK() {
		s.Brief = p.Value.Brief
		s.Plan = p.Value.Title
	}
	if text, ok := agent.ReadFileHead(taskDir, artifact.PlanFile, 64<<10); ok {
		s.Plan = text
	}
	for _, f := range fp.Files {
		s.Paths = append(s.Paths, f.Path)
	}
	return s
}
