package gitx

import (
	"bufio"
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestIndexTreeFilesAndCatBlobs(t *testing.T) {
	r, _ := seedRepo(t, map[string]string{"a.go": "package a\n", "dir/b.txt": strings.Repeat("b", 5000), "c.md": "c\n"})
	writeFile(t, r, "staged.go", "package s\n")
	runGit(t, r.Dir, "add", "staged.go")
	writeFile(t, r, "untracked.go", "package u\n")

	idx, err := r.IndexFiles(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range idx {
		paths = append(paths, e.Path)
	}
	if got := strings.Join(paths, ","); got != "a.go,c.md,dir/b.txt,staged.go" {
		t.Errorf("IndexFiles = %s", got)
	}
	tree, err := r.TreeFiles(testCtx(t), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if len(tree) != 3 || tree[2].Path != "dir/b.txt" || tree[2].Type != "blob" {
		t.Errorf("TreeFiles = %+v", tree)
	}

	shas := []string{idx[0].SHA, idx[2].SHA, idx[1].SHA, idx[0].SHA}
	var got []string
	err = r.CatBlobs(testCtx(t), shas, 100, func(i int, data []byte, size int64) error {
		if data == nil {
			got = append(got, "skipped:"+itoa(size))
		} else {
			got = append(got, string(data))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "package a\n|skipped:5000|c\n|package a\n"; strings.Join(got, "|") != want {
		t.Errorf("CatBlobs = %q, want %q", strings.Join(got, "|"), want)
	}

	stop := errors.New("stop")
	calls := 0
	err = r.CatBlobs(testCtx(t), shas, 1<<20, func(int, []byte, int64) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("CatBlobs stopping: %v after %d calls", err, calls)
	}
	missing := strings.Repeat("e", 40)
	if err := r.CatBlobs(testCtx(t), []string{idx[0].SHA, missing}, 1<<20, func(int, []byte, int64) error { return nil }); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("CatBlobs of a missing object: %v", err)
	}
	if err := r.CatBlobs(testCtx(t), []string{"--batch-all-objects"}, 1, nil); err == nil {
		t.Error("CatBlobs accepted an option as an object name")
	}
}

func TestReadBatchRefusesDamagedStreams(t *testing.T) {
	sha := strings.Repeat("a", 40)
	for _, stream := range []string{
		"",
		sha + " blob 5\nabc",
		sha + " blob 3\nabcX",
		sha + " blob x\nabc\n",
		sha + " blob -1\n\n",
		strings.Repeat("b", 40) + " blob 3\nabc\n",
		sha + " missing\n",
	} {
		err := readBatch(bufio.NewReader(strings.NewReader(stream)), []string{sha}, 100, false, func(int, []byte, int64) error { return nil })
		if err == nil {
			t.Errorf("readBatch(%q) accepted a damaged stream", stream)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestGrepWords(t *testing.T) {
	r, head := seedRepo(t, map[string]string{"a b.go": "foo Bar foo\nx Bar\nBarley\n", "d/c.md": "Bar\n", "bin.dat": "Bar\x00"})
	writeFile(t, r, "d/c.md", "nothing\n") // the work tree differs from the index
	writeFile(t, r, "untracked.go", "Bar\n")
	collect := func(commit string, words ...string) string {
		t.Helper()
		var got []string
		err := r.GrepWords(testCtx(t), words, commit, func(p string, line int, w string) {
			got = append(got, p+":"+strconv.Itoa(line)+":"+w)
		})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(got, " ")
	}
	if got, want := collect("", "Bar", "foo"), "a b.go:1:foo a b.go:1:Bar a b.go:1:foo a b.go:2:Bar"; got != want {
		t.Errorf("GrepWords(work tree) = %q, want %q", got, want)
	}
	if got, want := collect(head, "Bar"), "a b.go:1:Bar a b.go:2:Bar d/c.md:1:Bar"; got != want {
		t.Errorf("GrepWords(HEAD) = %q, want %q", got, want)
	}
	if got := collect("", "Nowhere"); got != "" {
		t.Errorf("GrepWords(no match) = %q", got)
	}
	if got := collect("", "-e"); got != "" {
		t.Errorf("GrepWords(an option-like word) = %q", got)
	}
	if err := r.GrepWords(testCtx(t), []string{"a\nb"}, "", func(string, int, string) {}); err == nil {
		t.Error("GrepWords accepted a word with a newline")
	}
}

// TestReadBatchHeads: with head, a blob larger than maxBytes gives its
// first maxBytes and its whole size, and the stream goes on; without, it
// is skipped (nil data).
func TestReadBatchHeads(t *testing.T) {
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	stream := a + " blob 10\n0123456789\n" + b + " blob 3\nxyz\n"
	for _, head := range []bool{true, false} {
		var got []string
		err := readBatch(bufio.NewReader(strings.NewReader(stream)), []string{a, b}, 4, head, func(i int, data []byte, size int64) error {
			got = append(got, string(data)+"/"+itoa(size))
			return nil
		})
		want := "0123/10 xyz/3"
		if !head {
			want = "/10 xyz/3"
		}
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("head=%v: %q, %v; want %q", head, got, err, want)
		}
	}
}
