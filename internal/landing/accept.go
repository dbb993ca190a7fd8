package landing

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/evidence"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/patch"
	"github.com/orchdev/orch/internal/testrun"
	"github.com/orchdev/orch/internal/work"
)

// Trailers orch writes on the commits it makes (defined where the
// decision out of accept reads them: evidence).
const (
	TrailerTask = evidence.TrailerTask
	TrailerPlan = evidence.TrailerPlan
	// TrailerDiff is the sha256 of the patch the commit applied.
	TrailerDiff = evidence.TrailerDiff
	// TrailerRevert names, on a revert commit, the commit it undoes.
	TrailerRevert = evidence.TrailerRevert
)

// AcceptOptions is the explicit decision of `orch accept`.
type AcceptOptions struct {
	Verdict string   // accepted, changes_requested, rejected, revert
	Target  string   // codegen, review or planning with changes_requested
	Reasons []string // at least one non-blank
	Decider artifact.Decider
	// AllowIncomplete confirms accepting although the tests failed, did
	// not complete or are missing; the decision records it.
	AllowIncomplete bool
	// Test are the settings of the regression check after HEAD moved
	// (the registry builds the Acceptor's Tests runner with them).
	Test work.TestOptions
	// Expect is what the person saw; a task that moved on since, or
	// evidence whose bytes changed, refuses the decision.
	Expect Expectation
}

// Evidence summarises what the decision is based on (evidence.Summary).
type Evidence = evidence.Summary

// GatherEvidence reads the task's plan, reviews, test report and diff
// (evidence.Gather).
func GatherEvidence(taskDir string) Evidence { return evidence.Gather(taskDir) }

// Decision is accept/decision.json as orch writes it: the contract's
// fields plus the evidence it was based on.
type Decision struct {
	artifact.Decision
	Evidence           Evidence `json:"evidence"`
	IncompleteEvidence bool     `json:"incomplete_evidence,omitempty"`
	PlanSHA256         string   `json:"plan_sha256,omitempty"`
	DecidedAt          string   `json:"decided_at"`
	Reused             bool     `json:"reused_commit,omitempty"`
	Notes              []string `json:"notes,omitempty"`
	// Judged names the revision and the evidence hashes decided on.
	Judged Judged `json:"judged"`
}

// AcceptResult is what `orch accept` reports.
type AcceptResult struct {
	Decision Decision
}

// CheckDecision validates the decision's shape before anything runs.
func CheckDecision(opt AcceptOptions) error {
	switch opt.Verdict {
	case artifact.VerdictAccepted, artifact.VerdictRejected, artifact.VerdictRevert:
		if opt.Target != "" {
			return fmt.Errorf("--to is only for --verdict changes_requested")
		}
	case artifact.VerdictChangesRequested:
		switch opt.Target {
		case "codegen", "review", "planning":
		default:
			return fmt.Errorf("--verdict changes_requested needs --to codegen, review or planning, got %q", opt.Target)
		}
	default:
		return fmt.Errorf("--verdict: expected accepted, changes_requested, rejected or revert, got %q", opt.Verdict)
	}
	for _, r := range opt.Reasons {
		if strings.TrimSpace(r) != "" {
			return nil
		}
	}
	return fmt.Errorf("a decision needs a non-blank reason (--reason)")
}

// refuseEscapedRun refuses, even with --allow-incomplete, to accept after
// a test run during which the repository's git hooks, config or the
// worktree's link changed (testrun.CaseGitChanged): a suite got out of its
// sandbox, and what it planted would act on the user's repository.
func refuseEscapedRun(taskDir string) error {
	tr := artifact.LoadTestReport(taskDir)
	if !tr.OK() {
		return nil
	}
	for _, s := range tr.Value.Suites {
		for _, c := range s.Cases {
			if c.Name == testrun.CaseGitChanged {
				return exit.New(exit.ErrRefused, "%s: suite %s: %s; orch accepts nothing after such a run, even with --allow-incomplete: check .git/hooks and .git/config of the repository, then run orch test again", artifact.TestReportFile, s.ID, c.Message)
			}
		}
	}
	return nil
}

// CheckComplete refuses to accept the change of the task in dir when its
// tests did not complete and pass, unless allowIncomplete confirms it
// (--allow-incomplete). The accept worker checks it before anything
// changes; the board checks it before it starts the worker, so that the
// refusal comes back to the form.
func CheckComplete(dir string, allowIncomplete bool) error {
	if ev := GatherEvidence(dir); !ev.Complete && !allowIncomplete {
		return exit.New(exit.ErrRefused, "the tests %s: accepting anyway needs an explicit confirmation (--allow-incomplete), which the decision records", ev.Tests)
	}
	return nil
}

