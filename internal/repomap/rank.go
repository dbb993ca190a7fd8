package repomap

import (
	"context"
	"maps"
	"math"
	"path"
	"slices"
	"sort"
	"strings"
)

// identWeight is how much a mention of a name says about the files that
// define it: names defined in many places (New, String, Error) say little,
// long compound names (SuggestionsMinimumDistance) say a lot.
func (ix *Index) identWeight(name uint32, ndefs int) float64 {
	var fl byte
	if ix.seg != nil {
		fl = ix.seg.nameFlags(name)
	}
	w := 1.0
	if ndefs > 5 {
		w *= 0.1
	}
	if fl&nameLong != 0 {
		w *= 2
	}
	if fl&nameUnderscore != 0 {
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

// The ranking is personalised PageRank computed by local push (Andersen,
// Chung and Lang): the seeds' files hold the starting mass; pushing a
// file keeps (1-damping) of its residual mass as rank and sends the rest
// along its references to the files defining them, so only the files
// near the seeds are read. It stops when no file holds more than
// pushEpsilon of residual mass, or after maxPushes pushes (files are
// pushed in the order their mass arrived: breadth first from the seeds).
const (
	damping     = 0.85
	pushEpsilon = 1e-6
	maxPushes   = 2048
)

// outEdges are where a file sends its mass: the identifiers it mentions
// that other files define, each with its share (the shares sum to 1); an
// identifier passes what it gets to its definers in equal parts.
type outEdges struct {
	names []uint32
	share []float64
	ndefs []int
}

// rank computes personalised PageRank over the reference graph (a file
// that mentions an identifier points at the files defining it), starting
// from the seeds and expanding outward.
func (ix *Index) rank(ctx context.Context, s Seeds) (*ranking, error) {
	terms := ix.resolve(s)
	n := len(ix.all)
	r := &ranking{rank: make([]float64, n), terms: terms, occur: map[string][]occurrence{}}
	pers, err := ix.personalise(ctx, r)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return r, nil
	}
	boost := func(name uint32) float64 {
		if w, ok := r.mentioned[name]; ok {
			return w
		}
		return 1
	}
	// Identifiers defined in many files are counted once per ranking.
	manyDefs := map[uint32]int{}
	definerCount := func(name uint32, f int32) (int, bool) {
		if n, ok := manyDefs[name]; ok {
			return n, false
		}
		n, onlySelf := ix.definerCount(name, f)
		if n > 16 {
			manyDefs[name] = n
		}
		return n, onlySelf
	}
	out := map[int32]*outEdges{}
	edges := func(f int32) *outEdges {
		if o, ok := out[f]; ok {
			return o
		}
		o := &outEdges{}
		total := 0.0
		if e := ix.entry(f); e != nil && e.lang.source() {
			for _, ref := range e.refs {
				ndefs, onlySelf := definerCount(ref.name, f)
				if ndefs == 0 || onlySelf {
					continue // defined nowhere, or only here
				}
				w := ix.identWeight(ref.name, ndefs) * math.Sqrt(float64(ref.count)) * boost(ref.name)
				total += w
				o.names = append(o.names, ref.name)
				o.share = append(o.share, w)
				o.ndefs = append(o.ndefs, ndefs)
			}
		}
		for k := range o.share {
			o.share[k] /= total
		}
		out[f] = o
		return o
	}

	// The graph is bipartite: files send mass to identifiers, which pass
	// it on at once to their definers. An identifier defined in many
	// files (a common field name) first gathers mass from many files, until
	// each definer would get more than pushEpsilon.
	resid := make([]float64, n)
	rank := r.rank
	queued := make([]bool, n)
	nameResid := map[uint32]float64{}
	var queue []int32 // files to push, first come first pushed
	add := func(f int32, m float64) {
		resid[f] += m
		if !queued[f] && resid[f] > pushEpsilon {
			queued[f] = true
			queue = append(queue, f)
		}
	}
	flushName := func(name uint32, ndefs int) {
		m := nameResid[name]
		delete(nameResid, name)
		each := m / float64(ndefs)
		ix.eachDefiner(name, func(d int32) { add(d, each) })
	}
	for _, pv := range pers {
		add(pv.file, pv.w)
	}
	pool := 0.0 // mass of files that point nowhere, given back to the seeds in one pass
	for pushes := 0; pushes < maxPushes; pushes++ {
		if len(queue) == 0 {
			if pool <= pushEpsilon {
				break
			}
			for _, pv := range pers {
				add(pv.file, pool*pv.w)
			}
			pool = 0
			if len(queue) == 0 {
				break
			}
		}
		if pushes%256 == 255 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		f := queue[0]
		queue = queue[1:]
		queued[f] = false
		v := resid[f]
		resid[f] = 0
		rank[f] += (1 - damping) * v
		m := damping * v
		o := edges(f)
		if len(o.names) == 0 {
			pool += m
			continue
		}
		for k, name := range o.names {
			nameResid[name] += m * o.share[k]
			if nameResid[name] > pushEpsilon*float64(o.ndefs[k]) {
				flushName(name, o.ndefs[k])
			}
		}
	}
	// The mass not pushed any more stays where it is.
	for _, name := range slices.Sorted(maps.Keys(nameResid)) {
		if n, _ := ix.definerCount(name, -1); n > 0 {
			flushName(name, n)
		}
	}
	for f, v := range resid {
		rank[f] += v
	}
	var ranked, rest []int32
	for f := range rank {
		if rank[f] > 0 {
			ranked = append(ranked, int32(f))
		} else {
			rest = append(rest, int32(f))
		}
	}
	sort.SliceStable(ranked, func(a, b int) bool {
		ra, rb := rank[ranked[a]], rank[ranked[b]]
		if ra != rb {
			return ra > rb
		}
		return ranked[a] < ranked[b] // files are in path order
	})
	r.order = append(ranked, rest...)
	return r, nil
}

// persWeight is one file's share of the personalisation.
type persWeight struct {
	file int32
	w    float64
}

// maxGrepFiles bounds the files searched for the seeds' identifiers
// (searchWords): the files defining or mentioning them (the index's
// postings), the planned and named files.
const maxGrepFiles = 2000

// personalise turns the seeds into the PageRank personalisation (summing
// to 1): planned files, files named in the text, files defining a named
// identifier, the files it occurs in (searching only the files the index
// says define or mention it: searchWords), and files whose path carries a word
// of the text. With no seed at all it is uniform.
func (ix *Index) personalise(ctx context.Context, r *ranking) ([]persWeight, error) {
	t := r.terms
	n := len(ix.all)
	pers := map[int32]float64{}
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
				pers[int32(i)] += 1
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
	candidates := map[int32]bool{}
	for _, f := range t.planned {
		candidates[f] = true
	}
	for _, f := range t.paths {
		candidates[f] = true
	}
	spread := map[string]int{} // files mentioning each identifier, by the index
	for _, id := range t.idents {
		w := t.weight[id]
		if nid, ok := ix.lookup(id); ok {
			mentioned[nid] = 10 * w
			defs := ix.definers(nid)
			for _, f := range defs {
				pers[f] += 30 * w / float64(len(defs))
			}
		}
	}
	for k, id := range grepped {
		nid, ok := ix.lookup(id)
		if !ok {
			continue
		}
		refs := ix.referrers(nid)
		spread[id] = len(refs)
		// An equal share of the files left for each identifier still to
		// come, the definers first.
		room := (maxGrepFiles - len(candidates)) / (len(grepped) - k)
		for _, list := range [][]int32{ix.definers(nid), refs} {
			for _, f := range list {
				if room <= 0 {
					break
				}
				if !candidates[f] {
					candidates[f] = true
					room--
				}
			}
		}
	}
	if len(grepped) > 0 && len(candidates) > 0 {
		files := slices.Sorted(maps.Keys(candidates))
		hits := map[string]map[int32]int{}
		err := ix.searchWords(ctx, grepped, files, defaultMaxFileBytes, func(f int32, line int, word string) {
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
		for _, word := range grepped {
			files := hits[word]
			if len(files) == 0 {
				continue
			}
			nf := max(len(files), spread[word])
			w := t.weight[word] * 8 * math.Min(1, 3/math.Sqrt(float64(nf)))
			for _, f := range slices.Sorted(maps.Keys(files)) {
				pers[f] += w * (1 + 0.25*math.Log2(float64(files[f])))
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
					pers[int32(i)] += 2
				}
			}
		}
	}
	out := make([]persWeight, 0, len(pers))
	for f, v := range pers {
		if v > 0 {
			out = append(out, persWeight{f, v})
		}
	}
	if len(out) == 0 {
		out = make([]persWeight, n)
		for i := range out {
			out[i] = persWeight{int32(i), 1 / float64(n)}
		}
		return out, nil
	}
	sort.Slice(out, func(a, b int) bool { return out[a].file < out[b].file })
	total := 0.0
	for _, pv := range out {
		total += pv.w
	}
	for i := range out {
		out[i].w /= total
	}
	return out, nil
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
