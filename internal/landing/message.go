package landing

import (
	"strings"

	"github.com/orchdev/orch/internal/evidence"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/termtext"
)

// Commit messages are built, never concatenated (docs/git-effects.md):
// the subject and the body come from artifacts a model or a person wrote,
// so their control characters are removed (git log prints a message raw)
// and the subject is one line; orch's own trailers are added last, as the
// message's last paragraph, and orch finds its commits by that block alone
// (orchTrailers), so a "Orch-Task:" line in a title or a reason can never
// name a commit.

// trailer is one "Key: value" line orch writes.
type trailer struct{ key, value string }

// buildMessage is subject, a blank line, the body's paragraphs (each line
// trimmed at its end, runs of blank lines one) and, after a blank line,
// the trailers.
func buildMessage(subject string, body []string, trailers ...trailer) string {
	var b strings.Builder
	b.WriteString(termtext.Subject(subject))
	b.WriteString("\n\n")
	var lines []string
	for _, part := range body {
		for line := range strings.SplitSeq(termtext.Message(part), "\n") {
			line = strings.TrimRight(line, " \t")
			if line == "" && (len(lines) == 0 || lines[len(lines)-1] == "") {
				continue
			}
			lines = append(lines, line)
		}
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > 0 {
		b.WriteString(strings.Join(lines, "\n"))
		b.WriteString("\n\n")
	}
	for _, t := range trailers {
		b.WriteString(t.key + ": " + termtext.Subject(t.value) + "\n")
	}
	return b.String()
}

// commitMessage is the plan title, the reasons, and the trailers: the
// task, the plan's sha256 and the patch's (Orch-Diff: the decision out of
// accept checks it against the patch the gates judged).
func commitMessage(id string, ev Evidence, reasons []string, diffSHA string) string {
	subject := termtext.Subject(ev.PlanTitle)
	if subject == "" {
		subject = "orch task " + id
	}
	return buildMessage(subject, reasons, trailer{TrailerTask, id}, trailer{TrailerPlan, ev.PlanSHA256}, trailer{TrailerDiff, diffSHA})
}

// revertMessage is git revert's message plus the reason and the trailers
// that find the revert again: Orch-Task and Orch-Revert.
func revertMessage(id, subject, commit, reason string) string {
	return buildMessage(`Revert "`+termtext.Subject(subject)+`"`,
		[]string{"This reverts commit " + commit + ".", "", reason},
		trailer{TrailerTask, id}, trailer{TrailerRevert, commit})
}

// orchTrailers reports whether c's trailer block is one orch writes
// (evidence.OrchTrailers, which the decision out of accept uses too).
func orchTrailers(c gitx.TrailerCommit) bool { return evidence.OrchTrailers(c) }
