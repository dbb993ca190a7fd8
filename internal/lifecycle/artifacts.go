package lifecycle

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
)

// Artifact is one entry of the catalogue of a task folder's artifacts: a
// task-relative path and the phase whose work produces it.
type Artifact struct {
	// Path is a file, a folder (Dir: everything below it) or, with
	// Prefix, the start of file names ("review/plan-review" covers
	// plan-review.json and plan-review.md).
	Path   string
	Dir    bool
	Prefix bool
	// Phase owns the artifact: its artifacts go to history when the
	// phase starts a fresh attempt. "" is the user's input (the brief),
	// which no phase owns.
	Phase Phase
	// KeptOnRerun: the phase's own re-run leaves the artifact in place
	// (it is input to the phase's decision, like the accept advisor's
	// advice); a regression or a redo still archives it.
	KeptOnRerun bool
	// Main is the phase's main artifact, the one `orch next` reads
	// ("" for a folder or a companion file).
	Main string

	// The rows of the documented layout (docs/artifacts.md, generated
	// from here) are the entries with a Meaning: who writes the file, who
	// reads it, what it holds.
	Writer  string
	Meaning string
	// ReadBy names the workers and commands that read it as input.
	ReadBy []string
	// Decides lists the phases whose decision (`orch next`, `orch
	// status`) reads it: orchestrator.Observe loads exactly these files.
	Decides []Phase
}

// Readers of artifacts, as the catalogue names them.
const (
	ByPlanner       = "planner"
	ByPlanReviewers = "plan reviewers"
	ByCodegen       = "codegen"
	ByCodeReviewers = "code reviewers"
	ByAnswer        = "orch answer"
	ByTestRunner    = "orch test"
	ByAdvisor       = "orch advise"
	ByAccept        = "orch accept"
	ByRevert        = "orch revert"
	ByPerson        = "a person"
)

// Artifacts is the catalogue: where each phase's artifacts live, who
// writes and reads them. Ownership of a path is decided by the most
// specific entry that covers it.
func Artifacts() []Artifact {
	return []Artifact{
		{Path: "planning", Dir: true, Phase: Planning, Main: artifact.PlanFile},
		{Path: artifact.BriefFile, Writer: "`orch new`", Meaning: "the user's brief",
			ReadBy: []string{ByPlanner}},
		{Path: artifact.PlanFile, Phase: Planning, Writer: "planner or a person", Meaning: "the structured plan (source of truth)",
			ReadBy:  []string{ByPlanner, ByAnswer, ByPlanReviewers, ByCodegen, ByCodeReviewers, ByAdvisor, ByAccept},
			Decides: []Phase{Planning, PlanReview, Codegen}},
		{Path: artifact.PlanMarkdownFile, Phase: Planning, Writer: "planner", Meaning: "human-readable projection of the plan (never parsed back)",
			ReadBy: []string{ByPerson}},
		{Path: artifact.FilePlanFile, Phase: Planning, Writer: "planner or a person", Meaning: "the file plan codegen must stay inside",
			ReadBy:  []string{ByCodegen, ByPlanner},
			Decides: []Phase{Planning, PlanReview, Codegen}},
		{Path: artifact.MeetingFile, Phase: Planning, Writer: "planner", Meaning: "every planning round: questions, answers, drafts",
			ReadBy: []string{ByPlanner, ByAnswer}},
		{Path: strings.TrimSuffix(artifact.PlanReviewFile, ".json"), Prefix: true, Phase: PlanReview, Main: artifact.PlanReviewFile},
		{Path: artifact.PlanReviewFile, Phase: PlanReview, Writer: "plan reviewers", Meaning: "aggregated plan verdict (+ `.md` for people)",
			ReadBy:  []string{ByPlanner, ByAccept},
			Decides: []Phase{PlanReview}},
		{Path: "code", Dir: true, Phase: Codegen, Main: artifact.DiffFile},
		{Path: artifact.CodeFilesDir, Dir: true, Phase: Codegen, Writer: "codegen", Meaning: "full desired content of each changed file, at its repository path",
			ReadBy:  []string{ByCodeReviewers},
			Decides: []Phase{Codegen}},
		{Path: artifact.DiffFile, Phase: Codegen, Writer: "orchestrator", Meaning: "unified diff of `code/files` against the base commit",
			ReadBy:  []string{ByCodeReviewers, ByTestRunner, ByAdvisor, ByAccept, ByCodegen},
			Decides: []Phase{Codegen}},
		{Path: artifact.CodegenFile, Phase: Codegen, Writer: "codegen", Meaning: "codegen result and signals, the base commit",
			ReadBy:  []string{ByCodeReviewers, ByTestRunner, ByAccept},
			Decides: []Phase{Codegen}},
		{Path: strings.TrimSuffix(artifact.CodeReviewFile, ".json"), Prefix: true, Phase: Review, Main: artifact.CodeReviewFile},
		{Path: artifact.CodeReviewFile, Phase: Review, Writer: "code reviewers", Meaning: "aggregated code verdict (+ `.md` for people)",
			ReadBy:  []string{ByCodegen, ByAdvisor, ByAccept},
			Decides: []Phase{Review}},
		{Path: "test", Dir: true, Phase: Test, Main: artifact.TestReportFile},
		{Path: artifact.TestReportFile, Phase: Test, Writer: "test runner", Meaning: "suites, cases, counts; logs under `test/logs/`",
			ReadBy:  []string{ByCodegen, ByAdvisor, ByAccept},
			Decides: []Phase{Test}},
		{Path: "accept", Dir: true, Phase: Accept, Main: artifact.DecisionFile},
		{Path: artifact.DecisionFile, Phase: Accept, Writer: "`orch accept` or a person", Meaning: "the explicit decision (+ `summary.md`)",
			ReadBy:  []string{ByCodegen, ByRevert},
			Decides: []Phase{Accept}},
		{Path: artifact.RegressionReportFile, Phase: Accept, Writer: "`orch accept`", Meaning: "when HEAD had moved since the base: the test report of the re-run on the commit made (logs under `accept/regression-logs/`)",
			ReadBy: []string{ByPerson}},
		{Path: "accept/advice.", Prefix: true, Phase: Accept, KeptOnRerun: true},
		{Path: artifact.AdviceFile, Phase: Accept, KeptOnRerun: true, Writer: "`orch advise`", Meaning: "the accept advisor's recommendation (+ `.md`); never a decision",
			ReadBy: []string{ByPerson}},
		{Path: "revert", Dir: true, Phase: Revert, Main: artifact.RevertRecordFile},
		{Path: artifact.RevertRecordFile, Phase: Revert, Writer: "`orch revert` or a person", Meaning: "what was reverted and why",
			Decides: []Phase{Revert}},
	}
}

