package repomap

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/repomap/synthetic"
)

var (
	synthOnce sync.Once
	synthDir  string
	synthErr  error
)

// syntheticRepo writes the synthetic repository of n files once per
// test binary (synthetic.Write).
func syntheticRepo(tb testing.TB, n int) string {
	synthOnce.Do(func() {
		synthDir, synthErr = os.MkdirTemp("", "repomap-bench-")
		if synthErr != nil {
			return
		}
		synthErr = synthetic.Write(synthDir, n)
	})
	if synthErr != nil {
		tb.Fatal(synthErr)
	}
	return synthDir
}

// BenchmarkBuild indexes the synthetic repository: "first" with an empty
// cache, "warm" with the cache of a previous build; both report the peak
// Go heap and the map's time for a brief.
//
//	go test -run XXX -bench Build -benchtime 1x ./internal/repomap
func BenchmarkBuild(b *testing.B) {
	n := synthetic.Files()
	start := time.Now()
	dir := syntheticRepo(b, n)
	b.Logf("synthetic repository of %d files written in %s", n, time.Since(start).Round(time.Millisecond))
	cache := filepath.Join(b.TempDir(), "cache")
	seeds := Seeds{Brief: fmt.Sprintf("make %s return x + 2 and update its callers", "ParseHeader120")}
	run := func(b *testing.B, fresh bool) {
		var ix *Index
		if _, err := os.Stat(filepath.Join(cache, indexName)); !fresh && err != nil {
			b.StopTimer()
			if _, err := Build(context.Background(), dir, Options{CacheDir: cache, Fresh: true}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		cpu0 := synthetic.CPUTime()
		for i := 0; i < b.N; i++ {
			if fresh {
				b.StopTimer()
				os.RemoveAll(cache)
				runtime.GC()
				b.StartTimer()
			}
			var err error
			ix, err = Build(context.Background(), dir, Options{CacheDir: cache, Fresh: true})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric((synthetic.CPUTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		st := ix.Stats()
		b.ReportMetric(float64(st.Files), "files")
		b.ReportMetric(float64(st.Parsed), "parsed")
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		t0, c0 := time.Now(), synthetic.CPUTime()
		m, err := ix.Map(context.Background(), seeds, 2000)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(t0).Seconds(), "map-s")
		b.ReportMetric((synthetic.CPUTime() - c0).Seconds(), "map-cpu-s")
		b.ReportMetric(float64(EstimateTokens(m)), "map-tokens")
		if fi, err := os.Stat(filepath.Join(cache, indexName)); err == nil {
			b.ReportMetric(float64(fi.Size())/(1<<20), "cache-MiB")
		}
		if !strings.Contains(m, "ParseHeader120") {
			b.Errorf("the map does not show the brief's function:\n%s", m)
		}
		runtime.KeepAlive(ix)
	}
	b.Run("first", func(b *testing.B) { run(b, true) })
	b.Run("warm", func(b *testing.B) { run(b, false) })
}

// TestSyntheticSmall runs the benchmark's generator and checks the map on
// a small synthetic repository, so the benchmark cannot rot.
func TestSyntheticSmall(t *testing.T) {
	dir := t.TempDir()
	if err := synthetic.Write(dir, 400); err != nil {
		t.Fatal(err)
	}
	ix, err := Build(t.Context(), dir, Options{CacheDir: filepath.Join(dir, ".orch", "cache")})
	if err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Files != 400 || st.Indexed != 340 {
		t.Errorf("stats %+v, want 400 files, 340 indexed", st)
	}
	r, err := ix.Rank(t.Context(), Seeds{Brief: "make ParseHeader120 return x + 2"})
	if err != nil {
		t.Fatal(err)
	}
	if DefinitionsAvailable && r[0].Path != "pkg000/sub00/file000010.py" {
		t.Errorf("first = %s, want the file defining ParseHeader120", r[0].Path)
	}
}

// TestRealRepository checks the ranking on a real repository, when named:
//
//	ORCH_REPOMAP_REPO=/path/to/cobra \
//	ORCH_REPOMAP_BRIEF="change SuggestionsMinimumDistance default from 2 to 3" \
//	ORCH_REPOMAP_FIRST=command.go go test -run RealRepository -v ./internal/repomap
//
// It prints the map (2,000 tokens) and the build's figures.
func TestRealRepository(t *testing.T) {
	dir := os.Getenv("ORCH_REPOMAP_REPO")
	if dir == "" {
		t.Skip("set ORCH_REPOMAP_REPO (and ORCH_REPOMAP_BRIEF, ORCH_REPOMAP_FIRST) to run")
	}
	cache := t.TempDir()
	for _, round := range []string{"first", "warm"} {
		ix, err := Build(t.Context(), dir, Options{CacheDir: cache, Fresh: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s build: %+v", round, ix.Stats())
		seeds := Seeds{Brief: os.Getenv("ORCH_REPOMAP_BRIEF")}
		r, err := ix.Rank(t.Context(), seeds)
		if err != nil {
			t.Fatal(err)
		}
		if want := os.Getenv("ORCH_REPOMAP_FIRST"); want != "" && r[0].Path != want {
			t.Errorf("first = %s, want %s; top: %v", r[0].Path, want, r[:min(5, len(r))])
		}
		if round == "warm" {
			m, err := ix.Map(t.Context(), seeds, 2000)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("map (%d tokens):\n%s", EstimateTokens(m), m)
		}
	}
}
