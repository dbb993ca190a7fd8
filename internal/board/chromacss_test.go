package board

import (
	"bytes"
	"flag"
	"os"
	"testing"

	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/styles"
)

var updateCSS = flag.Bool("update", false, "rewrite static/chroma.css from chroma's github style")

// TestChromaCSS: static/chroma.css is chroma's "github" style as classes.
// It is generated here, not when orch starts: chroma's styles package
// parses every style it holds when a program that links it starts, which
// every orch command paid (README, "Performance").
// `go test ./internal/board -run TestChromaCSS -update` regenerates it.
func TestChromaCSS(t *testing.T) {
	var b bytes.Buffer
	if err := chromahtml.New(chromahtml.WithClasses(true)).WriteCSS(&b, styles.Get("github")); err != nil {
		t.Fatal(err)
	}
	if *updateCSS {
		if err := os.WriteFile("static/chroma.css", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("static/chroma.css")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, b.Bytes()) {
		t.Fatal("static/chroma.css is not chroma's github style: run go test ./internal/board -run TestChromaCSS -update")
	}
}
