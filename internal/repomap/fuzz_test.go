package repomap

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/fuzztest"
	"github.com/orchdev/orch/internal/visibility"
)

// FuzzDefinitions parses untrusted source text in every indexed language:
// no crash, and every definition is an identifier on a line of the file
// with a one-line, printable signature.
func FuzzDefinitions(f *testing.F) {
	for _, src := range fixture {
		f.Add(uint8(LangGo), src)
	}
	f.Add(uint8(LangPython), "class A:\n  def f(self): pass\n")
	f.Add(uint8(LangTypeScript), "export interface X { a: number }\nfunction f() {}")
	f.Add(uint8(LangRust), "pub struct S { a: u8 }\nfn f() {}\n")
	f.Add(uint8(LangJava), "class A { void f() {} }")
	f.Add(uint8(LangJavaScript), "const x = () => 1;\n\x00\xff")
	f.Add(uint8(LangGo), "package p\nfunc \u202eevil() {}\ntype T struct{ A\x1b[31m int }\n")
	f.Fuzz(func(t *testing.T, lang uint8, src string) {
		l := LangGo + Lang(lang)%(LangJava-LangGo+1)
		ex := newExtractor()
		defer ex.close()
		r := indexBlob(t.Context(), ex, l, []byte(src))
		lines := strings.Count(src, "\n") + 1
		for _, d := range r.tags.Defs {
			if !isIdent(d.Name) {
				t.Fatalf("%s: definition name %q is not an identifier", l, d.Name)
			}
			if d.Line < 1 || d.Line > lines {
				t.Fatalf("%s: definition %s on line %d of %d", l, d.Name, d.Line, lines)
			}
			if strings.ContainsAny(d.Sig, "\n\r") || !utf8.ValidString(d.Sig) || printable([]byte(d.Sig)) != d.Sig || len(d.Sig) > maxSigBytes {
				t.Fatalf("%s: signature %q is not one printable line", l, d.Sig)
			}
			if _, ok := kindIndex(d.Kind); !ok {
				t.Fatalf("%s: unknown kind %q", l, d.Kind)
			}
		}
		for _, ref := range r.tags.Refs {
			if !isIdent(ref.Name) || len(ref.Name) < minIdent || ref.Count < 1 || !strings.Contains(src, ref.Name) {
				t.Fatalf("reference %+v", ref)
			}
		}
	})
}

// FuzzIndexFile reads untrusted index files: no crash, no read outside
// the file, and what an intact-looking file yields is within its tables.
// Half the inputs get their checksum repaired first, so the checks behind
// it (shapes, bounds, entries) are fuzzed too.
func FuzzIndexFile(f *testing.F) {
	for _, seed := range indexSeeds(f) {
		f.Add(seed, true)
		f.Add(seed, false)
	}
	f.Add([]byte("ORCHRMAP"), false)
	f.Fuzz(func(t *testing.T, data []byte, fixCRC bool) {
		if fixCRC && len(data) >= 16 {
			data = bytes.Clone(data)
			binary.LittleEndian.PutUint32(data[len(data)-16:], crc32.Checksum(data[:len(data)-16], crcTable()))
		}
		// What openIndex does, on bytes (the file is read the same way).
		if len(data) < 16 || checkTail(data[len(data)-16:], crc32.Checksum(data[:len(data)-16], crcTable())) != nil {
			return
		}
		s, err := parseSegment(data)
		if err != nil {
			if !errors.Is(err, errDamaged) {
				t.Fatalf("parse: %v, want errDamaged", err)
			}
			return
		}
		for r := 0; r < min(s.nrows, 64); r++ {
			s.rowPath(r)
			e, err := s.entry(r)
			if err != nil {
				continue
			}
			for _, d := range e.defs {
				if int(d.name) >= s.nnames || int(d.kind) >= len(kindList) || len(d.sig) > maxSigBytes {
					t.Fatalf("row %d: definition %+v", r, d)
				}
				s.name(d.name)
			}
			for _, ref := range e.refs {
				if int(ref.name) >= s.nnames {
					t.Fatalf("row %d: reference %+v", r, ref)
				}
			}
		}
		for id := 0; id < min(s.nnames, 64); id++ {
			name := string(s.name(uint32(id)))
			if got, ok := s.lookup(name); ok && string(s.name(got)) != name {
				t.Fatalf("lookup(%q) = %d, named %q", name, got, s.name(got))
			}
			for _, sec := range [][2]int{{secDefStart, secDefRow}, {secRefStart, secRefRow}} {
				if p := s.postings(sec[0], sec[1], uint32(id)); len(p)%4 != 0 {
					t.Fatalf("postings of %d: %d bytes", id, len(p))
				}
			}
		}
		var srcs []source
		for r := 0; r < min(s.nrows, 64); r++ {
			if or, ok := s.row(r); ok {
				srcs = append(srcs, source{key: cacheKey{blob: string(or.blob), lang: or.lang}})
			}
		}
		for k, r := range s.blobRows(srcs) {
			if or, ok := s.row(int(r)); !ok || string(or.blob) != k.blob || or.lang != k.lang {
				t.Fatalf("blobRows: %x in row %d", k.blob, r)
			}
			s.find("a.go", k, 0)
		}
	})
}

