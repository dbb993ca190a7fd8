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
	docblock.Check(t, filepath.Join("..", "..", "README.md"), tableBegin, tableEnd,
		"\n"+Table(), *update, "go test ./internal/exit -update")
}
