package evidence

import (
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/gitx"
)

func TestLanded(t *testing.T) {
	c := func(sha string, kv ...string) gitx.TrailerCommit {
		tr := map[string][]string{}
		for i := 0; i < len(kv); i += 2 {
			tr[kv[i]] = append(tr[kv[i]], kv[i+1])
		}
		return gitx.TrailerCommit{SHA: sha, Trailers: tr}
	}
	a, b, r := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("9", 40)
	for _, tc := range []struct {
		name       string
		found      []gitx.TrailerCommit // newest first
		sha, diffs string
	}{
		{"none", nil, "", ""},
		{"orch's commit", []gitx.TrailerCommit{c(a, "Orch-Task", "t", "Orch-Plan", "p", "Orch-Diff", "d")}, a, "d"},
		{"the newest change wins", []gitx.TrailerCommit{c(b, "Orch-Task", "t", "Orch-Plan", "p", "Orch-Diff", "e"), c(a, "Orch-Task", "t", "Orch-Plan", "p", "Orch-Diff", "d")}, b, "e"},
		{"a reverted change does not count", []gitx.TrailerCommit{c(r, "Orch-Task", "t", "Orch-Revert", a), c(a, "Orch-Task", "t", "Orch-Plan", "p", "Orch-Diff", "d")}, "", ""},
		{"an older change under a reverted one", []gitx.TrailerCommit{c(r, "Orch-Task", "t", "Orch-Revert", b), c(b, "Orch-Task", "t", "Orch-Plan", "p", "Orch-Diff", "e"), c(a, "Orch-Task", "t", "Orch-Plan", "p", "Orch-Diff", "d")}, a, "d"},
		{"a forged block (two Orch-Task) is not orch's", []gitx.TrailerCommit{c(a, "Orch-Task", "t", "Orch-Task", "u", "Orch-Plan", "p", "Orch-Diff", "d")}, "", ""},
		{"Orch-Task alone is not orch's", []gitx.TrailerCommit{c(a, "Orch-Task", "t")}, "", ""},
		{"a commit before Orch-Diff", []gitx.TrailerCommit{c(a, "Orch-Task", "t", "Orch-Plan", "p")}, a, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Landed(tc.found)
			if l.SHA != tc.sha || l.DiffSHA256 != tc.diffs || l.Err != nil {
				t.Errorf("Landed = %+v, want %q with Orch-Diff %q", l, tc.sha, tc.diffs)
			}
		})
	}
}