// Acceptor is the accept phase's worker: it records the decision; on
// accepted it commits exactly the change (built in a temporary index, the
// branch moved by compare-and-swap, then only the touched paths of the
// index and work tree brought along; see Engine) and records the
// commit.
type Acceptor struct {
	Options AcceptOptions
	Engine  Engine
	// Tests runs the suites again on the commit when HEAD moved since the
	// base (the registry gives it the test phase's runner); without one,
	// such an accept is refused before anything changes.
	Tests work.TestRunner
	// seenRun is the revision the run must have once marked running for
	// Options.Expect to hold (set by Check).
	seenRun int64
}

// Phase returns lifecycle.Accept.
func (*Acceptor) Phase() lifecycle.Phase { return lifecycle.Accept }

// Check settles an earlier run killed in its git effect, then refuses an
// accepted verdict that cannot be applied, before anything changes.
func (a *Acceptor) Check(ctx context.Context, in work.Input) error {
	if err := a.Engine.SettleGit(ctx, in.Task); err != nil {
		return err
	}
	opt, id := a.Options, in.Task
	if err := CheckExpectation(opt.Expect); err != nil {
		return exit.New(exit.ErrUsage, "%v", err)
	}
	if !opt.Expect.Empty() {
		// Refused before anything changes; checked again on the run's own
		// revision (marking the phase running adds one, entering it from
		// the phase before one more).
		if err := checkExpectation(a.Engine, in, opt.Expect); err != nil {
			return err
		}
		a.seenRun = in.Revision + 1
		if in.Current != lifecycle.Accept {
			a.seenRun++
		}
	}
	if opt.Verdict != artifact.VerdictAccepted {
		return nil
	}
	// The bytes to commit must be the ones every gate recorded
	// (docs/artifacts.md): refuse before anything changes.
	if patch, err := artifact.ReadPatch(in.Dir); err == nil {
		if err := checkEvidence(in.Dir, id, patch); err != nil {
			return err
		}
	}
	if err := refuseEscapedRun(in.Dir); err != nil {
		return err
	}
	if err := CheckComplete(in.Dir, opt.AllowIncomplete); err != nil {
		return err
	}
	repo, err := openRepo(ctx, in.Root)
	if err != nil {
		return err
	}
	return checkRepoForApply(ctx, repo, in.Dir, id)
}

// Work records the decision.
func (a *Acceptor) Work(ctx context.Context, in work.Input) (work.Result[AcceptResult], error) {
	var res work.Result[AcceptResult]
	d, err := a.decide(ctx, in)
	res.Value.Decision = d
	if err != nil {
		return res, err
	}
	if err := in.Out.WriteJSON(artifact.DecisionFile, d); err != nil {
		return res, err
	}
	if err := in.Out.Write(artifact.AcceptSummaryFile, []byte(summaryMarkdown(in.Task, d))); err != nil {
		return res, err
	}
	res.Output = work.Output{Status: lifecycle.AcceptDecided, Summary: &event.PhaseSummary{
		Verdict: d.Verdict, Target: d.Target, Commit: d.Commit, Regression: event.Ref(d.Regression), Decider: event.Ref(d.Decider),
		Judged: event.Ref(d.Judged),
	}}
	return res, nil
}

// checkRepoForApply refuses to apply during a rebase, merge or
// cherry-pick, on a detached HEAD, or when a file the patch touches has
// uncommitted changes. A change already committed for this task passes:
// accept is idempotent.
func checkRepoForApply(ctx context.Context, repo *gitx.Repo, taskDir, id string) error {
	if sha, err := landedChange(ctx, repo, taskDir, id); err != nil {
		return err
	} else if sha != "" {
		return nil
	}
	if err := checkRepoUnchanged(ctx, repo, taskDir); err != nil {
		return err
	}
	if op, err := repo.InProgress(ctx); err != nil {
		return err
	} else if op != "" {
		return exit.New(exit.ErrRefused, "a %s is in progress in %s: finish or abort it before accepting", op, repo.Dir)
	}
	if _, detached, err := repo.Branch(ctx); err != nil {
		return err
	} else if detached {
		return exit.New(exit.ErrRefused, "HEAD is detached: check out the branch the change should land on, then run orch accept again")
	}
	d := artifact.LoadDiff(taskDir)
	if d.Err != nil {
		return d.Err
	}
	if !d.Present || len(d.Value.Files) == 0 {
		return exit.New(exit.ErrRefused, "%s is missing or empty: nothing to apply", artifact.DiffFile)
	}
	dirty, err := repo.DirtyPaths(ctx, diffPaths(d.Value))
	if err != nil {
		return err
	}
	if len(dirty) > 0 {
		return exit.New(exit.ErrRefused, "uncommitted changes in file(s) the change touches: %s: commit or stash them, then run orch accept again", strings.Join(dirty, ", "))
	}
	return nil
}

