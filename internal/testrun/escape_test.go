package testrun

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/artifact/artifacttest"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/sandbox"
)

// escapeScript tries to get out of the sandbox. Each probe records
// name=yes when its attempt succeeded, name=no otherwise, in results.txt
// in the directory. git-status runs first: the writes after it break git.
const escapeScript = `r=results.txt
: > $r
probe() { if ( eval "$2" ) >/dev/null 2>&1; then echo "$1=yes" >> $r; else echo "$1=no" >> $r; fi; }
probe git-status 'git status --porcelain && git log -1 --format=%H'
probe dir-write 'echo x > inside.txt'
probe home-write 'echo planted > "$HOME/planted"'
probe ssh-write 'mkdir -p "$HOME/.ssh" && echo planted >> "$HOME/.ssh/authorized_keys"'
probe ssh-read 'grep -q seeded-ssh-secret "$HOME/.ssh/id_seed"'
probe hook-write 'echo "#!/bin/sh" > "$MAIN_GIT/hooks/pre-commit"'
probe config-write 'printf "[core]\n\tfsmonitor = planted\n" >> "$MAIN_GIT/config"'
probe link-write 'echo "gitdir: /planted" > .git'
probe env-secret '[ "$SEEDED_API_TOKEN" = seeded-env-secret ]'
probe tcp-connect 'bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT"'
`

// escapeFixture is a fake home (inside the real one, so that it is hidden
// like a real home would be) with a seeded ~/.ssh and a main repository in
// it, and a linked worktree of that repository elsewhere.
type escapeFixture struct {
	home, mainGit, worktree string
	config, link            []byte // the main repository's config and the worktree's .git as created
}

