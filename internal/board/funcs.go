package board

import (
	"html/template"
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
	"deref": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
}
