package evidence

import (
	"bytes"
	"fmt"
	"testing"
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
