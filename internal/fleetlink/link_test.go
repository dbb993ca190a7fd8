package fleetlink

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
)

// The test binary stands in for orch-fleet when FLEETLINK_STANDIN is set:
// it writes its arguments to the file FLEETLINK_STANDIN names, prints
// FLEETLINK_STDOUT and FLEETLINK_STDERR and exits FLEETLINK_CODE. The
// tests of the link check its side of the pipe with it (the arguments
// sent, the output read, the exit code kept); the fleet's end-to-end test
// runs the real binary.
func TestMain(m *testing.M) {
	if args := os.Getenv("FLEETLINK_STANDIN"); args != "" {
		_ = os.WriteFile(args, []byte(strings.Join(os.Args[1:], "\n")), 0o644)
		os.Stdout.WriteString(os.Getenv("FLEETLINK_STDOUT"))
		os.Stderr.WriteString(os.Getenv("FLEETLINK_STDERR"))
		code, _ := strconv.Atoi(os.Getenv("FLEETLINK_CODE"))
		os.Exit(code)
	}
	os.Exit(gittest.Main(m))
}

// standIn is a link to the stand-in that prints stdout and stderr and
// exits code; args returns the arguments it was run with.
func standIn(t *testing.T, stdout, stderr string, code int) (*Link, func() []string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argsFile := filepath.Join(t.TempDir(), "args")
	l := &Link{Binary: self, Root: t.TempDir(), Fleet: config.Fleet{Address: "127.0.0.1:7233", Namespace: "ns", Remote: "shared"},
		Env: append(os.Environ(), "FLEETLINK_STANDIN="+argsFile, "FLEETLINK_STDOUT="+stdout, "FLEETLINK_STDERR="+stderr, "FLEETLINK_CODE="+strconv.Itoa(code))}
	return l, func() []string {
		data, err := os.ReadFile(argsFile)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(string(data), "\n")
	}
}

// TestLinkCommands checks the command line each call sends and the typed
// answer it reads back.
func TestLinkCommands(t *testing.T) {
	global := []string{"--json", "--temporal", "127.0.0.1:7233", "--namespace", "ns", "--remote", "shared"}
	ctx := context.Background()
	gate := `{"task":"0001-x","phase":"codegen","revision":7,"commit":"c0ffee"}`
	for _, tc := range []struct {
		name string
		out  string
		call func(l *Link) (any, error)
		args []string
	}{
		{"answer", gate, func(l *Link) (any, error) { return l.Answer(ctx, "0001-x", "q1", "-5 retries") }, []string{"answer", "--task", "0001-x", "--", "q1", "-5 retries"}},
		{"accept", gate, func(l *Link) (any, error) {
			return l.Accept(ctx, "0001-x", Decision{Verdict: "changes_requested", Target: "codegen", Reasons: []string{"a", "b"}, Decider: "ann", AllowIncomplete: true, Revision: 6})
		}, []string{"accept", "--task", "0001-x", "--verdict", "changes_requested", "--to", "codegen", "--reason", "a", "--reason", "b", "--decider", "ann", "--allow-incomplete", "--expect", "6"}},
		{"override", gate, func(l *Link) (any, error) { return l.Override(ctx, "0001-x", "hotfix", lifecycle.Test) }, []string{"next", "--task", "0001-x", "--override", "hotfix", "--to", "test"}},
		{"redo", gate, func(l *Link) (any, error) { return l.Redo(ctx, "0001-x", lifecycle.Codegen, "again") }, []string{"redo", "--task", "0001-x", "--reason", "again", "--", "codegen"}},
		{"revert", gate, func(l *Link) (any, error) { return l.Revert(ctx, "0001-x", "broke prod") }, []string{"revert", "--task", "0001-x", "--reason", "broke prod"}},
		{"submit", `{"task":"0001-x","ref":"refs/orch/tasks/0001-x","commit":"abc","workflow":"orch-task-0001-x"}`, func(l *Link) (any, error) {
			return l.Submit(ctx, "0001-x", SubmitOptions{MaxAttempts: 2, Heartbeat: "4s"})
		}, []string{"submit", "--max-attempts", "2", "--heartbeat", "4s", "--", "0001-x"}},
		{"pull", `{"task":"0001-x","commit":"abc","dir":".orch/tasks/0001-x"}`, func(l *Link) (any, error) { return l.Pull(ctx, "0001-x") }, []string{"pull", "--", "0001-x"}},
		{"list", `{"phases":{},"workers":{"orch-test":["w1"]}}`, func(l *Link) (any, error) { return l.List(ctx) }, []string{"list"}},
		{"status", `{"task":"0001-x","phase":"test","revision":3}`, func(l *Link) (any, error) { return l.Status(ctx, "0001-x") }, []string{"status", "--task", "0001-x"}},
		{"log", `{"seq":1,"ts":"2026-11-27T10:00:00Z","kind":"created","prev":""}`, func(l *Link) (any, error) { return l.Log(ctx, "0001-x") }, []string{"log", "--task", "0001-x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, args := standIn(t, tc.out, "", 0)
			res, err := tc.call(l)
			if err != nil {
				t.Fatal(err)
			}
			if want := append(slices.Clone(global), tc.args...); !slices.Equal(args(), want) {
				t.Fatalf("args %q\nwant %q", args(), want)
			}
			switch r := res.(type) {
			case GateResult:
				if r.Revision != 7 || r.Commit != "c0ffee" {
					t.Fatalf("%+v", r)
				}
			case Submitted:
				if r.Workflow != "orch-task-0001-x" {
					t.Fatalf("%+v", r)
				}
			case Status:
				if r.Phase != lifecycle.Test || r.Revision != 3 {
					t.Fatalf("%+v", r)
				}
			}
		})
	}
}