// checkRepoUnchanged refuses when the test run changed the repository's
// hooks, config or refs (test/report.json repo_changed), or when the hooks
// or config differ now from before the run (repo_fingerprint). A report
// without a fingerprint (written by hand) is not checked here.
func checkRepoUnchanged(ctx context.Context, repo *gitx.Repo, taskDir string) error {
	data, err := os.ReadFile(filepath.Join(taskDir, filepath.FromSlash(artifact.TestReportFile)))
	if err != nil {
		return nil // a missing report is the evidence's business
	}
	var rep struct {
		RepoFingerprint *gitx.Fingerprint `json:"repo_fingerprint"`
		RepoChanged     []string          `json:"repo_changed"`
	}
	if json.Unmarshal(data, &rep) != nil {
		return nil
	}
	const what = "a test suite may have planted code that would run outside the sandbox (a hook, a config entry) or moved a branch. Inspect .git/hooks, .git/config and the refs, undo what you did not do, then run the tests again: orch redo test && orch test"
	if len(rep.RepoChanged) > 0 {
		return exit.New(exit.ErrRefused, "the repository changed while the tests ran (%s, field repo_changed: %s): %s; nothing was committed", artifact.TestReportFile, strings.Join(rep.RepoChanged, ", "), what)
	}
	if rep.RepoFingerprint == nil {
		return nil
	}
	cur, err := repo.Fingerprint(ctx)
	if err != nil {
		return err
	}
	if changes := rep.RepoFingerprint.Changes(cur, 0); len(changes) > 0 {
		return exit.New(exit.ErrRefused, "the repository's hooks or config changed since the tests ran (%s, compared with %s field repo_fingerprint): %s; nothing was committed", strings.Join(changes, ", "), artifact.TestReportFile, what)
	}
	return nil
}

