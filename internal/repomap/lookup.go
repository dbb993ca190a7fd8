package repomap

import (
	"context"
	"sort"

	"github.com/orchdev/orch/internal/visibility"
)

// Location is one definition in one file.
type Location struct {
	Path string
	Def
}

// Definitions returns where name is defined, by path then line.
func (ix *Index) Definitions(name string) []Location {
	id, ok := ix.lookup(name)
	if !ok {
		return nil
	}
	var out []Location
	for _, f := range ix.definers(id) {
		e := ix.entry(f)
		if e == nil {
			continue
		}
		for _, d := range e.defs {
			if d.name == id {
				out = append(out, Location{Path: ix.all[f].Path, Def: ix.def(d)})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// References returns the indexed source files that mention name (in code,
// comments or strings), sorted by path. Files in languages that are not
// indexed are not searched: git grep is the tool for them.
func (ix *Index) References(name string) []string {
	id, ok := ix.lookup(name)
	if !ok {
		return nil
	}
	var out []string
	for _, f := range ix.referrers(id) {
		if LangOf(ix.all[f].Path).source() {
			out = append(out, ix.all[f].Path)
		}
	}
	return out
}

// FileDefinitions returns the definitions of one file in line order, and
// false when the file is not visible or not indexed.
func (ix *Index) FileDefinitions(p string) ([]Def, bool) {
	f, ok := ix.fileIndex(p)
	if !ok {
		return nil, false
	}
	e := ix.entry(f)
	if e == nil || !e.lang.source() {
		return nil, false
	}
	defs := make([]Def, len(e.defs))
	for i, d := range e.defs {
		defs[i] = ix.def(d)
	}
	return defs, true
}

func (ix *Index) def(d defRec) Def {
	return Def{Name: ix.name(d.name), Kind: kindList[d.kind], Line: int(d.line), Sig: d.sig}
}

// Files is the visible file set the index was built from: the agents'
// tools check paths against it (visibility.Files.Check).
func (ix *Index) Files() *visibility.Files { return ix.files }

// Stats describe the build.
func (ix *Index) Stats() Stats { return ix.stats }

// Occurrence is one line where git grep found an identifier the task
// names.
type Occurrence struct {
	Ident string
	Path  string
	Line  int
}

// Context is the map for the seeds (as Map renders it within
// budgetTokens) together with what the ranking found: where the seeds'
// identifiers occur (per identifier in the seeds' order, then by the
// files' rank) and the files ranked highest first. The agents without
// tools show the lines around the occurrences instead of whole files.
func (ix *Index) Context(ctx context.Context, s Seeds, budgetTokens int) (string, []Occurrence, []Ranked, error) {
	r, err := ix.rank(ctx, s)
	if err != nil {
		return "", nil, nil, err
	}
	var occ []Occurrence
	for _, id := range r.terms.idents {
		for _, o := range r.occur[id] {
			occ = append(occ, Occurrence{Ident: id, Path: ix.all[o.file].Path, Line: o.line})
		}
	}
	ranked := make([]Ranked, len(r.order))
	for i, f := range r.order {
		ranked[i] = Ranked{Path: ix.all[f].Path, Rank: r.rank[f]}
	}
	return ix.render(r, budgetTokens), occ, ranked, nil
}
