package planner

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
)

// planReviewFeedback renders the latest plan review when it reviewed the
// current plan (its plan_sha256 matches, or it has none): the review in
// place, else the newest one archived under history/. "" otherwise.
func planReviewFeedback(taskDir string, plan artifact.Loaded[artifact.Plan]) string {
	if !plan.OK() {
		return ""
	}
	candidates := []string{taskDir}
	for _, h := range planHistoryDirs(taskDir) {
		candidates = append(candidates, filepath.Join(taskDir, artifact.HistoryDir, h))
	}
	for _, dir := range candidates {
		r := artifact.LoadPlanReview(dir)
		if !r.Present {
			continue
		}
		if !r.OK() {
			return ""
		}
		if r.Value.PlanSHA256 != "" && !strings.EqualFold(r.Value.PlanSHA256, plan.SHA256) {
			return ""
		}
		return renderReviewFeedback(r.Value)
	}
	return ""
}

// planHistoryDirs lists history/<n>-… folders, newest (highest n) first.
func planHistoryDirs(taskDir string) []string {
	entries, err := os.ReadDir(filepath.Join(taskDir, artifact.HistoryDir))
	if err != nil {
		return nil
	}
	type numbered struct {
		n    int
		name string
	}
	var dirs []numbered
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "-")
		n, err := strconv.Atoi(num)
		if ok && err == nil && e.IsDir() {
			dirs = append(dirs, numbered{n, e.Name()})
		}
	}
	sort.Slice(dirs, func(i, j int) bool { return dirs[i].n > dirs[j].n })
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = d.name
	}
	return out
}

func renderReviewFeedback(r artifact.PlanReview) string {
	var b strings.Builder
	fmt.Fprintf(&b, "aggregate: ok=%v blocked=%v\n", r.OK, r.Blocked)
	for _, rv := range r.Reviewers {
		fmt.Fprintf(&b, "%s: ok=%v severity=%s\n", rv.ID, rv.OK, planFirstSet(rv.Severity, "unspecified"))
		for _, is := range rv.BlockingIssues {
			fmt.Fprintf(&b, "  must change: %s\n", pmdItem(is))
		}
		for _, s := range rv.Suggestions {
			fmt.Fprintf(&b, "  suggestion: %s\n", pmdItem(s))
		}
	}
	return b.String()
}

// roundLine is the minutes' line for a round.
func roundLine(round int, status string, now time.Time, provider, model string, built builtPlan) meetingLine {
	p := built.Plan
	l := meetingLine{Kind: meetingRound, Round: round, TS: now.UTC(), Provider: provider, Model: model,
		Status: status, Title: p.Title, Digest: planDigest(p), Restored: built.Restored}
	for _, q := range p.Questions {
		answered := q.Answer != nil && strings.TrimSpace(*q.Answer) != ""
		l.Questions = append(l.Questions, meetingQuestion{ID: q.ID, Text: q.Text, Blocking: q.Blocking, Answered: answered})
		if answered {
			if l.Answers == nil {
				l.Answers = map[string]string{}
			}
			l.Answers[q.ID] = *q.Answer
		}
	}
	l.Open = QuestionIDs(p.OpenQuestions())
	return l
}

// planDigest summarizes a draft in a line.
func planDigest(p artifact.Plan) string {
	var parts []string
	parts = append(parts, p.Title)
	if n := len(p.Goals); n > 0 {
		parts = append(parts, fmt.Sprintf("%d goal(s)", n))
	}
	if p.Work != nil && len(p.Work.Tasks) > 0 {
		parts = append(parts, fmt.Sprintf("%d work task(s)", len(p.Work.Tasks)))
	}
	var files []string
	for _, f := range p.FilePlan {
		files = append(files, f.Intent+" "+f.Path)
	}
	if len(files) > 0 {
		parts = append(parts, "files: "+strings.Join(files, ", "))
	} else {
		parts = append(parts, "no files planned")
	}
	if n := len(p.Risks); n > 0 {
		parts = append(parts, fmt.Sprintf("%d risk(s)", n))
	}
	return clip.Bytes(strings.Join(parts, "; "), 500)
}

func QuestionIDs(qs []artifact.Question) []string {
	ids := make([]string, len(qs))
	for i, q := range qs {
		ids[i] = q.ID
	}
	return ids
}

func planNonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

func planFirstSet(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
