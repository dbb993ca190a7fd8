// Command orchbench builds orch and the fixtures of the README's
// performance section and measures whole-process wall time (median of
// repeated runs) and peak resident memory:
//
//   - `orch status --json` on one task, next to `git status` in the same
//     repository;
//   - `orch next` on a task in codegen whose diff.patch is ~20 MB and
//     touches 2,000 files;
//   - `orch test` on a 5,000-file repository (suite `true`), next to the
//     same git work by hand;
//   - `orch list --json` over 10,000 tasks.
//
// With -paired it measures instead the CPU time (user + system, of the
// process and the git processes it waits for, from rusage) of
// `orch status --json` against `git status --porcelain` in the same
// repository, run in alternation (paired runs), after one warm-up: on a
// small task, and on a task in codegen whose diff.patch is ~20 MB over
// 2,000 files; and `orch version` (the start-up alone) against the same
// git status of the small task's repository.
//
// Run it with bench/run.sh (bench/run.sh -paired).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

func main() {
	runs := flag.Int("runs", 21, "runs per measurement (the median is reported)")
	keep := flag.Bool("keep", false, "keep the fixture folder")
	measureSpec := flag.String("measure", "", "internal: measure the JSON spec in a fresh process")
	paired := flag.Bool("paired", false, "measure orch status against git status in paired runs (CPU time)")
	flag.Parse()
	if *paired {
		if err := runPaired(*runs, *keep); err != nil {
			fmt.Fprintln(os.Stderr, "orchbench:", err)
			os.Exit(1)
		}
		return
	}
	if *measureSpec != "" {
		if err := measureMain(*measureSpec); err != nil {
			fmt.Fprintln(os.Stderr, "orchbench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*runs, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "orchbench:", err)
		os.Exit(1)
	}
}

type result struct {
	name   string
	median time.Duration
	maxRSS int64 // KiB
}

// fixtureRoot makes the folder the fixtures are built in and builds orch
// into it; cleanup removes it unless keep (then its path is printed).
func fixtureRoot(keep bool) (root, bin string, cleanup func(), err error) {
	root, err = os.MkdirTemp("", "orchbench-")
	if err != nil {
		return "", "", nil, err
	}
	cleanup = func() { os.RemoveAll(root) }
	if keep {
		fmt.Println("fixtures in", root)
		cleanup = func() {}
	}
	bin = filepath.Join(root, "orch")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/orch").CombinedOutput(); err != nil {
		cleanup()
		return "", "", nil, fmt.Errorf("go build: %v\n%s", err, out)
	}
	return root, bin, cleanup, nil
}

func run(runs int, keep bool) error {
	root, bin, cleanup, err := fixtureRoot(keep)
	if err != nil {
		return err
	}
	defer cleanup()
	var results []result

	// 1. status on one task vs git status.
	repo := filepath.Join(root, "repo")
	if err := newRepo(repo, bin); err != nil {
		return err
	}
	if err := must(repo, bin, "new", "--id", "t", "benchmark task"); err != nil {
		return err
	}
	writePlan(filepath.Join(repo, ".orch", "tasks", "t"), []string{"a.go"})
	r, err := measure("orch status --json (1 task)", repo, runs, nil, bin, "status", "--json")
	if err != nil {
		return err
	}
	results = append(results, r)
	r, err = measure("git status (same repository)", repo, runs, nil, "git", "status")
	if err != nil {
		return err
	}
	results = append(results, r)

	// 2. next in codegen with a 20 MB patch over 2,000 files. Each run
	// moves a different copy of the task (artifacts hard-linked).
	big := filepath.Join(root, "big")
	if err := newRepo(big, bin); err != nil {
		return err
	}
	master := filepath.Join(root, "master")
	if err := bigCodegen(master, big, 2000, 20<<20); err != nil {
		return err
	}
	var ids []string
	for i := range runs {
		id := fmt.Sprintf("big%02d", i)
		if err := must(big, bin, "new", "--id", id, "big change"); err != nil {
			return err
		}
		dir := filepath.Join(big, ".orch", "tasks", id)
		if err := linkTree(master, dir); err != nil {
			return err
		}
		if err := must(big, bin, "next", "--task", id, "--override", "benchmark setup", "--to", "codegen"); err != nil {
			return err
		}
		ids = append(ids, id)
	}
	st, _ := os.Stat(filepath.Join(master, "code", "diff.patch"))
	r, err = measure(fmt.Sprintf("orch next (codegen, %.1f MB patch, 2,000 files)", float64(st.Size())/(1<<20)), big, runs, func(i int) []string {
		return []string{"next", "--task", ids[i], "--from", "codegen"}
	}, bin)
	if err != nil {
		return err
	}
	results = append(results, r)

	// 3. the test phase's overhead on a 5,000-file repository, against the
	// same git work done by a shell script. The suite is `true`, so what is
	// measured is worktree, apply, report and clean-up.
	wide := filepath.Join(root, "wide")
	if err := wideRepo(wide, bin, 5000); err != nil {
		return err
	}
	var testArgs [][]string
	for i := range runs {
		id := fmt.Sprintf("w%02d", i)
		if err := must(wide, bin, "new", "--id", id, "touch one file"); err != nil {
			return err
		}
		dir := filepath.Join(wide, ".orch", "tasks", id)
		if err := os.MkdirAll(filepath.Join(dir, "code", "files", "pkg0"), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "code", "diff.patch"), []byte(widePatch), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "code", "files", "pkg0", "f0.txt"), []byte("changed\n"), 0o644); err != nil {
			return err
		}
		writePlan(dir, []string{"pkg0/f0.txt"})
		if err := must(wide, bin, "next", "--task", id, "--override", "benchmark setup", "--to", "test"); err != nil {
			return err
		}
		testArgs = append(testArgs, []string{"test", "--task", id, "--sandbox", "none"})
	}
	r, err = measure("orch test (5,000 files, suite `true`, no sandbox)", wide, runs, func(i int) []string { return testArgs[i] }, bin)
	if err != nil {
		return err
	}
	results = append(results, r)
	script := filepath.Join(root, "byhand.sh")
	if err := os.WriteFile(script, []byte(byHand), 0o755); err != nil {
		return err
	}
	patchFile := filepath.Join(root, "wide.patch")
	if err := os.WriteFile(patchFile, []byte(widePatch), 0o644); err != nil {
		return err
	}
	r, err = measure("git worktree add + git apply + true + remove, by hand", wide, runs, nil, "/bin/sh", script, patchFile)
	if err != nil {
		return err
	}
	results = append(results, r)

	// 4. list over 10,000 tasks.
	many := filepath.Join(root, "many")
	if err := newRepo(many, bin); err != nil {
		return err
	}
	if err := must(many, bin, "new", "--id", "seed", "seed"); err != nil {
		return err
	}
	if err := cloneTasks(filepath.Join(many, ".orch", "tasks"), "seed", 10000); err != nil {
		return err
	}
	r, err = measure("orch list --json (10,000 tasks)", many, runs, nil, bin, "list", "--json")
	if err != nil {
		return err
	}
	results = append(results, r)

	fmt.Printf("\n| measurement | median | peak RSS |\n|---|---|---|\n")
	for _, r := range results {
		fmt.Printf("| %s | %.1f ms | %.1f MB |\n", r.name, float64(r.median.Microseconds())/1000, float64(r.maxRSS)/1024)
	}
	return nil
}

