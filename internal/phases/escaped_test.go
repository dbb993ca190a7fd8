package phases

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
)

// TestAcceptRefusesAfterAnEscapedRun: a suite that planted a hook in the
// repository (here without a sandbox, where nothing stops it) makes the
// report an error naming the hook, and orch accept refuses even with
// --allow-incomplete; nothing is committed.
func TestAcceptRefusesAfterAnEscapedRun(t *testing.T) {
	f := newFixture(t, lifecycle.Test)
	f.cfg.Test.Suites = []config.Suite{{Name: "planter", Kind: "test", Command: config.Command{"sh", "-c",
		`printf '#!/bin/sh\necho planted\n' > "$(git rev-parse --git-common-dir)/hooks/pre-commit"`}}}
	res, err := Test(context.Background(), f.o, f.cfg, "t", TestOptions{Sandbox: "none"})
	if err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(f.dir, ".git", "hooks", "pre-commit")
	if _, err := os.Stat(hook); err != nil {
		t.Fatalf("the suite did not plant its hook (the test proves nothing): %v", err)
	}
	if res.Report.Status != artifact.TestError || res.Report.OverallPass || !strings.Contains(res.Report.Error, "pre-commit") {
		t.Fatalf("report %q pass=%v error %q; want an error naming the hook", res.Report.Status, res.Report.OverallPass, res.Report.Error)
	}
	head := gitIn(t, f.dir, "rev-parse", "HEAD")
	reason := "a person looked"
	if _, err := f.o.Next(context.Background(), "t", orchestrator.NextRequest{To: lifecycle.Accept, Override: &reason}); err != nil {
		t.Fatal(err)
	}
	_, err = Accept(context.Background(), f.o, f.cfg, "t", AcceptOptions{
		Verdict: artifact.VerdictAccepted, Reasons: []string{"ok"}, AllowIncomplete: true,
		Decider: artifact.Decider{Kind: "human", Name: "t"},
	})
	if !errors.Is(err, orchestrator.ErrRefused) || !strings.Contains(err.Error(), "hook pre-commit added (git folder "+filepath.Dir(filepath.Dir(hook))+")") || !strings.Contains(err.Error(), "even with --allow-incomplete") {
		t.Fatalf("Accept: %v; want a refusal naming the changed hook", err)
	}
	if got := gitIn(t, f.dir, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved to %s", got)
	}
}
