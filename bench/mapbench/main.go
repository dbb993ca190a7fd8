// Command mapbench measures the repository map on the synthetic
// repository (internal/repomap/synthetic) the way orch uses it: each step
// is its own process, so its CPU time (user and system, its git children
// included) and its peak resident memory (the kernel's max RSS of the
// process) are those of an orch command that builds a map.
//
//	go run ./bench/mapbench [-files 100000] [-dir /tmp/mapbench] [-runs 3]
//
// The steps: "first" (an empty cache: every file parsed), "warm" (the
// cache of the first, nothing changed: -runs times), "update" (one Go
// file changed and staged, with a content never seen before: it alone is
// parsed). Each builds the index of
// the tracked files (like `orch plan` in the work tree) and renders a
// 2,000-token map for a brief naming one function. The repository is
// written once into -dir and reused when it is there; -warm-only keeps
// the cache of an earlier run. MAPBENCH_CPUPROFILE=p and
// MAPBENCH_MEMPROFILE=p write each step's CPU profile and its heap profile
// at the heap's high point to p.STEP; MAPBENCH_VERBOSE=1 prints each
// step's resident memory by mapping.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/orchdev/orch/internal/repomap"
	"github.com/orchdev/orch/internal/repomap/synthetic"
)

// result is what one step's process reports.
type result struct {
	Step     string  `json:"step"`
	CPU      float64 `json:"cpu_s"`       // this process and its git children
	GitCPU   float64 `json:"git_cpu_s"`   // the git children alone
	MaxRSS   float64 `json:"max_rss_mib"` // this process
	GitRSS   float64 `json:"git_rss_mib"` // the largest git child
	Wall     float64 `json:"wall_s"`
	BuildCPU float64 `json:"build_cpu_s"`
	MapCPU   float64 `json:"map_cpu_s"`
	Parsed   int     `json:"parsed"`
	Cached   int     `json:"cached"`
	Files    int     `json:"files"`
	Tokens   int     `json:"map_tokens"`
	IndexMiB float64 `json:"index_mib"`
	Found    bool    `json:"found"`  // the map shows the brief's function
	Status   string  `json:"status"` // RSS lines of /proc/self/status at the end
	HeapMiB  float64 `json:"heap_sys_mib"`
	// The sample of /proc/self/status with the largest VmRSS (every
	// 20 ms): what the peak is made of.
	PeakAnon float64 `json:"peak_anon_mib"`
	PeakFile float64 `json:"peak_file_mib"`
	PeakHeap float64 `json:"peak_heap_inuse_mib"` // the Go heap in use then
	PeakGo   float64 `json:"peak_go_mib"`         // all Go holds from the system then, less what it released
	PeakGoBy string  `json:"peak_go_by"`          // that by runtime/metrics class
}

