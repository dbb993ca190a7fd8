package repomap

import (
	"context"
	"math"
	"path"
	"sort"
	"strings"
	"sync"
)

// graph is the reference graph in compressed form, built once per index:
// for each file, the identifiers it mentions that another file defines,
// with a base weight (the definers are ix.definers).
type graph struct {
	once sync.Once
	// edgeStart[f]..edgeStart[f+1] index edgeName/edgeW for file f.
	edgeStart []int32
	edgeName  []uint32
	edgeW     []float32
}

func (ix *Index) graph() *graph {
	g := &ix.g
	g.once.Do(func() {
		g.edgeStart = make([]int32, len(ix.all)+1)
		for f, e := range ix.ent {
			if e != nil {
				for _, r := range e.refs {
					defs := ix.definers(r.name)
					if len(defs) == 0 || len(defs) == 1 && defs[0] == int32(f) {
						continue // defined nowhere, or only here
					}
					g.edgeName = append(g.edgeName, r.name)
					g.edgeW = append(g.edgeW, float32(ix.identWeight(r.name, len(defs))*math.Sqrt(float64(r.count))))
				}
			}
			g.edgeStart[f+1] = int32(len(g.edgeName))
		}
	})
	return g
}

// identWeight is how much a mention of a name says about the files that
// define it: names defined in many places (New, String, Error) say little,
// long compound names (SuggestionsMinimumDistance) say a lot.
func (ix *Index) identWeight(name uint32, ndefs int) float64 {
	s := ix.names[name]
	w := 1.0
	if ndefs > 5 {
		w *= 0.1
	}
	if len(s) >= 8 && codeLike(s) {
		w *= 2
	}
	if strings.HasPrefix(s, "_") {
		w *= 0.1
	}
	return w
}

// Ranked is a file with its rank; ranks sum to 1.
type Ranked struct {
	Path string
	Rank float64
}

// ranking is one personalised ranking.
type ranking struct {
	rank      []float64
	order     []int32 // files by rank, highest first
	mentioned map[uint32]float64
	terms     seedTerms
	// occur lists, per identifier searched, where git grep found it.
	occur map[string][]occurrence
}

// occurrence is one line mentioning a seed identifier.
type occurrence struct {
	file int32
	line int
}

// maxOccurrences bounds the lines kept per identifier.
const maxOccurrences = 64

// PageRank stops after maxIterations or when the ranks moved less than
// tolerance in total (they sum to 1): the order of the top files is
// settled long before.
const (
	maxIterations = 30
	tolerance     = 1e-6
)

