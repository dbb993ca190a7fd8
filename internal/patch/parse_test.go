package patch

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/safepath"
)

func parse(t *testing.T, patch string) (Diff, error) {
	t.Helper()
	return Parse(strings.NewReader(patch))
}

func mustParse(t *testing.T, patch string) []Entry {
	t.Helper()
	d, err := parse(t, patch)
	if err != nil {
		t.Fatalf("Parse: %v\npatch:\n%s", err, patch)
	}
	if d.Bytes != int64(len(patch)) {
		t.Errorf("Bytes = %d, want %d", d.Bytes, len(patch))
	}
	return d.Files
}

func TestParseDiffRealGit(t *testing.T) {
	lines := func(n int, prefix string) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(prefix + strings.Repeat("x", i%7) + "\n")
		}
		return b.String()
	}
	cases := []struct {
		name   string
		base   map[string]string
		change func(r *gitRepo)
		args   []string
		want   []Entry
	}{
		{"update", map[string]string{"a.go": lines(30, "line")}, func(r *gitRepo) {
			r.write("a.go", strings.Replace(lines(30, "line"), "linexx\n", "changed\n", 1)+"tail\n")
		}, nil, []Entry{{OldPath: "a.go", NewPath: "a.go", Op: OpUpdate}}},
		{"create", nil, func(r *gitRepo) { r.write("dir/new.go", "package x\n") },
			nil, []Entry{{NewPath: "dir/new.go", Op: OpCreate}}},
		{"create empty", nil, func(r *gitRepo) { r.write("empty", "") },
			nil, []Entry{{NewPath: "empty", Op: OpCreate}}},
		{"delete", map[string]string{"old.txt": "a\nb\n", "keep": "k\n"}, func(r *gitRepo) { r.remove("old.txt") },
			nil, []Entry{{OldPath: "old.txt", Op: OpDelete}}},
		{"delete empty", map[string]string{"empty": ""}, func(r *gitRepo) { r.remove("empty") },
			nil, []Entry{{OldPath: "empty", Op: OpDelete}}},
		{"pure rename", map[string]string{"from.go": lines(20, "r")}, func(r *gitRepo) {
			r.remove("from.go")
			r.write("sub/to.go", lines(20, "r"))
		}, []string{"-M"}, []Entry{{OldPath: "from.go", NewPath: "sub/to.go", Op: OpRename}}},
		{"rename with edits", map[string]string{"from.go": lines(40, "r")}, func(r *gitRepo) {
			r.remove("from.go")
			r.write("to.go", lines(40, "r")+"more\n")
		}, []string{"-M50%"}, []Entry{{OldPath: "from.go", NewPath: "to.go", Op: OpRename}}},
		{"no newline at end of file", map[string]string{"n.txt": "a\nb"}, func(r *gitRepo) {
			r.write("n.txt", "a\nc")
			r.write("m.txt", "no newline")
		}, nil, []Entry{{NewPath: "m.txt", Op: OpCreate}, {OldPath: "n.txt", NewPath: "n.txt", Op: OpUpdate}}},
		{"names with spaces", map[string]string{"with space/file name.txt": "a\n"}, func(r *gitRepo) {
			r.write("with space/file name.txt", "b\n")
			r.write("x b/y z.txt", "new\n")
		}, nil, []Entry{
			{OldPath: "with space/file name.txt", NewPath: "with space/file name.txt", Op: OpUpdate},
			{NewPath: "x b/y z.txt", Op: OpCreate}}},
		{"crlf content", map[string]string{"w.txt": "a\r\nb\r\n"}, func(r *gitRepo) {
			r.write("w.txt", "a\r\nc\r\n\r\n")
		}, nil, []Entry{{OldPath: "w.txt", NewPath: "w.txt", Op: OpUpdate}}},
		{"everything at once", map[string]string{"u.go": lines(10, "u"), "d.go": "d\n", "r.go": lines(30, "r")}, func(r *gitRepo) {
			r.write("u.go", lines(10, "u")+"x\n")
			r.remove("d.go")
			r.remove("r.go")
			r.write("renamed.go", lines(30, "r"))
			r.write("c.go", "c\n")
		}, []string{"-M"}, []Entry{
			{NewPath: "c.go", Op: OpCreate}, {OldPath: "d.go", Op: OpDelete},
			{OldPath: "r.go", NewPath: "renamed.go", Op: OpRename}, {OldPath: "u.go", NewPath: "u.go", Op: OpUpdate}}},
		{"copy", map[string]string{"orig.go": lines(30, "c")}, func(r *gitRepo) {
			r.write("orig.go", lines(30, "c")+"changed\n")
			r.write("copy.go", lines(30, "c"))
		}, []string{"-C", "-C"}, []Entry{{NewPath: "copy.go", Op: OpCreate}, {OldPath: "orig.go", NewPath: "orig.go", Op: OpUpdate}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newGitRepo(t)
			for p, c := range tc.base {
				r.write(p, c)
			}
			r.commit()
			tc.change(r)
			patch := r.diff(tc.args...)
			got := mustParse(t, patch)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("files = %+v\nwant    %+v\npatch:\n%s", got, tc.want, patch)
			}
		})
	}
}