// TestLinkErrors: orch-fleet's exit code and message reach the caller
// unchanged; output that is not its answer is an error, not a result.
func TestLinkErrors(t *testing.T) {
	ctx := context.Background()
	l, _ := standIn(t, "", `{"error":"task 0001-x is in accept: answer needs planning","hints":["run: orch accept"],"exit_code":3}`+"\n", 3)
	_, err := l.Answer(ctx, "0001-x", "q1", "x")
	if exit.Of(err) != exit.Refused || exit.Format(err) != "orch: task 0001-x is in accept: answer needs planning\nrun: orch accept" {
		t.Fatalf("refusal: %q (exit %d)", exit.Format(err), exit.Of(err))
	}
	l, _ = standIn(t, "", "orch-fleet: something odd\n", 7)
	if _, err := l.Status(ctx, "0001-x"); exit.Of(err) != 7 || !strings.Contains(err.Error(), "something odd") {
		t.Fatalf("odd failure: %v (exit %d)", err, exit.Of(err))
	}
	l, _ = standIn(t, "not json", "", 0)
	if _, err := l.List(ctx); err == nil || !strings.Contains(err.Error(), "not its JSON answer") {
		t.Fatalf("garbage answer: %v", err)
	}
	l, _ = standIn(t, "", "", 0)
	l.Binary = filepath.Join(t.TempDir(), "gone")
	if _, err := l.List(ctx); err == nil || exit.Of(err) != exit.Internal {
		t.Fatalf("missing binary at run time: %v", err)
	}
}

// TestWorkerStreams: the worker's output goes to the caller's writer as
// it comes; its failure is decoded as any other.
func TestWorkerStreams(t *testing.T) {
	l, args := standIn(t, "orch worker w1: serving\n", `{"error":"cannot reach the fleet","exit_code":1}`, 1)
	var out bytes.Buffer
	err := l.Worker(context.Background(), []string{"--land", "--tests", "2"}, &out)
	if out.String() != "orch worker w1: serving\n" {
		t.Fatalf("stdout %q", out.String())
	}
	if exit.Format(err) != "orch: cannot reach the fleet" || exit.Of(err) != exit.Internal {
		t.Fatalf("err %q", exit.Format(err))
	}
	if a := args(); !slices.Equal(a[len(a)-4:], []string{"worker", "--land", "--tests", "2"}) {
		t.Fatalf("args %q", a)
	}
}

