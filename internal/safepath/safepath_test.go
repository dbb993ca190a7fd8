package safepath

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/clip"
)

func TestCheckPathAccepts(t *testing.T) {
	for _, p := range []string{
		"a", "a.go", "dir/sub/file.txt", "internal/artifact/types.go",
		".gitignore", ".github/workflows/ci.yml", "a/.gitkeep", "git", "x.git", ".gitx", "git~2",
		"docs/.orch", "a/.orch/b", ".orchestra/x", "with space/and-dash_underscore",
		"ünïcødé/文件.txt", "b/a:b", "...", "a..b", "..a", "a/b..", "-leading-dash", "C", "1:x",
		strings.Repeat("a", MaxElementBytes), strings.Repeat("a/", (MaxBytes-1)/2) + "b",
	} {
		if err := Check(p); err != nil {
			t.Errorf("Check(%q) = %v, want nil", clip.Bytes(p, 40), err)
		}
	}
}

func TestCheckPathRefuses(t *testing.T) {
	cases := []struct{ path, reason string }{
		{"", "empty"},
		{"/etc/passwd", "absolute"},
		{"/", "absolute"},
		{"//server/share", "absolute"},
		{"C:", "Windows drive"},
		{"C:/Windows/system32", "Windows drive"},
		{"c:foo", "Windows drive"},
		{"a:b", "Windows drive"},
		{"z:\\x", "backslash"},
		{`a\b`, "backslash"},
		{`..\..\x`, "backslash"},
		{"..", `".." element`},
		{"../x", `".." element`},
		{"a/../../x", `".." element`},
		{"a/..", `".." element`},
		{".", `"." element`},
		{"./a", `"." element`},
		{"a/./b", `"." element`},
		{"a//b", "empty path element"},
		{"a/", "empty path element"},
		{"a/b/", "empty path element"},
		{".git", ".git directory"},
		{".git/config", ".git directory"},
		{".GIT/hooks/pre-commit", ".git directory"},
		{".Git/HEAD", ".git directory"},
		{"sub/.git/config", ".git directory"},
		{"a/b/.git", ".git directory"},
		{".git./config", ".git directory"},
		{".git ./config", ".git directory"},
		{".git . ./x", ".git directory"},
		{"git~1/config", ".git directory"},
		{"GIT~1/config", ".git directory"},
		{".git::$INDEX_ALLOCATION/config", ".git directory"},
		{".g\u200cit/config", ".git directory"},
		{"\ufeff.git/config", ".git directory"},
		{".orch", ".orch directory"},
		{".orch/current", ".orch directory"},
		{".ORCH/tasks/x/state.json", ".orch directory"},
		{".orch./x", ".orch directory"},
		{".orch /x", ".orch directory"},
		{"a\x00b", "NUL"},
		{"a\nb", "control character"},
		{"a\rb", "control character"},
		{"a\tb", "control character"},
		{"\x1b[31mred", "control character"},
		{"a\x7fb", "control character"},
		{"a\u0085b", "control character"},
		{"\xff\xfe", "UTF-8"},
		{"a/\xc0\xaf/b", "UTF-8"},
		{strings.Repeat("a", MaxElementBytes+1), "longer than 255"},
		{"x/" + strings.Repeat("b", MaxElementBytes+1), "longer than 255"},
		{strings.Repeat("a/", MaxBytes/2) + "b", "longer than 4096"},
	}
	if len(cases) < 40 {
		t.Fatalf("only %d hostile cases", len(cases))
	}
	for _, tc := range cases {
		err := Check(tc.path)
		if err == nil {
			t.Errorf("Check(%q) = nil, want refusal (%s)", clip.Bytes(tc.path, 40), tc.reason)
			continue
		}
		if !errors.Is(err, ErrUnsafe) {
			t.Errorf("Check(%q) = %v, not ErrUnsafe", tc.path, err)
		}
		var pe *PathError
		if !errors.As(err, &pe) || pe.Path != tc.path {
			t.Errorf("Check(%q): not a *PathError naming the path: %v", tc.path, err)
		}
		if !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("Check(%q) = %q, want it to mention %q", clip.Bytes(tc.path, 40), err, tc.reason)
		}
	}
}

