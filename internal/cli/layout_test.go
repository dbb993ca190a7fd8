package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadmeLayout: the README's "Layout of the code" names every package
// of the module (a folder holding Go files, below cmd/, internal/ or
// bench/) and nothing that is not one, so that a newcomer finds where
// each job lives.
func TestReadmeLayout(t *testing.T) {
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "\n## Layout of the code\n")
	if !ok {
		t.Fatal(`README.md has no "## Layout of the code" section`)
	}
	_, block, ok := strings.Cut(rest, "```\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal(`README.md: "Layout of the code" has no code block`)
	}
	entry := regexp.MustCompile(`^((?:cmd|internal|bench)/[a-z0-9/]*?)/?\s`)
	var listed []string
	for line := range strings.SplitSeq(block, "\n") {
		if m := entry.FindStringSubmatch(line + " "); m != nil {
			listed = append(listed, m[1])
		}
	}
	var pkgs []string
	for _, top := range []string{"cmd", "internal", "bench"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(p, ".go") {
				rel, err := filepath.Rel(root, filepath.Dir(p))
				if err != nil {
					return err
				}
				pkgs = append(pkgs, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	pkgs = slices.Compact(pkgs)
	for _, p := range pkgs {
		if !slices.Contains(listed, p) {
			t.Errorf("README.md's layout does not name package %s/", p)
		}
	}
	for _, l := range listed {
		if !slices.Contains(pkgs, l) {
			t.Errorf("README.md's layout names %s/, which holds no Go package", l)
		}
	}
}
