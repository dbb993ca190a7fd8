package work_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/repomap"
	"github.com/orchdev/orch/internal/work"
)

// TestLocalRepoReadsFilesAndMapAtItsCommit: the local view reads several
// files and builds the map at its commit, not from the work tree or a
// later commit; a path the commit has no regular file at is skipped.
func TestLocalRepoReadsFilesAndMapAtItsCommit(t *testing.T) {
	ctx := context.Background()
	root := gittest.Init(t)
	gittest.WriteFiles(t, root, map[string]string{
		"a.go":     "package a\n\nfunc AtBase() {}\n",
		"b.txt":    "0123456789",
		"docs.txt": "docs\n",
	})
	if err := os.Symlink("b.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	base := gittest.CommitAll(t, root, "base")
	gittest.WriteFiles(t, root, map[string]string{"a.go": "package a\n\nfunc Later() {}\n", "new.txt": "new\n"})
	gittest.CommitAll(t, root, "later")
	gittest.Write(t, root, "b.txt", "changed in the work tree")

	repo, err := gitx.Open(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	view := work.LocalRepo(repo, base)
	type got struct {
		Path string
		Data string
		Size int64
	}
	var read []got
	err = view.ReadFiles(ctx, []string{"b.txt", "new.txt", "link", "a.go"}, 4, func(p string, data []byte, size int64) error {
		read = append(read, got{p, string(data), size})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []got{{"b.txt", "0123", 10}, {"a.go", "pack", int64(len("package a\n\nfunc AtBase() {}\n"))}}
	if !reflect.DeepEqual(read, want) {
		t.Errorf("ReadFiles = %+v, want %+v", read, want)
	}

	ix, err := view.Map(ctx, work.MapRequest{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defs, ok := ix.FileDefinitions("a.go")
	if !ok || len(defs) != 1 || defs[0].Name != "AtBase" {
		t.Errorf("a.go's definitions at the base = %+v, %v; want AtBase", defs, ok)
	}
	m, err := ix.Map(ctx, repomap.Seeds{Brief: "AtBase"}, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m, "AtBase") || strings.Contains(m, "Later") || strings.Contains(m, "new.txt") {
		t.Errorf("the map is not of the base commit:\n%s", m)
	}
}