// TestFind looks for orch-fleet where the configuration says, else on
// PATH, and says how to build it when there is none.
func TestFind(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "bin", BinaryName)
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(root, config.Fleet{Binary: "bin/orch-fleet"}); err != nil || got != bin {
		t.Fatalf("configured: %q, %v", got, err)
	}
	_, err := Find(root, config.Fleet{Binary: "bin/nope"})
	if exit.Of(err) != exit.Usage || !strings.Contains(err.Error(), "[fleet] binary bin/nope") || !strings.Contains(exit.Format(err), "go build -o DIR/orch-fleet ./cmd/orch-fleet") {
		t.Fatalf("configured, missing: %q", exit.Format(err))
	}
	if err := os.WriteFile(filepath.Join(root, "plain"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(root, config.Fleet{Binary: "plain"}); exit.Of(err) != exit.Usage || !strings.Contains(err.Error(), "not an executable file") {
		t.Fatalf("not executable: %v", err)
	}
	t.Setenv("PATH", filepath.Dir(bin))
	if got, err := Find(root, config.Fleet{}); err != nil || got != bin {
		t.Fatalf("on PATH: %q, %v", got, err)
	}
	t.Setenv("PATH", t.TempDir())
	_, err = Find(root, config.Fleet{})
	if exit.Of(err) != exit.Usage || !strings.Contains(err.Error(), "neither next to orch nor on PATH") || !strings.Contains(exit.Format(err), "go build") {
		t.Fatalf("absent: %q", exit.Format(err))
	}
}

// TestKnown finds a task's fleet ref loose, packed, from a linked work
// tree, and not at all, as git sees it.
func TestKnown(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Write(t, repo, "a.txt", "a\n")
	head := gittest.CommitAll(t, repo, "first")
	known := func(root, id string, want bool) {
		t.Helper()
		got, err := Known(root, id)
		if err != nil || got != want {
			t.Fatalf("Known(%s) = %v, %v; want %v", id, got, err, want)
		}
	}
	known(repo, "0001-x", false)
	gittest.Git(t, repo, "update-ref", LocalRef("0001-x"), head)
	known(repo, "0001-x", true)
	known(repo, "0002-y", false)
	gittest.Git(t, repo, "update-ref", LocalRef("0002-y"), head)
	gittest.Git(t, repo, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(repo, ".git", filepath.FromSlash(LocalRef("0002-y")))); err == nil {
		t.Fatal("pack-refs left the loose ref")
	}
	known(repo, "0002-y", true)
	known(repo, "0002-yy", false)
	wt := gittest.AddWorktree(t, repo)
	known(wt, "0001-x", true)
	known(wt, "0002-y", true)
	known(wt, "0003-z", false)
	if _, err := Known(repo, "../x"); exit.Of(err) != exit.Usage {
		t.Fatalf("bad id: %v", err)
	}
	// Not a repository: git answers (and fails).
	if _, err := Known(t.TempDir(), "0001-x"); err == nil {
		t.Fatal("no repository: no error")
	}
}

// BenchmarkKnown is what orch status on a local task pays for the fleet
// (docs/fleet.md, "orch's commands and the fleet"): looking for the task's
// fleet ref in a repository with no such ref, whose other refs are packed
// (100 of them in packed-refs).
func BenchmarkKnown(b *testing.B) {
	repo := gittest.Init(b)
	gittest.Write(b, repo, "a.txt", "a\n")
	head := gittest.CommitAll(b, repo, "first")
	for i := range 100 {
		gittest.Git(b, repo, "update-ref", fmt.Sprintf("refs/tags/t%03d", i), head)
	}
	gittest.Git(b, repo, "pack-refs", "--all")
	b.ResetTimer()
	for b.Loop() {
		if known, err := Known(repo, "0001-local"); err != nil || known {
			b.Fatal(known, err)
		}
	}
}
