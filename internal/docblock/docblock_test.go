package docblock

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

const doc = "# Title\n\nintro\n\n## Setup\n\ntext\n\n```toml\n# a comment, not a heading\nx = 1\n```\n\n### Details\n\n```sh\necho hi\n```\n\n## Next\n\nafter\n"

func TestSectionAndFenced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		heading, want string
		toml, sh      []string
	}{
		// A level-2 section runs over its level-3 subsection and past a
		// '#' line inside a code block, up to the next level-2 heading.
		{"## Setup", "\ntext\n\n```toml\n# a comment, not a heading\nx = 1\n```\n\n### Details\n\n```sh\necho hi\n```\n\n",
			[]string{"# a comment, not a heading\nx = 1\n"}, []string{"echo hi\n"}},
		{"### Details", "\n```sh\necho hi\n```\n\n", nil, []string{"echo hi\n"}},
		{"## Next", "\nafter\n", nil, nil},
	} {
		got := Section(t, path, tc.heading)
		if got != tc.want {
			t.Errorf("Section(%q) = %q, want %q", tc.heading, got, tc.want)
		}
		if toml := Fenced(got, "toml"); !reflect.DeepEqual(toml, tc.toml) {
			t.Errorf("Fenced(%q, toml) = %q, want %q", tc.heading, toml, tc.toml)
		}
		if sh := Fenced(got, "sh"); !reflect.DeepEqual(sh, tc.sh) {
			t.Errorf("Fenced(%q, sh) = %q, want %q", tc.heading, sh, tc.sh)
		}
	}
}
