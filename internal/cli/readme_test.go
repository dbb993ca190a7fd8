package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/docblock"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/task"
)

// readme is the project's README, from this package's folder.
var readme = filepath.Join("..", "..", "README.md")

// TestReadmeProviderExamples: every provider block of README's "Provider
// examples" parses, builds its provider through the agents' runtime, and
// the command example's script answers through the real command provider.
func TestReadmeProviderExamples(t *testing.T) {
	sec := docblock.Section(t, readme, "### Provider examples")
	blocks := docblock.Fenced(sec, "toml")
	types := map[string]bool{}
	root := t.TempDir()
	// A command provider runs in orch's working folder.
	t.Chdir(root)
	p, _, err := task.InitProject(root)
	if err != nil {
		t.Fatal(err)
	}
	// The files the examples name.
	scripts := docblock.Fenced(sec, "sh")
	if len(scripts) != 1 {
		t.Fatalf("want one sh block (the command provider's script), got %d", len(scripts))
	}
	mustWrite(t, filepath.Join(root, "tools", "answer.sh"), scripts[0])
	mustWrite(t, filepath.Join(root, "testdata", "answers.json"), `{"responses": [{"role": "planner", "text": "replayed"}]}`)
	getenv := func(k string) string {
		if strings.HasSuffix(k, "_API_KEY") {
			return "test-key"
		}
		return ""
	}
	for i, b := range blocks {
		cfg, err := config.Parse("README block", []byte(b))
		if err != nil {
			t.Errorf("block %d does not parse: %v\n%s", i+1, err, b)
			continue
		}
		if len(cfg.Providers) != 1 {
			t.Errorf("block %d defines %d providers, want 1", i+1, len(cfg.Providers))
			continue
		}
		rt := agent.NewRuntime(p, cfg, getenv)
		prov, lc, _, err := rt.Provider(agent.RolePlanner)
		if err != nil {
			t.Errorf("block %d: provider: %v", i+1, err)
			continue
		}
		types[lc.Type] = true
		switch lc.Type {
		case llm.TypeCommand, llm.TypeScript:
			// Offline types answer for real.
			resp, err := prov.Complete(context.Background(), llm.Request{Role: agent.RolePlanner, Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
			if err != nil {
				t.Errorf("block %d (%s): %v", i+1, lc.Type, err)
			} else if resp.Text == "" {
				t.Errorf("block %d (%s): empty answer", i+1, lc.Type)
			}
		}
	}
	for _, typ := range []string{llm.TypeOpenAI, llm.TypeAnthropic, llm.TypeCommand, llm.TypeScript} {
		if !types[typ] {
			t.Errorf("README's provider examples have no %s provider", typ)
		}
	}
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestReadmeCommands: every command of the command tree has its row in
// README's "Commands" table, and the table names no command that does not
// exist.
func TestReadmeCommands(t *testing.T) {
	sec := docblock.Section(t, readme, "## Commands")
	root := newRootCmd(&Env{})
	root.InitDefaultCompletionCmd()
	known := map[string]bool{}
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "__complete" || c.Name() == "__completeNoDesc" {
			continue
		}
		known[c.Name()] = true
		if !strings.Contains(sec, "| `orch "+c.Name()) && !strings.Contains(sec, "`orch "+c.Name()+" ") && !strings.Contains(sec, "`orch "+c.Name()+"`") {
			t.Errorf("README's Commands table has no row for `orch %s`", c.Name())
		}
	}
	for _, m := range regexp.MustCompile("(?m)^\\| `orch ([a-z]+)").FindAllStringSubmatch(sec, -1) {
		if !known[m[1]] {
			t.Errorf("README's Commands table names `orch %s`, which does not exist", m[1])
		}
	}
	if !strings.Contains(sec, "--no-pager") || !strings.Contains(sec, "ORCH_PAGER") {
		t.Errorf("README's Commands section does not explain the pager")
	}
}

// TestReadmeQuickStart runs README's quick start as written — its sh
// block, with orch on PATH, in a fresh git repository with one commit —
// and checks that every step the comments announce happened: each
// `orch next  # a → b` printed a → b, in order, and the task is done.
func TestReadmeQuickStart(t *testing.T) {
	sec := docblock.Section(t, readme, "## Quick start: a task from planning to done, by hand")
	blocks := docblock.Fenced(sec, "sh")
	if len(blocks) != 1 {
		t.Fatalf("want one sh block in the quick start, got %d", len(blocks))
	}
	script := blocks[0]
	bin := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(bin, "orch"), "#!/bin/sh\nexec "+shellQuote(exe)+` "$@"`+"\n")
	if err := os.Chmod(filepath.Join(bin, "orch"), 0o755); err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	gitEnv := append([]string{"GIT_CONFIG_NOSYSTEM=1", "HOME=" + repo}, gittest.Identity...)
	gittest.Git(t, repo, "init", "-q")
	gittest.CommitAll(t, repo, "base")
	cmd := exec.Command("sh", "-e", "-c", script)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), append(gitEnv, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), reexecEnv+"=1", "GORACE=atexit_sleep_ms=0")...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("README's quick start failed (sh -e): %v\n%s", err, out)
	}
	// Every "# a → b" comment is a step that happened, in order.
	rest := string(out)
	steps := regexp.MustCompile(`(?m)^orch next\s+#\s*(\S+ → \S+)\s*$`).FindAllStringSubmatch(script, -1)
	if len(steps) != 6 {
		t.Fatalf("the quick start announces %d transitions, want the 6 of the lifecycle's forward path", len(steps))
	}
	for _, m := range steps {
		i := strings.Index(rest, m[1])
		if i < 0 {
			t.Fatalf("the quick start's output lacks %q (in order):\n%s", m[1], out)
		}
		rest = rest[i+len(m[1]):]
	}
	for _, want := range []string{"planning/planning.ai.json is missing", "accept → done"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the quick start's output lacks %q:\n%s", want, out)
		}
	}
	state, err := os.ReadFile(filepath.Join(repo, ".orch", "tasks", "add-retry", "state.json"))
	if err != nil || !strings.Contains(string(state), `"phase": "done"`) && !strings.Contains(string(state), `"phase":"done"`) {
		t.Errorf("after the quick start the task is not done: %s %v", state, err)
	}
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
