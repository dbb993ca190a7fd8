// Command ecobench measures `orch test` against running the same test
// runner by hand, per ecosystem, on warm caches: for each fixture project
// (Go, Node's test runner, pytest with a src layout, cargo, and Maven when
// Debian's offline plugins are installed) it
//
//   - by hand: edits the source file in a clone and runs the runner there,
//     after one warm-up run (the user's own caches are warm);
//   - orch: runs `orch test` (detected suites, bwrap sandbox, orch's build
//     caches) on a task whose patch makes the same edit, after one
//     warm-up run, in the repository's warm test worktree (reset to
//     exactly the base commit each run: the default);
//   - orch cold: the same with `build_cache = false`, a fresh worktree and
//     no kept caches each run (what every run cost before the warm
//     worktree).
//
// It prints the median wall time of each and the counts orch reported.
// Run it with bench/eco.sh; -runs sets the runs per measurement.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

type fixture struct {
	name    string
	tools   []string          // programs or absolute paths that must exist
	files   map[string]string // the project
	edit    string            // the file the change edits (a comment is appended)
	comment string            // the comment syntax of that file
	byHand  []string          // the runner by hand
	config  string            // .orch/config.toml, when detection is not enough
}

var fixtures = []fixture{
	{
		name:  "Go (go test -json ./... + go vet)",
		tools: []string{"go"},
		files: map[string]string{
			"go.mod":     "module example.com/fx\n\ngo 1.22\n",
			"fx.go":      "package fx\n\nfunc Add(a, b int) int { return a + b }\n",
			"fx_test.go": "package fx\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n\nfunc TestZero(t *testing.T) {\n\tif Add(0, 0) != 0 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n\nfunc TestSkip(t *testing.T) { t.Skip(\"later\") }\n",
		},
		edit: "fx.go", comment: "//",
		byHand: []string{"sh", "-c", "go test -json ./... >/dev/null && go vet ./..."},
	},
	{
		name:  "Node (npm test = node --test)",
		tools: []string{"node", "npm"},
		files: map[string]string{
			"package.json":      `{"name":"fx","version":"1.0.0","type":"module","scripts":{"test":"node --test"}}`,
			"fx.js":             "export const add = (a, b) => a + b;\n",
			"test/fx.test.js":   "import { test } from 'node:test';\nimport assert from 'node:assert';\nimport { add } from '../fx.js';\ntest('adds', () => assert.strictEqual(add(1, 2), 3));\ntest('zero', () => assert.strictEqual(add(0, 0), 0));\ntest.skip('later', () => {});\n",
			"package-lock.json": `{"name":"fx","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{"":{"name":"fx","version":"1.0.0"}}}`,
		},
		edit: "fx.js", comment: "//",
		byHand: []string{"npm", "test"},
	},
	{
		name:  "Python (pytest, src layout)",
		tools: []string{"pytest"},
		files: map[string]string{
			"pyproject.toml":     "[project]\nname = \"fx\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
			"src/fx/__init__.py": "def add(a, b):\n    return a + b\n",
			"tests/test_fx.py":   "import pytest\nfrom fx import add\n\ndef test_adds():\n    assert add(1, 2) == 3\n\ndef test_zero():\n    assert add(0, 0) == 0\n\n@pytest.mark.skip(reason='later')\ndef test_later():\n    pass\n",
		},
		edit: "src/fx/__init__.py", comment: "#",
		byHand: []string{"sh", "-c", "PYTHONPATH=src pytest -q"},
	},
	{
		name:  "Rust (cargo test --no-fail-fast)",
		tools: []string{"cargo"},
		files: map[string]string{
			"Cargo.toml":  "[package]\nname = \"fx\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
			"src/lib.rs":  "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(1, 2), 3); }\n    #[test]\n    #[ignore]\n    fn later() {}\n}\n",
			"tests/it.rs": "#[test]\nfn zero() { assert_eq!(fx::add(0, 0), 0); }\n",
		},
		edit: "src/lib.rs", comment: "//",
		byHand: []string{"cargo", "test", "--no-fail-fast", "-q"},
	},
	{
		name:  "Maven (mvn -o test, surefire reports)",
		tools: []string{"mvn", "/usr/share/maven-repo/org/apache/maven/plugins/maven-surefire-plugin/2.22.3", "/usr/share/maven-repo/junit/junit/4.x"},
		files: map[string]string{
			"pom.xml": `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId><artifactId>fx</artifactId><version>1.0</version>
  <properties><maven.compiler.source>17</maven.compiler.source><maven.compiler.target>17</maven.compiler.target><project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>
  <dependencies><dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.x</version><scope>test</scope></dependency></dependencies>
  <build><plugins>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>3.3.0</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.10.1</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId><version>2.22.3</version></plugin>
  </plugins></build>
</project>
`,
			"src/main/java/com/example/Calc.java":     "package com.example;\npublic class Calc { public static int add(int a, int b) { return a + b; } }\n",
			"src/test/java/com/example/CalcTest.java": "package com.example;\nimport static org.junit.Assert.assertEquals;\nimport org.junit.Ignore;\nimport org.junit.Test;\npublic class CalcTest {\n  @Test public void adds() { assertEquals(3, Calc.add(1, 2)); }\n  @Test public void zero() { assertEquals(0, Calc.add(0, 0)); }\n  @Ignore(\"later\") @Test public void later() { }\n}\n",
		},
		edit: "src/main/java/com/example/Calc.java", comment: "//",
		byHand: []string{"sh", "-c", "MAVEN_OPTS=-Dmaven.repo.local=/usr/share/maven-repo mvn -B -o -q -fae test"},
		// No Maven Central here: Debian's packaged plugins stand in for
		// the user's ~/.m2/repository.
		config: "[[test.suites]]\nname = \"maven-test\"\ncommand = [\"mvn\", \"-B\", \"-o\", \"-q\", \"-fae\", \"test\"]\nformat = \"junit\"\nreport = \"target/surefire-reports/\"\nenv = { MAVEN_OPTS = \"-Dmaven.repo.local=/usr/share/maven-repo\" }\n",
	},
}