func TestParseDiffRealGitQuoted(t *testing.T) {
	r := newGitRepo(t)
	r.write(`say "hi" now.txt`, "a\n")
	r.write(`quo"te.txt`, "q\n")
	r.commit()
	r.remove(`say "hi" now.txt`)
	r.write(`quo"te.txt`, "r\n")
	r.write("ünï cødé.txt", "u\n")
	r.write("dir/ünï.txt", "u\n")
	patch := r.diff()
	if !strings.Contains(patch, `"a/\303\274n\303\257 c\303\270d\303\251.txt"`) || !strings.Contains(patch, `"b/quo\"te.txt"`) {
		t.Fatalf("git did not quote as expected:\n%s", patch)
	}
	got := mustParse(t, patch)
	want := []Entry{
		{NewPath: "dir/ünï.txt", Op: OpCreate},
		{OldPath: `say "hi" now.txt`, Op: OpDelete},
		{OldPath: `quo"te.txt`, NewPath: `quo"te.txt`, Op: OpUpdate},

		{NewPath: "ünï cødé.txt", Op: OpCreate},
	}
	// git sorts by raw bytes; compare as a set.
	if len(got) != len(want) {
		t.Fatalf("files = %+v", got)
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("missing %+v in %+v", w, got)
		}
	}
}