func FuzzCheckPath(f *testing.F) {
	for _, s := range []string{"a/b.go", "../x", ".git/config", ".GIT./x", "git~1", ".orch/x", "a//b", "/abs", `a\b`, "C:x", "\xff", "a/./b", ".g\u200cit", ".git\ufeff:x/y", "a\u202eb", ".OR\u206ach:s./x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := Check(p)
		if err != nil {
			if !errors.Is(err, ErrUnsafe) {
				t.Fatalf("error does not match ErrUnsafe: %v", err)
			}
			return
		}
		if p == "" || len(p) > MaxBytes || !utf8.ValidString(p) || strings.ContainsAny(p, "\\\x00\n\r\t") || strings.HasPrefix(p, "/") {
			t.Fatalf("accepted %q", p)
		}
		if len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0]) {
			t.Fatalf("accepted a drive path %q", p)
		}
		for _, r := range p {
			if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
				t.Fatalf("accepted %q with the control character %U", p, r)
			}
		}
		for i, e := range strings.Split(p, "/") {
			// As a file system may see it: HFS+ drops the code points
			// git's is_hfs_dotgit ignores, NTFS cuts a ":stream" suffix
			// and trailing dots and spaces.
			n := strings.Map(func(r rune) rune {
				if r >= 0x200c && r <= 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x206a && r <= 0x206f || r == 0xfeff {
					return -1
				}
				return r
			}, e)
			n, _, _ = strings.Cut(n, ":")
			n = strings.TrimRight(n, ". ")
			switch {
			case e == "", e == ".", e == "..", len(e) > MaxElementBytes,
				strings.EqualFold(n, ".git"), strings.EqualFold(n, "git~1"),
				i == 0 && strings.EqualFold(n, ".orch"):
				t.Fatalf("accepted %q (element %q)", p, e)
			}
		}
	})
}

// TestFoldCase: paths fold as a case-insensitive file system folds them,
// which lower-casing does not do.
func TestFoldCase(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{"README.md", "readme.MD", true},
		{"src/a.go", "ſrc/a.go", true}, // long s
		{"SRC/a.go", "ſrc/a.go", true},
		{"key.go", "\u212aey.go", true}, // Kelvin sign
		{"Σ.md", "ς.md", true},          // final sigma
		{"σ.md", "ς.md", true},
		{"ǅ", "ǆ", true}, // title case
		{"Ǆ", "ǆ", true},
		{"Å.txt", "å.txt", true},  // Angstrom sign
		{"İ.txt", "i.txt", false}, // lower-cases to i; folds to itself
		{"ı.txt", "I.txt", false},
		{"straße", "strasse", false}, // full folding only
		{"a/b", "a/c", false},
		{"ä", "a\u0308", false}, // normalization is not folding
	}
	for _, tt := range tests {
		if got := FoldCase(tt.a) == FoldCase(tt.b); got != tt.same {
			t.Errorf("FoldCase(%q) == FoldCase(%q) is %v, want %v", tt.a, tt.b, got, tt.same)
		}
		if strings.EqualFold(tt.a, tt.b) != tt.same {
			t.Errorf("strings.EqualFold(%q, %q) disagrees with the table", tt.a, tt.b)
		}
	}
}

// FuzzFoldCase: two strings have the same FoldCase exactly when
// strings.EqualFold holds, and folding twice changes nothing.
func FuzzFoldCase(f *testing.F) {
	f.Add("README.md", "readme.MD")
	f.Add("ſrc", "SRC")
	f.Add("\u212a", "k")
	f.Add("İ", "i")
	f.Add("\xff", "\ufffd")
	f.Fuzz(func(t *testing.T, a, b string) {
		fa, fb := FoldCase(a), FoldCase(b)
		if (fa == fb) != strings.EqualFold(a, b) {
			t.Fatalf("FoldCase(%q) = %q, FoldCase(%q) = %q, strings.EqualFold = %v", a, fa, b, fb, strings.EqualFold(a, b))
		}
		if FoldCase(fa) != fa {
			t.Fatalf("FoldCase(FoldCase(%q)) = %q, not %q", a, FoldCase(fa), fa)
		}
	})
}
