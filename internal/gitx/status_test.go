package gitx

import (
	"errors"
	"slices"
	"testing"
)

func TestDirtyPaths(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	r, _ := seedRepo(t, map[string]string{
		"clean.go":        "c\n",
		"old.go":          lines(20),
		"staged.go":       "s\n",
		"unstaged.go":     "u\n",
		"deleted.go":      "d\n",
		"dir/clean.go":    "dc\n",
		"dir/sub/edit.go": "e\n",
		"with space.txt":  "w\n",
		"ünïcode.txt":     "u\n",
		".gitignore":      "*.log\n",
	})
	runGit(t, r.Dir, "mv", "old.go", "renamed.go") // staged rename
	writeFile(t, r, "staged.go", "s2\n")
	runGit(t, r.Dir, "add", "staged.go")
	writeFile(t, r, "unstaged.go", "u2\n")
	runGit(t, r.Dir, "rm", "-q", "--cached", "deleted.go") // staged deletion, file left untracked
	writeFile(t, r, "newdir/deep/untracked.go", "n\n")
	writeFile(t, r, "dir/sub/edit.go", "e2\n")
	writeFile(t, r, "with space.txt", "w2\n")
	writeFile(t, r, "ünïcode.txt", "u2\n")
	writeFile(t, r, "ignored.log", "i\n")

	tests := []struct {
		name  string
		paths []string
		want  []string
	}{
		{"clean files", []string{"clean.go", "dir/clean.go", ".gitignore"}, nil},
		{"rename source and destination", []string{"old.go", "renamed.go"}, []string{"old.go", "renamed.go"}},
		{"staged", []string{"staged.go"}, []string{"staged.go"}},
		{"unstaged", []string{"unstaged.go"}, []string{"unstaged.go"}},
		{"deleted from index", []string{"deleted.go"}, []string{"deleted.go"}},
		{"untracked in new dirs", []string{"newdir/deep/untracked.go"}, []string{"newdir/deep/untracked.go"}},
		{"directory holding a change", []string{"dir", "dir/sub", "newdir"}, []string{"dir", "dir/sub", "newdir"}},
		{"spaces and unicode", []string{"with space.txt", "ünïcode.txt"}, []string{"with space.txt", "ünïcode.txt"}},
		{"ignored is not dirty", []string{"ignored.log"}, nil},
		{"absent path", []string{"never/existed.go"}, nil},
		{"order kept, duplicates dropped", []string{"unstaged.go", "clean.go", "staged.go", "unstaged.go"}, []string{"unstaged.go", "staged.go"}},
		{"none", nil, nil},
	}
	for _, tt := range tests {
		got, err := r.DirtyPaths(ctx, tt.paths)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: DirtyPaths(%q) = %q, want %q", tt.name, tt.paths, got, tt.want)
		}
	}
	if _, err := r.DirtyPaths(ctx, []string{"../x"}); !errors.Is(err, ErrBadPath) {
		t.Errorf("DirtyPaths(../x) = %v, want ErrBadPath", err)
	}
}

func TestParseStatusZ(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    []StatusEntry
		wantErr bool
	}{
		{"", nil, false},
		{" M a.go\x00", []StatusEntry{{X: ' ', Y: 'M', Path: "a.go"}}, false},
		{"R  new name\x00old name\x00?? x\x00", []StatusEntry{
			{X: 'R', Y: ' ', Path: "new name", Orig: "old name"}, {X: '?', Y: '?', Path: "x"},
		}, false},
		{"C  copy\x00orig\x00", []StatusEntry{{X: 'C', Y: ' ', Path: "copy", Orig: "orig"}}, false},
		{" R b\x00a\x00", []StatusEntry{{X: ' ', Y: 'R', Path: "b", Orig: "a"}}, false},
		{"M  no-terminator", []StatusEntry{{X: 'M', Y: ' ', Path: "no-terminator"}}, false},
		{"R  new\x00", nil, true},
		{"XY\x00", nil, true},
		{"MMxpath\x00", nil, true},
	}
	for _, tt := range tests {
		got, err := parseStatusZ([]byte(tt.in))
		if (err != nil) != tt.wantErr {
			t.Errorf("parseStatusZ(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("parseStatusZ(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func FuzzParseStatusZ(f *testing.F) {
	f.Add([]byte(" M a.go\x00"))
	f.Add([]byte("R  new\x00old\x00?? x y\x00"))
	f.Add([]byte("UU conflict\x00!! ignored\x00"))
	f.Add([]byte("R  dangling\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := parseStatusZ(b)
		if err != nil {
			return
		}
		// Round trip: serialising the entries and parsing again is stable.
		var out []byte
		for _, e := range entries {
			out = append(out, e.X, e.Y, ' ')
			out = append(out, e.Path...)
			out = append(out, 0)
			if e.Orig != "" {
				out = append(out, e.Orig...)
				out = append(out, 0)
			}
		}
		again, err := parseStatusZ(out)
		if err != nil {
			t.Fatalf("re-parse of %q: %v", out, err)
		}
		if !slices.Equal(entries, again) {
			t.Fatalf("round trip changed %+v to %+v", entries, again)
		}
	})
}
