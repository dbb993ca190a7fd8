package board

import (
	"html/template"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/exit"
)

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	// short is a hash's first 12 characters.
	"short": func(s string) string {
		if len(s) > 12 {
			return s[:12]
		}
		return s
	},
	"ts": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	// lines splits a message into its non-blank lines (an error with
	// hints, several errors joined): each is shown as an item of its own.
	"lines": func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if strings.TrimSpace(l) != "" {
				out = append(out, l)
			}
		}
		return out
	},
	// codespans shows text that quotes commands between backticks (as
	// orch's messages do for the terminal: "`orch redo PHASE` re-opens
	// it") with each quoted part as code; everything is escaped.
	"codespans": codeSpans,
	// exitword names an exit code as the CLI documents it ("" for one
	// without words).
	"exitword": func(code int) string { return exitWords[exit.Code(code)] },
	"deref": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
}

// codeSpans escapes s and shows each part between a pair of backticks as
// <code>; an unpaired backtick stays as it is.
func codeSpans(s string) template.HTML {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+1:], '`')
		if j < 0 {
			break
		}
		b.WriteString(template.HTMLEscapeString(s[:i]))
		b.WriteString("<code>")
		b.WriteString(template.HTMLEscapeString(s[i+1 : i+1+j]))
		b.WriteString("</code>")
		s = s[i+1+j+1:]
	}
	b.WriteString(template.HTMLEscapeString(s))
	return template.HTML(b.String())
}
