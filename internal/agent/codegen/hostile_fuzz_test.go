package codegen

import (
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/hostile"
)

// FuzzDiffStat feeds arbitrary patches (the hostile corpus among the
// seeds) to the diffstat of codegen.json: one entry per "diff --git"
// line, never a negative count.
func FuzzDiffStat(f *testing.F) {
	for _, name := range hostile.Names(hostile.Patches()) {
		if p := hostile.Patches()[name]; len(p) < 4<<10 {
			f.Add(p)
		}
	}
	f.Add([]byte("diff --git \"a/x\" \"b/\\303\\251\"\n@@ -1 +1 @@\n-a\n+b\n"))
	f.Fuzz(func(t *testing.T, patch []byte) {
		stats := DiffStat(patch)
		headers := 0
		for _, l := range strings.Split(string(patch), "\n") {
			if strings.HasPrefix(strings.TrimSuffix(l, "\r"), "diff --git ") {
				headers++
			}
		}
		if len(stats) > headers {
			t.Fatalf("%d entries for %d headers", len(stats), headers)
		}
		for _, s := range stats {
			if s.Added < 0 || s.Removed < 0 {
				t.Fatalf("negative counts %+v", s)
			}
		}
		added, removed := DiffTotals(stats)
		if added < 0 || removed < 0 {
			t.Fatalf("totals %d %d", added, removed)
		}
	})
}
