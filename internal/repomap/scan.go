package repomap

import "sort"

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
	counts := map[string]int{}
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
	sort.Slice(refs, func(i, j int) bool {
		if refs[i].Count != refs[j].Count {
			return refs[i].Count > refs[j].Count
		}
		return refs[i].Name < refs[j].Name
	})
	if len(refs) > maxRefsPerFile {
		refs = refs[:maxRefsPerFile]
	}
	return refs
}

func identStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func identPart(c byte) bool { return identStart(c) || c >= '0' && c <= '9' }
