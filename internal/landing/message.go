package landing

import (
	"strings"

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

// commitMessage is the plan title, the reasons, and the trailers.
func commitMessage(id string, ev Evidence, reasons []string) string {
	subject := termtext.Subject(ev.PlanTitle)
	if subject == "" {
		subject = "orch task " + id
	}
	return buildMessage(subject, reasons, trailer{TrailerTask, id}, trailer{TrailerPlan, ev.PlanSHA256})
}

// revertMessage is git revert's message plus the reason and the trailers
// that find the revert again: Orch-Task and Orch-Revert.
func revertMessage(id, subject, commit, reason string) string {
	return buildMessage(`Revert "`+termtext.Subject(subject)+`"`,
		[]string{"This reverts commit " + commit + ".", "", reason},
		trailer{TrailerTask, id}, trailer{TrailerRevert, commit})
}

// orchTrailers reports whether c's trailer block is one orch writes: one
// Orch-Task and either one Orch-Plan or one Orch-Revert (a commit id). A message with a second Orch-Task
// or Orch-Plan line in its last paragraph is not orch's.
func orchTrailers(c gitx.TrailerCommit) bool {
	count := func(key string) (n int, value string) {
		for k, vs := range c.Trailers {
			if strings.EqualFold(k, key) {
				n += len(vs)
				if len(vs) > 0 {
					value = vs[0]
				}
			}
		}
		return n, value
	}
	nTask, _ := count(TrailerTask)
	nPlan, _ := count(TrailerPlan)
	nRevert, revert := count(TrailerRevert)
	switch {
	case nTask != 1:
		return false
	case nPlan == 1 && nRevert == 0:
		return true
	case nRevert == 1 && nPlan == 0:
		return len(revert) >= 40 && isLowerHex(revert)
	}
	return false
}

func isLowerHex(s string) bool {
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return s != ""
}
