package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/agent/tools"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/hostile"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/patch"
)

// The shared hostile corpus (internal/hostile) through the model answers
// of the planner and of codegen, end to end: agent.Plan and agent.Codegen
// in a real git repository, the answers served by the script provider and
// by a command provider (as "text", and as "json" when the answer is JSON).
// Every hostile answer is refused with the reason, the task keeps its
// phase without a new artifact, and nothing outside .orch/ changes: the
// repository, a sentinel folder beside it, the test's temporary folders.

// answerProviders returns the ways one answer text reaches the agent.
func answerProviders(t *testing.T, role, answer string) map[string]config.Provider {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, v any) string {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	entry := map[string]any{"role": role, "text": answer}
	out := map[string]config.Provider{
		"script":       {Type: "script", Script: write("script.json", map[string]any{"responses": []any{entry, entry, entry}})},
		"command-text": {Type: "command", Command: config.Command{"cat", write("text.json", map[string]any{"text": answer})}},
	}
	if json.Valid([]byte(answer)) {
		p := filepath.Join(dir, "json.json")
		if err := os.WriteFile(p, []byte(`{"json":`+answer+`}`), 0o644); err != nil {
			t.Fatal(err)
		}
		out["command-json"] = config.Provider{Type: "command", Command: config.Command{"cat", p}}
	}
	return out
}

// outside snapshots the test's temporary folders (which hold the
// repository, the provider files and a sentinel folder) except .orch/.
type outside struct {
	t      *testing.T
	parent string
	skip   []string
	before map[string]string
}

