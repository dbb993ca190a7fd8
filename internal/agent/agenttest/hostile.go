package agenttest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/hostile"
	"github.com/orchdev/orch/internal/llm"
)

// AnswerProviders returns the ways one answer text reaches the agent.
func AnswerProviders(t *testing.T, role, answer string) map[string]config.Provider {
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
type Outside struct {
	t      *testing.T
	parent string
	skip   []string
	before map[string]string
}

func WatchOutside(t *testing.T, repo string) *Outside {
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
	w := &Outside{t: t, parent: parent, skip: []string{filepath.Base(repo) + "/.orch", filepath.Base(repo) + "/.git/objects"}}
	var err error
	if w.before, err = hostile.Snapshot(parent, w.skip...); err != nil {
		t.Fatal(err)
	}
	return w
}

// check fails the test if anything outside .orch/ changed.
func (w *Outside) Check(what string) {
	w.t.Helper()
	after, err := hostile.Snapshot(w.parent, w.skip...)
	if err != nil {
		w.t.Fatal(err)
	}
	if ch := hostile.Changes(w.before, after); len(ch) > 0 {
		w.t.Errorf("%s changed files outside .orch/:\n%s", what, strings.Join(ch, "\n"))
	}
}

// AnswerChain runs the checks a model answer goes through: CompleteJSON's
// (one attempt) and then validate.
func AnswerChain[T any](raw []byte, validate func([]byte) (T, error)) (T, error) {
	v, _, err := llm.CompleteJSON(context.Background(), FixedAnswer(raw), llm.Request{Role: "test"}, validate, 1)
	return v, err
}

// FixedAnswer is a provider whose every answer is the same text.
type FixedAnswer []byte

func (FixedAnswer) Name() string { return "fixed" }

func (a FixedAnswer) Complete(context.Context, llm.Request) (llm.Response, error) {
	return llm.Response{Text: string(a), Provider: "fixed"}, nil
}

func IsUTF8(s string) bool { return strings.ToValidUTF8(s, "") == s }