// widePatch changes one file of the wide repository.
const widePatch = `diff --git a/pkg0/f0.txt b/pkg0/f0.txt
--- a/pkg0/f0.txt
+++ b/pkg0/f0.txt
@@ -1 +1 @@
-file 0
+changed
`

// byHand is what `orch test` does, written as a shell script.
const byHand = `set -e
wt=$(mktemp -d)/wt
git worktree add -q --detach "$wt" HEAD
git -C "$wt" apply "$1"
(cd "$wt" && true)
git worktree remove --force "$wt"
`

// wideRepo makes a repository of n small files with orch initialised and
// one suite, `true`, configured.
func wideRepo(dir, bin string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("git init: %v\n%s", err, out)
	}
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("pkg%d", i%100), fmt.Sprintf("f%d.txt", i))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
			return err
		}
	}
	cmd := exec.Command("sh", "-c", "git add -A && git -c user.name=b -c user.email=b@b commit -qm init")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git commit: %v\n%s", err, out)
	}
	if err := must(dir, bin, "init"); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ".orch", "config.toml"), []byte("[test]\nsandbox = \"none\"\n[[test.suites]]\nname = \"noop\"\ncommand = [\"true\"]\n"), 0o644)
}

func newRepo(dir, bin string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("git init: %v\n%s", err, out)
	}
	for i := range 200 {
		p := filepath.Join(dir, fmt.Sprintf("pkg%d", i%20), fmt.Sprintf("f%d.go", i))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(fmt.Sprintf("package pkg%d\n\nconst X%d = %d\n", i%20, i, i)), 0o644); err != nil {
			return err
		}
	}
	cmd := exec.Command("sh", "-c", "git add -A && git -c user.name=b -c user.email=b@b commit -qm init")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git commit: %v\n%s", err, out)
	}
	return must(dir, bin, "init")
}

