package lifecycle

import (
	"errors"
	"fmt"
)

// EdgeResult is one outgoing edge and whether its condition holds.
type EdgeResult struct {
	Edge    Edge
	Holds   bool
	Reason  string
	Invalid []error
	// Unmet names the first of the edge's Requires that did not hold
	// once its condition held ("" otherwise).
	Unmet CondName
}

// Decision is the pure outcome of inspecting a phase: every outgoing
// decided edge with its verdict, in decision order, and the suggested one.
type Decision struct {
	Phase Phase
	Edges []EdgeResult
	// Suggested is the index in Edges of the first edge whose condition
	// holds, or -1.
	Suggested int
	// Reason explains the suggestion, or what is missing when there is none.
	Reason string
}

// Next returns the suggested edge.
func (d Decision) Next() (EdgeResult, bool) {
	if d.Suggested < 0 {
		return EdgeResult{}, false
	}
	return d.Edges[d.Suggested], true
}

// Invalid returns the invalid artifacts met while deciding, without
// duplicates (by message).
func (d Decision) Invalid() []error {
	seen := map[string]bool{}
	var out []error
	for _, e := range d.Edges {
		for _, err := range e.Invalid {
			if !seen[err.Error()] {
				seen[err.Error()] = true
				out = append(out, err)
			}
		}
	}
	return out
}

// Holding returns the first edge to phase `to` whose condition holds.
func (d Decision) Holding(to Phase) (EdgeResult, bool) {
	for _, e := range d.Edges {
		if e.Edge.To == to && e.Holds {
			return e, true
		}
	}
	return EdgeResult{}, false
}

// Decide evaluates every decided edge leaving phase p over the snapshot,
// in decision order. It is a pure function: same inputs, same decision.
func (t *Table) Decide(p Phase, s Snapshot) Decision {
	d := Decision{Phase: p, Suggested: -1}
	if p.Terminal() {
		d.Reason = "done is terminal: only `orch redo` re-opens the task"
		return d
	}
	for _, e := range t.Decided(p) {
		r := evaluateEdge(e, s)
		d.Edges = append(d.Edges, r)
		if r.Holds && d.Suggested < 0 {
			d.Suggested = len(d.Edges) - 1
		}
	}
	if next, ok := d.Next(); ok {
		d.Reason = next.Reason
		return d
	}
	d.Reason = d.missing()
	return d
}

// evaluateEdge evaluates the edge's condition and, once it holds, each of
// its Requires in order: the first that does not hold makes the edge not
// hold, with that condition's name and reason.
func evaluateEdge(e Edge, s Snapshot) EdgeResult {
	v := Evaluate(e.Cond, s)
	r := EdgeResult{Edge: e, Holds: v.Holds, Reason: v.Reason, Invalid: v.Invalid}
	if !v.Holds {
		return r
	}
	for _, c := range e.Requires {
		rv := Evaluate(c, s)
		r.Invalid = append(r.Invalid, rv.Invalid...)
		if !rv.Holds {
			r.Holds, r.Unmet, r.Reason = false, c, fmt.Sprintf("%s, but %s: %s", v.Reason, c, rv.Reason)
			return r
		}
		if rv.Reason != "" {
			r.Reason += "; " + rv.Reason
		}
	}
	return r
}

// missing summarises why no edge holds: the forward edge's reason, or the
// invalid artifacts when there are some.
func (d Decision) missing() string {
	if inv := d.Invalid(); len(inv) > 0 {
		return errors.Join(inv...).Error()
	}
	for _, e := range d.Edges {
		if e.Edge.Forward {
			return e.Reason
		}
	}
	if len(d.Edges) > 0 {
		return d.Edges[0].Reason
	}
	return "no outgoing edge"
}
