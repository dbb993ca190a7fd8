package patch

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// patchGen produces a git-style patch on the fly: files sections, each
// updating dir<i>/file<i>.go with one hunk of lines context, removed and
// added lines. The hunk body is shared by every file, so the generator
// allocates only the small per-file headers.
type patchGen struct {
	files, lines int
	next         int
	body         []byte
	chunks       [][]byte
	n            int64
}

func (g *patchGen) Read(p []byte) (int, error) {
	for len(g.chunks) == 0 || len(g.chunks[0]) == 0 {
		if len(g.chunks) > 0 {
			g.chunks = g.chunks[1:]
			continue
		}
		if g.next == g.files {
			return 0, io.EOF
		}
		if g.body == nil {
			g.body = g.hunk()
		}
		name := fmt.Sprintf("dir%03d/file%05d.go", g.next%100, g.next)
		header := fmt.Sprintf("diff --git a/%s b/%s\nindex 1234567..89abcde 100644\n--- a/%s\n+++ b/%s\n", name, name, name, name)
		g.chunks = append(g.chunks[:0], []byte(header), g.body)
		g.next++
	}
	n := copy(p, g.chunks[0])
	g.chunks[0] = g.chunks[0][n:]
	g.n += int64(n)
	return n, nil
}

func (g *patchGen) hunk() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "@@ -1,%d +1,%d @@ func f() {\n", g.lines*2, g.lines*2)
	for j := 0; j < g.lines; j++ {
		fmt.Fprintf(&b, " \tcontext line %6d of the file, long enough to be realistic\n", j)
		fmt.Fprintf(&b, "-\treturn fmt.Errorf(\"old message %6d: %%w\", err)\n", j)
		fmt.Fprintf(&b, "+\treturn fmt.Errorf(\"new message %6d: %%w\", err)\n", j)
	}
	return []byte(b.String())
}

// bigPatch is about 20 MB over 2,000 files.
func bigPatch() *patchGen { return &patchGen{files: 2000, lines: 64} }

// TestParseDiffStreamsLargePatch checks that a 20 MB patch is parsed
// without holding it: the parser allocates a small fraction of its size.
func TestParseDiffStreamsLargePatch(t *testing.T) {
	g := bigPatch()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d, err := Parse(g)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Files) != 2000 || d.Bytes != g.n || g.n < 20<<20 {
		t.Fatalf("files=%d bytes=%d generated=%d", len(d.Files), d.Bytes, g.n)
	}
	// Holding the patch would take 20 MB; the parser needs its 64 KiB
	// buffer, the file names and the entries.
	allocated := after.TotalAlloc - before.TotalAlloc
	if limit := uint64(4 << 20); allocated > limit {
		t.Errorf("parsing a %d byte patch allocated %d bytes (limit %d): not streaming", g.n, allocated, limit)
	}
}

func BenchmarkParseDiff20MB(b *testing.B) {
	b.ReportAllocs()
	var size int64
	for b.Loop() {
		g := bigPatch()
		d, err := Parse(g)
		if err != nil || len(d.Files) != 2000 {
			b.Fatalf("%v %d", err, len(d.Files))
		}
		size = g.n
	}
	b.SetBytes(size)
}

// BenchmarkParseDiff20MBInMemory excludes the generator's cost.
func BenchmarkParseDiff20MBInMemory(b *testing.B) {
	data, err := io.ReadAll(bigPatch())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		d, err := Parse(bytes.NewReader(data))
		if err != nil || len(d.Files) != 2000 {
			b.Fatalf("%v %d", err, len(d.Files))
		}
	}
}
