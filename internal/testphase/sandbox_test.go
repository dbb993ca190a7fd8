package testphase

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/phasetest"
)

// TestTestRecordsTheOptOut: sandbox "none" runs the suites and is
// recorded in the report (sandbox and a note) and the transcript.
func TestTestRecordsTheOptOut(t *testing.T) {
	f := phasetest.New(t, lifecycle.Test)
	f.Cfg.Test.Sandbox = "none"
	res, err := phasetest.Run(context.Background(), f.O, "t", Worker{Config: f.Cfg, Options: Options{}})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if rep.Status != artifact.TestCompleted || !rep.OverallPass || rep.Sandbox != "none" {
		t.Fatalf("report %+v", rep)
	}
	if !slices.ContainsFunc(rep.Notes, func(n string) bool {
		return strings.Contains(n, `sandbox disabled (sandbox "none", an explicit opt-out)`)
	}) {
		t.Errorf("notes %q lack the opt-out", rep.Notes)
	}
	data, err := os.ReadFile(filepath.Join(f.Task.Dir, filepath.FromSlash(artifact.TestReportFile)))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk Report
	if err := json.Unmarshal(data, &onDisk); err != nil || onDisk.Sandbox != "none" || len(onDisk.Notes) == 0 {
		t.Errorf("test/report.json: sandbox %q notes %q (%v)", onDisk.Sandbox, onDisk.Notes, err)
	}
	if sum := phasetest.LastFinished(t, f.Task); sum.Sandbox != "none" {
		t.Errorf("phase_finished summary %v lacks sandbox none", sum)
	}
}

// TestTestRefusesWithoutSandbox: with the default sandbox ("auto") and no
// bwrap, orch test refuses before it creates a worktree, says how to
// install bubblewrap or opt out, and records the refusal.
func TestTestRefusesWithoutSandbox(t *testing.T) {
	f := phasetest.New(t, lifecycle.Test)
	phasetest.PathWithoutBwrap(t)
	for _, sandbox := range []string{"", "auto", "bwrap"} {
		res, err := phasetest.Run(context.Background(), f.O, "t", Worker{Config: f.Cfg, Options: Options{Sandbox: sandbox}})
		if err != nil {
			t.Fatal(err)
		}
		rep := res.Report
		if rep.Status != artifact.TestError || rep.OverallPass || rep.Sandbox != "" || len(rep.Suites) != 0 {
			t.Errorf("sandbox %q: report %+v, want a refusal", sandbox, rep)
		}
		for _, want := range []string{"refusing to run the suites without a sandbox", "apt-get install bubblewrap", `sandbox = "none"`} {
			if !strings.Contains(rep.Error, want) {
				t.Errorf("sandbox %q: error %q lacks %q", sandbox, rep.Error, want)
			}
		}
		if sum := phasetest.LastFinished(t, f.Task); sum.Status != string(artifact.TestError) {
			t.Errorf("phase_finished summary %v", sum)
		}
	}
	if wts := gittest.Git(t, f.Dir, "worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 1 {
		t.Errorf("a worktree was created although the run was refused:\n%s", wts)
	}
}