// DecisionInputs lists the artifacts the decision out of phase p reads, in
// catalogue order (the plan before the file plan, which depends on it).
func DecisionInputs(p Phase) []string {
	var out []string
	for _, a := range Artifacts() {
		if slices.Contains(a.Decides, p) {
			out = append(out, a.Path)
		}
	}
	return out
}

// LayoutTable is the Markdown table of the catalogue's documented rows:
// path, owning phase, writer, readers, meaning (docs/artifacts.md).
func LayoutTable() string {
	var b strings.Builder
	b.WriteString("\n| path | phase | written by | read by | meaning |\n|---|---|---|---|---|\n")
	for _, a := range Artifacts() {
		if a.Meaning == "" {
			continue
		}
		phase := "(input)"
		if a.Phase != "" {
			phase = "`" + string(a.Phase) + "`"
		}
		var readers []string
		readers = append(readers, a.ReadBy...)
		if len(a.Decides) > 0 {
			var ps []string
			for _, p := range a.Decides {
				ps = append(ps, string(p))
			}
			readers = append(readers, "the decision out of "+strings.Join(ps, ", "))
		}
		shown := a.Path
		if a.Dir {
			shown += "/"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", shown, phase, a.Writer, strings.Join(readers, "; "), a.Meaning)
	}
	return b.String()
}

// covers reports whether entry a covers task-relative path rel, and how
// specific the match is (the length of the matched path).
func (a Artifact) covers(rel string) (int, bool) {
	switch {
	case rel == a.Path:
		return len(a.Path), true
	case a.Dir && strings.HasPrefix(rel, a.Path+"/"):
		return len(a.Path), true
	case a.Prefix && strings.HasPrefix(rel, a.Path):
		return len(a.Path), true
	}
	return 0, false
}

// ArtifactOf returns the catalogue entry that covers task-relative path
// rel: the most specific one.
func ArtifactOf(rel string) (Artifact, bool) {
	rel = path.Clean(rel)
	var best Artifact
	bestLen := -1
	for _, a := range Artifacts() {
		if n, ok := a.covers(rel); ok && n > bestLen {
			best, bestLen = a, n
		}
	}
	return best, bestLen >= 0
}

// Owner returns the phase that owns task-relative path rel ("" when none
// does: the brief, or a file no phase writes).
func Owner(rel string) Phase {
	a, _ := ArtifactOf(rel)
	return a.Phase
}

// ArtifactAreas are the top-level folders of a task that hold artifacts,
// in lifecycle order.
func ArtifactAreas() []string {
	var out []string
	for _, a := range Artifacts() {
		top, _, _ := strings.Cut(a.Path, "/")
		if !slices.Contains(out, top) {
			out = append(out, top)
		}
	}
	return out
}
