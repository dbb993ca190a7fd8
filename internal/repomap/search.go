package repomap

import (
	"bytes"
	"context"
	"sort"
)

// searchWords finds whole-word occurrences of words in the given files
// (ascending file order), like `git grep -F -w -o -n -I` bounded to them:
// the work-tree files when the index is of the tracked files (what git
// grep reads too), else the commit's blobs through one `git cat-file
// --batch`. fn gets each occurrence in file, line and column order. A
// file that cannot be read (gone from the work tree, say) or looks binary
// is skipped. Searching in process costs what the candidate files weigh;
// git grep with thousands of pathspecs matched every tracked path
// against each of them.
func (ix *Index) searchWords(ctx context.Context, words []string, files []int32, maxBytes int64, fn func(f int32, line int, word string)) error {
	if len(words) == 0 || len(files) == 0 {
		return nil
	}
	if ix.commit == "" {
		for k, f := range files {
			if k%64 == 63 && ctx.Err() != nil {
				return ctx.Err()
			}
			data, _, err := ix.files.ReadFile(ix.all[f].Path, maxBytes)
			if err != nil {
				continue
			}
			matchWords(data, words, func(line int, w string) { fn(f, line, w) })
		}
		return nil
	}
	blobs := make([]string, len(files))
	for k, f := range files {
		blobs[k] = ix.all[f].Blob
	}
	return ix.repo.CatBlobs(ctx, blobs, maxBytes, func(k int, data []byte, size int64) error {
		if data != nil {
			matchWords(data, words, func(line int, w string) { fn(files[k], line, w) })
		}
		return nil
	})
}

// wordByte reports the bytes git grep -w counts as part of a word.
func wordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// matchWords calls fn for each whole-word occurrence of a word in data,
// by line, then column; binary data (a NUL in its first 8,000 bytes)
// has none.
func matchWords(data []byte, words []string, fn func(line int, word string)) {
	if looksBinary(data) {
		return
	}
	type hit struct {
		at   int
		word string
	}
	var hits []hit
	for _, w := range words {
		if w == "" {
			continue
		}
		for i := 0; ; {
			j := bytes.Index(data[i:], []byte(w))
			if j < 0 {
				break
			}
			at := i + j
			end := at + len(w)
			if (at == 0 || !wordByte(data[at-1])) && (end == len(data) || !wordByte(data[end])) {
				hits = append(hits, hit{at, w})
			}
			i = at + 1
		}
	}
	if len(hits) == 0 {
		return
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].at < hits[b].at })
	line, pos := 1, 0
	for _, h := range hits {
		line += bytes.Count(data[pos:h.at], []byte{'\n'})
		pos = h.at
		fn(line, h.word)
	}
}
