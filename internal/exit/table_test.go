package exit

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/docblock"
)

var update = flag.Bool("update", false, "rewrite the generated exit-code table in README.md")

const (
	tableBegin = "<!-- BEGIN GENERATED: exit codes (go test ./internal/exit -update) -->"
	tableEnd   = "<!-- END GENERATED -->"
)

// TestTableCoversEveryCode: every code from OK to Failed is described
// exactly once, in order, then Interrupted (130, as shells report Ctrl-C).
func TestTableCoversEveryCode(t *testing.T) {
	want := []Code{}
	for c := OK; c <= Failed; c++ {
		want = append(want, c)
	}
	want = append(want, Interrupted)
	if len(meanings) != len(want) {
		t.Fatalf("%d codes documented, want %d: a new code needs a line", len(meanings), len(want))
	}
	for i, m := range meanings {
		if m.code != want[i] {
			t.Errorf("meanings[%d] is code %d, want %d (in order, none missing)", i, m.code, want[i])
		}
		if strings.TrimSpace(m.text) == "" {
			t.Errorf("code %d has no meaning", m.code)
		}
		if KindOf(m.code).ExitCode() != m.code && m.code != OK {
			t.Errorf("KindOf(%d) is code %d: every documented code has its kind", m.code, KindOf(m.code).ExitCode())
		}
	}
}

// TestReadmeTable keeps README.md's exit-code table equal to the generated
// one.
func TestReadmeTable(t *testing.T) {
	docblock.Check(t, filepath.Join("..", "..", "README.md"), tableBegin, tableEnd,
		"\n"+Table(), *update, "go test ./internal/exit -update")
}
