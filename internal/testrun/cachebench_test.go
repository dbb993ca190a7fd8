package testrun

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/sandbox"
)

// BenchmarkGoCacheColdWarm measures a sandboxed `go test` suite on a
// small module (fmt, encoding/json, testing) with orch's go build cache
// empty (cold) and again with the cache the first run left (warm), in a
// fresh directory each time. The README's "Performance" table has the
// numbers before and after the suites stopped writing the shared cache.
func BenchmarkGoCacheColdWarm(b *testing.B) {
	if _, err := sandbox.Available(); err != nil {
		b.Skipf("bwrap sandbox unavailable: %v", err)
	}
	var cold, warm time.Duration
	for i := 0; i < b.N; i++ {
		cache := filepath.Join(b.TempDir(), "gocache")
		for round := 0; round < 2; round++ {
			dir := b.TempDir()
			gittest.WriteFiles(b, dir, map[string]string{
				"go.mod":    "module m\n\ngo 1.21\n",
				"m.go":      "package m\n\nimport (\n\t\"encoding/json\"\n\t\"fmt\"\n)\n\nfunc Show(v any) string { b, _ := json.Marshal(v); return fmt.Sprint(string(b)) }\n",
				"m_test.go": "package m\n\nimport \"testing\"\n\nfunc TestShow(t *testing.T) {\n\tif Show(1) != \"1\" {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n",
			})
			opt := Options{Dir: dir, LogDir: filepath.Join(b.TempDir(), "logs"), Sandbox: SandboxBwrap, GoCacheDir: cache}
			start := time.Now()
			report, _, err := Run(context.Background(), []Suite{{Name: "go", Kind: KindTest, Command: []string{"go", "test", "-count=1", "./..."}}}, opt)
			if err != nil || !report.OverallPass {
				b.Fatalf("run: %+v %v", report, err)
			}
			if round == 0 {
				cold += time.Since(start)
			} else {
				warm += time.Since(start)
			}
		}
	}
	b.ReportMetric(cold.Seconds()/float64(b.N), "cold-s/op")
	b.ReportMetric(warm.Seconds()/float64(b.N), "warm-s/op")
}
