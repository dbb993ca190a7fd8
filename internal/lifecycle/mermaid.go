package lifecycle

import (
	"fmt"
	"strings"
)

// Mermaid renders the table as a Mermaid stateDiagram-v2, one line per
// edge in table order, after the initial-state arrow.
func (t *Table) Mermaid() string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	fmt.Fprintf(&b, "    [*] --> %s\n", t.Initial)
	var last Phase
	for _, e := range t.Edges {
		if last != "" && e.From != last {
			b.WriteString("\n")
		}
		last = e.From
		if e.Label == "" {
			fmt.Fprintf(&b, "    %s --> %s\n", e.From, e.To)
			continue
		}
		fmt.Fprintf(&b, "    %s --> %s: %s\n", e.From, e.To, e.Label)
	}
	return b.String()
}