func must(dir, bin string, args ...string) error {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("orch %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func writePlan(taskDir string, paths []string) {
	var b strings.Builder
	b.WriteString(`{"id":"t","title":"bench","brief":"bench","file_plan":[`)
	for i, p := range paths {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"path":%q,"intent":"update"}`, p)
	}
	b.WriteString("]}")
	_ = os.WriteFile(filepath.Join(taskDir, "planning", "planning.ai.json"), []byte(b.String()), 0o644)
}

// bigCodegen writes code/files, code/diff.patch (about size bytes over n
// files), code/codegen.json and the plan naming those files into dir, and
// commits the files the patch applies to in repo: codegen → review applies
// the patch to that base commit and compares the result with code/files.
func bigCodegen(dir, repo string, n int, size int) error {
	per := size / n
	// Each line appears twice in the patch (removed and added).
	lines := per / (2 * len("-// line 000000 of pkg00/file0000.go padding.....\n"))
	var paths []string
	var patch bytes.Buffer
	for i := range n {
		p := fmt.Sprintf("pkg%d/file%04d.go", i%50, i)
		paths = append(paths, p)
		var content bytes.Buffer
		fmt.Fprintf(&patch, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -1,%d +1,%d @@\n", p, p, p, p, lines, lines)
		for l := range lines {
			line := fmt.Sprintf("// line %06d of %s padding.....\n", l, p)
			fmt.Fprintf(&patch, "-%s+%s", line, line)
			content.WriteString(line)
		}
		full := filepath.Join(dir, "code", "files", filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, content.Bytes(), 0o644); err != nil {
			return err
		}
		inRepo := filepath.Join(repo, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(inRepo), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(inRepo, content.Bytes(), 0o644); err != nil {
			return err
		}
	}
	commit := exec.Command("sh", "-c", "git add -A && git -c user.name=b -c user.email=b@b commit -qm files && git rev-parse HEAD")
	commit.Dir = repo
	out, err := commit.Output()
	if err != nil {
		return fmt.Errorf("git commit: %v", err)
	}
	base := strings.TrimSpace(string(out))
	if err := os.WriteFile(filepath.Join(dir, "code", "diff.patch"), patch.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "code", "codegen.json"), []byte(`{"status":"completed","base":"`+base+`"}`), 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "planning"), 0o755); err != nil {
		return err
	}
	writePlan(dir, paths)
	return nil
}

// linkTree hard-links every file of src into dst (same relative paths).
func linkTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		_ = os.Remove(target)
		return os.Link(p, target)
	})
}

// cloneTasks copies task seed n times with ids m00001…, rewriting the id
// in state.json.
func cloneTasks(tasks, seed string, n int) error {
	state, err := os.ReadFile(filepath.Join(tasks, seed, "state.json"))
	if err != nil {
		return err
	}
	transcript, err := os.ReadFile(filepath.Join(tasks, seed, "transcript.jsonl"))
	if err != nil {
		return err
	}
	for i := range n {
		id := fmt.Sprintf("m%05d", i)
		dir := filepath.Join(tasks, id)
		if err := os.MkdirAll(filepath.Join(dir, "planning"), 0o755); err != nil {
			return err
		}
		s := bytes.Replace(state, []byte(`"task":"`+seed+`"`), []byte(`"task":"`+id+`"`), 1)
		if err := os.WriteFile(filepath.Join(dir, "state.json"), s, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "transcript.jsonl"), transcript, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// spec is one measurement handed to a fresh orchbench process.
type spec struct {
	Name string     `json:"name"`
	Dir  string     `json:"dir"`
	Argv [][]string `json:"argv"` // one argv per run
}

// measure runs each argv once as a whole process and returns the median
// wall time and the largest peak RSS. The runs are started from a fresh
// orchbench process: on Linux a child started with CLONE_VM (as Go starts
// children) inherits its parent's RSS high-water mark into ru_maxrss, so
// measuring from this process, which holds the fixtures in memory, would
// report our own size instead of orch's.
func measure(name, dir string, runs int, argsFor func(int) []string, bin string, args ...string) (result, error) {
	sp := spec{Name: name, Dir: dir}
	for i := range runs {
		a := args
		if argsFor != nil {
			a = argsFor(i)
		}
		sp.Argv = append(sp.Argv, append([]string{bin}, a...))
	}
	js, err := json.Marshal(sp)
	if err != nil {
		return result{}, err
	}
	self, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	cmd := exec.Command(self, "-measure", string(js))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", name, err)
	}
	var r struct {
		MedianNS int64 `json:"median_ns"`
		MinNS    int64 `json:"min_ns"`
		MaxRSS   int64 `json:"max_rss_kib"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return result{}, fmt.Errorf("%s: %w", name, err)
	}
	res := result{name: name, median: time.Duration(r.MedianNS), maxRSS: r.MaxRSS}
	fmt.Printf("%-55s median %8.2f ms  min %8.2f ms  peak RSS %6.1f MB\n", name, float64(r.MedianNS)/1e6, float64(r.MinNS)/1e6, float64(r.MaxRSS)/1024)
	return res, nil
}

