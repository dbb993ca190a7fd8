package gitx

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// benchRepo builds a repository of n small files in 50 folders and a patch
// (made by DiffFiles) that edits 10 of them and adds one.
func benchRepo(b *testing.B, n int) (*Repo, string, []byte) {
	b.Helper()
	r := newRepo(b)
	for i := range n {
		p := filepath.Join(r.Dir, fmt.Sprintf("pkg%02d", i%50), fmt.Sprintf("file%04d.go", i))
		if i < 50 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		content := fmt.Sprintf("package pkg\n\n// File %d.\nfunc F%d() int { return %d }\n", i, i, i)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	base := commitAll(b, r, "5000 files")
	files := map[string][]byte{"pkg00/new.go": []byte("package pkg\n")}
	for i := range 10 {
		p := fmt.Sprintf("pkg%02d/file%04d.go", (i*37)%50, (i*37)%50+50*i)
		files[p] = []byte(fmt.Sprintf("package pkg\n\n// Changed %d.\n", i))
	}
	patch, err := r.DiffFiles(b.Context(), base, files, nil)
	if err != nil {
		b.Fatal(err)
	}
	if len(patch) == 0 {
		b.Fatal("empty patch")
	}
	return r, base, patch
}

const benchScript = `set -e
git -C "$1" worktree add --detach --quiet "$2" "$3"
git -C "$2" apply --whitespace=nowarn "$4"
git -C "$1" worktree remove --force "$2"
git -C "$1" worktree prune
`

// BenchmarkWorktreeApply compares gitx's AddWorktree+Apply+RemoveWorktree
// on a 5,000-file repository with the same git commands run from a shell
// script.
func BenchmarkWorktreeApply(b *testing.B) {
	r, base, patch := benchRepo(b, 5000)
	tmp := b.TempDir()

	b.Run("gitx", func(b *testing.B) {
		ctx := b.Context()
		i := 0
		for b.Loop() {
			dir := filepath.Join(tmp, fmt.Sprintf("gitx-%d", i))
			i++
			wt, err := r.AddWorktree(ctx, dir, base)
			if err != nil {
				b.Fatal(err)
			}
			if err := wt.Apply(ctx, patch, ApplyOptions{}); err != nil {
				b.Fatal(err)
			}
			if err := r.RemoveWorktree(ctx, dir); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("shell", func(b *testing.B) {
		script := filepath.Join(tmp, "bench.sh")
		patchFile := filepath.Join(tmp, "change.patch")
		if err := os.WriteFile(script, []byte(benchScript), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(patchFile, patch, 0o644); err != nil {
			b.Fatal(err)
		}
		i := 0
		for b.Loop() {
			dir := filepath.Join(tmp, fmt.Sprintf("shell-%d", i))
			i++
			cmd := exec.Command("sh", script, r.Dir, dir, base, patchFile)
			cmd.Env = append(os.Environ(), "LC_ALL=C")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("script: %v: %s", err, out)
			}
		}
	})

	if list := runGit(b, r.Dir, "worktree", "list"); strings.Count(list, "\n") != 0 {
		b.Errorf("worktrees left behind:\n%s", list)
	}
}

// BenchmarkCallOverhead compares one gitx call (Head) with running the same
// git command directly, to show what gitx adds per command.
func BenchmarkCallOverhead(b *testing.B) {
	r, _ := seedRepo(b, map[string]string{"a": "a\n"})
	b.Run("gitx", func(b *testing.B) {
		ctx := b.Context()
		for b.Loop() {
			if _, err := r.Head(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("exec", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("git", "-C", r.Dir, "rev-parse", "-q", "--verify", "HEAD^{commit}").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStdinFile measures what giving git its input as a complete file
// (stdinFile) costs per command, against BenchmarkCallOverhead's git start.
func BenchmarkStdinFile(b *testing.B) {
	for _, size := range []int{1 << 10, 100 << 10, 1 << 20} {
		data := bytes.Repeat([]byte("x"), size)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				f, release, err := stdinFile(data)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := f.Read(data[:1]); err != nil {
					b.Fatal(err)
				}
				release()
			}
		})
	}
}