func newEscapeFixture(t *testing.T, realHome string) escapeFixture {
	t.Helper()
	home, err := os.MkdirTemp(realHome, ".orch-testrun-home-")
	if err != nil {
		t.Fatalf("cannot create a fake home in %s: %v", realHome, err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	gittest.WriteFiles(t, home, map[string]string{
		".ssh/id_seed":         "seeded-ssh-secret\n",
		".ssh/authorized_keys": "original\n",
		"src/main/a.txt":       "a\n",
	})
	main := filepath.Join(home, "src", "main")
	gittest.Git(t, main, "init", "-q")
	gittest.CommitAll(t, main, "base")
	wt := gittest.AddWorktree(t, main)
	f := escapeFixture{home: home, mainGit: filepath.Join(main, ".git"), worktree: wt}
	f.config = []byte(gittest.ReadFile(t, filepath.Join(f.mainGit, "config")))
	f.link = []byte(gittest.ReadFile(t, filepath.Join(wt, ".git")))
	return f
}

// escaped reports, per probe, whether its effect reached the host (writes)
// or what the suite could do (reads, network, git).
func (f escapeFixture) escaped(t *testing.T, results map[string]string) map[string]bool {
	t.Helper()
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	keys, _ := os.ReadFile(filepath.Join(f.home, ".ssh", "authorized_keys"))
	config, _ := os.ReadFile(filepath.Join(f.mainGit, "config"))
	link, _ := os.ReadFile(filepath.Join(f.worktree, ".git"))
	return map[string]bool{
		"git-status":   results["git-status"] == "yes",
		"dir-write":    exists(filepath.Join(f.worktree, "inside.txt")),
		"home-write":   exists(filepath.Join(f.home, "planted")),
		"ssh-write":    bytes.Contains(keys, []byte("planted")),
		"ssh-read":     results["ssh-read"] == "yes",
		"hook-write":   exists(filepath.Join(f.mainGit, "hooks", "pre-commit")),
		"config-write": !bytes.Equal(config, f.config),
		"link-write":   !bytes.Equal(link, f.link),
		"env-secret":   results["env-secret"] == "yes",
		"tcp-connect":  results["tcp-connect"] == "yes",
	}
}

// TestSandboxBlocksEscapes runs the escape probes twice: without the
// sandbox (with the secret allowed through), where every one must work —
// or the probe itself is broken and the sandboxed run would prove
// nothing — and under bwrap, where only the directory and git's reads may.
func TestSandboxBlocksEscapes(t *testing.T) {
	requireBwrap(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("bash is needed for the TCP probe: %v", err)
	}
	realHome, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	port := listenTCP(t)

	run := func(t *testing.T, mode string, allow []string) (escapeFixture, map[string]bool, RunInfo, artifact.TestReport) {
		t.Helper()
		f := newEscapeFixture(t, realHome)
		opt := options(t, f.worktree)
		opt.Sandbox = mode
		opt.AllowEnv = allow
		opt.Env = sandbox.MergeEnv(os.Environ(), map[string]string{"HOME": f.home, "SEEDED_API_TOKEN": "seeded-env-secret"})
		s := sh("escape", escapeScript)
		s.Env = map[string]string{"MAIN_GIT": f.mainGit, "PORT": port}
		report, info, err := Run(context.Background(), []Suite{s}, opt)
		if err != nil || len(report.Suites) != 1 || report.Suites[0].ExitCode != 0 {
			log, _ := os.ReadFile(filepath.Join(opt.LogDir, "escape.log"))
			t.Fatalf("Run: %+v, %v\n%s", report, err, log)
		}
		results := map[string]string{}
		for _, line := range strings.Fields(gittest.ReadFile(t, filepath.Join(f.worktree, "results.txt"))) {
			k, v, _ := strings.Cut(line, "=")
			results[k] = v
		}
		return f, f.escaped(t, results), info, report
	}

	probes := []struct {
		name      string
		inSandbox bool // what the sandbox allows
	}{
		{"git-status", true},
		{"dir-write", true},
		{"home-write", false},
		{"ssh-write", false},
		{"ssh-read", false},
		{"hook-write", false},
		{"config-write", false},
		{"link-write", false},
		{"env-secret", false},
		{"tcp-connect", false},
	}
	t.Run("control without sandbox", func(t *testing.T) {
		f, got, _, report := run(t, SandboxNone, []string{"SEEDED_API_TOKEN"})
		for _, p := range probes {
			if !got[p.name] {
				t.Errorf("without the sandbox, probe %s did not work: the probe is broken", p.name)
			}
		}
		// The suite exited 0, but it planted a hook: the report must not
		// say pass.
		want := "hook pre-commit added, config changed, link .git changed (git folder " + f.mainGit + ")"
		if report.Status != artifact.TestError || report.OverallPass || report.Suites[0].OverallPass ||
			!strings.Contains(report.Error, want) {
			t.Errorf("a suite that changed the git hooks and config was reported %q, pass=%v: %s", report.Status, report.OverallPass, report.Error)
		}
		artifacttest.FindCase(t, report.Suites[0].Cases, CaseGitChanged)
	})
	t.Run("bwrap", func(t *testing.T) {
		f, got, info, report := run(t, SandboxBwrap, nil)
		if report.Status != artifact.TestCompleted || !report.OverallPass {
			t.Errorf("the sandboxed suite that escaped nothing: %+v", report)
		}
		for _, p := range probes {
			if got[p.name] != p.inSandbox {
				t.Errorf("under bwrap, probe %s worked=%v, want %v", p.name, got[p.name], p.inSandbox)
			}
		}
		if info.Sandbox != SandboxBwrap {
			t.Errorf("RunInfo.Sandbox = %q", info.Sandbox)
		}
		note := strings.Join(info.Notes, "\n")
		want := []string{"git directories read-only: ", f.mainGit}
		if !strings.HasPrefix(f.home, "/tmp/") { // a home under /tmp is hidden by /tmp's tmpfs
			want = append(want, "home hidden under an empty tmpfs: ", f.home)
		}
		for _, want := range want {
			if !strings.Contains(note, want) {
				t.Errorf("notes lack %q:\n%s", want, note)
			}
		}
	})
}

// listenTCP accepts connections on 127.0.0.1 until the test ends and
// returns the port.
func listenTCP(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// TestSandboxEnvironment checks what the sandbox sets and removes.
func TestSandboxEnvironment(t *testing.T) {
	requireBwrap(t)
	t.Parallel()
	dir := t.TempDir()
	opt := options(t, dir)
	opt.Sandbox = SandboxBwrap
	opt.Env = append(os.Environ(), "FAKE_API_KEY=leak", "GITHUB_TOKEN=leak", "DB_PASSWORD=leak", "MY_SECRET=leak", "OPENAI_BASE_URL=leak")
	report, _, err := Run(context.Background(), []Suite{sh("env", "env > env.txt")}, opt)
	if err != nil || !report.OverallPass {
		t.Fatalf("Run: %+v, %v", report, err)
	}
	env := gittest.ReadFile(t, filepath.Join(dir, "env.txt"))
	if strings.Contains(env, "leak") {
		t.Errorf("a secret reached the sandbox:\n%s", env)
	}
	for _, want := range []string{"/orch-gocache-", "GOPROXY=off\n", "TMPDIR=/tmp\n", "XDG_CACHE_HOME=/tmp/.cache\n"} {
		if !strings.Contains(env, want) {
			t.Errorf("sandbox environment lacks %q", strings.TrimSpace(want))
		}
	}
}
