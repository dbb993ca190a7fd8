package gitx

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestShowFile(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	r, first := seedRepo(t, map[string]string{"a.txt": "one\n", "dir/b.txt": "bee", "spa ce/ü.txt": "u\n"})
	writeFile(t, r, "a.txt", "two\n")
	runGit(t, r.Dir, "rm", "-q", "dir/b.txt")
	commitAll(t, r, "second")
	writeFile(t, r, "a.txt", "work tree, not committed\n")

	tests := []struct {
		commit, path string
		want         string
		found        bool
	}{
		{first, "a.txt", "one\n", true},
		{"HEAD", "a.txt", "two\n", true},
		{first, "dir/b.txt", "bee", true},
		{"HEAD", "dir/b.txt", "", false},
		{"HEAD", "nope.txt", "", false},
		{"HEAD", "spa ce/ü.txt", "u\n", true},
		{"HEAD", "a.txt/deeper", "", false},
	}
	for _, tt := range tests {
		got, found, err := r.ShowFile(ctx, tt.commit, tt.path)
		if err != nil || found != tt.found || string(got) != tt.want {
			t.Errorf("ShowFile(%.7s, %q) = %q, %v, %v; want %q, %v", tt.commit, tt.path, got, found, err, tt.want, tt.found)
		}
	}
	if _, _, err := r.ShowFile(ctx, first, "dir"); err == nil {
		t.Error("ShowFile(directory) succeeded, want an error")
	}
	if _, _, err := r.ShowFile(ctx, "no-such-rev", "a.txt"); !errors.Is(err, ErrBadRevision) {
		t.Errorf("ShowFile(bad rev) = %v, want ErrBadRevision", err)
	}
	if _, _, err := r.ShowFile(ctx, "HEAD", "/etc/passwd"); !errors.Is(err, ErrBadPath) {
		t.Errorf("ShowFile(absolute) = %v, want ErrBadPath", err)
	}
}

func TestLsFilesAndListFiles(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	r, _ := seedRepo(t, map[string]string{"b.go": "b\n", "a dir/ä.go": "a\n", ".gitignore": "*.tmp\nbuild/\n"})
	writeFile(t, r, "new.go", "n\n")
	writeFile(t, r, "new dir/x\ty.go", "tab\n")
	writeFile(t, r, "junk.tmp", "j\n")
	writeFile(t, r, "build/out.bin", "o\n")
	writeFile(t, r, "b.go", "modified\n")

	tracked, err := r.LsFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".gitignore", "a dir/ä.go", "b.go"}; !slices.Equal(tracked, want) {
		t.Errorf("LsFiles = %q, want %q", tracked, want)
	}
	all, err := r.ListFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(all)
	if want := []string{".gitignore", "a dir/ä.go", "b.go", "new dir/x\ty.go", "new.go"}; !slices.Equal(all, want) {
		t.Errorf("ListFiles = %q, want %q", all, want)
	}

	// A conflicted path has three index entries but is listed once.
	c, _, _ := divergedRepo(t)
	if _, err := gitOut(c.Dir, nil, "merge", "--no-edit", "side"); err == nil {
		t.Fatal("merge unexpectedly succeeded")
	}
	tracked, err = c.LsFiles(ctx)
	if err != nil || !slices.Equal(tracked, []string{"f.txt", "other.txt"}) {
		t.Errorf("LsFiles during conflict = %q, %v", tracked, err)
	}
}

func TestParseLsTreeZ(t *testing.T) {
	t.Parallel()
	sha := "0123456789abcdef0123456789abcdef01234567"
	got, err := parseLsTreeZ([]byte("100755 blob " + sha + "\tbin/run me\x00040000 tree " + sha + "\tdir\x00"))
	want := []TreeEntry{
		{Mode: "100755", Type: "blob", SHA: sha, Path: "bin/run me"},
		{Mode: "040000", Type: "tree", SHA: sha, Path: "dir"},
	}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("parseLsTreeZ = %+v, %v; want %+v", got, err, want)
	}
	for _, bad := range []string{"100644 blob " + sha + " path\x00", "10064 blob " + sha + "\tp\x00", "100644 blob xyz\tp\x00", "100644 blob " + sha + "\t\x00"} {
		if _, err := parseLsTreeZ([]byte(bad)); err == nil {
			t.Errorf("parseLsTreeZ(%q) succeeded, want error", bad)
		}
	}
	st, err := parseLsFilesStageZ([]byte("100644 " + sha + " 2\tx\x00"))
	if err != nil || len(st) != 1 || st[0].Stage != 2 || st[0].Path != "x" {
		t.Errorf("parseLsFilesStageZ = %+v, %v", st, err)
	}
	if _, err := parseLsFilesStageZ([]byte("100644 " + sha + " 9\tx\x00")); err == nil {
		t.Error("parseLsFilesStageZ accepted stage 9")
	}
}

func FuzzParseLsTreeZ(f *testing.F) {
	sha := "0123456789abcdef0123456789abcdef01234567"
	f.Add([]byte("100644 blob " + sha + "\ta b\x00"))
	f.Add([]byte("160000 commit " + sha + "\tsub\x00120000 blob " + sha + "\tlink"))
	f.Add([]byte("100644 " + sha + " 0\tx\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if entries, err := parseLsTreeZ(b); err == nil {
			for _, e := range entries {
				if !isMode(e.Mode) || !isHex(e.SHA) || e.Path == "" {
					t.Fatalf("accepted invalid entry %+v", e)
				}
			}
		}
		if entries, err := parseLsFilesStageZ(b); err == nil {
			for _, e := range entries {
				if !isMode(e.Mode) || !isHex(e.SHA) || e.Path == "" || e.Stage < 0 || e.Stage > 3 {
					t.Fatalf("accepted invalid entry %+v", e)
				}
			}
		}
	})
}

func TestCheckPath(t *testing.T) {
	t.Parallel()
	good := []string{"a", "a/b.go", "with space/ü.txt", ".github/x.yml", "a..b", ".gitignore", "x/.gitkeep"}
	bad := []string{"", ".", "/abs", "a/../b", "..", "../x", "a//b", "a/", "./a", ".git", ".git/config", "x/.git/y", ".GIT/HEAD", "a\x00b", "\xff"}
	for _, p := range good {
		if err := checkPath(p); err != nil {
			t.Errorf("checkPath(%q) = %v, want nil", p, err)
		}
	}
	for _, p := range bad {
		if err := checkPath(p); !errors.Is(err, ErrBadPath) {
			t.Errorf("checkPath(%q) = %v, want ErrBadPath", p, err)
		}
	}
}

func FuzzCheckPath(f *testing.F) {
	for _, s := range []string{"a/b", "../x", ".git/HEAD", "a//b", "ü", "a/.GIT/x", "a/./b", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if checkPath(p) != nil {
			return
		}
		if p == "" || p[0] == '/' || slices.Contains(splitSlash(p), "..") || slices.Contains(splitSlash(p), "") || strings.ContainsRune(p, 0) {
			t.Fatalf("checkPath accepted %q", p)
		}
		for _, e := range splitSlash(p) {
			if strings.EqualFold(e, ".git") || e == "." {
				t.Fatalf("checkPath accepted %q (element %q)", p, e)
			}
		}
	})
}

func splitSlash(p string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return out
}
