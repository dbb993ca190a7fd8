package mcpserver

import (
	"context"
	"flag"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orchdev/orch/internal/docblock"
)

var update = flag.Bool("update", false, "rewrite the generated tool reference in docs/mcp.md")

const (
	docBegin = "<!-- BEGIN GENERATED: MCP tools (go test ./internal/mcpserver -run TestDocs -update) -->"
	docEnd   = "<!-- END GENERATED -->"
)

// TestDocs keeps docs/mcp.md's tool reference equal to what the server
// advertises with every gate allowed: names, descriptions, input schemas.
func TestDocs(t *testing.T) {
	f := newFixture(t, "[mcp]\nallow = [\"accept\", \"revert\", \"override\", \"redo\"]\n")
	var listed []*mcp.Tool
	for tool, err := range f.cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, tool)
	}
	if len(listed) != len(f.srv.tools()) {
		t.Fatalf("%d tools listed, %d defined", len(listed), len(f.srv.tools()))
	}
	docblock.Check(t, filepath.Join("..", "..", "docs", "mcp.md"), docBegin, docEnd, DocTools(listed), *update,
		"go test ./internal/mcpserver -run TestDocs -update")
}
