package repomap

import (
	"encoding/binary"
	"sort"
)

// The index's reads of its file: each decodes only what it is asked for.

// entry returns the decoded tags of file f (nil for a file that is not
// indexed, or whose entry is damaged), decoding each once.
func (ix *Index) entry(f int32) *entry {
	if f < 0 || int(f) >= len(ix.row) || ix.row[f] < 0 {
		return nil
	}
	ix.mu.Lock()
	e, ok := ix.ents[f]
	ix.mu.Unlock()
	if ok {
		return e
	}
	e, err := ix.seg.entry(int(ix.row[f]))
	if err != nil {
		e = nil
	}
	ix.mu.Lock()
	ix.ents[f] = e
	ix.mu.Unlock()
	return e
}

// lookup returns the id of an identifier.
func (ix *Index) lookup(name string) (uint32, bool) {
	if ix.seg == nil {
		return 0, false
	}
	return ix.seg.lookup(name)
}

// name returns identifier id.
func (ix *Index) name(id uint32) string {
	if ix.seg == nil {
		return ""
	}
	return string(ix.seg.name(id))
}

// files turns a postings list (rows) into the visible files it names,
// ascending.
func (ix *Index) filesOf(p []byte) []int32 {
	out := make([]int32, 0, len(p)/4)
	for i := 0; i+4 <= len(p); i += 4 {
		r := binary.LittleEndian.Uint32(p[i:])
		if int(r) < len(ix.cur) && ix.cur[r] >= 0 {
			out = append(out, ix.cur[r])
		}
	}
	if !sort.SliceIsSorted(out, func(a, b int) bool { return out[a] < out[b] }) {
		sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	}
	return out
}

// definers returns the visible files defining identifier id.
func (ix *Index) definers(id uint32) []int32 {
	if ix.seg == nil {
		return nil
	}
	return ix.filesOf(ix.seg.postings(secDefStart, secDefRow, id))
}

// referrers returns the visible files mentioning identifier id.
func (ix *Index) referrers(id uint32) []int32 {
	if ix.seg == nil {
		return nil
	}
	return ix.filesOf(ix.seg.postings(secRefStart, secRefRow, id))
}

// refCount is about how many files mention identifier id (rows of files
// no longer visible included: it weighs, it does not list).
func (ix *Index) refCount(id uint32) int {
	if ix.seg == nil {
		return 0
	}
	return len(ix.seg.postings(secRefStart, secRefRow, id)) / 4
}

// fileIndex returns the position of a visible path in ix.all.
func (ix *Index) fileIndex(p string) (int32, bool) {
	i := sort.Search(len(ix.all), func(i int) bool { return ix.all[i].Path >= p })
	if i < len(ix.all) && ix.all[i].Path == p {
		return int32(i), true
	}
	return 0, false
}

// definerCount counts the visible files defining identifier id, and
// reports whether self is the only one.
func (ix *Index) definerCount(id uint32, self int32) (n int, onlySelf bool) {
	if ix.seg == nil {
		return 0, false
	}
	p := ix.seg.postings(secDefStart, secDefRow, id)
	onlySelf = true
	for i := 0; i+4 <= len(p); i += 4 {
		r := binary.LittleEndian.Uint32(p[i:])
		if int(r) < len(ix.cur) && ix.cur[r] >= 0 {
			n++
			if ix.cur[r] != self {
				onlySelf = false
			}
		}
	}
	return n, onlySelf && n > 0
}

// eachDefiner calls fn with each visible file defining identifier id.
func (ix *Index) eachDefiner(id uint32, fn func(int32)) {
	if ix.seg == nil {
		return
	}
	p := ix.seg.postings(secDefStart, secDefRow, id)
	for i := 0; i+4 <= len(p); i += 4 {
		r := binary.LittleEndian.Uint32(p[i:])
		if int(r) < len(ix.cur) && ix.cur[r] >= 0 {
			fn(ix.cur[r])
		}
	}
}
