package visibility

import (
	"path"
	"strings"
	"testing"
)

// FuzzAllowPattern checks that an accepted allow_paths entry is a valid
// pattern that never reaches into .git/ or .orch/, in any letter case (a
// file system that ignores case takes .Git for .git), and never allows a
// whole family of secrets at once.
func FuzzAllowPattern(f *testing.F) {
	for _, s := range []string{".env.example", "certs/test-*.pem", "*", "conf/*", ".git/config", "a/../b", "[", "x/[a-z]*", "*.*", ".[^a-z]it/config"} {
		f.Add(s)
	}
	var victims []string
	for _, dir := range caseVariants(".git") {
		victims = append(victims, dir+"/config", dir+"/hooks/pre-commit")
	}
	for _, dir := range caseVariants(".orch") {
		victims = append(victims, dir+"/config.toml")
	}
	f.Fuzz(func(t *testing.T, p string) {
		if CheckAllowPattern(p) != nil {
			return
		}
		if _, err := path.Match(p, "x"); err != nil {
			t.Fatalf("accepted %q, an invalid pattern: %v", p, err)
		}
		for _, victim := range victims {
			if ok, _ := path.Match(p, victim); ok {
				t.Fatalf("accepted %q, which matches %s", p, victim)
			}
		}
		// A name on purpose has a letter or digit in its last element:
		// the pattern cannot match a path whose elements have none.
		elems := strings.Count(p, "/") + 1
		nameless := strings.TrimSuffix(strings.Repeat("_-._/", elems), "/")
		if ok, _ := path.Match(p, nameless); ok {
			t.Fatalf("accepted %q, which matches the nameless %q", p, nameless)
		}
	})
}
