package evidence

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/fileid"
	"github.com/orchdev/orch/internal/patch"
)

// BenchmarkCompareFiles: codegen → review's check on a 20 MB patch over
// 2,000 files (the README's big-patch fixture).
func BenchmarkCompareFiles(b *testing.B) {
	const n, size = 2000, 20 << 20
	per := size / n
	lines := per / (2 * len("-// line 000000 of pkg00/file0000.go padding.....\n"))
	base := map[string]string{}
	files := CodeFiles{}
	var patch bytes.Buffer
	for i := range n {
		p := fmt.Sprintf("pkg%d/file%04d.go", i%50, i)
		var content bytes.Buffer
		fmt.Fprintf(&patch, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -1,%d +1,%d @@\n", p, p, p, p, lines, lines)
		for l := range lines {
			line := fmt.Sprintf("// line %06d of %s padding.....\n", l, p)
			fmt.Fprintf(&patch, "-%s+%s", line, line)
			content.WriteString(line)
		}
		base[p] = content.String()
		files[p] = content.Bytes()
	}
	repo, sha := seed(b, base, "sha1")
	b.SetBytes(int64(patch.Len()))
	b.ResetTimer()
	for range b.N {
		if err := CompareFiles(b.Context(), repo, sha, patch.Bytes(), files); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseObservations: reading the observation cache of the
// README's big-patch task (a 2,000-entry plan and patch, 2,000 files in
// 50 folders), which every `orch status` of it does.
func BenchmarkParseObservations(b *testing.B) {
	const n = 2000
	s := stamp{ID: fileid.ID{Size: 4992, Mtime: 1795803152059179386, Ctime: 1795803152059179386, Ino: 12448033, Dev: 65024, Mode: 0o100644}, Since: 1795803161891179745}
	o := observations{
		Plan:  &planObs{stamp: s, SHA256: SHA256Hex(nil), Title: "bench"},
		Diff:  &diffObs{stamp: s, SHA256: SHA256Hex(nil), Diff: patch.Diff{Bytes: 20 << 20, Added: 1, Removed: 1}},
		Dirs:  map[string]stamp{"code": s, "code/files": s},
		Files: map[string]fileObs{},
	}
	for i := range n {
		p := fmt.Sprintf("pkg%d/file%04d.go", i%50, i)
		o.Plan.FilePlan = append(o.Plan.FilePlan, artifact.FileEntry{Path: p, Intent: "update"})
		o.Diff.Diff.Files = append(o.Diff.Diff.Files, patch.Entry{Op: patch.OpUpdate, OldPath: p, NewPath: p})
		o.Dirs[fmt.Sprintf("code/files/pkg%d", i%50)] = s
		o.Files[p] = fileObs{stamp: s, SHA256: SHA256Hex([]byte(p))}
	}
	data := encodeObservations(o)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseObservations(data); err != nil {
			b.Fatal(err)
		}
	}
}