// indexSeeds are index files written by Build for the fixture, whole and
// cut.
func indexSeeds(tb testing.TB) [][]byte {
	dir := newRepo(tb, map[string]string{
		"a.go":   "package a\n\n// Alpha does.\nfunc Alpha() int { return Beta() }\n",
		"b/b.go": "package b\n\ntype Beta struct{ Gamma int }\n\nfunc Beta() int { return 1 }\n",
		"c.py":   "def gamma():\n    return alpha()\n",
	})
	cache := filepath.Join(tb.TempDir(), "cache")
	if _, err := Build(context.Background(), dir, Options{CacheDir: cache, Fresh: true}); err != nil {
		tb.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(cache, indexName))
	if err != nil {
		tb.Fatal(err)
	}
	return [][]byte{good, good[:len(good)/2], good[:len(good)-1]}
}

// FuzzSeeds scans untrusted brief and plan text.
func FuzzSeeds(f *testing.F) {
	f.Add("change `SuggestionsMinimumDistance` default from 2 to 3 in command.go")
	f.Add("Fix cmd/root.go. Then rename run_engine.\n# Title\n*Bold* x.y.z")
	f.Add("\xff\x00`unclosed ../../etc/passwd")
	ix := &Index{all: []visibility.File{{Path: "command.go"}}}
	f.Fuzz(func(t *testing.T, text string) {
		terms := ix.resolve(Seeds{Brief: text, Plan: text})
		for _, id := range terms.idents {
			if !isIdent(id) || !strings.Contains(text, id) {
				t.Fatalf("identifier %q from %q", id, text)
			}
		}
		for _, w := range terms.words {
			if !isIdent(w) {
				t.Fatalf("word %q", w)
			}
		}
	})
}

// FuzzRewriteIndexFile gives a build's batch write an untrusted index
// file to replace (read with pread through buffers, not the mapping):
// no crash, an error is errDamaged, and a file written is one that
// opens, with every row of the old file and the batch's row.
func FuzzRewriteIndexFile(f *testing.F) {
	for _, seed := range indexSeeds(f) {
		f.Add(seed, true)
		f.Add(seed, false)
	}
	// One folder for all the inputs of a worker, the file rewritten in
	// place (fuzztest; the index written goes to a temporary file of its
	// own): a t.TempDir per input cost a quarter of each input's time.
	p := filepath.Join(f.TempDir(), indexName)
	f.Fuzz(func(t *testing.T, data []byte, fixCRC bool) {
		if fixCRC && len(data) >= 16 {
			data = bytes.Clone(data)
			binary.LittleEndian.PutUint32(data[len(data)-16:], crc32.Checksum(data[:len(data)-16], crcTable()))
		}
		fuzztest.Write(t, p, data)
		old, err := openIndex(p)
		if err != nil {
			if !errors.Is(err, errDamaged) {
				t.Fatalf("open: %v, want errDamaged", err)
			}
			return
		}
		defer old.close()
		keep := make([]int32, old.nrows)
		for r := range keep {
			keep[r] = int32(r)
		}
		nm := newNamer(old)
		fe := nm.entry(fileTags{Lang: LangGo, Defs: []Def{{Name: "Fuzzed", Kind: KindFunc, Line: 1, Sig: "func Fuzzed()"}}, Refs: []Ref{{Name: "Fuzzed", Count: 1}}}, 0)
		extra := []outRow{{path: "zz/fuzzed.go", blob: strings.Repeat("\x01", 20), lang: LangGo, old: -1, fresh: 0}}
		next, err := createIndex("", func(w *bufio.Writer) error {
			return writeIndex(w, old, keep, extra, []*freshEntry{fe}, nm)
		})
		if err != nil {
			if !errors.Is(err, errDamaged) && !strings.Contains(err.Error(), "index too large") {
				t.Fatalf("write: %v, want errDamaged", err)
			}
			return
		}
		defer next.close()
		if next.nrows > old.nrows+1 || next.nrows == 0 {
			t.Fatalf("%d rows written from %d and one new", next.nrows, old.nrows)
		}
		if id, ok := next.lookup("Fuzzed"); !ok || len(next.postings(secDefStart, secDefRow, id)) == 0 {
			t.Fatalf("the new row's definition is not in the file written")
		}
	})
}
