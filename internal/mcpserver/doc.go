package mcpserver

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DocTools renders docs/mcp.md's generated reference: for each tool, in
// the order of Server.tools, the gate that must be allowed, what it does,
// what it returns, and its input schema as the server advertises it
// (listed tools come from a server with every gate allowed).
func DocTools(listed []*mcp.Tool) string {
	byName := map[string]*mcp.Tool{}
	for _, t := range listed {
		byName[t.Name] = t
	}
	var b strings.Builder
	b.WriteString("\n| tool | offered | returns, besides `next` |\n|---|---|---|\n")
	defs := (&Server{}).tools()
	for _, d := range defs {
		offered := "always"
		if d.gate != "" {
			offered = fmt.Sprintf("only with `[mcp] allow = [\"%s\"]`", d.gate)
		}
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s |\n", d.name, d.name, offered, d.returns)
	}
	for _, d := range defs {
		t := byName[d.name]
		if t == nil {
			fmt.Fprintf(&b, "\n### %s\n\n(not listed by the server)\n", d.name)
			continue
		}
		fmt.Fprintf(&b, "\n### %s\n\n%s\n\nReturns %s.", d.name, t.Description, d.returns)
		if t.Annotations != nil && t.Annotations.ReadOnlyHint {
			b.WriteString(" Read-only.")
		}
		schema, err := json.MarshalIndent(t.InputSchema, "", "  ")
		if err != nil {
			schema = []byte(err.Error())
		}
		fmt.Fprintf(&b, "\n\n```json\n%s\n```\n", schema)
	}
	return b.String()
}