func main() {
	runs := flag.Int("runs", 5, "measured runs per side (after one warm-up); the median is reported")
	only := flag.String("only", "", "run only the fixtures whose name contains this")
	flag.BoolVar(&measureCold, "cold", true, "also measure orch test with build_cache = false (slow for Go: a fresh build cache each run)")
	flag.Parse()
	if err := run(*runs, *only); err != nil {
		fmt.Fprintln(os.Stderr, "ecobench:", err)
		os.Exit(1)
	}
}

// measureCold says whether to measure orch test with build_cache = false.
var measureCold = true

type row struct {
	name                   string
	byHand, orch, orchCold time.Duration
	// CPU time (user and system) of the runner by hand and the processes
	// it waited for. orch's is not shown: its suites run in a sandbox whose
	// processes the kernel does not account to orch.
	byHandCPU     time.Duration
	counts, notes string
}

func run(runs int, only string) error {
	root, err := os.MkdirTemp("", "ecobench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	bin := filepath.Join(root, "orch")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/orch").CombinedOutput(); err != nil {
		return fmt.Errorf("build orch: %v\n%s", err, out)
	}
	var rows []row
	for i, f := range fixtures {
		if only != "" && !strings.Contains(f.name, only) {
			continue
		}
		if missing := missingTool(f.tools); missing != "" {
			fmt.Fprintf(os.Stderr, "skip %s: %s is missing\n", f.name, missing)
			continue
		}
		r, err := measureFixture(filepath.Join(root, fmt.Sprintf("f%d", i)), bin, f, runs)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		rows = append(rows, r)
		fmt.Fprintf(os.Stderr, "%s: by hand %s (CPU %s), orch test %s, cold %s (%s)\n", r.name,
			r.byHand.Round(time.Millisecond), r.byHandCPU.Round(time.Millisecond), r.orch.Round(time.Millisecond),
			r.orchCold.Round(time.Millisecond), r.counts)
	}
	fmt.Printf("\n| ecosystem | runner by hand | `orch test` (warm worktree) | `orch test`, `build_cache = false` | orch's counts |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Printf("| %s | %.2f s | %.2f s | %.2f s | %s |\n", r.name,
			r.byHand.Seconds(), r.orch.Seconds(), r.orchCold.Seconds(), r.counts)
	}
	return nil
}

func missingTool(tools []string) string {
	for _, t := range tools {
		var err error
		if filepath.IsAbs(t) {
			_, err = os.Stat(t)
		} else {
			_, err = exec.LookPath(t)
		}
		if err != nil {
			return t
		}
	}
	return ""
}

