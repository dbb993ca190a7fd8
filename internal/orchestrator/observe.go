package orchestrator

import (
	"context"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/evidence"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

// observe is Observe plus the evidence of README, "Evidence is bound to the change": the hashes
// the current attempt's gates recorded in the transcript, the hashes of the
// artifacts now, and, where a condition needs it, the comparison of
// code/files/ with code/diff.patch applied to the base (git, in a temporary
// index). It never writes to the task or the repository's work tree.
func (o *Orchestrator) observe(ctx context.Context, t *task.Task, p lifecycle.Phase) (lifecycle.Snapshot, error) {
	return o.observeCached(ctx, nil, t, p)
}

// observeCached is observe taking what c, the task's observation cache
// (docs/artifacts.md, "The observation cache"), holds of code/diff.patch,
// code/files/ and their agreement when those did not change. Only readers
// pass a cache; `orch next` and `orch accept` observe everything again.
func (o *Orchestrator) observeCached(ctx context.Context, c *evidence.Cache, t *task.Task, p lifecycle.Phase) (lifecycle.Snapshot, error) {
	s := observeWith(c, t.Dir, p)
	if err := evidence.ObserveCached(ctx, c, o.Project.Root, t.Dir, p, &s); err != nil {
		return s, err
	}
	return s, nil
}

// Observe inspects the artifacts the decisions of phase p read, and only
// those (lifecycle.DecisionInputs: the catalogue says which), into a
// snapshot. It reads files; it never writes.
func Observe(taskDir string, p lifecycle.Phase) lifecycle.Snapshot {
	return observeWith(nil, taskDir, p)
}

// observeWith is Observe reading planning/planning.ai.json,
// code/diff.patch and code/files/ through the observation cache c (nil: no
// cache).
func observeWith(c *evidence.Cache, taskDir string, p lifecycle.Phase) lifecycle.Snapshot {
	var s lifecycle.Snapshot
	for _, rel := range lifecycle.DecisionInputs(p) {
		switch rel {
		case artifact.PlanFile:
			s.Plan = c.LoadPlan(taskDir)
		case artifact.FilePlanFile:
			s.FilePlan = c.LoadFilePlan(taskDir, s.Plan)
		case artifact.PlanReviewFile:
			s.PlanReview = artifact.LoadPlanReview(taskDir)
		case artifact.CodegenFile:
			s.Codegen = artifact.LoadCodegen(taskDir)
		case artifact.CodeFilesDir:
			s.CodeFiles = c.ScanCodeFiles(taskDir)
		case artifact.DiffFile:
			s.Diff = c.LoadDiff(taskDir)
		case artifact.CodeReviewFile:
			s.CodeReview = artifact.LoadCodeReview(taskDir)
		case artifact.TestReportFile:
			s.TestReport = artifact.LoadTestReport(taskDir)
		case artifact.DecisionFile:
			s.Decision = artifact.LoadDecision(taskDir)
		case artifact.RevertRecordFile:
			s.Revert = artifact.LoadRevertRecord(taskDir)
		default:
			panic("orchestrator.Observe: no loader for " + rel)
		}
	}
	return s
}

// inputs returns the sha256 of every artifact file the snapshot read, by
// task-relative path, for the transcript.
func inputs(s lifecycle.Snapshot) map[string]string {
	m := map[string]string{}
	add := func(file string, present bool, sum string) {
		if present && sum != "" {
			m[file] = sum
		}
	}
	add(artifact.PlanFile, s.Plan.Present, s.Plan.SHA256)
	if !s.FilePlan.Value.Inferred {
		add(artifact.FilePlanFile, s.FilePlan.Present, s.FilePlan.SHA256)
	}
	add(artifact.PlanReviewFile, s.PlanReview.Present, s.PlanReview.SHA256)
	add(artifact.CodegenFile, s.Codegen.Present, s.Codegen.SHA256)
	add(artifact.DiffFile, s.Diff.Present, s.Diff.SHA256)
	add(artifact.CodeReviewFile, s.CodeReview.Present, s.CodeReview.SHA256)
	add(artifact.TestReportFile, s.TestReport.Present, s.TestReport.SHA256)
	add(artifact.DecisionFile, s.Decision.Present, s.Decision.SHA256)
	add(artifact.RevertRecordFile, s.Revert.Present, s.Revert.SHA256)
	if len(m) == 0 {
		return nil
	}
	return m
}