// measureMain runs a spec and prints {median_ns, min_ns, max_rss_kib}.
func measureMain(js string) error {
	var sp spec
	if err := json.Unmarshal([]byte(js), &sp); err != nil {
		return err
	}
	var times []time.Duration
	var maxRSS int64
	for _, argv := range sp.Argv {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = sp.Dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %v\n%s", sp.Name, err, out.String())
		}
		times = append(times, time.Since(start))
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > maxRSS {
			maxRSS = ru.Maxrss
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	return json.NewEncoder(os.Stdout).Encode(map[string]int64{
		"median_ns": int64(times[len(times)/2]), "min_ns": int64(times[0]), "max_rss_kib": maxRSS,
	})
}

// runPaired measures `orch status --json` against `git status --porcelain`
// in alternation on a small task and on the 20 MB codegen task.
func runPaired(runs int, keep bool) error {
	root, bin, cleanup, err := fixtureRoot(keep)
	if err != nil {
		return err
	}
	defer cleanup()
	repo := filepath.Join(root, "repo")
	if err := newRepo(repo, bin); err != nil {
		return err
	}
	if err := must(repo, bin, "new", "--id", "t", "benchmark task"); err != nil {
		return err
	}
	writePlan(filepath.Join(repo, ".orch", "tasks", "t"), []string{"a.go"})
	big := filepath.Join(root, "big")
	if err := newRepo(big, bin); err != nil {
		return err
	}
	if err := must(big, bin, "new", "--id", "big", "big change"); err != nil {
		return err
	}
	if err := bigCodegen(filepath.Join(big, ".orch", "tasks", "big"), big, 2000, 20<<20); err != nil {
		return err
	}
	if err := must(big, bin, "next", "--task", "big", "--override", "benchmark setup", "--to", "codegen"); err != nil {
		return err
	}
	fmt.Println("load average before:", loadAvg())
	for _, c := range []struct {
		name, dir string
		orch      []string
	}{
		{"small task", repo, []string{bin, "status", "--json"}},
		{"codegen task, 20 MB patch over 2,000 files", big, []string{bin, "status", "--json"}},
		// The start-up alone: the runtime, every linked package's
		// initialiser and the command tree, no task read.
		{"start-up only (orch version)", repo, []string{bin, "version"}},
	} {
		orch := c.orch
		git := []string{"git", "status", "--porcelain"}
		// One warm-up of each.
		for _, argv := range [][]string{orch, git} {
			if _, err := cpuOf(c.dir, argv); err != nil {
				return err
			}
		}
		var o, g, ratio []float64
		for range runs {
			a, err := cpuOf(c.dir, orch)
			if err != nil {
				return err
			}
			b, err := cpuOf(c.dir, git)
			if err != nil {
				return err
			}
			o, g = append(o, a.Seconds()*1000), append(g, b.Seconds()*1000)
			ratio = append(ratio, a.Seconds()/max(b.Seconds(), 1e-6))
		}
		fmt.Printf("%s: %s CPU median %.2f ms (min %.2f), git status --porcelain %.2f ms (min %.2f); median of paired ratios %.2f×\n",
			c.name, strings.Join(orch[1:], " "), median(o), minOf(o), median(g), minOf(g), median(ratio))
	}
	fmt.Println("load average after:", loadAvg())
	return nil
}

// cpuOf runs argv in dir in a fresh measuring process and returns its
// CPU time (user + system, with the children it waited for).
func cpuOf(dir string, argv []string) (time.Duration, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, out.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, fmt.Errorf("no rusage")
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func minOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

// loadAvg is the first three fields of /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
