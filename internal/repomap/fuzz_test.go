package repomap

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
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

// FuzzSnapshot reads untrusted cache files: no crash, and what decodes
// re-encodes to the same record.
func FuzzSnapshot(f *testing.F) {
	ix := &Index{ids: map[string]uint32{}}
	e := &entry{lang: LangGo, defs: []defRec{{name: ix.internString("Alpha"), kind: 0, line: 3, sig: "func Alpha()"}}, refs: []refRec{{name: ix.internString("Beta"), count: 2}}}
	k, _ := keyOf(strings.Repeat("ab", 20), LangGo)
	rec := ix.encodeRecord(nil, k, e)
	hdr := append([]byte(snapshotMagic), 1, 0, 0, 0, 0, 0, 0, 0)
	f.Add(append(append([]byte(nil), hdr...), rec...))
	f.Add(append(append(append([]byte(nil), hdr...), rec...), rec[:len(rec)/2]...))
	f.Add([]byte("ORCHRMAP"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, snapshotName)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ix := &Index{ids: map[string]uint32{}}
		_, err := readSnapshot(p, func(k cacheKey, rest, payload []byte) {
			e, err := ix.decodeEntry(k.lang, rest)
			if err != nil {
				return
			}
			again := ix.encodeRecord(nil, k, e)
			if !bytes.Equal(again[8:], payload) {
				t.Fatalf("record does not round-trip:\n%x\n%x", payload, again[8:])
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzSeeds scans untrusted brief and plan text.
func FuzzSeeds(f *testing.F) {
	f.Add("change `SuggestionsMinimumDistance` default from 2 to 3 in command.go")
	f.Add("Fix cmd/root.go. Then rename run_engine.\n# Title\n*Bold* x.y.z")
	f.Add("\xff\x00`unclosed ../../etc/passwd")
	ix := &Index{ids: map[string]uint32{}, byPath: map[string]int32{"command.go": 0}}
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
