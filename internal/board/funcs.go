package board

import (
	"html/template"
	"strings"
	"time"
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
	"deref": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
}
