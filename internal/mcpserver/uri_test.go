package mcpserver

import (
	"github.com/orchdev/orch/internal/exit"
	"strings"
	"testing"
)

func TestParseURI(t *testing.T) {
	for _, tc := range []struct {
		uri, id, rel string
		err          string
	}{
		{"orch://task/t1/planning/brief.md", "t1", "planning/brief.md", ""},
		{"orch://task/0007-add-retry/code/files/cmd/my%20tool/main.go", "0007-add-retry", "code/files/cmd/my tool/main.go", ""},
		{"orch://task/t1/review/code-review.md", "t1", "review/code-review.md", ""},
		{"orch://task/t1/state.json", "", "", "not a file under"},
		{"orch://task/t1/transcript.jsonl", "", "", "not a file under"},
		{"orch://task/t1/history/1-codegen/code/diff.patch", "", "", "not a file under"},
		{"orch://task/t1/planning/../state.json", "", "", `".."`},
		{"orch://task/t1/planning/%2e%2e/state.json", "", "", `".."`},
		{"orch://task/t1/planning/a%2fb", "", "", "encoded slash"},
		{"orch://task/t1/planning//x", "", "", "empty"},
		{"orch://task/t1/planning/%zz", "", "", "percent-encoded"},
		{"orch://task/../planning/brief.md", "", "", "task id is invalid"},
		{"orch://task/T1/planning/brief.md", "", "", "task id is invalid"},
		{"orch://task/t1", "", "", "no artifact path"},
		{"file:///etc/passwd", "", "", "not an orch task URI"},
		{"orch://task/t1/planning/a%00b", "", "", "NUL"},
		{"orch://task/t1/planning/a%5Cb", "", "", "backslash"},
		{"orch://task/t1/planning/%ff", "", "", "UTF-8"},
	} {
		id, rel, err := ParseURI(tc.uri)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseURI(%q) = %q, %q, %v; want an error with %q", tc.uri, id, rel, err, tc.err)
			}
			continue
		}
		if err != nil || id != tc.id || rel != tc.rel {
			t.Errorf("ParseURI(%q) = %q, %q, %v; want %q, %q", tc.uri, id, rel, err, tc.id, tc.rel)
		}
		if back := ArtifactURI(id, rel); back != tc.uri {
			t.Errorf("ArtifactURI(%q, %q) = %q, want %q", id, rel, back, tc.uri)
		}
	}
}

// FuzzParseURI: a resource URI is untrusted input from the client. What
// parses names a valid task and an artifact path that stays in the task's
// artifact areas, and formats back to a URI that parses to the same.
func FuzzParseURI(f *testing.F) {
	for _, s := range []string{"orch://task/t1/planning/brief.md", "orch://task/t1/code/files/a%20b/c.go", "orch://task/t1/planning/%2e%2e/x",
		"orch://task/../x", "orch://task/t1/planning/a%2fb", "orch://task/t1//", "orch://task/t1/test/logs/unit.log"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		id, rel, err := ParseURI(uri)
		if err != nil {
			if !strings.HasPrefix(exit.Format(err), "orch: ") || strings.HasPrefix(err.Error(), "orch: ") {
				t.Fatalf("message not shown with exactly one orch: prefix: %v", err)
			}
			return
		}
		if CheckArtifactPath(rel) != nil {
			t.Fatalf("%q parsed to an unsafe path %q", uri, rel)
		}
		for _, p := range strings.Split(rel, "/") {
			if p == ".." || p == "." || p == "" {
				t.Fatalf("%q parsed to %q", uri, rel)
			}
		}
		id2, rel2, err := ParseURI(ArtifactURI(id, rel))
		if err != nil || id2 != id || rel2 != rel {
			t.Fatalf("round trip of %q: %q %q %v", uri, id2, rel2, err)
		}
	})
}
