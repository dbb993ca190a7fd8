package board

import (
	"fmt"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/review"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

// Entry is one line of the timeline.
type Entry struct {
	Seq    int64
	TS     time.Time
	Kind   string
	Text   string
	Detail string
	Class  string
}

// timeline turns the transcript into lines a person reads, from each
// event's typed payload (task.Event.Decode).
func timeline(evs []task.Event) []Entry {
	out := make([]Entry, 0, len(evs))
	for _, ev := range evs {
		e := Entry{Seq: ev.Seq, TS: ev.TS, Kind: string(ev.Kind), Class: string(ev.Kind)}
		p, err := ev.Decode()
		if err != nil {
			p = nil // an unknown or unreadable event shows its kind
		}
		switch d := p.(type) {
		case event.Created:
			e.Text = "task created"
		case event.Transition:
			e.Text = fmt.Sprintf("%s → %s", d.From, d.To)
			e.Detail = joinNonEmpty(d.Label, d.Reason)
		case event.Override:
			e.Text = fmt.Sprintf("override %s → %s", d.From, d.To)
			e.Detail = "reason: " + d.Reason
			if len(d.SkippedPhases) > 0 {
				e.Detail += fmt.Sprintf("; skipped %v", d.SkippedPhases)
			}
		case event.Redo:
			e.Text = fmt.Sprintf("redo %s → %s", d.From, d.To)
			e.Detail = joinNonEmpty(d.Reason, archivedNote(d.Archived))
		case event.PhaseStarted:
			e.Text = fmt.Sprintf("%s started", d.Phase)
			e.Detail = "run " + d.Run
		case event.PhaseFinished:
			e.Text = fmt.Sprintf("%s finished: %s", d.Phase, d.Status)
			e.Detail = joinNonEmpty(d.Error, summaryAfter(string(d.Status), d.Summary))
			if st := lifecycle.Status(d.Status); st == lifecycle.RunFailed || st == lifecycle.RunCancelled {
				e.Class += " bad"
			}
		case event.ModelCall:
			e.Text = fmt.Sprintf("%s: %s %s", d.Role, d.Provider, d.Model)
			e.Detail = fmt.Sprintf("%v in / %v out tokens, %v ms", d.TokensIn, d.TokensOut, d.LatencyMS)
			if d.CostUSD != nil {
				e.Detail += ", " + agent.FormatUSD(*d.CostUSD)
			}
			if d.Cached {
				e.Detail += ", from orch's cache"
			}
			if len(d.ToolCalls) > 0 {
				e.Detail += fmt.Sprintf(", tools %v", d.ToolCalls)
			}
			if d.Error != "" {
				e.Detail += "; error: " + d.Error
				e.Class += " bad"
			}
		case event.BudgetExceeded:
			e.Text = "budget exceeded"
			e.Detail = d.Error
			e.Class += " bad"
		case event.UserInput:
			e.Text = fmt.Sprintf("answered %s", d.Question)
			e.Detail = d.Answer
		case event.Advice:
			e.Text = "accept advisor: " + d.Recommendation
			e.Detail = "confidence " + d.Confidence
		case event.GitIntent:
			e.Text = fmt.Sprintf("git %s: about to move %s", d.Op, d.Ref)
			e.Detail = fmt.Sprintf("%.12s → %.12s", d.Old, d.New)
		case event.GitDone:
			e.Text = fmt.Sprintf("git %s: %s", d.Op, d.Outcome)
			e.Detail = joinNonEmpty(d.Commit, d.Note)
		case event.Recovered:
			e.Text = "recovered after a crash"
		default:
			e.Text = string(ev.Kind)
		}
		out = append(out, e)
	}
	return out
}

func archivedNote(a string) string {
	if a == "" {
		return ""
	}
	return "archived in " + a
}

func joinNonEmpty(parts ...string) string {
	var keep []string
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, " — ")
}