func main() {
	files := flag.Int("files", synthetic.Files(), "files in the synthetic repository")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "orch-mapbench"), "where the repository is written (reused when there)")
	runs := flag.Int("runs", 3, "warm runs")
	warmOnly := flag.Bool("warm-only", false, "keep the cache of an earlier run: skip the first index")
	child := flag.String("child", "", "internal: run one step in this process")
	flag.Parse()
	repo := filepath.Join(*dir, fmt.Sprintf("repo-%d", *files))
	cache := filepath.Join(*dir, fmt.Sprintf("cache-%d", *files))
	if *child != "" {
		if err := step(*child, repo, cache); err != nil {
			fmt.Fprintln(os.Stderr, "mapbench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*files, repo, cache, *runs, *warmOnly); err != nil {
		fmt.Fprintln(os.Stderr, "mapbench:", err)
		os.Exit(1)
	}
}

func run(files int, repo, cache string, runs int, warmOnly bool) error {
	if _, err := os.Stat(filepath.Join(repo, ".git")); err != nil {
		start := time.Now()
		if err := os.MkdirAll(repo, 0o755); err != nil {
			return err
		}
		if err := synthetic.Write(repo, files); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "synthetic repository of %d files written in %s\n", files, time.Since(start).Round(time.Second))
	}
	// Back to the commit (an earlier update step changed a file).
	if out, err := exec.Command("git", "-C", repo, "reset", "-q", "--hard", "HEAD").CombinedOutput(); err != nil {
		return fmt.Errorf("git reset: %v: %s", err, out)
	}
	steps := []string{"first"}
	if warmOnly {
		steps = nil
	} else if err := os.RemoveAll(cache); err != nil {
		return err
	}
	for i := 0; i < runs; i++ {
		steps = append(steps, "warm")
	}
	steps = append(steps, "update")
	fmt.Printf("| step (%d files) | CPU | of it git | max RSS | git's max RSS | wall | build CPU | map CPU | parsed | index file |\n", files)
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, s := range steps {
		if s == "update" {
			p := filepath.Join(repo, synthetic.Path(0))
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			// A new content each run: a blob the cache has never seen.
			data = append(data, fmt.Sprintf("\n// changed by mapbench at %d\nfunc MapbenchChanged(x int) int { return x }\n", time.Now().UnixNano())...)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				return err
			}
			if out, err := exec.Command("git", "-C", repo, "add", synthetic.Path(0)).CombinedOutput(); err != nil {
				return fmt.Errorf("git add: %v: %s", err, out)
			}
		}
		cmd := exec.Command(os.Args[0], append(os.Args[1:], "-child", s)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("step %s: %v", s, err)
		}
		var r result
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			return fmt.Errorf("step %s: %v: %s", s, err, out.String())
		}
		if !r.Found {
			return fmt.Errorf("step %s: the map does not show the brief's function", s)
		}
		if os.Getenv("MAPBENCH_VERBOSE") != "" {
			fmt.Fprintf(os.Stderr, "%s: %s heap %.0f MiB; at the peak: anon %.0f MiB, file %.0f MiB, Go heap in use %.0f MiB, Go's memory %.0f MiB (%s)\n",
				s, r.Status, r.HeapMiB, r.PeakAnon, r.PeakFile, r.PeakHeap, r.PeakGo, r.PeakGoBy)
		}
		fmt.Printf("| %s | %.2f s | %.2f s | %.0f MiB | %.0f MiB | %.1f s | %.2f s | %.2f s | %d | %.0f MiB |\n",
			s, r.CPU, r.GitCPU, r.MaxRSS, r.GitRSS, r.Wall, r.BuildCPU, r.MapCPU, r.Parsed, r.IndexMiB)
	}
	return nil
}