// shCPU runs argv in dir and returns the CPU time it and the processes
// it waited for used.
func shCPU(dir string, argv ...string) (time.Duration, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

func sh(dir string, argv ...string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return nil
}

func measureFixture(dir, bin string, f fixture, runs int) (row, error) {
	r := row{name: f.name}
	for name, content := range f.files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return r, err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return r, err
		}
	}
	if err := sh(dir, "sh", "-c", "git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -qm init"); err != nil {
		return r, err
	}
	if err := sh(dir, bin, "init"); err != nil {
		return r, err
	}
	if f.config != "" {
		if err := os.WriteFile(filepath.Join(dir, ".orch", "config.toml"), []byte(f.config), 0o644); err != nil {
			return r, err
		}
	}
	// The change of run i: a comment appended to the source file, new in
	// every run (so no runner can reuse the results of an earlier one).
	src := filepath.Join(dir, f.edit)
	orig, err := os.ReadFile(src)
	if err != nil {
		return r, err
	}
	changed := func(i int) string { return fmt.Sprintf("%s%s changed %d\n", orig, f.comment, i) }
	patchFor := func(i int) ([]byte, error) {
		if err := os.WriteFile(src, []byte(changed(i)), 0o644); err != nil {
			return nil, err
		}
		defer os.WriteFile(src, orig, 0o644)
		return exec.Command("git", "-C", dir, "diff").Output()
	}

	// By hand, in the user's clone: warm up, then edit and run.
	var hand, handCPU []time.Duration
	for i := 0; i <= runs; i++ {
		if err := os.WriteFile(src, []byte(changed(i)), 0o644); err != nil {
			return r, err
		}
		start := time.Now()
		cpu, err := shCPU(dir, f.byHand...)
		if err != nil {
			return r, err
		}
		if i > 0 {
			hand = append(hand, time.Since(start))
			handCPU = append(handCPU, cpu)
		}
	}
	if err := os.WriteFile(src, orig, 0o644); err != nil {
		return r, err
	}
	// Build products by hand must not reach orch's worktrees (they are
	// fresh checkouts anyway); remove them so the clone is as committed.
	_ = sh(dir, "git", "clean", "-fdxq", "-e", ".orch")

	measure := func(prefix string, cold bool) ([]time.Duration, error) {
		config := f.config
		if cold {
			config = "[test]\nbuild_cache = false\n" + config
		}
		if err := os.WriteFile(filepath.Join(dir, ".orch", "config.toml"), []byte(config), 0o644); err != nil {
			return nil, err
		}
		return measureOrch(dir, bin, f, runs, prefix, changed, patchFor, &r.counts)
	}
	if measureCold {
		if r.orchCold, err = medianOf(measure("c", true)); err != nil {
			return r, err
		}
	}
	if r.orch, err = medianOf(measure("w", false)); err != nil {
		return r, err
	}

	r.byHand, r.byHandCPU = median(hand), median(handCPU)
	return r, nil
}

// medianOf is the median of durations measured, or the error.
func medianOf(d []time.Duration, err error) (time.Duration, error) {
	if err != nil {
		return 0, err
	}
	return median(d), nil
}

// measureOrch times `orch test` on runs+1 tasks (the first a warm-up)
// whose patches make edit 100+i, with the task ids prefix00, prefix01...
func measureOrch(dir, bin string, f fixture, runs int, prefix string, changed func(int) string, patchFor func(int) ([]byte, error), counts *string) ([]time.Duration, error) {
	var orch []time.Duration
	for i := 0; i <= runs; i++ {
		id := fmt.Sprintf("%s%02d", prefix, i)
		if err := sh(dir, bin, "new", "--id", id, "bench"); err != nil {
			return nil, err
		}
		td := filepath.Join(dir, ".orch", "tasks", id)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(td, "code", "files", f.edit)), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(td, "code", "files", f.edit), []byte(changed(100+i)), 0o644); err != nil {
			return nil, err
		}
		patch, err := patchFor(100 + i)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(td, "code", "diff.patch"), patch, 0o644); err != nil {
			return nil, err
		}
		plan := fmt.Sprintf(`{"id":"t","title":"bench","brief":"bench","file_plan":[{"path":%q,"intent":"update"}]}`, f.edit)
		if err := os.WriteFile(filepath.Join(td, "planning", "planning.ai.json"), []byte(plan), 0o644); err != nil {
			return nil, err
		}
		if err := sh(dir, bin, "next", "--task", id, "--override", "benchmark setup", "--to", "test"); err != nil {
			return nil, err
		}
		start := time.Now()
		cmd := exec.Command(bin, "test", "--task", id, "--json")
		cmd.Dir = dir
		out, err := cmd.Output()
		elapsed := time.Since(start)
		if err != nil {
			return nil, fmt.Errorf("orch test: %v\n%s", err, out)
		}
		var rep struct {
			Status      string `json:"status"`
			OverallPass bool   `json:"overall_pass"`
			Summary     struct{ Passed, Failed, Skipped, Error int }
			Sandbox     string `json:"sandbox"`
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			return nil, fmt.Errorf("orch test --json: %v", err)
		}
		if rep.Status != "completed" || !rep.OverallPass {
			return nil, fmt.Errorf("orch test: status %s pass %v", rep.Status, rep.OverallPass)
		}
		*counts = fmt.Sprintf("%d passed, %d skipped (sandbox %s)", rep.Summary.Passed, rep.Summary.Skipped, rep.Sandbox)
		if i > 0 {
			orch = append(orch, elapsed)
		}
	}
	return orch, nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