func diffPaths(d patch.Diff) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range d.Files {
		for _, p := range []string{f.OldPath, f.NewPath} {
			if p != "" && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// landedChange returns orch's commit of the task's current patch
// (evidence.FindLanded; its Orch-Diff is the patch's sha256, or it has
// none: made before orch wrote the trailer), or "" when the branch holds
// none: then the change is still to be committed.
func landedChange(ctx context.Context, repo *gitx.Repo, taskDir, id string) (string, error) {
	found, err := repo.FindCommitsWithTrailer(ctx, TrailerTask, id, 0)
	if err != nil {
		return "", err
	}
	l := evidence.Landed(found) // only trailer blocks orch writes count
	if l.SHA == "" || l.DiffSHA256 == "" {
		return l.SHA, nil
	}
	patch, err := artifact.ReadPatch(taskDir)
	if err != nil || !strings.EqualFold(l.DiffSHA256, evidence.SHA256Hex(patch)) {
		return "", nil
	}
	return l.SHA, nil
}

// checkEvidence refuses (exit 4) to commit a patch whose bytes are not the
// ones every gate of the task recorded, or when the plan, files, review or
// report changed after their gate (evidence.CheckCommit).
func checkEvidence(taskDir, id string, patch []byte) error {
	if err := evidence.CheckCommit(taskDir, patch); err != nil {
		return exit.New(exit.ErrInvalid, "task %s: %w; nothing was committed", id, err)
	}
	return nil
}

// decide builds the decision, applying and committing on accepted.
func (a *Acceptor) decide(ctx context.Context, run work.Input) (Decision, error) {
	opt := a.Options
	if a.seenRun != 0 && run.Revision != a.seenRun {
		return Decision{}, a.Engine.Stale(run.Task, opt.Expect.Revision, run.Revision, nil)
	}
	ev := GatherEvidence(run.Dir)
	d := Decision{
		Decision: artifact.Decision{Verdict: opt.Verdict, Target: opt.Target, Decider: opt.Decider},
		Evidence: ev, PlanSHA256: ev.PlanSHA256, DecidedAt: time.Now().UTC().Format(time.RFC3339),
		Judged: judged(run.Dir, run.Revision-1),
	}
	if opt.Expect.Revision != 0 {
		d.Judged.Revision = opt.Expect.Revision
	}
	if differ := hashesDiffer(opt.Expect.SHA256, d.Judged.SHA256); len(differ) > 0 {
		return d, a.Engine.Stale(run.Task, d.Judged.Revision, d.Judged.Revision, differ)
	}
	for _, r := range opt.Reasons {
		if strings.TrimSpace(r) != "" {
			d.Reasons = append(d.Reasons, strings.TrimSpace(r))
		}
	}
	d.IncompleteEvidence = !ev.Complete
	repo, err := openRepo(ctx, run.Root)
	if err != nil {
		return d, err
	}
	existing, _, err := taskCommits(ctx, repo, run.Task)
	if err != nil {
		return d, err
	}
	if opt.Verdict == artifact.VerdictAccepted {
		// Only a commit of this very patch is reused: after a regression
		// the change is another one and is committed afresh.
		if existing, err = landedChange(ctx, repo, run.Dir, run.Task); err != nil {
			return d, err
		}
	}
	if opt.Verdict != artifact.VerdictAccepted {
		// A revert or rejection after the change was applied names the
		// commit, so that orch revert can undo it.
		if prev := artifact.LoadDecision(run.Dir); prev.OK() && prev.Value.Commit != "" {
			d.Commit, d.Base = prev.Value.Commit, prev.Value.Base
		} else if existing != "" {
			d.Commit = existing
		}
		return d, nil
	}
	if existing != "" {
		d.Commit, d.Reused = existing, true
		if prev := artifact.LoadDecision(run.Dir); prev.OK() {
			d.Base = prev.Value.Base
		}
		parent, err := repo.ResolveCommit(ctx, existing+"^")
		if err != nil {
			return d, err
		}
		if d.Base == "" {
			if d.Base, err = codegenBase(ctx, repo, run.Dir, parent); err != nil {
				return d, err
			}
		}
		d.Notes = append(d.Notes, fmt.Sprintf("the change was already committed as %.12s: not applied again", existing))
		if parent != d.Base {
			// Committed on a HEAD that had moved since the base: the
			// suites run again on the commit, as when it was made. A run
			// killed after its commit may never have finished them
			// (docs/git-effects.md, "Recovery").
			if err := a.testsReady(d.Base); err != nil {
				return d, err
			}
			return d, a.regressionCheck(ctx, run, repo, &d)
		}
		return d, nil
	}
	if err := checkRepoForApply(ctx, repo, run.Dir, run.Task); err != nil {
		return d, err
	}
	ref, err := repo.HeadRef(ctx)
	if err != nil {
		return d, err
	}
	head, err := repo.Head(ctx)
	if err != nil {
		return d, err
	}
	base, err := codegenBase(ctx, repo, run.Dir, head)
	if err != nil {
		return d, err
	}
	d.Base = base
	patch, err := artifact.ReadPatch(run.Dir)
	if err != nil {
		return d, err
	}
	// Checked again on the very bytes about to be applied.
	if err := checkEvidence(run.Dir, run.Task, patch); err != nil {
		return d, err
	}
	if want := opt.Expect.SHA256[lifecycle.HashDiff]; want != "" {
		sum := sha256.Sum256(patch)
		if got := hex.EncodeToString(sum[:]); !strings.HasPrefix(got, strings.ToLower(want)) {
			return d, a.Engine.Stale(run.Task, d.Judged.Revision, d.Judged.Revision, []string{fmt.Sprintf("%s: shown %s, now %s", artifact.DiffFile, want[:min(12, len(want))], got[:12])})
		}
	}
	moved := head != base
	if moved {
		// The suites must run again on the commit: refuse now, before
		// anything changes, when they could not be sandboxed.
		if err := a.testsReady(base); err != nil {
			return d, err
		}
	}
	// The commit is built from objects only (a temporary index): HEAD, the
	// index and the work tree are untouched until the intent is logged.
	msg := commitMessage(run.Task, ev, d.Reasons, evidence.SHA256Hex(patch))
	built, err := repo.BuildCommit(ctx, head, patch, moved, msg)
	if err != nil {
		if errors.Is(err, gitx.ErrApplyConflict) {
			return d, exit.New(exit.ErrRefused, "the change does not apply to HEAD %.12s (base %.12s): %v; nothing was changed. Redo codegen on the new HEAD: orch redo codegen", head, base, err)
		}
		return d, err
	}
	done, err := a.Engine.GitEffect(ctx, run.Task, repo, event.GitIntent{
		Op: OpAccept, Run: run.Run, Ref: ref, Old: head, New: built.Commit, Paths: built.Paths,
	})
	if err != nil {
		return d, fmt.Errorf("commit the change: %w", err)
	}
	if done.Outcome != OutcomeCommitted {
		return d, exit.New(exit.ErrRefused, "%s; nothing was committed: run orch accept again", done.Note)
	}
	if len(done.Left) > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("committed; %s", done.Note))
	}
	d.Commit = built.Commit
	if moved {
		// HEAD moved since the base: the tests ran against the base, so run
		// them again on the commit that now exists.
		return d, a.regressionCheck(ctx, run, repo, &d)
	}
	return d, nil
}

