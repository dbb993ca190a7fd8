package review

import (
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/agent"
)

// PlanMarkdown renders review/plan-review.md: the aggregate
// and each reviewer's verdict, for people. It is generated from
// plan-review.json and never read back.
func PlanMarkdown(id, title string, r PlanFile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Plan review: %s\n\n", agent.MarkdownLine(title))
	verdict := "**approved**: every reviewer is ok; `orch next` moves to codegen."
	switch {
	case r.Blocked:
		verdict = "**blocked**: a reviewer found a blocking problem; `orch next` goes back to planning."
	case !r.OK:
		verdict = "**changes requested**: not every reviewer is ok; `orch next` goes back to planning."
	}
	fmt.Fprintf(&b, "Task `%s`, plan sha256 `%s`", agent.MarkdownCode(id), r.PlanSHA256)
	if r.PlanningRound > 0 {
		fmt.Fprintf(&b, " (planning round %d)", r.PlanningRound)
	}
	fmt.Fprintf(&b, ".\n\nVerdict: %s\n\n", verdict)
	b.WriteString("| reviewer | verdict | severity | decision | summary |\n|---|---|---|---|---|\n")
	for _, v := range r.Reviewers {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", agent.MarkdownCell(v.ID), Verdict(v.OK), v.Severity, v.Decision, agent.MarkdownCell(v.Summary))
	}
	for _, v := range r.Reviewers {
		if len(v.BlockingIssues) == 0 && len(v.Suggestions) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n", agent.MarkdownLine(v.ID))
		if len(v.BlockingIssues) > 0 {
			b.WriteString("\nMust change:\n\n")
			for _, is := range v.BlockingIssues {
				fmt.Fprintf(&b, "- %s\n", agent.MarkdownLine(is))
			}
		}
		if len(v.Suggestions) > 0 {
			b.WriteString("\nSuggestions:\n\n")
			for _, s := range v.Suggestions {
				fmt.Fprintf(&b, "- %s\n", agent.MarkdownLine(s))
			}
		}
	}
	return b.String()
}

// Verdict spells a reviewer's verdict for people, the same everywhere
// (the review Markdown files, the CLI, the board): "ok" or "not ok".
func Verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "not ok"
}
