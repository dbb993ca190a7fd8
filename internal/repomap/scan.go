package repomap

import (
	"cmp"
	"slices"
	"sync"
)

// Identifier limits: shorter names (i, x, ok) and absurdly long ones carry
// no signal and would bloat the index.
const (
	minIdent    = 3
	minDefIdent = 2 // definitions: Id, Do and OK are worth showing
	maxIdent    = 80
	// maxRefsPerFile keeps the most used identifiers of a file.
	maxRefsPerFile = 400
)

// scanRefs returns the identifiers src mentions (code, comments and
// strings alike) with their counts, most used first, capped.
func scanRefs(src []byte) []Ref {
	counts := countsPool.Get().(map[string]int)
	defer func() {
		clear(counts)
		countsPool.Put(counts)
	}()
	for i := 0; i < len(src); {
		c := src[i]
		if !identStart(c) {
			if c >= 0x80 || c >= '0' && c <= '9' {
				// Skip the rest of a number or a non-ASCII word so its
				// tail is not read as an identifier.
				for i < len(src) && (identPart(src[i]) || src[i] >= 0x80) {
					i++
				}
				continue
			}
			i++
			continue
		}
		j := i + 1
		for j < len(src) && identPart(src[j]) {
			j++
		}
		if j < len(src) && src[j] >= 0x80 {
			for j < len(src) && (identPart(src[j]) || src[j] >= 0x80) {
				j++
			}
			i = j
			continue
		}
		if n := j - i; n >= minIdent && n <= maxIdent {
			counts[string(src[i:j])]++
		}
		i = j
	}
	refs := make([]Ref, 0, len(counts))
	for name, n := range counts {
		refs = append(refs, Ref{Name: name, Count: n})
	}
	slices.SortFunc(refs, func(a, b Ref) int {
		if a.Count != b.Count {
			return cmp.Compare(b.Count, a.Count)
		}
		return cmp.Compare(a.Name, b.Name)
	})
	if len(refs) > maxRefsPerFile {
		refs = refs[:maxRefsPerFile]
	}
	return refs
}

// countsPool keeps scanRefs' maps: a first index scans every file, and
// a cleared map keeps its room for the next.
var countsPool = sync.Pool{New: func() any { return map[string]int{} }}

func identStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func identPart(c byte) bool { return identStart(c) || c >= '0' && c <= '9' }
