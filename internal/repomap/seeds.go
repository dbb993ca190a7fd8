package repomap

import (
	"path"
	"sort"
	"strings"
	"unicode"
)

// Seeds are what the task names: they personalise the ranking.
type Seeds struct {
	Brief string // the user's brief
	Plan  string // the plan's text (planning.ai.json or plan.md), if any
	// Paths are the file plan's paths: the strongest seeds. Paths the
	// repository does not have (files to create) still lend weight to
	// their folder.
	Paths []string
	// Identifiers are named on purpose (by the agent or a tool); Brief and
	// Plan are scanned for more.
	Identifiers []string
}

// maxSeedIdents bounds the identifiers searched with git grep.
const maxSeedIdents = 24

// seedTerms is what the seeds name, resolved against the index.
type seedTerms struct {
	planned     []int32            // files of the file plan that exist
	plannedDirs []string           // folders of planned paths
	paths       []int32            // files named in the text
	idents      []string           // identifiers, strongest first
	weight      map[string]float64 // identifier → 1 (found in text) or 2 (named on purpose)
	words       []string           // lower-case words for path matching
}

var stopWords = map[string]bool{
	"the": true, "and": true, "for": true, "with": true, "that": true, "this": true, "from": true,
	"into": true, "make": true, "should": true, "when": true, "change": true, "add": true,
	"use": true, "used": true, "uses": true, "default": true, "value": true, "values": true,
	"file": true, "files": true, "code": true, "test": true, "tests": true, "update": true,
	"fix": true, "new": true, "all": true, "also": true, "them": true, "then": true, "than": true,
	"each": true, "only": true, "have": true, "has": true, "not": true, "are": true, "was": true,
	"will": true, "would": true, "can": true, "could": true, "there": true, "their": true,
	"what": true, "which": true, "where": true, "does": true, "done": true, "like": true,
	"more": true, "less": true, "some": true, "same": true, "other": true, "such": true,
	"instead": true, "about": true, "after": true, "before": true, "over": true, "under": true,
	"set": true, "get": true, "true": true, "false": true, "null": true, "none": true,
}

// resolve finds what the seeds name in the index.
func (ix *Index) resolve(s Seeds) seedTerms {
	t := seedTerms{weight: map[string]float64{}}
	seenFile := map[int32]bool{}
	for _, p := range s.Paths {
		p = strings.TrimPrefix(p, "./")
		if i, ok := ix.fileIndex(p); ok && !seenFile[i] {
			seenFile[i] = true
			t.planned = append(t.planned, i)
		}
		t.plannedDirs = append(t.plannedDirs, path.Dir(p))
	}
	addIdent := func(id string, w float64) {
		if !isIdent(id) || len(id) < minIdent {
			return
		}
		if old, ok := t.weight[id]; ok {
			t.weight[id] = max(old, w)
			return
		}
		t.weight[id] = w
		t.idents = append(t.idents, id)
	}
	for _, id := range s.Identifiers {
		addIdent(id, 2)
	}
	text := s.Brief + "\n" + s.Plan
	seenWord := map[string]bool{}
	for _, tok := range tokens(text) {
		// A path or file name the repository has.
		if strings.ContainsAny(tok.text, "/.") {
			p := strings.Trim(strings.TrimPrefix(tok.text, "./"), ".,:;")
			if i, ok := ix.fileIndex(p); ok && !seenFile[i] {
				seenFile[i] = true
				t.paths = append(t.paths, i)
			} else if !strings.Contains(p, "/") {
				for _, j := range ix.byBase(p, 5) {
					if !seenFile[j] {
						seenFile[j] = true
						t.paths = append(t.paths, j)
					}
				}
			}
		}
		for _, part := range strings.FieldsFunc(tok.text, func(r rune) bool { return r == '.' || r == '/' || r == '-' }) {
			switch {
			case codeLike(part) || tok.quoted:
				addIdent(part, 1)
			case unicode.IsUpper(rune(part[0])) && !tok.sentenceStart && ix.defined(part):
				addIdent(part, 1)
			}
			w := strings.ToLower(part)
			if len(w) >= 4 && !stopWords[w] && !seenWord[w] && isIdent(w) {
				seenWord[w] = true
				t.words = append(t.words, w)
			}
		}
	}
	// Identifiers named on purpose first, then the longest (the most
	// specific); git grep searches the first maxSeedIdents.
	sort.SliceStable(t.idents, func(i, j int) bool {
		a, b := t.idents[i], t.idents[j]
		if t.weight[a] != t.weight[b] {
			return t.weight[a] > t.weight[b]
		}
		return len(a) > len(b)
	})
	return t
}

type token struct {
	text          string
	quoted        bool // inside `backticks`
	sentenceStart bool
}

// tokens splits text into identifier-ish tokens (letters, digits, _ . / -),
// noting backticks and sentence starts.
func tokens(text string) []token {
	var out []token
	quoted, start, curStart := false, true, true
	var cur strings.Builder
	flush := func() {
		if cur.Len() == 0 {
			return
		}
		raw := cur.String()
		cur.Reset()
		if s := strings.Trim(raw, ".-/"); s != "" && len(s) <= 200 {
			out = append(out, token{text: s, quoted: quoted, sentenceStart: curStart})
		}
		if strings.HasSuffix(raw, ".") {
			start = true // "… done. Then" starts a sentence
		}
	}
	for _, r := range text {
		switch {
		case r == '`':
			flush()
			quoted = !quoted
		case r < 0x80 && (r == '_' || r == '.' || r == '/' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)):
			if cur.Len() == 0 {
				curStart = start
				start = false
			}
			cur.WriteRune(r)
		default:
			flush()
			switch r {
			case '\n', '!', '?', ':', '#', '*':
				start = true
			}
		}
	}
	flush()
	return out
}

// codeLike reports names that are identifiers, not words: camelCase,
// PascalCase with an inner capital, snake_case, SCREAMING_CASE.
func codeLike(s string) bool {
	if !isIdent(s) {
		return false
	}
	if strings.Contains(strings.Trim(s, "_"), "_") {
		return true
	}
	for i := 1; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

func (ix *Index) defined(name string) bool {
	id, ok := ix.lookup(name)
	if !ok {
		return false
	}
	return len(ix.definers(id)) > 0
}

// byBase returns up to limit files whose last element is base; none when
// more files have that name (a name shared by many files names none).
func (ix *Index) byBase(base string, limit int) []int32 {
	var out []int32
	for i, f := range ix.all {
		if path.Base(f.Path) == base {
			if len(out) == limit {
				return nil
			}
			out = append(out, int32(i))
		}
	}
	return out
}
