package config

import (
	"regexp"
	"strings"
	"testing"
)

// validPersona is the documented rule (lower-case letters, digits, '-'
// and '_', at most 40, not starting with '-' or '_'), here against the
// regular expression it replaced.
func TestValidPersona(t *testing.T) {
	re := regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)
	for _, p := range []string{
		"", "a", "0", "-", "_", "-a", "_a", "a-", "a_", "product", "risk_2", "code-review",
		"Product", "a b", "a/b", "a.b", "é", "a\x00", strings.Repeat("a", 40), strings.Repeat("a", 41),
	} {
		if got, want := validPersona(p), re.MatchString(p); got != want {
			t.Errorf("validPersona(%q) = %v, want %v", p, got, want)
		}
	}
}
