// Package synthetic writes the synthetic repository of orch's scale
// benchmarks (the repository map's, the agents' prompt sizes): n files in
// a 100-file folder tree, 40 % Go, 15 % Python, 15 % TypeScript, 10 %
// Java, 5 % Rust and 15 % documentation and data, each source file
// defining a dozen functions (FuncName) and calling functions of other
// files, committed once on branch main through git fast-import and
// checked out.
package synthetic

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Files is the size of the benchmarks' repository: 100,000 files, or
// ORCH_BENCH_FILES.
func Files() int {
	if n, err := strconv.Atoi(os.Getenv("ORCH_BENCH_FILES")); err == nil && n > 0 {
		return n
	}
	return 100_000
}

// FuncName is the name of function k (0 to 11) of file i.
func FuncName(i, k int) string {
	verbs := []string{"Parse", "Load", "Render", "Compute", "Resolve", "Apply", "Encode", "Decode", "Validate", "Merge"}
	nouns := []string{"Header", "Config", "Record", "Token", "Index", "Route", "Schema", "Buffer", "Policy", "Stream"}
	return fmt.Sprintf("%s%s%d", verbs[(i+k)%10], nouns[(i*7+k)%10], i*12+k)
}

// Path is the path of file i.
func Path(i int) string {
	p, _ := pathOf(i)
	return p
}

func pathOf(i int) (string, string) {
	exts := []string{".go", ".go", ".go", ".go", ".go", ".go", ".go", ".go", ".py", ".py", ".py", ".ts", ".ts", ".ts", ".java", ".java", ".rs", ".md", ".json", ".yaml"}
	ext := exts[i%len(exts)]
	return fmt.Sprintf("pkg%03d/sub%02d/file%06d%s", i/1000, (i/100)%10, i, ext), ext
}

// lang is how a source file of one language is written: its head, then
// twelve functions, each opened, calling others (statements indented and
// ended so), closed; then its tail.
type lang struct {
	head            func(i int) string
	open            func(name string, k int) string
	indent, stmtEnd string
	close, tail     string
}

// langs are the languages of the synthetic repository's source files, by
// extension.
var langs = map[string]lang{
	".go": {
		head: func(i int) string {
			return fmt.Sprintf("package sub%02d\n\n// File %d of the synthetic repository.\n\n", (i/100)%10, i) +
				fmt.Sprintf("type Widget%d struct {\n\tName string\n\tCount int\n}\n\n", i)
		},
		open: func(name string, k int) string {
			return fmt.Sprintf("// %s does step %d.\nfunc %s(x int) int {\n", name, k, name)
		},
		indent: "\t", close: "\treturn x + 1\n}\n\n",
	},
	".py": {
		head: func(i int) string {
			return fmt.Sprintf("\"\"\"File %d.\"\"\"\n\nclass Widget%d:\n    count = 0\n\n", i, i)
		},
		open:   func(name string, _ int) string { return fmt.Sprintf("def %s(x):\n", name) },
		indent: "    ", close: "    return x + 1\n\n",
	},
	".ts": {
		head: func(i int) string {
			return fmt.Sprintf("// File %d.\nexport interface Widget%d { name: string; count: number }\n\n", i, i)
		},
		open:   func(name string, _ int) string { return fmt.Sprintf("export function %s(x: number): number {\n", name) },
		indent: "  ", stmtEnd: ";", close: "  return x + 1;\n}\n\n",
	},
	".java": {
		head: func(i int) string {
			return fmt.Sprintf("package pkg;\n\npublic class Widget%d {\n    private int count;\n\n", i)
		},
		open:   func(name string, _ int) string { return fmt.Sprintf("    public static int %s(int x) {\n", name) },
		indent: "        ", stmtEnd: ";", close: "        return x + 1;\n    }\n\n", tail: "}\n",
	},
	".rs": {
		head: func(i int) string {
			return fmt.Sprintf("// File %d.\npub struct Widget%d { pub count: u32 }\n\n", i, i)
		},
		open: func(name string, _ int) string {
			return fmt.Sprintf("pub fn %s(x: i64) -> i64 {\n", strings.ToLower(name))
		},
		indent: "    ", stmtEnd: ";", close: "    x + 1\n}\n\n",
	},
}

// Write makes dir a git repository holding the synthetic repository of n
// files.
func Write(dir string, n int) error {
	if out, err := exec.Command("git", "-C", dir, "init", "-q", "-b", "main").CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	cmd := exec.Command("git", "-C", dir, "fast-import", "--quiet")
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.test", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.test")
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
	fnName := FuncName
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
		if l, ok := langs[ext]; ok {
			b.WriteString(l.head(i))
			for k := 0; k < 12; k++ {
				b.WriteString(l.open(fnName(i, k), k))
				calls(l.indent, l.stmtEnd)
				b.WriteString(l.close)
			}
			b.WriteString(l.tail)
		} else {
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

// CPUTime is the CPU time (user and system) of this process and its
// finished children (git): on a shared machine wall time says little.
func CPUTime() time.Duration {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}
