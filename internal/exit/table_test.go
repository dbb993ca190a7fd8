package exit

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated exit-code table in README.md")

const (
	tableBegin = "<!-- BEGIN GENERATED: exit codes (go test ./internal/exit -update) -->"
	tableEnd   = "<!-- END GENERATED -->"
)

// TestTableCoversEveryCode: every code from OK to the highest is described
// exactly once, in order.
func TestTableCoversEveryCode(t *testing.T) {
	for i, m := range meanings {
		if m.code != Code(i) {
			t.Errorf("meanings[%d] is code %d, want %d (in order, none missing)", i, m.code, i)
		}
		if strings.TrimSpace(m.text) == "" {
			t.Errorf("code %d has no meaning", m.code)
		}
	}
	if last := meanings[len(meanings)-1].code; last != Failed {
		t.Errorf("the last documented code is %d, want %d (Failed): a new code needs a line", last, Failed)
	}
}

// TestReadmeTable keeps README.md's exit-code table equal to the generated
// one.
func TestReadmeTable(t *testing.T) {
	path := filepath.Join("..", "..", "README.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	s := string(doc)
	i := strings.Index(s, tableBegin)
	j := -1
	if i >= 0 {
		j = strings.Index(s[i:], tableEnd)
	}
	if i < 0 || j < 0 {
		t.Fatalf("%s lacks the markers %q … %q", path, tableBegin, tableEnd)
	}
	j += i
	want := "\n" + Table()
	got := s[i+len(tableBegin) : j]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(s[:i+len(tableBegin)]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the exit-code table is out of date; run `go test ./internal/exit -update`\n got:%s\nwant:%s", path, got, want)
}