// codegenBase is the commit codegen worked on (code/codegen.json base),
// or def when codegen named none.
func codegenBase(ctx context.Context, repo *gitx.Repo, taskDir, def string) (string, error) {
	if cg := artifact.LoadCodegen(taskDir); cg.OK() && cg.Value.Base != "" {
		return repo.ResolveCommit(ctx, cg.Value.Base)
	}
	return def, nil
}

// testsReady refuses, before anything changes, when the suites cannot run
// again on a commit made on a HEAD that moved since base.
func (a *Acceptor) testsReady(base string) error {
	if a.Tests == nil {
		return exit.New(exit.ErrRefused, "HEAD moved since the base %.12s, so the tests must run again on the new commit, but no test runner was given; nothing was changed", base)
	}
	if err := a.Tests.Ready(); err != nil {
		return exit.New(exit.ErrRefused, "HEAD moved since the base %.12s, so the tests must run again on the new commit, but %v; nothing was changed", base, err)
	}
	return nil
}

// regressionCheck runs the suites on d.Commit, stages their report and
// records the outcome in d: a failure, a run that could not happen or a
// repository changed meanwhile is a regression.
func (a *Acceptor) regressionCheck(ctx context.Context, run work.Input, repo *gitx.Repo, d *Decision) error {
	sha := d.Commit
	logDir := filepath.Join(run.Out.Dir, filepath.FromSlash(artifact.RegressionLogsDir))
	rep, err := a.Tests.Run(ctx, work.TestRun{Repo: repo, Task: run.Task, Base: sha, LogDir: logDir})
	if err != nil {
		return err
	}
	if err := run.Out.WriteJSON(artifact.RegressionReportFile, rep); err != nil {
		return err
	}
	switch {
	case len(rep.RepoChanged) > 0:
		d.Regression = true
		d.Notes = append(d.Notes, fmt.Sprintf("the repository changed while the regression check ran on %.12s (%s): treated as a regression; inspect .git/hooks, .git/config and the refs", sha, strings.Join(rep.RepoChanged, ", ")))
	case rep.Status == artifact.TestCompleted && rep.OverallPass:
		d.Notes = append(d.Notes, fmt.Sprintf("HEAD had moved since the base: tests re-run on %.12s passed", sha))
	case rep.Status == artifact.TestCompleted:
		d.Regression = true
		d.Notes = append(d.Notes, fmt.Sprintf("HEAD had moved since the base: tests re-run on %.12s FAILED: regression (see "+artifact.RegressionReportFile+")", sha))
	default:
		d.Regression = true
		d.Notes = append(d.Notes, fmt.Sprintf("HEAD had moved since the base: the regression check could not run (%s): treated as a regression", rep.Error))
	}
	return nil
}

// summaryMarkdown renders accept/summary.md.
func summaryMarkdown(id string, d Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Decision for %s: %s\n\n", id, d.Verdict)
	if d.Target != "" {
		fmt.Fprintf(&b, "Target: %s\n\n", d.Target)
	}
	fmt.Fprintf(&b, "Decided by %s %s at %s.\n\n## Reasons\n\n", d.Decider.Kind, d.Decider.Name, d.DecidedAt)
	for _, r := range d.Reasons {
		fmt.Fprintf(&b, "- %s\n", r)
	}
	e := d.Evidence
	fmt.Fprintf(&b, "\n## Evidence\n\n- Plan: %s (sha256 %.12s)\n- Plan review: %s\n- Code review: %s\n- Tests: %s (%s)\n- Change: %d file(s), +%d −%d\n",
		e.PlanTitle, e.PlanSHA256, e.PlanReview, e.CodeReview, e.Tests, e.TestSummary, len(e.Files), e.DiffAdded, e.DiffRemoved)
	if d.IncompleteEvidence {
		b.WriteString("\n**The evidence was incomplete** (tests failed, did not complete or are missing).\n")
	}
	if d.Commit != "" {
		fmt.Fprintf(&b, "\nCommit: %s (base %s)\n", d.Commit, d.Base)
	}
	for _, n := range d.Notes {
		fmt.Fprintf(&b, "\nNote: %s\n", n)
	}
	return b.String()
}

// PlanSHA256 returns the sha256 hex of data.
func PlanSHA256(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
