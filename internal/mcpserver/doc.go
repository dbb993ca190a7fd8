package mcpserver

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hintText says in words what a tool's annotations tell a client.
func hintText(a *mcp.ToolAnnotations) string {
	if a == nil {
		return ""
	}
	if a.ReadOnlyHint {
		return "Read-only (`readOnlyHint`, `idempotentHint`)."
	}
	var says []string
	if a.IdempotentHint {
		says = append(says, "idempotent (`idempotentHint`): the same call again changes nothing more")
	} else {
		says = append(says, "not idempotent: each call acts again")
	}
	if a.DestructiveHint != nil && *a.DestructiveHint {
		says = append(says, "may replace or undo what exists (`destructiveHint`)")
	}
	if a.OpenWorldHint != nil && *a.OpenWorldHint {
		says = append(says, "calls the configured model providers (`openWorldHint`)")
	}
	s := "Acts; " + strings.Join(says, "; ") + "."
	return s
}

// DocTools renders docs/mcp.md's generated reference: for each tool, in
// the order of Server.tools, the gate that must be allowed, what it does,
// what it returns, its hints, and its input schema as the server advertises it
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
		b.WriteString(" " + hintText(t.Annotations))
		schema, err := json.MarshalIndent(t.InputSchema, "", "  ")
		if err != nil {
			schema = []byte(err.Error())
		}
		fmt.Fprintf(&b, "\n\n```json\n%s\n```\n", schema)
	}
	return b.String()
}
