package task

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestValidID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id string
		ok bool
	}{
		{"0007-add-retry", true},
		{"a", true},
		{"0", true},
		{"a.b_c-d", true},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
		{"", false},
		{".", false},
		{"..", false},
		{"../x", false},
		{"x/y", false},
		{"A B", false},
		{"Abc", false},
		{"-abc", false},
		{".hidden", false},
		{"_x", false},
		{"tâche", false},
		{"ταυ", false},
		{"a b", false},
		{"a\x00", false},
		{"a\n", false},
	}
	for _, tt := range tests {
		err := ValidID(tt.id)
		if (err == nil) != tt.ok {
			t.Errorf("ValidID(%q) = %v, want ok=%v", tt.id, err, tt.ok)
			continue
		}
		if err != nil {
			if !errors.Is(err, ErrBadID) {
				t.Errorf("ValidID(%q) error %v does not wrap ErrBadID", tt.id, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, `"`) || !strings.Contains(msg, idRule) {
				t.Errorf("ValidID(%q) message %q must quote the id and the rule", tt.id, msg)
			}
		}
	}
}

func TestSlug(t *testing.T) {
	t.Parallel()
	tests := []struct{ brief, want string }{
		{"Add retry", "add-retry"},
		{"Add retry to the HTTP client's fetch", "add-retry-to-the-http"},
		{"  fix:   bug #42!  ", "fix-bug-42"},
		{"", "task"},
		{"!!! ???", "task"},
		{"Füge Retry hinzu", "f-ge-retry-hinzu"},
		{strings.Repeat("x", 50), strings.Repeat("x", 40)},
		{"abcdefghijklmnopqrst abcdefghijklmnopqrst more", "abcdefghijklmnopqrst"},
		{"one two three four five six", "one-two-three-four-five"},
	}
	for _, tt := range tests {
		if got := Slug(tt.brief); got != tt.want {
			t.Errorf("Slug(%q) = %q, want %q", tt.brief, got, tt.want)
		}
	}
}

func TestNewID(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	id, err := p.NewID("Add retry")
	if err != nil {
		t.Fatal(err)
	}
	if id != "0001-add-retry" {
		t.Fatalf("first id = %q", id)
	}
	for _, name := range []string{"0006-x", "0003-y", "12abc", "custom", ".tmp-0099-z-123"} {
		if err := os.Mkdir(filepath.Join(p.TasksDir(), name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	id, err = p.NewID("Make the CLI faster, please")
	if err != nil {
		t.Fatal(err)
	}
	if id != "0007-make-the-cli-faster-please" {
		t.Fatalf("id = %q", id)
	}
	if err := os.Mkdir(filepath.Join(p.TasksDir(), "12345"), 0o755); err != nil {
		t.Fatal(err)
	}
	if id, _ = p.NewID("x"); id != "12346-x" {
		t.Fatalf("id after 12345 = %q", id)
	}
}

func FuzzSlug(f *testing.F) {
	for _, s := range []string{"Add retry", "", "Ünïcödé 名前", strings.Repeat("ab ", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, brief string) {
		s := Slug(brief)
		if len(s) > maxSlug {
			t.Fatalf("slug %q too long", s)
		}
		if err := ValidID("0001-" + s); err != nil {
			t.Fatalf("slug %q gives an invalid id: %v", s, err)
		}
	})
}

func FuzzValidID(f *testing.F) {
	for _, s := range []string{"0007-add-retry", "..", "../x", "A B", "a", "-a", strings.Repeat("a", 64), strings.Repeat("a", 65), "a\n"} {
		f.Add(s)
	}
	// The rule of docs/artifacts.md, as a regular expression.
	rule := regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	f.Fuzz(func(t *testing.T, id string) {
		err := ValidID(id)
		if want := rule.MatchString(id) && id != "." && id != ".."; (err == nil) != want {
			t.Fatalf("ValidID(%q) = %v, the rule says ok=%v", id, err, want)
		}
		if err != nil {
			return
		}
		if id == "." || id == ".." || strings.ContainsAny(id, "/\\ ") || len(id) > 64 || filepath.Base(id) != id {
			t.Fatalf("ValidID accepted %q", id)
		}
	})
}