// step builds the index and one map in this process and prints a result.
func step(name, repo, cache string) error {
	if p := os.Getenv("MAPBENCH_CPUPROFILE"); p != "" {
		f, err := os.Create(p + "." + name)
		if err != nil {
			return err
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if p := os.Getenv("MAPBENCH_MEMPROFILE"); p != "" {
		// A heap profile whenever the heap in use reaches a new high.
		go func() {
			high := uint64(0)
			for {
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > high+(4<<20) {
					high = ms.HeapInuse
					if f, err := os.Create(p + "." + name); err == nil {
						pprof.WriteHeapProfile(f)
						f.Close()
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	peak := samplePeak()
	t0, c0 := time.Now(), cpu()
	ctx := context.Background()
	ix, err := repomap.Build(ctx, repo, repomap.Options{CacheDir: cache})
	if err != nil {
		return err
	}
	c1 := cpu()
	brief := "make ParseHeader120 return x + 2 and update its callers"
	m, err := ix.Map(ctx, repomap.Seeds{Brief: brief}, 2000)
	if err != nil {
		return err
	}
	c2 := cpu()
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	st := ix.Stats()
	r := result{
		Step: name, CPU: c2.Seconds() - c0.Seconds(), Wall: time.Since(t0).Seconds(),
		GitCPU: (tv(kids.Utime) + tv(kids.Stime)).Seconds(),
		MaxRSS: float64(self.Maxrss) / 1024, GitRSS: float64(kids.Maxrss) / 1024,
		BuildCPU: (c1 - c0).Seconds(), MapCPU: (c2 - c1).Seconds(),
		Parsed: st.Parsed, Cached: st.Cached, Files: st.Files,
		Tokens: repomap.EstimateTokens(m), Found: strings.Contains(m, "ParseHeader120"),
	}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "Rss") || strings.HasPrefix(l, "VmHWM") {
				r.Status += strings.Join(strings.Fields(l), " ") + "; "
			}
		}
	}
	if os.Getenv("MAPBENCH_VERBOSE") != "" {
		if b, err := os.ReadFile("/proc/self/smaps"); err == nil {
			cur := ""
			for _, l := range strings.Split(string(b), "\n") {
				f := strings.Fields(l)
				if len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
					cur = "[anonymous]"
					if len(f) >= 6 {
						cur = f[5]
					}
				}
				if len(f) >= 2 && f[0] == "Rss:" && f[1] != "0" && cur != "" {
					fmt.Fprintf(os.Stderr, "  %s %s kB\n", cur, f[1])
				}
			}
		}
	}
	pk := peak()
	r.PeakAnon, r.PeakFile, r.PeakHeap, r.PeakGo, r.PeakGoBy = pk.anon, pk.file, pk.heap, pk.gomem, pk.by
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.HeapMiB = float64(ms.HeapSys) / (1 << 20)
	if fi, err := os.Stat(filepath.Join(cache, "repomap.idx")); err == nil {
		r.IndexMiB = float64(fi.Size()) / (1 << 20)
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// sample is one reading of the process's resident memory.
type sample struct {
	rss, anon, file, heap, gomem float64
	by                           string
}

// samplePeak reads /proc/self/status every 20 ms until the returned
// function is called, which gives the reading with the largest VmRSS
// (RssAnon: the heap and stacks; RssFile: mapped files, the binary and
// the index file) and the Go heap in use at that moment.
func samplePeak() func() sample {
	var mu sync.Mutex
	var best sample
	stop := make(chan struct{})
	read := func() {
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return
		}
		var s sample
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if len(f) < 2 {
				continue
			}
			kb, _ := strconv.ParseFloat(f[1], 64)
			switch f[0] {
			case "VmRSS:":
				s.rss = kb / 1024
			case "RssAnon:":
				s.anon = kb / 1024
			case "RssFile:":
				s.file = kb / 1024
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if s.rss > best.rss {
			// The heap's figure only when it matters (it stops the world).
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			s.heap = float64(ms.HeapInuse) / (1 << 20)
			s.gomem = float64(ms.Sys-ms.HeapReleased) / (1 << 20)
			s.by = goMemory()
			best = s
		}
	}
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				read()
			}
		}
	}()
	return func() sample {
		close(stop)
		read()
		mu.Lock()
		defer mu.Unlock()
		return best
	}
}

// goMemory names the larger classes of the Go runtime's memory.
func goMemory() string {
	names := []string{
		"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes",
		"/memory/classes/heap/free:bytes", "/memory/classes/heap/stacks:bytes",
		"/memory/classes/metadata/other:bytes", "/memory/classes/other:bytes",
	}
	ss := make([]metrics.Sample, len(names))
	for i, n := range names {
		ss[i].Name = n
	}
	metrics.Read(ss)
	var parts []string
	for _, s := range ss {
		if s.Value.Kind() == metrics.KindUint64 {
			parts = append(parts, fmt.Sprintf("%s %.0f", strings.TrimSuffix(strings.TrimPrefix(s.Name, "/memory/classes/"), ":bytes"), float64(s.Value.Uint64())/(1<<20)))
		}
	}
	return strings.Join(parts, ", ")
}

func tv(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }

func cpu() time.Duration { return synthetic.CPUTime() }
