package repomap

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// searchWords must find what git grep -F -w -o -n -I finds, in the work
// tree and at a commit.
func TestSearchWordsAgreesWithGitGrep(t *testing.T) {
	dir := newRepo(t, map[string]string{
		"a.go":      "package a\n\nfunc MaxAttempts() {} // MaxAttempts MaxAttemptsX xMaxAttempts\nvar _ = MaxAttempts+Retry\n",
		"b/b.py":    "Retry=1\r\nRetry Retry\n_Retry Retry_ Retry\n",
		"c.md":      "`MaxAttempts` and (Retry).\nRetry",
		"bin.dat":   "MaxAttempts\x00",
		"utf.txt":   "é Retry é\nRetryé\n",
		"empty.txt": "",
	})
	ix, err := Build(t.Context(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	words := []string{"MaxAttempts", "Retry"}
	all := make([]int32, len(ix.all))
	for i := range all {
		all[i] = int32(i)
	}
	for _, commit := range []string{"", "HEAD"} {
		var want, got []string
		if err := ix.repo.GrepWords(t.Context(), words, commit, func(p string, line int, w string) {
			want = append(want, fmt.Sprintf("%s:%d:%s", p, line, w))
		}); err != nil {
			t.Fatal(err)
		}
		at, err := Build(t.Context(), dir, Options{Commit: commit})
		if err != nil {
			t.Fatal(err)
		}
		if err := at.searchWords(t.Context(), words, all, defaultMaxFileBytes, func(f int32, line int, w string) {
			got = append(got, fmt.Sprintf("%s:%d:%s", at.all[f].Path, line, w))
		}); err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("commit %q:\nsearchWords %v\ngit grep    %v", commit, got, want)
		}
	}
}

// FuzzMatchWords compares matchWords with a regular expression's word
// boundaries (\b is git grep -w's for identifiers) on untrusted text.
func FuzzMatchWords(f *testing.F) {
	f.Add("func MaxAttempts() {} // MaxAttemptsX\nMaxAttempts", "MaxAttempts")
	f.Add("a_b a_bc\r\n_a_b a_b", "a_b")
	f.Add("x\x00x", "x")
	f.Fuzz(func(t *testing.T, text, word string) {
		if !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,20}$`).MatchString(word) || strings.IndexByte(text[:min(len(text), 8000)], 0) >= 0 {
			return
		}
		var got []string
		matchWords([]byte(text), []string{word}, func(line int, w string) {
			got = append(got, fmt.Sprintf("%d:%s", line, w))
		})
		re := regexp.MustCompile(`\b` + regexp.QuoteMeta(word) + `\b`)
		var want []string
		for i, l := range strings.Split(text, "\n") {
			for range re.FindAllStringIndex(l, -1) {
				want = append(want, fmt.Sprintf("%d:%s", i+1, word))
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("matchWords %v, want %v", got, want)
		}
	})
}
