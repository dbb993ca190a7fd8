package codegen

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"sort"
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

	planned := fp.Paths()
	if left := budget - used; left > 1000 {
		policy, err := rt.Policy()
		if err != nil {
			return in, err
		}
		rc, err := agent.GatherContext(ctx, repo.Dir, policy, codegenKeywords(taskDir, fp), neighbours(ctx, repo, fp), left)
		if err != nil {
			return in, fmt.Errorf("codegen: repository context: %w", err)
		}
		kept := rc.Files[:0]
		for _, f := range rc.Files {
			if _, ok := planned[f.Path]; !ok {
				kept = append(kept, f)
			}
		}
		rc.Files = kept
		if !withFiles {
			rc.Files = nil // the model reads what it needs with its tools
		}
		rt.WithMap(ctx, &rc, repo.Dir, base, codegenSeeds(taskDir, fp))
		in.Context = rc.Render()
	}
	return in, nil
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

// neighbours returns the other files in the planned files' folders, which
// show the local conventions; at most a few per folder, those sharing a
// planned file's extension first (code next to code, not .gitignore).
func neighbours(ctx context.Context, repo *gitx.Repo, fp artifact.FilePlan) []string {
	files, err := repo.LsFiles(ctx)
	if err != nil {
		return nil
	}
	planned := fp.Paths()
	dirs := map[string]int{}
	exts := map[string]bool{}
	for _, f := range fp.Files {
		dirs[path.Dir(f.Path)] = 0
		exts[path.Ext(f.Path)] = true
	}
	sort.SliceStable(files, func(i, j int) bool {
		ei, ej := exts[path.Ext(files[i])], exts[path.Ext(files[j])]
		if ei != ej {
			return ei
		}
		return files[i] < files[j]
	})
	const perDir = 6
	var out []string
	for _, f := range files {
		if _, ok := planned[f]; ok || strings.HasPrefix(f, ".orch/") {
			continue
		}
		d := path.Dir(f)
		if n, ok := dirs[d]; ok && n < perDir {
			dirs[d] = n + 1
			out = append(out, f)
		}
	}
	return out
}

// codegenKeywords are the words of the plan's title, brief and file
// summaries.
func codegenKeywords(taskDir string, fp artifact.FilePlan) []string {
	var text strings.Builder
	if p := artifact.LoadPlan(taskDir); p.OK() {
		text.WriteString(p.Value.Title + " " + p.Value.Brief + " ")
	}
	for _, f := range fp.Files {
		text.WriteString(f.Summary + " " + strings.TrimSuffix(filepath.Base(f.Path), filepath.Ext(f.Path)) + " ")
	}
	return agent.Keywords(text.String())
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