// rank computes personalised PageRank over the reference graph.
func (ix *Index) rank(ctx context.Context, s Seeds) (*ranking, error) {
	terms := ix.resolve(s)
	n := len(ix.all)
	r := &ranking{rank: make([]float64, n), terms: terms, occur: map[string][]occurrence{}}
	pers, err := ix.personalise(ctx, r)
	if err != nil {
		return nil, err
	}
	mentioned := r.mentioned
	if n == 0 {
		return r, nil
	}
	g := ix.graph()
	boost := make([]float64, len(ix.names))
	for i := range boost {
		boost[i] = 1
	}
	for name, w := range mentioned {
		boost[name] = w
	}
	out := make([]float64, n)
	for f := 0; f < n; f++ {
		for e := g.edgeStart[f]; e < g.edgeStart[f+1]; e++ {
			out[f] += float64(g.edgeW[e]) * boost[g.edgeName[e]]
		}
	}
	const damping = 0.85
	rank := append([]float64(nil), pers...)
	next := make([]float64, n)
	mass := make([]float64, len(ix.names))
	var touched []uint32
	for iter := 0; iter < maxIterations; iter++ {
		touched = touched[:0]
		dangling := 0.0
		for f := 0; f < n; f++ {
			if out[f] == 0 {
				dangling += rank[f]
				continue
			}
			share := rank[f] / out[f]
			for e := g.edgeStart[f]; e < g.edgeStart[f+1]; e++ {
				name := g.edgeName[e]
				if mass[name] == 0 {
					touched = append(touched, name)
				}
				mass[name] += share * float64(g.edgeW[e]) * boost[name]
			}
		}
		for f := range next {
			next[f] = (1-damping)*pers[f] + damping*dangling*pers[f]
		}
		for _, name := range touched {
			m := mass[name]
			mass[name] = 0
			defs := ix.definers(name)
			each := damping * m / float64(len(defs))
			for _, f := range defs {
				next[f] += each
			}
		}
		diff := 0.0
		for f := range next {
			diff += math.Abs(next[f] - rank[f])
		}
		rank, next = next, rank
		if diff < tolerance {
			break
		}
		if iter%8 == 7 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	r.rank = rank
	r.order = make([]int32, n)
	for i := range r.order {
		r.order[i] = int32(i)
	}
	sort.SliceStable(r.order, func(a, b int) bool {
		ra, rb := rank[r.order[a]], rank[r.order[b]]
		if ra != rb {
			return ra > rb
		}
		return ix.all[r.order[a]].Path < ix.all[r.order[b]].Path
	})
	return r, nil
}

// personalise turns the seeds into the PageRank personalisation vector
// (summing to 1): planned files, files named in the text, files defining a
// named identifier, files git grep finds it in, and files whose path
// carries a word of the text. With no seed at all it is uniform.
func (ix *Index) personalise(ctx context.Context, r *ranking) ([]float64, error) {
	t := r.terms
	n := len(ix.all)
	pers := make([]float64, n)
	mentioned := map[uint32]float64{}
	r.mentioned = mentioned
	for _, f := range t.planned {
		pers[f] += 100
	}
	if len(t.plannedDirs) > 0 {
		// Files to create have no content yet: their neighbours show the
		// conventions.
		dirs := map[string]bool{}
		for _, d := range t.plannedDirs {
			dirs[d] = true
		}
		for i, f := range ix.all {
			if dirs[path.Dir(f.Path)] {
				pers[i] += 1
			}
		}
	}
	for _, f := range t.paths {
		pers[f] += 40
	}
	grepped := t.idents
	if len(grepped) > maxSeedIdents {
		grepped = grepped[:maxSeedIdents]
	}
	for _, id := range t.idents {
		w := t.weight[id]
		if nid, ok := ix.ids[id]; ok {
			mentioned[nid] = 10 * w
			if defs := ix.definers(nid); len(defs) > 0 {
				for _, f := range defs {
					pers[f] += 30 * w / float64(len(defs))
				}
			}
		}
	}
	if len(grepped) > 0 {
		hits := map[string]map[int32]int{}
		err := ix.repo.GrepWords(ctx, grepped, ix.commit, func(p string, line int, word string) {
			f, ok := ix.byPath[p]
			if !ok {
				return // not visible (a secret-looking file, say)
			}
			if occ := r.occur[word]; len(occ) < maxOccurrences && (len(occ) == 0 || occ[len(occ)-1] != occurrence{f, line}) {
				r.occur[word] = append(occ, occurrence{f, line})
			}
			m := hits[word]
			if m == nil {
				m = map[int32]int{}
				hits[word] = m
			}
			m[f]++
		})
		if err != nil {
			return nil, err
		}
		for word, files := range hits {
			w := t.weight[word] * 8 * math.Min(1, 3/math.Sqrt(float64(len(files))))
			for f, c := range files {
				pers[f] += w * (1 + 0.25*math.Log2(float64(c)))
			}
		}
	}
	if len(t.words) > 0 {
		words := map[string]bool{}
		for _, w := range t.words {
			words[w] = true
		}
		for i, f := range ix.all {
			for _, part := range strings.FieldsFunc(strings.ToLower(f.Path), func(r rune) bool {
				return r == '/' || r == '.' || r == '_' || r == '-'
			}) {
				if words[part] {
					pers[i] += 2
				}
			}
		}
	}
	total := 0.0
	for _, v := range pers {
		total += v
	}
	if total == 0 {
		for i := range pers {
			pers[i] = 1 / float64(n)
		}
		return pers, nil
	}
	for i := range pers {
		pers[i] /= total
	}
	return pers, nil
}

// Rank returns the visible files ranked for the seeds, highest first.
func (ix *Index) Rank(ctx context.Context, s Seeds) ([]Ranked, error) {
	r, err := ix.rank(ctx, s)
	if err != nil {
		return nil, err
	}
	out := make([]Ranked, len(r.order))
	for i, f := range r.order {
		out[i] = Ranked{Path: ix.all[f].Path, Rank: r.rank[f]}
	}
	return out, nil
}
