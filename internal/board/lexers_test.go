package board

import (
	"testing"

	"github.com/alecthomas/chroma/v2"
)

// TestLexers: the files of the common languages get their lexer, each
// lexer tokenises (its rules compile; one that names another, as HTML
// names JavaScript and CSS, finds it), and an unknown kind gets none.
func TestLexers(t *testing.T) {
	for name, want := range map[string]string{
		"main.go": "Go", "a.py": "Python", "web/app.ts": "TypeScript", "lib.rs": "Rust", "A.java": "Java",
		"Dockerfile": "Docker", "Makefile": "Makefile", "index.html": "HTML", "s.css": "CSS", "x.json": "JSON",
		"c.yaml": "YAML", "Cargo.toml": "TOML", "run.sh": "Bash", "m.c": "C", "m.cpp": "C++", "q.sql": "SQL",
		"x.unknownext": "",
	} {
		l := matchLexer(name)
		got := ""
		if l != nil {
			got = l.Config().Name
		}
		if got != want {
			t.Errorf("%s: lexer %q, want %q", name, got, want)
		}
	}
	src := "<html><script>var x = 1;</script><style>p { color: red }</style></html>\n"
	for _, l := range lexerRegistry().Lexers {
		it, err := chroma.Coalesce(l).Tokenise(nil, src)
		if err != nil {
			t.Fatalf("%s: %v", l.Config().Name, err)
		}
		n := 0
		for tok := it(); tok != chroma.EOF; tok = it() {
			n += len(tok.Value)
		}
		if n != len(src) {
			t.Errorf("%s: tokens cover %d of %d bytes", l.Config().Name, n, len(src))
		}
	}
}
