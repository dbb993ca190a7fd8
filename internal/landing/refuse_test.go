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
	"github.com/orchdev/orch/internal/work"
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
	_, err = phasetest.Run(context.Background(), f.O, "t", &Acceptor{Options: AcceptOptions{
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
	_, err := phasetest.Run(context.Background(), f.O, "t", &Acceptor{Options: AcceptOptions{
		Verdict: artifact.VerdictAccepted, Reasons: []string{"ok"}, AllowIncomplete: true,
		Decider: artifact.Decider{Kind: "human", Name: "t"},
	}, Engine: f.O, Tests: testphase.Runner{Config: f.Cfg}})
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

// fakeTests is a work.TestRunner that answers a fixed report and
// remembers what it was asked to run.
type fakeTests struct {
	ready error
	rep   work.TestReport
	runs  []work.TestRun
}

func (f *fakeTests) Ready() error { return f.ready }

func (f *fakeTests) Run(ctx context.Context, r work.TestRun) (work.TestReport, error) {
	f.runs = append(f.runs, r)
	rep := f.rep
	rep.Base = r.Base
	return rep, nil
}

// TestAcceptRegressionCheckThroughItsRunner: when HEAD moved since the
// base, accept runs the suites again on its commit through the runner it
// was given (never the test phase directly): a runner that is not ready
// refuses before anything changes; failing suites make the decision a
// regression, with the runner's report staged beside it.
func TestAcceptRegressionCheckThroughItsRunner(t *testing.T) {
	for _, tc := range []struct {
		name       string
		tests      *fakeTests
		refused    bool
		regression bool
		note       string
	}{
		{name: "not ready", tests: &fakeTests{ready: errors.New("no sandbox here")}, refused: true},
		{name: "fails", tests: &fakeTests{rep: work.TestReport{TestReport: artifact.TestReport{Status: artifact.TestCompleted, OverallPass: false}}}, regression: true, note: "FAILED: regression"},
		{name: "passes", tests: &fakeTests{rep: work.TestReport{TestReport: artifact.TestReport{Status: artifact.TestCompleted, OverallPass: true}}}, note: "passed"},
		{name: "cannot run", tests: &fakeTests{rep: work.TestReport{TestReport: artifact.TestReport{Status: artifact.TestError, Error: "no runner"}}}, regression: true, note: "could not run (no runner)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := phasetest.New(t, lifecycle.Accept)
			if err := os.WriteFile(filepath.Join(f.Dir, "b.txt"), []byte("b\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			gittest.Git(t, f.Dir, "add", "b.txt")
			gittest.Git(t, f.Dir, "commit", "-qm", "HEAD moves")
			head := gittest.Git(t, f.Dir, "rev-parse", "HEAD")
			res, err := phasetest.Run(context.Background(), f.O, "t", &Acceptor{Options: AcceptOptions{
				Verdict: artifact.VerdictAccepted, Reasons: []string{"ok"}, AllowIncomplete: true,
				Decider: artifact.Decider{Kind: "human", Name: "t"},
			}, Engine: f.O, Tests: tc.tests})
			if tc.refused {
				if !errors.Is(err, exit.ErrRefused) || !strings.Contains(err.Error(), "no sandbox here") || len(tc.tests.runs) != 0 {
					t.Fatalf("err = %v, runs %d; want a refusal naming the runner's reason and no run", err, len(tc.tests.runs))
				}
				if got := gittest.Git(t, f.Dir, "rev-parse", "HEAD"); got != head {
					t.Errorf("HEAD moved to %s", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d := res.Decision
			if len(tc.tests.runs) != 1 || tc.tests.runs[0].Base != d.Commit || tc.tests.runs[0].Patch != nil || tc.tests.runs[0].Task != "t" {
				t.Fatalf("runs %+v; want one run on the commit %s without a patch", tc.tests.runs, d.Commit)
			}
			if d.Regression != tc.regression || !strings.Contains(strings.Join(d.Notes, "\n"), tc.note) {
				t.Errorf("regression %v, notes %q; want %v and %q", d.Regression, d.Notes, tc.regression, tc.note)
			}
			data, err := os.ReadFile(filepath.Join(f.Task.Dir, filepath.FromSlash(artifact.RegressionReportFile)))
			if err != nil || !strings.Contains(string(data), d.Commit) {
				t.Errorf("regression report %s: %v", data, err)
			}
		})
	}
}
