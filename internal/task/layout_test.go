package task

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// listTree lists every path under dir (relative), sorted.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var got []string
	err := filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		got = append(got, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	return got
}

// TestLinkedOrchRefused: a .orch that is a symbolic link, or that holds one
// where orch writes, is refused by orch init and by every command (they all
// find the project through FindProject), naming the link; nothing is
// written where it points.
func TestLinkedOrchRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// setup makes the layout in root, links pointing into elsewhere.
		setup func(t *testing.T, root, elsewhere string)
		named string // the path the error names
	}{
		{"orch is a link", func(t *testing.T, root, elsewhere string) {
			must(t, os.Symlink(elsewhere, filepath.Join(root, ".orch")))
		}, ".orch"},
		{"orch is a link to a project", func(t *testing.T, root, elsewhere string) {
			must(t, os.MkdirAll(filepath.Join(elsewhere, "tasks"), 0o755))
			must(t, os.Symlink(elsewhere, filepath.Join(root, ".orch")))
		}, ".orch"},
		{"orch is a dangling link", func(t *testing.T, root, elsewhere string) {
			must(t, os.Symlink(filepath.Join(elsewhere, "none"), filepath.Join(root, ".orch")))
		}, ".orch"},
		{"tasks is a link", func(t *testing.T, root, elsewhere string) {
			must(t, os.Mkdir(filepath.Join(root, ".orch"), 0o755))
			must(t, os.Symlink(elsewhere, filepath.Join(root, ".orch", "tasks")))
		}, filepath.Join(".orch", "tasks")},
		{"current is a link", func(t *testing.T, root, elsewhere string) {
			must(t, os.MkdirAll(filepath.Join(root, ".orch", "tasks"), 0o755))
			must(t, os.Symlink(filepath.Join(elsewhere, "current"), filepath.Join(root, ".orch", "current")))
		}, filepath.Join(".orch", "current")},
		{"the lock is a link", func(t *testing.T, root, elsewhere string) {
			must(t, os.MkdirAll(filepath.Join(root, ".orch", "tasks"), 0o755))
			must(t, os.Symlink(filepath.Join(elsewhere, "lock"), filepath.Join(root, ".orch", ".lock")))
		}, filepath.Join(".orch", ".lock")},
		{"git-pending is a link", func(t *testing.T, root, elsewhere string) {
			must(t, os.MkdirAll(filepath.Join(root, ".orch", "tasks"), 0o755))
			must(t, os.Symlink(elsewhere, filepath.Join(root, ".orch", "git-pending")))
		}, filepath.Join(".orch", "git-pending")},
		{"tasks is a file", func(t *testing.T, root, elsewhere string) {
			must(t, os.Mkdir(filepath.Join(root, ".orch"), 0o755))
			must(t, os.WriteFile(filepath.Join(root, ".orch", "tasks"), nil, 0o644))
		}, filepath.Join(".orch", "tasks")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root, elsewhere := t.TempDir(), t.TempDir()
			c.setup(t, root, elsewhere)
			before, beforeRoot := listTree(t, elsewhere), listTree(t, root)
			_, _, err := InitProject(root)
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, ErrLinkedOrch) || !strings.Contains(err.Error(), c.named+" is ") {
					t.Fatalf("%s: %v, want ErrLinkedOrch naming %s", what, err, c.named)
				}
			}
			check("orch init", err)
			sub := filepath.Join(root, "sub")
			must(t, os.Mkdir(sub, 0o755))
			_, err = FindProject(sub)
			check("a command in a subfolder", err)
			if got := listTree(t, elsewhere); !slices.Equal(got, before) {
				t.Errorf("the link's target changed: %v, was %v", got, before)
			}
			must(t, os.Remove(sub))
			if got := listTree(t, root); !slices.Equal(got, beforeRoot) {
				t.Errorf("the repository changed: %v, was %v", got, beforeRoot)
			}
		})
	}
}

// TestLinkedTaskRefused: a task folder that is a symbolic link is refused
// by name, not opened.
func TestLinkedTaskRefused(t *testing.T) {
	t.Parallel()
	root, elsewhere := t.TempDir(), t.TempDir()
	p, _, err := InitProject(root)
	must(t, err)
	must(t, os.Symlink(elsewhere, filepath.Join(p.TasksDir(), "t1")))
	_, err = p.Open("t1")
	if !errors.Is(err, ErrLinkedOrch) || !strings.Contains(err.Error(), filepath.Join(".orch", "tasks", "t1")+" is a symbolic link") {
		t.Fatalf("open a linked task: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
