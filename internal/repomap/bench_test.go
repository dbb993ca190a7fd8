package repomap

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// benchFiles is the size of the synthetic repository (ORCH_BENCH_FILES
// overrides it).
func benchFiles() int {
	if n, err := strconv.Atoi(os.Getenv("ORCH_BENCH_FILES")); err == nil && n > 0 {
		return n
	}
	return 100_000
}

var (
	synthOnce sync.Once
	synthDir  string
	synthErr  error
)

// syntheticRepo writes a repository of n files with one commit through
// git fast-import, then checks it out:
// a 100-file folder tree, 40 % Go, 15 % Python, 15 % TypeScript, 10 %
// Java, 5 % Rust and 15 % documentation and data, each source file
// defining a dozen functions and calling functions of other files.
func syntheticRepo(tb testing.TB, n int) string {
	synthOnce.Do(func() {
		synthDir, synthErr = os.MkdirTemp("", "repomap-bench-")
		if synthErr != nil {
			return
		}
		synthErr = writeSynthetic(synthDir, n)
	})
	if synthErr != nil {
		tb.Fatal(synthErr)
	}
	return synthDir
}

func writeSynthetic(dir string, n int) error {
	if out, err := exec.Command("git", "-C", dir, "init", "-q", "-b", "main").CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	cmd := exec.Command("git", "-C", dir, "fast-import", "--quiet")
	cmd.Env = append(os.Environ(), testIdentity...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	w := bufio.NewWriterSize(in, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	fnName := func(file, k int) string {
		verbs := []string{"Parse", "Load", "Render", "Compute", "Resolve", "Apply", "Encode", "Decode", "Validate", "Merge"}
		nouns := []string{"Header", "Config", "Record", "Token", "Index", "Route", "Schema", "Buffer", "Policy", "Stream"}
		return fmt.Sprintf("%s%s%d", verbs[(file+k)%10], nouns[(file*7+k)%10], file*12+k)
	}
	pathOf := func(i int) (string, string) {
		exts := []string{".go", ".go", ".go", ".go", ".go", ".go", ".go", ".go", ".py", ".py", ".py", ".ts", ".ts", ".ts", ".java", ".java", ".rs", ".md", ".json", ".yaml"}
		ext := exts[i%len(exts)]
		return fmt.Sprintf("pkg%03d/sub%02d/file%06d%s", i/1000, (i/100)%10, i, ext), ext
	}
	for i := 0; i < n; i++ {
		_, ext := pathOf(i)
		var b strings.Builder
		calls := func(indent, stmtEnd string) {
			for c := 0; c < 6; c++ {
				var j int
				switch {
				case c < 3: // neighbours in the same folder
					j = (i/100)*100 + rng.IntN(100)
				case c < 5: // anywhere
					j = rng.IntN(n)
				default: // a popular helper
					j = rng.IntN(50)
				}
				if j >= n {
					j = n - 1
				}
				fmt.Fprintf(&b, "%s_ = %s(%d)%s\n", indent, fnName(j, rng.IntN(12)), c, stmtEnd)
			}
		}
		switch ext {
		case ".go":
			fmt.Fprintf(&b, "package sub%02d\n\n// File %d of the synthetic repository.\n\n", (i/100)%10, i)
			fmt.Fprintf(&b, "type Widget%d struct {\n\tName string\n\tCount int\n}\n\n", i)
			for k := 0; k < 12; k++ {
				fmt.Fprintf(&b, "// %s does step %d.\nfunc %s(x int) int {\n", fnName(i, k), k, fnName(i, k))
				calls("\t", "")
				b.WriteString("\treturn x + 1\n}\n\n")
			}
		case ".py":
			fmt.Fprintf(&b, "\"\"\"File %d.\"\"\"\n\nclass Widget%d:\n    count = 0\n\n", i, i)
			for k := 0; k < 12; k++ {
				fmt.Fprintf(&b, "def %s(x):\n", fnName(i, k))
				calls("    ", "")
				b.WriteString("    return x + 1\n\n")
			}
		case ".ts":
			fmt.Fprintf(&b, "// File %d.\nexport interface Widget%d { name: string; count: number }\n\n", i, i)
			for k := 0; k < 12; k++ {
				fmt.Fprintf(&b, "export function %s(x: number): number {\n", fnName(i, k))
				calls("  ", ";")
				b.WriteString("  return x + 1;\n}\n\n")
			}
		case ".java":
			fmt.Fprintf(&b, "package pkg;\n\npublic class Widget%d {\n    private int count;\n\n", i)
			for k := 0; k < 12; k++ {
				fmt.Fprintf(&b, "    public static int %s(int x) {\n", fnName(i, k))
				calls("        ", ";")
				b.WriteString("        return x + 1;\n    }\n\n")
			}
			b.WriteString("}\n")
		case ".rs":
			fmt.Fprintf(&b, "// File %d.\npub struct Widget%d { pub count: u32 }\n\n", i, i)
			for k := 0; k < 12; k++ {
				fmt.Fprintf(&b, "pub fn %s(x: i64) -> i64 {\n", strings.ToLower(fnName(i, k)))
				calls("    ", ";")
				b.WriteString("    x + 1\n}\n\n")
			}
		default:
			fmt.Fprintf(&b, "# Notes %d\n\nSee %s and %s.\n", i, fnName(rng.IntN(n), 0), fnName(i, 1))
		}
		data := b.String()
		fmt.Fprintf(w, "blob\nmark :%d\ndata %d\n%s\n", i+1, len(data), data)
	}
	fmt.Fprintf(w, "commit refs/heads/main\ncommitter T <t@example.test> 1700000000 +0000\ndata 9\nsynthetic\n")
	for i := 0; i < n; i++ {
		p, _ := pathOf(i)
		fmt.Fprintf(w, "M 100644 :%d %s\n", i+1, p)
	}
	w.WriteString("\n")
	if err := w.Flush(); err != nil {
		return err
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		return err
	}
	// Check the files out: git grep reads the work tree.
	if out, err := exec.Command("git", "-C", dir, "read-tree", "-u", "--reset", "HEAD").CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// BenchmarkBuild indexes the synthetic repository: "first" with an empty
// cache, "warm" with the cache of a previous build; both report the peak
// Go heap and the map's time for a brief.
//
//	go test -run XXX -bench Build -benchtime 1x ./internal/repomap
func BenchmarkBuild(b *testing.B) {
	n := benchFiles()
	start := time.Now()
	dir := syntheticRepo(b, n)
	b.Logf("synthetic repository of %d files written in %s", n, time.Since(start).Round(time.Millisecond))
	cache := filepath.Join(b.TempDir(), "cache")
	seeds := Seeds{Brief: fmt.Sprintf("make %s return x + 2 and update its callers", "ParseHeader120")}
	run := func(b *testing.B, fresh bool) {
		var ix *Index
		if _, err := os.Stat(snapshotPath(cache)); !fresh && err != nil {
			b.StopTimer()
			if _, err := Build(context.Background(), dir, Options{CacheDir: cache, Fresh: true}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		cpu0 := cpuTime()
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
		b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		st := ix.Stats()
		b.ReportMetric(float64(st.Files), "files")
		b.ReportMetric(float64(st.Parsed), "parsed")
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		t0, c0 := time.Now(), cpuTime()
		m, err := ix.Map(context.Background(), seeds, 2000)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(t0).Seconds(), "map-s")
		b.ReportMetric((cpuTime() - c0).Seconds(), "map-cpu-s")
		b.ReportMetric(float64(EstimateTokens(m)), "map-tokens")
		if fi, err := os.Stat(snapshotPath(cache)); err == nil {
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
	if err := writeSynthetic(dir, 400); err != nil {
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

// cpuTime is the CPU time (user and system) of this process and its
// finished children (git): on a shared machine wall time says little.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
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
