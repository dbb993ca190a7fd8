// Package gittest holds what tests need to drive the real git binary: a
// configuration isolated from the host's (no global or system config, a
// fresh HOME) and a fixed commit identity, and small helpers to run git,
// write files and commit. Only tests import it, as cmd/go's tests import
// internal/testenv.
package gittest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Identity is the commit identity of test repositories; orch itself never
// sets one.
var Identity = []string{
	"GIT_AUTHOR_NAME=Orch Test", "GIT_AUTHOR_EMAIL=test@orch.invalid",
	"GIT_COMMITTER_NAME=Orch Test", "GIT_COMMITTER_EMAIL=test@orch.invalid",
}

// Main runs a package's tests with HOME, XDG_CONFIG_HOME and git's global
// configuration in a fresh temporary folder, no system configuration and
// Identity in the environment, and returns the exit code:
//
//	func TestMain(m *testing.M) { os.Exit(gittest.Main(m)) }
func Main(m *testing.M) int {
	home, err := os.MkdirTemp("", "orch-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(home)
	env := map[string]string{
		"HOME":                home,
		"XDG_CONFIG_HOME":     filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_CONFIG_GLOBAL":   filepath.Join(home, "gitconfig"),
	}
	for _, kv := range Identity {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for k, v := range env {
		os.Setenv(k, v)
	}
	return m.Run()
}

// Git runs git in dir and returns its standard output without the
// trailing newline; a failure fails tb with git's standard error. It never
// reads the host's system or global configuration, with or without Main.
func Git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	return GitInput(tb, dir, nil, args...)
}

// GitInput is Git with stdin as git's standard input.
func GitInput(tb testing.TB, dir string, stdin []byte, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_CONFIG_NOSYSTEM=1")
	if os.Getenv("GIT_CONFIG_GLOBAL") == "" {
		// Isolated from the host's configuration without Main too.
		cmd.Env = append(cmd.Env, "GIT_CONFIG_GLOBAL="+os.DevNull)
	}
	cmd.Env = append(cmd.Env, Identity...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		tb.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimRight(out.String(), "\n")
}

// Write writes content to the file rel (slash-separated) below dir,
// creating its folders.
func Write(tb testing.TB, dir, rel, content string) {
	tb.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// ReadFile returns the content of the file at path; a failure fails tb.
func ReadFile(tb testing.TB, path string) string {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

// Size returns the size in bytes of the file at path (a transcript's
// length before a command, say); a failure fails tb.
func Size(tb testing.TB, path string) int {
	tb.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return int(fi.Size())
}

// WriteFiles writes every file of files (slash-separated path → content)
// below dir, as Write does.
func WriteFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for rel, content := range files {
		Write(tb, dir, rel, content)
	}
}

// Init creates a repository on branch main in a new temporary folder and
// returns the folder (symlinks resolved). Extra arguments go to git init
// ("--object-format=sha256").
func Init(tb testing.TB, initArgs ...string) string {
	tb.Helper()
	dir, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	Git(tb, dir, append([]string{"init", "-q", "-b", "main"}, initArgs...)...)
	return dir
}

// CommitAll stages everything in dir and commits it; it returns the new
// HEAD.
func CommitAll(tb testing.TB, dir, msg string) string {
	tb.Helper()
	Git(tb, dir, "add", "-A")
	Git(tb, dir, "commit", "-q", "--allow-empty", "-m", msg)
	return Git(tb, dir, "rev-parse", "HEAD")
}

// AddWorktree adds a linked worktree of repo's HEAD, detached, in a new
// temporary folder and returns the worktree's folder.
func AddWorktree(tb testing.TB, repo string) string {
	tb.Helper()
	wt := filepath.Join(tb.TempDir(), "wt")
	Git(tb, repo, "worktree", "add", "-q", "--detach", wt, "HEAD")
	return wt
}

// CopyTree copies the folder src — a repository with its .git, and .orch —
// with cp -a (modes, links and times kept) to a new temporary folder, and
// returns the copy.
func CopyTree(tb testing.TB, src string) string {
	tb.Helper()
	dst := filepath.Join(tb.TempDir(), "repo")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		tb.Fatalf("cp -a %s: %v\n%s", src, err, out)
	}
	return dst
}

// Seed creates a repository (Init) with files committed and returns its
// folder and the commit.
func Seed(tb testing.TB, files map[string]string, initArgs ...string) (dir, head string) {
	tb.Helper()
	dir = Init(tb, initArgs...)
	WriteFiles(tb, dir, files)
	return dir, CommitAll(tb, dir, "seed")
}
