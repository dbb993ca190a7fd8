package landing

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/phasetest"
	"github.com/orchdev/orch/internal/testphase"
)

// TestAcceptRefusesAfterAnEscapedRun: a suite that planted a hook in the
// repository (here without a sandbox, where nothing stops it) makes the
// report an error naming the hook, and orch accept refuses even with
// --allow-incomplete; nothing is committed.
func TestAcceptRefusesAfterAnEscapedRun(t *testing.T) {
	f := phasetest.New(t, lifecycle.Test)
	f.Cfg.Test.Suites = []config.Suite{{Name: "planter", Kind: "test", Command: config.Command{"sh", "-c",
		`printf '#!/bin/sh\necho planted\n' > "$(git rev-parse --git-common-dir)/hooks/pre-commit"`}}}
	res, err := phasetest.Run(context.Background(), f.O, "t", testphase.Worker{Config: f.Cfg, Options: testphase.Options{Sandbox: "none"}})
	if err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(f.Dir, ".git", "hooks", "pre-commit")
	if _, err := os.Stat(hook); err != nil {
		t.Fatalf("the suite did not plant its hook (the test proves nothing): %v", err)
	}
	if res.Report.Status != artifact.TestError || res.Report.OverallPass || !strings.Contains(res.Report.Error, "pre-commit") {
		t.Fatalf("report %q pass=%v error %q; want an error naming the hook", res.Report.Status, res.Report.OverallPass, res.Report.Error)
	}
	head := gittest.Git(t, f.Dir, "rev-parse", "HEAD")
	reason := "a person looked"
	if _, err := f.O.Next(context.Background(), "t", orchestrator.NextRequest{To: lifecycle.Accept, Override: &reason}); err != nil {
		t.Fatal(err)
	}
	_, err = phasetest.Run(context.Background(), f.O, "t", &Acceptor{Config: f.Cfg, Options: AcceptOptions{
		Verdict: artifact.VerdictAccepted, Reasons: []string{"ok"}, AllowIncomplete: true,
		Decider: artifact.Decider{Kind: "human", Name: "t"},
	}, Engine: f.O})
	if !errors.Is(err, exit.ErrRefused) || !strings.Contains(err.Error(), "hook pre-commit added (git folder "+filepath.Dir(filepath.Dir(hook))+")") || !strings.Contains(err.Error(), "even with --allow-incomplete") {
		t.Fatalf("Accept: %v; want a refusal naming the changed hook", err)
	}
	if got := gittest.Git(t, f.Dir, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved to %s", got)
	}
}

// TestAcceptRefusesBeforeCommittingWithoutSandbox: when HEAD moved, accept
// must re-run the suites on its commit; without a sandbox it refuses
// before anything is applied or committed.
func TestAcceptRefusesBeforeCommittingWithoutSandbox(t *testing.T) {
	f := phasetest.New(t, lifecycle.Accept)
	if err := os.WriteFile(filepath.Join(f.Dir, "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, f.Dir, "add", "b.txt")
	gittest.Git(t, f.Dir, "commit", "-qm", "HEAD moves")
	head := gittest.Git(t, f.Dir, "rev-parse", "HEAD")
	phasetest.PathWithoutBwrap(t)
	_, err := phasetest.Run(context.Background(), f.O, "t", &Acceptor{Config: f.Cfg, Options: AcceptOptions{
		Verdict: artifact.VerdictAccepted, Reasons: []string{"ok"}, AllowIncomplete: true,
		Decider: artifact.Decider{Kind: "human", Name: "t"},
	}, Engine: f.O})
	if !errors.Is(err, exit.ErrRefused) || !strings.Contains(err.Error(), "apt-get install bubblewrap") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("err = %v, want a refusal that says how to install bubblewrap", err)
	}
	if got := gittest.Git(t, f.Dir, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved to %s", got)
	}
	if _, err := os.Stat(filepath.Join(f.Dir, "notes", "readme.txt")); err == nil {
		t.Error("the change was applied to the working tree")
	}
	if st := gittest.Git(t, f.Dir, "status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Errorf("the index or working tree changed:\n%s", st)
	}
}
