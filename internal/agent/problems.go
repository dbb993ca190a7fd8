package agent

import (
	"errors"
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/clip"
)

// maxAnswerProblems bounds how many problems of one answer are reported back.
const maxAnswerProblems = 10

// Problems collects what is wrong with an answer, for the model to fix.
type Problems struct{ list []string }

func (p *Problems) Add(format string, args ...any) {
	if len(p.list) < maxAnswerProblems {
		p.list = append(p.list, fmt.Sprintf(format, args...))
	} else if len(p.list) == maxAnswerProblems {
		p.list = append(p.list, "(more problems left out)")
	}
}

// Err returns the problems as one error, or nil.
func (p *Problems) Err() error {
	if len(p.list) == 0 {
		return nil
	}
	return errors.New(strings.Join(p.list, "; "))
}

// short cuts a path for a message.
func ShortPath(s string) string {
	if len(s) > 120 {
		s = clip.Head(s, 120)
		return s + "…"
	}
	return s
}
