package gitx

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestCommitTrailers(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r, plain := seedRepo(t, map[string]string{"a": "a\n"})
	writeFile(t, r, "a", "b\n")
	sha, err := r.Commit(ctx, "orch: accept 0007\n\nBody text: not a trailer.\n\n"+
		"Orch-Task: 0007-add-retry\nOrch-Phase: accept\nSigned-off-by: A <a@example.test>\n"+
		"Signed-off-by: B <b@example.test>\nLong: first part\n  continued here\n", []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.CommitTrailers(ctx, sha)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"Orch-Task":     {"0007-add-retry"},
		"Orch-Phase":    {"accept"},
		"Signed-off-by": {"A <a@example.test>", "B <b@example.test>"},
		"Long":          {"first part continued here"},
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("CommitTrailers = %q, want %q", got, want)
	}
	if got, err := r.CommitTrailers(ctx, plain); err != nil || len(got) != 0 {
		t.Errorf("CommitTrailers(no trailers) = %q, %v", got, err)
	}
}

func TestFindCommitWithTrailer(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	r := newRepo(t)
	if got, err := r.FindCommitWithTrailer(ctx, "Orch-Task", "x", 10); err != nil || got != "" {
		t.Fatalf("on unborn branch = %q, %v", got, err)
	}
	commit := func(content, msg string) string {
		writeFile(t, r, "f", content)
		sha, err := r.Commit(ctx, msg, []string{"f"})
		if err != nil {
			t.Fatal(err)
		}
		return sha
	}
	commit("1\n", "first\n\nOrch-Task: 0001\n")
	second := commit("2\n", "second\n\nOrch-Task: 0002\n")
	newest := commit("3\n", "third\n\nOrch-Task: 0001\nOther: y\n")
	commit("4\n", "Orch-Task: 0009 in a subject is no trailer\n")
	commit("5\n", "fifth\n\nmentions Orch-Task: 0003 in prose\n")

	tests := []struct {
		key, value string
		limit      int
		want       string
	}{
		{"Orch-Task", "0001", 0, newest},
		{"orch-task", "0001", 10, newest},  // keys compare case-insensitively
		{"Orch-Task", " 0002 ", 0, second}, // values compare trimmed
		{"Orch-Task", "0001", 2, ""},       // beyond the limit
		{"Orch-Task", "0001", 3, newest},
		{"Orch-Task", "000", 0, ""},
		{"Orch-Task", "0009", 0, ""},
		{"Orch-Task", "0003", 0, ""},
		{"Other", "y", 0, newest},
	}
	for _, tt := range tests {
		got, err := r.FindCommitWithTrailer(ctx, tt.key, tt.value, tt.limit)
		if err != nil || got != tt.want {
			t.Errorf("FindCommitWithTrailer(%q, %q, %d) = %q, %v; want %q", tt.key, tt.value, tt.limit, got, err, tt.want)
		}
	}
	if _, err := r.FindCommitWithTrailer(ctx, "bad key", "x", 0); err == nil {
		t.Error("a key with a space was accepted")
	}
}

func TestParseTrailerLines(t *testing.T) {
	t.Parallel()
	got := parseTrailerLines("A: 1\nB:2\nA: 3\n\nnot a trailer\nbad key: x\n: empty\n")
	want := map[string][]string{"A": {"1", "3"}, "B": {"2"}}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("parseTrailerLines = %q, want %q", got, want)
	}
}

func FuzzParseLogTrailers(f *testing.F) {
	sha := "0123456789abcdef0123456789abcdef01234567"
	f.Add([]byte(sha + "\nOrch-Task: 1\n\x00" + sha + "\n\x00"))
	f.Add([]byte(sha + "\nA: b: c\nweird\x01: x\n\x00"))
	f.Add([]byte("nonsense\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := parseLogTrailers(b)
		if err != nil {
			return
		}
		for _, rec := range recs {
			if !isHex(rec.sha) {
				t.Fatalf("bad sha %q", rec.sha)
			}
			for k, vs := range rec.trailers {
				if k == "" || strings.ContainsAny(k, " \t\n") {
					t.Fatalf("bad key %q", k)
				}
				for _, v := range vs {
					if strings.Contains(v, "\n") || v != strings.TrimSpace(v) {
						t.Fatalf("bad value %q", v)
					}
				}
			}
		}
	})
}