// summaryText says a phase's summary in words, the fields a person reads
// first (the counts, the verdict, the commit), in the phase's order; a
// field it does not know is shown as name=value, so nothing is lost.
func summaryText(s *event.PhaseSummary) string {
	if s == nil {
		return ""
	}
	var parts []string
	add := func(format string, args ...any) { parts = append(parts, fmt.Sprintf(format, args...)) }
	known := map[string]bool{}
	seen := func(names ...string) {
		for _, n := range names {
			known[n] = true
		}
	}
	seen("status") // the event's text says it ("planning finished: clarifying")
	if s.Round != nil {
		add("round %d", *s.Round)
	}
	if len(s.OpenQuestions) > 0 {
		add("open questions: %s", strings.Join(s.OpenQuestions, ", "))
	}
	if len(s.RestoredAnswers) > 0 {
		add("answers kept: %s", strings.Join(s.RestoredAnswers, ", "))
	}
	seen("round", "open_questions", "restored_answers")
	if s.Attempt != nil {
		add("attempt %d", *s.Attempt)
	}
	if s.Files != nil {
		add("%d file(s)", *s.Files)
	}
	if s.Deletes != nil && *s.Deletes > 0 {
		add("%d deleted", *s.Deletes)
	}
	if len(s.Unplanned) > 0 {
		add("not in the file plan: %s", strings.Join(s.Unplanned, ", "))
	}
	seen("attempt", "files", "deletes", "unplanned")
	switch {
	case s.Blocked != nil && *s.Blocked:
		add("blocked")
	case s.OK != nil:
		parts = append(parts, review.Verdict(*s.OK))
	}
	if s.Reviewers != nil {
		add("%d reviewer(s)", *s.Reviewers)
	}
	if s.Issues != nil {
		add("%d issue(s)", *s.Issues)
	}
	if s.Blocking != nil {
		add("%d blocking", *s.Blocking)
	}
	if s.PlanSHA256 != "" {
		add("plan %.12s", s.PlanSHA256)
	}
	seen("ok", "blocked", "reviewers", "issues", "blocking", "plan_sha256")
	if s.Tests != nil {
		parts = append(parts, s.Tests.String())
	}
	if s.OverallPass != nil && s.Tests == nil {
		if *s.OverallPass {
			add("passed")
		} else {
			add("not passed")
		}
	}
	if s.Sandbox != "" {
		add("sandbox %s", s.Sandbox)
	}
	seen("summary", "overall_pass", "sandbox")
	if s.Verdict != "" {
		v := "verdict " + s.Verdict
		if s.Target != "" {
			v += " (back to " + s.Target + ")"
		}
		if s.Decider != nil {
			v += " by " + strings.TrimSpace(s.Decider.Kind+" "+s.Decider.Name)
		}
		parts = append(parts, v)
	} else if s.Target != "" {
		add("back to %s", s.Target)
	}
	if s.Regression != nil && *s.Regression {
		add("regression")
	}
	if s.Commit != "" {
		add("commit %.12s", s.Commit)
	}
	if s.Judged != nil {
		add("judged revision %d", s.Judged.Revision)
	}
	seen("verdict", "target", "decider", "regression", "commit", "judged")
	if s.RevertedCommit != "" {
		add("reverted %.12s", s.RevertedCommit)
	}
	if s.RevertCommit != "" {
		add("in %.12s", s.RevertCommit)
	}
	if s.Base != "" {
		add("base %.12s", s.Base)
	}
	seen("reverted_commit", "revert_commit", "base")
	for _, f := range s.Fields() {
		if !known[f.Name] {
			parts = append(parts, f.Name+"="+clip.Runes(f.Value, 80))
		}
	}
	return strings.Join(parts, " · ")
}

// summaryAfter is summaryText after the status word status, which it
// does not repeat ("review finished: ok", not "ok · ok · 4 reviewer(s)").
func summaryAfter(status string, s *event.PhaseSummary) string {
	t := summaryText(s)
	if rest, ok := strings.CutPrefix(t, status+" · "); ok {
		return rest
	}
	if t == status {
		return ""
	}
	return t
}

// Span is one stay of a task in a phase, from the transcript: entered by
// the task's creation, a transition, an override or a redo, left by the
// next of those (End is zero while the task is still there).
type Span struct {
	Phase lifecycle.Phase
	Start time.Time
	End   time.Time
}

// Took is the span's duration, up to now for the current one.
func (s Span) Took(now time.Time) time.Duration {
	if s.End.IsZero() {
		return now.Sub(s.Start)
	}
	return s.End.Sub(s.Start)
}

// phaseSpans reads the phases a task went through, in order, from its
// transcript's typed events (task.Event.Decode); the last span is the
// current phase, entered at its Start.
func phaseSpans(evs []task.Event) []Span {
	var out []Span
	enter := func(p lifecycle.Phase, at time.Time) {
		if n := len(out); n > 0 {
			out[n-1].End = at
		}
		out = append(out, Span{Phase: p, Start: at})
	}
	for _, ev := range evs {
		p, err := ev.Decode()
		if err != nil {
			continue
		}
		switch d := p.(type) {
		case event.Created:
			enter(lifecycle.Planning, ev.TS)
		case event.Transition:
			enter(d.To, ev.TS)
		case event.Override:
			enter(d.To, ev.TS)
		case event.Redo:
			enter(d.To, ev.TS)
		}
	}
	return out
}

// Stay is a span as the task page lists it.
type Stay struct {
	Phase   lifecycle.Phase
	Took    string
	Current bool
}

// stays renders spans for the task page: each phase stay with its
// duration, the current one marked.
func stays(spans []Span, now time.Time) []Stay {
	out := make([]Stay, 0, len(spans))
	for i, s := range spans {
		out = append(out, Stay{Phase: s.Phase, Took: ago(s.Took(now)), Current: i == len(spans)-1 && s.End.IsZero()})
	}
	return out
}