func watchOutside(t *testing.T, repo string) *outside {
	t.Helper()
	parent := filepath.Dir(repo)
	for _, rel := range []string{"sentinel/passwd", "sentinel/.bashrc"} {
		p := filepath.Join(parent, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("keep\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// .orch/ is where orch writes; .git/objects gains the blobs of the
	// patch codegen computes (content-addressed and unreachable: they
	// change nothing). The rest of .git (config, hooks, refs, index, HEAD)
	// is watched.
	w := &outside{t: t, parent: parent, skip: []string{filepath.Base(repo) + "/.orch", filepath.Base(repo) + "/.git/objects"}}
	var err error
	if w.before, err = hostile.Snapshot(parent, w.skip...); err != nil {
		t.Fatal(err)
	}
	return w
}

// check fails the test if anything outside .orch/ changed.
func (w *outside) check(what string) {
	w.t.Helper()
	after, err := hostile.Snapshot(w.parent, w.skip...)
	if err != nil {
		w.t.Fatal(err)
	}
	if ch := hostile.Changes(w.before, after); len(ch) > 0 {
		w.t.Errorf("%s changed files outside .orch/:\n%s", what, strings.Join(ch, "\n"))
	}
}

// TestHostilePlannerAnswers runs agent.Plan on every "answer-plan"
// document through every provider.
func TestHostilePlannerAnswers(t *testing.T) {
	docs := hostile.JSONGroup("answer-plan")
	for _, name := range hostile.Names(docs) {
		answer := string(docs[name])
		t.Run(strings.TrimSuffix(filepath.Base(name), ".json"), func(t *testing.T) {
			t.Parallel()
			e := plNewEnv(t, nil, plBrief, "")
			if err := os.Symlink("/etc", filepath.Join(e.root, "link")); err != nil {
				t.Fatal(err)
			}
			plGit(t, e.root, "add", "link")
			plGit(t, e.root, "commit", "-qm", "link")
			providers := answerProviders(t, RolePlanner, answer)
			watch := watchOutside(t, e.root)
			for via, pc := range providers {
				cfg := config.Default()
				cfg.Providers = map[string]config.Provider{"default": pc}
				rt := NewRuntime(e.p, cfg, func(string) string { return "" })
				rt.Now = e.tick.Now
				_, err := Plan(plBackground, rt, e.o, e.id)
				if err == nil {
					t.Fatalf("via %s: accepted", via)
				}
				t.Logf("via %s: %s", via, shortPath(err.Error()))
				if !hostile.Matches(name, err.Error()) {
					t.Errorf("via %s: %q\nwant one of %q", via, shortPath(err.Error()), hostile.Expect(name))
				}
				if st := e.state(); st.Phase != "planning" {
					t.Errorf("via %s: phase %s", via, st.Phase)
				}
				for _, f := range []string{artifact.PlanFile, artifact.FilePlanFile, artifact.PlanMarkdownFile} {
					if e.exists(f) {
						t.Errorf("via %s: %s written", via, f)
					}
				}
			}
			watch.check("planning")
		})
	}
}

// TestHostilePlanPaths: every refused corpus path, as the first or a later
// file_plan entry of a planner answer, is refused by the planner's check
// (what Plan runs on each answer: CompleteJSON's checks, then buildPlan)
// with the JSON path and the path.
func TestHostilePlanPaths(t *testing.T) {
	e := plNewEnv(t, nil, plBrief, "")
	const placeholder = "@@path@@"
	for _, c := range hostile.PathCases() {
		for i, files := range [][]map[string]any{
			{{"path": placeholder, "intent": "create", "summary": "s"}},
			{plFile("fetch/fetch.go", "update"), {"path": placeholder, "intent": "create", "summary": "s"}},
		} {
			// json.Marshal would turn invalid UTF-8 into U+FFFD: the path
			// goes in as its exact bytes.
			raw := []byte(strings.Replace(mustJSON(t, plPlan("Retry", files)), `"`+placeholder+`"`, hostile.JSONString(c.Path), 1))
			_, err := answerChain(raw, func(b []byte) (builtPlan, error) { return buildPlan(b, e.id, plBrief, nil, e.root) })
			if c.Verdict == hostile.Allow {
				if err != nil {
					t.Errorf("%s: refused: %v", c, err)
				}
				continue
			}
			if err == nil {
				t.Errorf("%s: accepted", c)
				continue
			}
			if !isUTF8(c.Path) || strings.TrimSpace(c.Path) == "" {
				continue // refused as a document, or as a blank string
			}
			at := "$.file_plan[" + string(rune('0'+i)) + "].path"
			if msg := err.Error(); !strings.Contains(msg, at) || !strings.Contains(msg, "unsafe path") && !strings.Contains(msg, "expected a safe") {
				t.Errorf("%s: %q does not name %s and the path", c, shortPath(msg), at)
			}
		}
	}
}

// answerChain runs the checks a model answer goes through: CompleteJSON's
// (one attempt) and then validate.
func answerChain[T any](raw []byte, validate func([]byte) (T, error)) (T, error) {
	v, _, err := llm.CompleteJSON(context.Background(), fixedAnswer(raw), llm.Request{Role: "test"}, validate, 1)
	return v, err
}

// fixedAnswer is a provider whose every answer is the same text.
type fixedAnswer []byte

func (fixedAnswer) Name() string { return "fixed" }

func (a fixedAnswer) Complete(context.Context, llm.Request) (llm.Response, error) {
	return llm.Response{Text: string(a), Provider: "fixed"}, nil
}

func isUTF8(s string) bool { return strings.ToValidUTF8(s, "") == s }

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestHostileCodegenAnswers runs agent.Codegen on every "answer-codegen"
// document through every provider, in a repository with a symbolic link
// to /etc.
func TestHostileCodegenAnswers(t *testing.T) {
	passwd, _ := os.ReadFile("/etc/passwd")
	docs := hostile.JSONGroup("answer-codegen")
	for _, name := range hostile.Names(docs) {
		answer := string(docs[name])
		t.Run(strings.TrimSuffix(filepath.Base(name), ".json"), func(t *testing.T) {
			t.Parallel()
			f := newCGFixture(t, nil)
			if err := os.Symlink("/etc", filepath.Join(f.root, "link")); err != nil {
				t.Fatal(err)
			}
			cgGit(t, f.root, "add", "link")
			cgGit(t, f.root, "commit", "-qm", "link")
			// Planned, so that the checks behind the file plan's are reached.
			f.planWith("link", "link/passwd")
			providers := answerProviders(t, RoleCodegen, answer)
			watch := watchOutside(t, f.root)
			for via, pc := range providers {
				_, err := Codegen(context.Background(), f.runtime(pc), f.o, f.id)
				if err == nil {
					t.Fatalf("via %s: accepted", via)
				}
				t.Logf("via %s: %s", via, shortPath(err.Error()))
				if !hostile.Matches(name, err.Error()) {
					t.Errorf("via %s: %q\nwant one of %q", via, shortPath(err.Error()), hostile.Expect(name))
				}
				if f.phase() != "codegen" {
					t.Errorf("via %s: phase %s", via, f.phase())
				}
				if f.exists("code") {
					t.Errorf("via %s: code/ written", via)
				}
			}
			watch.check("codegen")
			if now, _ := os.ReadFile("/etc/passwd"); string(now) != string(passwd) {
				t.Fatal("/etc/passwd changed")
			}
		})
	}
}

// TestHostileCodegenPaths: every refused corpus path, written or deleted
// by a codegen answer, is refused by CheckCodegenAnswer (what Codegen
// runs on each answer, after CompleteJSON's checks) naming the field and
// the path.
func TestHostileCodegenPaths(t *testing.T) {
	for _, c := range hostile.PathCases() {
		q := hostile.JSONString(c.Path)
		for field, raw := range map[string]string{
			"files[1].path": `{"status":"completed","files":[{"path":"calc.go","content":"x"},{"path":` + q + `,"content":"x"}],"deletes":[]}`,
			"deletes[0]":    `{"status":"completed","files":[],"deletes":[` + q + `]}`,
		} {
			_, err := answerChain([]byte(raw), CheckCodegenAnswer)
			// A model's "./x" is the harmless form of "x": made plain.
			if plain := tools.NormalizePath(c.Path); plain != c.Path && artifact.CheckPath(plain) == nil {
				if err != nil {
					t.Errorf("%s as %s: the plain form %q is fine, yet refused: %v", c, field, plain, err)
				}
				continue
			}
			if c.Verdict == hostile.Allow {
				if err != nil {
					t.Errorf("%s as %s: refused: %v", c, field, err)
				}
				continue
			}
			if err == nil {
				t.Errorf("%s as %s: accepted", c, field)
				continue
			}
			if isUTF8(c.Path) && !strings.Contains(err.Error(), field+": unsafe path") {
				t.Errorf("%s as %s: %q", c, field, shortPath(err.Error()))
			}
		}
	}
}

// TestOddNamesStayInside: one codegen answer writing every "allow" corpus
// name (option-like, pathspec magic, full-width dots, combining marks…)
// is accepted through the command provider: each file lands under
// code/files exactly as named, the patch names exactly those files, the
// repository and everything beside it are untouched, and `orch next`
// takes the planned change on to review.
func TestOddNamesStayInside(t *testing.T) {
	f := newCGFixture(t, nil)
	var files []map[string]string
	want := map[string]bool{}
	var planned []string
	for _, p := range hostile.AllowedPaths() {
		files = append(files, map[string]string{"path": p, "content": "odd " + p + "\n"})
		want[p] = true
		planned = append(planned, p+"\tcreate")
	}
	f.planWith(planned...)
	answer := mustJSON(t, map[string]any{"status": "completed", "files": files, "deletes": []string{}})
	provider := answerProviders(t, RoleCodegen, answer)["command-text"]
	watch := watchOutside(t, f.root)
	res, err := Codegen(context.Background(), f.runtime(provider), f.o, f.id)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Record.Unplanned) != 0 || len(res.Record.Files) != len(want) {
		t.Errorf("%d unplanned paths and %d files, want 0 and %d", len(res.Record.Unplanned), len(res.Record.Files), len(want))
	}
	scan := artifact.ScanCodeFiles(f.tk.Dir)
	if !scan.OK() || len(scan.Value) != len(want) {
		t.Fatalf("code/files: %v %v", scan.Value, scan.Err)
	}
	for _, p := range scan.Value {
		if !want[p] {
			t.Errorf("code/files holds %q, which the answer did not name", p)
		}
		if got := f.read(artifact.CodeFilesDir + "/" + p); got != "odd "+p+"\n" {
			t.Errorf("code/files/%s holds %q", p, got)
		}
	}
	d := artifact.LoadDiff(f.tk.Dir)
	if !d.OK() || len(d.Value.Files) != len(want) {
		t.Fatalf("diff.patch: %+v %v", d.Value.Files, d.Err)
	}
	for _, e := range d.Value.Files {
		if e.Op != patch.OpCreate || !want[e.NewPath] {
			t.Errorf("diff.patch entry %+v", e)
		}
	}
	watch.check("codegen of odd names")
	if to := f.next(); to != "review" {
		t.Errorf("orch next went to %s, want review", to)
	}
}

// TestOddNamesPlanned: a planner answer planning every "allow" name is
// accepted, and plan.files.json lists them all.
func TestOddNamesPlanned(t *testing.T) {
	var files []map[string]any
	for _, p := range hostile.AllowedPaths() {
		files = append(files, map[string]any{"path": p, "intent": "create", "summary": "odd"})
	}
	e := plNewEnv(t, nil, plBrief, plScriptConfig(t, plEntry("planner", plPlan("Odd names", files))))
	watch := watchOutside(t, e.root)
	if _, err := Plan(plBackground, e.runtime(), e.o, e.id); err != nil {
		t.Fatal(err)
	}
	fp := artifact.LoadFilePlan(e.taskDir(), artifact.LoadPlan(e.taskDir()))
	if !fp.OK() || fp.Value.Inferred || len(fp.Value.Files) != len(files) {
		t.Fatalf("plan.files.json: %+v %v", fp.Value, fp.Err)
	}
	watch.check("planning of odd names")
}
