package gitx

import (
	"testing"
)

func TestGrepFindsCommittedLinesOnly(t *testing.T) {
	ctx := testCtx(t)
	r, head := seedRepo(t, map[string]string{"a.go": "package a\nconst Distance = 2\n", "sub dir/b.txt": "line one\nDistance here\n", "bin.dat": "Distance\x00=2"})
	// A change in the work tree after the commit is not searched.
	writeFile(t, r, "a.go", "package a\nconst Distance = 3\n")
	res, err := r.Grep(ctx, head, `Distance\s*=\s*\d`, GrepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 1 || res.Matches[0] != (GrepMatch{Path: "a.go", Line: 2, Text: "const Distance = 2"}) {
		t.Fatalf("matches = %+v", res.Matches)
	}
	res, err = r.Grep(ctx, head, `here$`, GrepOptions{})
	if err != nil || len(res.Matches) != 1 || res.Matches[0].Path != "sub dir/b.txt" {
		t.Fatalf("path with a space: %+v %v", res, err)
	}
	res, err = r.Grep(ctx, head, `nothing-matches-this`, GrepOptions{})
	if err != nil || len(res.Matches) != 0 {
		t.Fatalf("no match: %+v %v", res, err)
	}
	if _, err := r.Grep(ctx, head, `(`, GrepOptions{}); err == nil {
		t.Fatal("a pattern git cannot compile must be an error")
	}
	res, err = r.Grep(ctx, head, `.`, GrepOptions{MaxBytes: 10})
	if err != nil || !res.Truncated {
		t.Fatalf("a bounded search must say it was cut: %+v %v", res, err)
	}
}

func TestParseGrepNull(t *testing.T) {
	sha := "abc"
	for _, tc := range []struct {
		in      string
		partial bool
		want    int
		bad     bool
	}{
		{"abc:a b\x003\x00text\nabc:c\x001\x00x\n", false, 2, false},
		{"abc:a\x003\x00te", true, 0, false},
		{"abc:a\x00x\x00t\n", false, 0, true},
		{"zzz:a\x001\x00t\n", false, 0, true},
		{"", false, 0, false},
	} {
		got, err := parseGrepNull([]byte(tc.in), sha, tc.partial)
		if (err != nil) != tc.bad || len(got) != tc.want {
			t.Errorf("%q: %+v %v", tc.in, got, err)
		}
	}
}

func FuzzParseGrepNull(f *testing.F) {
	f.Add([]byte("abc:a\x003\x00text\n"), true)
	f.Fuzz(func(t *testing.T, b []byte, partial bool) {
		ms, err := parseGrepNull(b, "abc", partial)
		if err != nil {
			return
		}
		for _, m := range ms {
			if m.Line < 1 {
				t.Fatalf("line %d", m.Line)
			}
		}
	})
}
