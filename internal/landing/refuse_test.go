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
	head := moveHead(t, f.Dir)
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
			head := moveHead(t, f.Dir)
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

// TestAcceptRerunRunsTheRegressionCheckAgain: accept commits on a HEAD
// that moved since the base, then its regression check is cut short (orch
// killed while the suites run: the commit is on the branch, no decision
// is recorded). The re-run reuses the commit and must still run the
// suites on it: before, it recorded "already committed" with no check, and
// a change that breaks the moved branch went on to done.
func TestAcceptRerunRunsTheRegressionCheckAgain(t *testing.T) {
	f := phasetest.New(t, lifecycle.Accept)
	head := moveHead(t, f.Dir)
	opt := AcceptOptions{Verdict: artifact.VerdictAccepted, Reasons: []string{"ok"}, AllowIncomplete: true,
		Decider: artifact.Decider{Kind: "human", Name: "t"}}
	failing := work.TestReport{TestReport: artifact.TestReport{Status: artifact.TestCompleted, OverallPass: false}}

	cut := &cutTests{}
	if _, err := phasetest.Run(context.Background(), f.O, "t", &Acceptor{Options: opt, Engine: f.O, Tests: cut}); err == nil || len(cut.runs) != 1 {
		t.Fatalf("first run: err %v, %d suite runs; want the cut check's error after one", err, len(cut.runs))
	}
	change := gittest.Git(t, f.Dir, "rev-parse", "HEAD")
	if p := gittest.Git(t, f.Dir, "rev-parse", change+"^"); p != head || cut.runs[0].Base != change {
		t.Fatalf("the first run committed %s on %s and checked %s; want one commit on %s, checked", change, p, cut.runs[0].Base, head)
	}
	if d := artifact.LoadDecision(f.Task.Dir); d.Present {
		t.Fatalf("a decision was recorded by the cut run: %+v", d.Value)
	}

	tests := &fakeTests{rep: failing}
	res, err := phasetest.Run(context.Background(), f.O, "t", &Acceptor{Options: opt, Engine: f.O, Tests: tests})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Decision
	if got := gittest.Git(t, f.Dir, "rev-parse", "HEAD"); got != change || d.Commit != change || !d.Reused {
		t.Fatalf("the re-run: HEAD %s, decision commit %s reused %v; want %s reused", got, d.Commit, d.Reused, change)
	}
	if len(tests.runs) != 1 || tests.runs[0].Base != change {
		t.Fatalf("the re-run ran the suites %d times (%+v); want once on %s", len(tests.runs), tests.runs, change)
	}
	if !d.Regression || !strings.Contains(strings.Join(d.Notes, "\n"), "FAILED: regression") || d.Base != f.Base {
		t.Errorf("decision: regression %v, base %s, notes %q; want a regression on base %s", d.Regression, d.Base, d.Notes, f.Base)
	}
	if _, err := os.Stat(filepath.Join(f.Task.Dir, filepath.FromSlash(artifact.RegressionReportFile))); err != nil {
		t.Errorf("no regression report recorded: %v", err)
	}

	// Without HEAD having moved, a reused commit needs no check.
	g := phasetest.New(t, lifecycle.Accept)
	if _, err := phasetest.Run(context.Background(), g.O, "t", &Acceptor{Options: opt, Engine: g.O}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(g.Task.Dir, filepath.FromSlash(artifact.DecisionFile))); err != nil {
		t.Fatal(err)
	}
	tests = &fakeTests{rep: failing}
	res, err = phasetest.Run(context.Background(), g.O, "t", &Acceptor{Options: opt, Engine: g.O, Tests: tests})
	if err != nil || !res.Decision.Reused || res.Decision.Regression || len(tests.runs) != 0 {
		t.Errorf("reuse on the base: err %v, reused %v, regression %v, %d suite runs; want reused, no check", err, res.Decision.Reused, res.Decision.Regression, len(tests.runs))
	}
}

// cutTests is a runner whose run is cut short, as when orch is killed
// while the suites run.
type cutTests struct{ runs []work.TestRun }

func (*cutTests) Ready() error { return nil }

func (c *cutTests) Run(ctx context.Context, r work.TestRun) (work.TestReport, error) {
	c.runs = append(c.runs, r)
	return work.TestReport{}, errors.New("killed while the suites ran")
}

// moveHead commits a file of its own on the branch of the repository in
// dir, so that HEAD moves away from the task's base, and returns HEAD.
func moveHead(t *testing.T, dir string) string {
	t.Helper()
	gittest.Write(t, dir, "b.txt", "b\n")
	gittest.Git(t, dir, "add", "b.txt")
	gittest.Git(t, dir, "commit", "-qm", "HEAD moves")
	return gittest.Git(t, dir, "rev-parse", "HEAD")
}
