package board

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/orchdev/orch/internal/lifecycle"
)

// diagramSVG draws the lifecycle table as an SVG: the main line (the
// chain of forward edges from the initial phase) left to right, phases
// off it (revert) in a second row under their neighbours, regressions as
// arcs above, re-runs as loops. The current phase is marked, and so is
// the edge the decision suggests. Every edge carries its label and
// condition as a tooltip. Nothing in it comes from a task's files.
func diagramSVG(t *lifecycle.Table, current lifecycle.Phase, suggested *lifecycle.Phase) template.HTML {
	const (
		w, h   = 108, 34 // a phase's box
		gap    = 34
		left   = 12
		row1   = 112 // top of the main line
		row2   = 196
		height = 246
	)
	type pos struct{ x, y int }
	at := map[lifecycle.Phase]pos{}
	var chain []lifecycle.Phase
	for p := t.Initial; p != ""; {
		if _, seen := at[p]; seen {
			break
		}
		at[p] = pos{left + len(chain)*(w+gap), row1}
		chain = append(chain, p)
		e, ok := t.Forward(p)
		if !ok {
			break
		}
		p = e.To
	}
	// Phases off the main line sit under the middle of the phases they
	// connect.
	for _, p := range lifecycle.Phases() {
		if _, ok := at[p]; ok {
			continue
		}
		sum, n := 0, 0
		for _, e := range t.Edges {
			if e.To == p && e.From != p {
				if q, ok := at[e.From]; ok {
					sum, n = sum+q.x, n+1
				}
			}
			if e.From == p && e.To != p {
				if q, ok := at[e.To]; ok {
					sum, n = sum+q.x, n+1
				}
			}
		}
		x := left
		if n > 0 {
			x = sum / n
		}
		at[p] = pos{x, row2}
	}
	width := left*2 + len(chain)*(w+gap) - gap

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="lifecycle" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-label="the task lifecycle; the current phase is %s">`, width, height, esc(string(current)))
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker></defs>`)
	pairs := map[[2]lifecycle.Phase]int{}
	for _, e := range t.Edges {
		from, to := at[e.From], at[e.To]
		k := [2]lifecycle.Phase{e.From, e.To}
		nth := pairs[k]
		pairs[k]++
		class := "edge"
		if e.From == current {
			class += " out"
			if suggested != nil && e.To == *suggested && e.Kind == lifecycle.Decided {
				class += " take"
			}
		}
		if e.Kind == lifecycle.Rerun {
			class += " rerun"
		}
		var d string
		switch {
		case e.From == e.To: // a re-run: a loop over the box's right corner
			x, y := from.x+w-18, from.y
			d = fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", x, y, x-4, y-26, x+30, y-26, x+18, y)
		case from.y == to.y && to.x == from.x+w+gap: // the next phase on the line
			d = fmt.Sprintf("M%d,%d L%d,%d", from.x+w, from.y+h/2, to.x, to.y+h/2)
		case from.y == to.y: // a regression (or a long jump) arcs above
			span := (from.x - to.x) / (w + gap)
			if span < 0 {
				span = -span
			}
			lift := 22 + 15*span + 7*nth
			x1, x2 := from.x+w/2-6-4*nth, to.x+w/2+6+4*nth
			if to.x > from.x {
				x1, x2 = from.x+w/2+6, to.x+w/2-6
			}
			d = fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", x1, from.y, x1, from.y-lift, x2, to.y-lift, x2, to.y)
		case from.y < to.y: // down to the second row
			d = fmt.Sprintf("M%d,%d L%d,%d", from.x+w/2+10, from.y+h, to.x+w/2-10, to.y)
		default: // up from the second row
			d = fmt.Sprintf("M%d,%d L%d,%d", from.x+w/2+10, from.y, to.x+w/2-10, to.y+h)
		}
		title := string(e.From) + " → " + string(e.To)
		if e.Label != "" {
			title += ": " + e.Label
		}
		title += " (" + string(e.Cond) + ")"
		fmt.Fprintf(&b, `<path class="%s" d="%s" marker-end="url(#arrow)"><title>%s</title></path>`, class, d, esc(title))
	}
	for _, p := range lifecycle.Phases() {
		q := at[p]
		class := "node"
		if p == current {
			class += " current"
		}
		if suggested != nil && p == *suggested {
			class += " suggested"
		}
		fmt.Fprintf(&b, `<g class="%s" data-phase="%s"><rect x="%d" y="%d" width="%d" height="%d" rx="7"/><text x="%d" y="%d" text-anchor="middle">%s</text></g>`,
			class, esc(string(p)), q.x, q.y, w, h, q.x+w/2, q.y+h/2+5, esc(string(p)))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // #nosec: built from the table, every text escaped
}

func esc(s string) string { return template.HTMLEscapeString(s) }