// TestParseDiffRealGitRefuses checks what git can express but orch refuses.
func TestParseDiffRealGitRefuses(t *testing.T) {
	cases := []struct {
		name   string
		base   map[string]string
		change func(r *gitRepo)
		args   []string
		is     error
		msg    string
	}{
		{"create a symlink", nil, func(r *gitRepo) {
			r.symlink("/etc/passwd", "passwd")
		}, nil, ErrInvalid, "line 2: new file mode 120000: symbolic links are not allowed"},
		{"change a symlink", map[string]string{}, func(r *gitRepo) {
			os.Remove(filepath.Join(r.dir, "l"))
			r.symlink("/etc/shadow", "l")
		}, nil, ErrInvalid, "line 2: index 120000: symbolic links are not allowed"},
		{"make executable", map[string]string{"run.sh": "echo\n"}, func(r *gitRepo) {
			if err := os.Chmod(filepath.Join(r.dir, "run.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, nil, ErrInvalid, "line 3: mode change from 100644 to 100755 is not allowed"},
		{"binary", map[string]string{}, func(r *gitRepo) { r.write("bin.dat", "\x00\x01\x02") },
			nil, ErrInvalid, "binary patches are not supported"},
		{"binary with --binary", map[string]string{}, func(r *gitRepo) { r.write("bin.dat", "\x00\x01\x02") },
			[]string{"--binary"}, ErrInvalid, "binary patches are not supported"},
		{"submodule", map[string]string{}, func(r *gitRepo) {
			r.git("update-index", "--add", "--cacheinfo", "160000,0123456789abcdef0123456789abcdef01234567,sub")
		}, nil, ErrInvalid, "line 2: new file mode 160000: submodules are not allowed"},
		{"backslash name", nil, func(r *gitRepo) { r.write(`back\slash`, "x\n") },
			nil, safepath.ErrUnsafe, `contains a backslash`},
		{"tab in name", nil, func(r *gitRepo) { r.write("a\tb", "x\n") },
			nil, safepath.ErrUnsafe, `contains the control character '\t'`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newGitRepo(t)
			for p, c := range tc.base {
				r.write(p, c)
			}
			if tc.name == "change a symlink" {
				r.symlink("/etc/passwd", "l")
			}
			r.commit()
			tc.change(r)
			var patch string
			if tc.name == "submodule" {
				patch = r.git("diff", "--cached")
			} else {
				patch = r.diff(tc.args...)
			}
			_, err := parse(t, patch)
			if err == nil {
				t.Fatalf("accepted:\n%s", patch)
			}
			if !errors.Is(err, tc.is) || !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not match %v and ErrInvalid", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s\npatch:\n%s", err, tc.msg, patch)
			}
		})
	}
}

func TestParseDiffEmpty(t *testing.T) {
	for _, p := range []string{"", "\n", " \n\t\r\n  "} {
		d, err := parse(t, p)
		if err != nil || len(d.Files) != 0 || d.Bytes != int64(len(p)) {
			t.Errorf("Parse(%q) = %+v, %v", p, d, err)
		}
	}
}

func TestParseDiffAccepts(t *testing.T) {
	cases := []struct {
		name  string
		patch string
		want  []Entry
	}{
		{"plain unified", "--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
			[]Entry{{OldPath: "x.go", NewPath: "x.go", Op: OpUpdate}}},
		{"plain with time stamps", "--- a/x.go\t2024-01-01 10:00:00.000000000 +0000\n+++ b/x.go\t2024-01-02 10:00:00.000000000 +0000\n@@ -1 +1 @@\n-b\n+c\n",
			[]Entry{{OldPath: "x.go", NewPath: "x.go", Op: OpUpdate}}},
		{"plain create", "--- /dev/null\n+++ b/n.go\n@@ -0,0 +1,2 @@\n+a\n+b\n",
			[]Entry{{NewPath: "n.go", Op: OpCreate}}},
		{"plain delete", "--- a/d.go\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n",
			[]Entry{{OldPath: "d.go", Op: OpDelete}}},
		{"plain rename", "--- a/old.go\n+++ b/new.go\n@@ -1 +1 @@\n-a\n+b\n",
			[]Entry{{OldPath: "old.go", NewPath: "new.go", Op: OpRename}}},
		{"preamble ignored", "From 123 Mon Sep 17 00:00:00 2001\nSubject: x\n\n---\n x.go | 2 +-\n--- not a header\n\ndiff --git a/x.go b/x.go\nindex 1..2 100644\n--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\n",
			[]Entry{{OldPath: "x.go", NewPath: "x.go", Op: OpUpdate}}},
		{"crlf everywhere", "diff --git a/x b/x\r\nindex 1..2 100644\r\n--- a/x\r\n+++ b/x\r\n@@ -1,2 +1,2 @@\r\n a\r\n-b\r\n+c\r\n",
			[]Entry{{OldPath: "x", NewPath: "x", Op: OpUpdate}}},
		{"empty context line", "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n",
			[]Entry{{OldPath: "x", NewPath: "x", Op: OpUpdate}}},
		{"no newline markers", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n",
			[]Entry{{OldPath: "x", NewPath: "x", Op: OpUpdate}}},
		{"last line without newline", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b",
			[]Entry{{OldPath: "x", NewPath: "x", Op: OpUpdate}}},
		{"several hunks and blank lines between files", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n@@ -10,2 +10,3 @@ func f() {\n c\n+d\n e\n\n\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n",
			[]Entry{{OldPath: "x", NewPath: "x", Op: OpUpdate}, {OldPath: "y", NewPath: "y", Op: OpUpdate}}},
		{"content lines that look like headers", "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n--- a/.git/config\n-+++ b/y\n+diff --git a/../z b/../z\n+@@ -1 +1 @@\n-GIT binary patch\n+Binary files a and b differ\n",
			[]Entry{{OldPath: "x", NewPath: "x", Op: OpUpdate}}},
		{"git rename with quoted names", "diff --git \"a/x y\" b/z\nsimilarity index 100%\nrename from \"x y\"\nrename to z\n",
			[]Entry{{OldPath: "x y", NewPath: "z", Op: OpRename}}},
		{"second name quoted", "diff --git a/x \"b/\\303\\274\"\nsimilarity index 100%\nrename from x\nrename to \"\\303\\274\"\n",
			[]Entry{{OldPath: "x", NewPath: "ü", Op: OpRename}}},
		{"git unquoted names needing rename lines", "diff --git a/p b/q b/r\nsimilarity index 100%\nrename from p b/q\nrename to r\n",
			[]Entry{{OldPath: "p b/q", NewPath: "r", Op: OpRename}}},
		{"same old and new mode", "diff --git a/x b/x\nold mode 100755\nnew mode 100755\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
			[]Entry{{OldPath: "x", NewPath: "x", Op: OpUpdate}}},
		{"executable new file", "diff --git a/run b/run\nnew file mode 100755\nindex 0000000..1111111\n--- /dev/null\n+++ b/run\n@@ -0,0 +1 @@\n+echo\n",
			[]Entry{{NewPath: "run", Op: OpCreate}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustParse(t, tc.patch); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("files = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseDiffLongContentLine(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	patch := "--- a/min.js\n+++ b/min.js\n@@ -1 +1 @@\n-" + long + "\n+" + long + "y\n"
	if got := mustParse(t, patch); len(got) != 1 || got[0].Op != OpUpdate {
		t.Errorf("files = %+v", got)
	}
}

func TestParseDiffRefuses(t *testing.T) {
	longName := strings.Repeat("n", 70<<10)
	cases := []struct {
		name, patch, msg string
		is               error
	}{
		{"hunk before any header", "hello\n@@ -1 +1 @@\n-a\n+b\n", "line 2: hunk before any file header", nil},
		{"hunk without ---/+++", "diff --git a/x b/x\nindex 1..2 100644\n@@ -1 +1 @@\n-a\n+b\n", "line 3: hunk without \"---\" and \"+++\" lines", nil},
		{"malformed hunk header", "--- a/x\n+++ b/x\n@@ -1,a +1 @@\n-a\n+b\n", `line 3: malformed hunk header "@@ -1,a +1 @@"`, nil},
		{"hunk header without closing @@", "--- a/x\n+++ b/x\n@@ -1 +1\n-a\n+b\n", "line 3: malformed hunk header", nil},
		{"hunk header with huge count", "--- a/x\n+++ b/x\n@@ -1,99999999999 +1 @@\n-a\n+b\n", "line 3: malformed hunk header", nil},
		{"combined hunk header", "--- a/x\n+++ b/x\n@@@ -1 -1 +1 @@@\n-a\n+b\n", "line 3: malformed hunk header", nil},
		{"empty hunk", "--- a/x\n+++ b/x\n@@ -1,0 +1,0 @@\n", "line 3: empty hunk", nil},
		{"too few lines", "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\ndiff --git a/y b/y\n",
			"line 6: the hunk at line 3 does not match its header: expected 1 more old and 1 more new line(s), got \"diff --git a/y b/y\"", nil},
		{"too many lines", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n", "line 6: unexpected line outside a hunk (do the hunk line counts match the @@ header?): \"+c\"", nil},
		{"too many removed lines", "--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n-a\n-b\n+c\n", "line 5: the hunk at line 3 does not match its header: expected 0 more old and 2 more new line(s), got a removed line", nil},
		{"end of patch inside a hunk", "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n", "the hunk at line 3 does not match its header: expected 2 more old and 2 more new line(s), got the end of the file", nil},
		{"garbage in a hunk", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n*a\n+b\n", `line 4: the hunk at line 3 does not match its header: expected 1 more old and 1 more new line(s), got "*a"`, nil},
		{"no-newline marker first", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n\\ No newline at end of file\n-a\n+b\n", `got a "\" line that follows no hunk line`, nil},
		{"garbage between files", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\nsome text\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n", "line 6: unexpected line outside a hunk", nil},
		{"--- without +++ after a file", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- a/y\nhello\n", "line 7: a \"---\" line must be followed by a \"+++\" line", nil},
		{"plain header without hunks", "--- a/x\n+++ b/x\n", "line 1: file header without any hunk", nil},
		{"git header without change", "diff --git a/x b/x\nindex 1..2 100644\n", `line 1: file header of "x" without any change`, nil},
		{"unknown git header line", "diff --git a/x b/x\nfrobnicate\n--- a/x\n+++ b/x\n", `line 2: unexpected line in the header of the file at line 1: "frobnicate"`, nil},
		{"only garbage", "hello\nworld\n", "no file header (diff --git or ---/+++) found", nil},
		{"both /dev/null", "--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+a\n", "line 2: both names are /dev/null", nil},
		{"create with old lines", "--- /dev/null\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", "line 3: the file is created but the hunk has 1 old line(s)", nil},
		{"delete with new lines", "diff --git a/x b/x\ndeleted file mode 100644\n--- a/x\n+++ /dev/null\n@@ -1 +1 @@\n-a\n+b\n", "line 5: the file is deleted but the hunk has 1 new line(s)", nil},
		{"new file with old name", "diff --git a/x b/x\nnew file mode 100644\n--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+b\n", "line 1: a new file must have \"--- /dev/null\"", nil},
		{"new symlink", "diff --git a/l b/l\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n", "line 2: new file mode 120000: symbolic links are not allowed", nil},
		{"deleted symlink", "diff --git a/l b/l\ndeleted file mode 120000\n", "line 2: deleted file mode 120000: symbolic links are not allowed", nil},
		{"deleted submodule", "diff --git a/s b/s\ndeleted file mode 160000\n", "line 2: deleted file mode 160000: submodules are not allowed", nil},
		{"new submodule", "diff --git a/s b/s\nnew file mode 160000\nindex 0000000..1234567\n--- /dev/null\n+++ b/s\n@@ -0,0 +1 @@\n+Subproject commit 0123456789abcdef0123456789abcdef01234567\n", "line 2: new file mode 160000: submodules are not allowed", nil},
		{"old mode symlink", "diff --git a/l b/l\nold mode 120000\nnew mode 100644\n", "line 2: old mode 120000: symbolic links are not allowed", nil},
		{"new mode symlink", "diff --git a/l b/l\nold mode 100644\nnew mode 120000\n", "line 3: new mode 120000: symbolic links are not allowed", nil},
		{"mode change", "diff --git a/x b/x\nold mode 100644\nnew mode 100755\n", "line 3: mode change from 100644 to 100755 is not allowed", nil},
		{"new mode alone", "diff --git a/x b/x\nnew mode 100755\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", "line 2: \"new mode\" without \"old mode\"", nil},
		{"old mode alone", "diff --git a/x b/x\nold mode 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", "line 2: \"old mode\" without \"new mode\"", nil},
		{"odd mode", "diff --git a/x b/x\nnew file mode 100777\n", `line 2: new file mode "100777": only regular file modes 100644 and 100755 are allowed`, nil},
		{"directory mode", "diff --git a/x b/x\nnew file mode 040000\n", `only regular file modes`, nil},
		{"index with symlink mode", "diff --git a/l b/l\nindex 1111111..2222222 120000\n--- a/l\n+++ b/l\n@@ -1 +1 @@\n-/a\n+/etc/passwd\n", "line 2: index 120000: symbolic links are not allowed", nil},
		{"index with submodule mode", "diff --git a/s b/s\nindex 1111111..2222222 160000\n--- a/s\n+++ b/s\n@@ -1 +1 @@\n-Subproject commit 1\n+Subproject commit 2\n", "line 2: index 160000: submodules are not allowed", nil},
		{"malformed index", "diff --git a/x b/x\nindex nothing\n", `line 2: malformed "index" line`, nil},
		{"git binary patch", "diff --git a/b b/b\nnew file mode 100644\nindex 0000000..1111111\nGIT binary patch\nliteral 3\nKcmZQzWMT\n\nliteral 0\nHcmV?d00001\n\n", "line 4: binary patches are not supported", nil},
		{"binary files differ", "diff --git a/b b/b\nindex 1..2 100644\nBinary files a/b and b/b differ\n", "line 3: binary patches are not supported", nil},
		{"binary in plain diff", "Binary files x and y differ\n", "line 1: binary patches are not supported", nil},
		{"combined diff", "diff --cc x\nindex 1,2..3\n", "line 1: combined diffs are not supported", nil},
		{"dotdot in git header", "diff --git a/../x b/../x\nnew file mode 100644\n", `line 1: in the diff --git name: unsafe path "../x": ".." element`, safepath.ErrUnsafe},
		{"dotdot in +++", "--- a/x\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", `line 1: in the +++ name: unsafe path "../../etc/passwd"`, safepath.ErrUnsafe},
		{"absolute +++", "--- a/x\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", `expected the name "/etc/passwd" to start with b/`, nil},
		{"no prefix", "--- x\n+++ x\n@@ -1 +1 @@\n-a\n+b\n", `expected the name "x" to start with a/`, nil},
		{"git hooks", "diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\nnew file mode 100755\nindex 0000000..1111111\n--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+rm -rf ~\n", `names the .git directory`, safepath.ErrUnsafe},
		{"orch state", "--- a/.orch/tasks/t/state.json\n+++ b/.orch/tasks/t/state.json\n@@ -1 +1 @@\n-a\n+b\n", `inside the .orch directory`, safepath.ErrUnsafe},
		{"rename to .git", "diff --git a/x b/.git/config\nsimilarity index 100%\nrename from x\nrename to .git/config\n", `names the .git directory`, safepath.ErrUnsafe},
		{"rename to dotdot", "diff --git a/x b/y\nsimilarity index 100%\nrename from x\nrename to ../y\n", `line 1: in the rename to name: unsafe path "../y"`, safepath.ErrUnsafe},
		{"copy from .git", "diff --git a/.git/config b/leak\nsimilarity index 100%\ncopy from .git/config\ncopy to leak\n", `names the .git directory`, safepath.ErrUnsafe},
		{"quoted backslash", "diff --git \"a/x\\\\y\" b/z\nsimilarity index 100%\nrename from \"x\\\\y\"\nrename to z\n", `contains a backslash`, safepath.ErrUnsafe},
		{"quoted control character", "diff --git \"a/x\\ny\" \"b/x\\ny\"\nnew file mode 100644\n", `contains the control character '\n'`, safepath.ErrUnsafe},
		{"quoted NUL", "--- \"a/x\\000y\"\n+++ \"b/x\\000y\"\n@@ -1 +1 @@\n-a\n+b\n", `contains a NUL byte`, safepath.ErrUnsafe},
		{"quoted invalid UTF-8", "--- \"a/\\377\"\n+++ \"b/\\377\"\n@@ -1 +1 @@\n-a\n+b\n", `not valid UTF-8`, safepath.ErrUnsafe},
		{"bad quoting", "diff --git \"a/x b/x\nnew file mode 100644\n", `line 1: malformed "diff --git" line: unterminated quoted name`, nil},
		{"bad escape", "--- \"a/\\q\"\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", `line 1: malformed "---" line: unknown escape \q in quoted name`, nil},
		{"inconsistent +++", "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n", `line 1: inconsistent file names "x" and "y" (+++)`, nil},
		{"inconsistent rename", "diff --git a/x b/y\nsimilarity index 100%\nrename from x\nrename to z\n", `line 1: inconsistent file names "y" and "z" (rename to)`, nil},
		{"rename from alone", "diff --git a/x b/y\nrename from x\n", `line 1: "rename from" and "rename to" must come together`, nil},
		{"rename to itself", "diff --git a/x b/x\nsimilarity index 100%\nrename from x\nrename to x\n", `line 1: "rename from" and "rename to" name the same file`, nil},
		{"ambiguous names", "diff --git a/x b/y b/z b/w\nsimilarity index 100%\n", "cannot tell the file names apart", nil},
		{"same path twice", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- a/x\n+++ b/x\n@@ -3 +3 @@\n-a\n+b\n", `line 6: "x" is changed twice (also at line 1)`, nil},
		{"rename onto an updated path", "--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/x b/y\nsimilarity index 100%\nrename from x\nrename to y\n", `line 6: "y" is changed twice (also at line 1)`, nil},
		{"header line too long", "--- a/" + longName + "\n+++ b/x\n", "line 1: header line longer than 65536 bytes", nil},
		{"+++ without ---", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+++ b/y\n", "line 6: unexpected line outside a hunk", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := parse(t, tc.patch)
			if err == nil {
				t.Fatalf("accepted: %+v", d)
			}
			var de *Error
			if !errors.As(err, &de) || !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v is not a *Error matching ErrInvalid", err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v does not match %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s", err, tc.msg)
			}
		})
	}
}
