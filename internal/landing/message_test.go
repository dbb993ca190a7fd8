package landing

import (
	"context"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/hostile"
)

// forgeries are plan titles and reasons that try to add lines or trailers
// to orch's commit messages.
var forgeries = []string{
	"Fix typo\n\nOrch-Task: victim\nOrch-Plan: 0000",
	"Fix typo\r\n\r\nOrch-Task: victim\r\nOrch-Plan: 0000\r\n",
	"Fix\rOrch-Task: victim\r",
	"Fix\r\rOrch-Task: victim",
	"Orch-Task: victim",
	"Orch-Task: victim\nOrch-Revert: 0123456789012345678901234567890123456789",
	"ok\n---\nOrch-Task: victim",
	"ok\u2028\u2029Orch-Task: victim",
	"ok\x85Orch-Task: victim",
	"\n\n\nOrch-Task: victim\n\n\n",
	"ok\n \t \nOrch-Task: victim\n",
}

// The accept and revert commit messages carry no control character of an
// artifact, their subject is one line, and a forged Orch-Task line in a
// title or a reason never names a commit: taskCommits finds the task's
// own commits, and none for the forged id.
func TestCommitMessagesForgedTrailers(t *testing.T) {
	ctx := context.Background()
	dir, _ := gittest.Seed(t, map[string]string{"a.txt": "a\n"})
	commit := func(msg string) string {
		tree := gittest.Git(t, dir, "rev-parse", "HEAD^{tree}")
		c := gittest.GitInput(t, dir, []byte(msg), "commit-tree", tree, "-p", "HEAD", "-F", "-")
		gittest.Git(t, dir, "update-ref", "HEAD", c)
		return c
	}
	var texts []string
	texts = append(texts, forgeries...)
	for _, c := range hostile.TerminalCases() {
		texts = append(texts, c.Text)
	}
	var accepts, reverts []string
	for _, text := range texts {
		ev := Evidence{PlanTitle: text, PlanSHA256: strings.Repeat("ab", 32)}
		a := commit(commitMessage("h", ev, []string{text, "second reason " + text}, strings.Repeat("cd", 32)))
		accepts = append(accepts, a)
		reverts = append(reverts, commit(revertMessage("h", text, a, text)))
	}
	// Without a title: orch's own subject.
	if msg := commitMessage("h", Evidence{PlanTitle: "\x1b\x07\r\n \t\u202e"}, nil, ""); !strings.HasPrefix(msg, "orch task h\n\n") {
		t.Errorf("empty title: %q", msg)
	}

	repo, err := gitx.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"victim", "Victim", "h\nOrch-Task: victim"} {
		change, rev, err := taskCommits(ctx, repo, id)
		if err != nil || change != "" || len(rev) != 0 {
			t.Errorf("taskCommits(%q) = %q, %d reverts, %v: a forged trailer named a commit", id, change, len(rev), err)
		}
	}
	change, rev, err := taskCommits(ctx, repo, "h")
	if err != nil || change != accepts[len(accepts)-1] || len(rev) != len(reverts) {
		t.Errorf("taskCommits(h) = %q, %d reverts, %v; want %q and %d reverts", change, len(rev), err, accepts[len(accepts)-1], len(reverts))
	}
	for i, c := range append(accepts, reverts...) {
		msg := gittest.Git(t, dir, "log", "-1", "--format=%B", c)
		if bad := hostile.TerminalViolation(msg); bad != "" {
			t.Errorf("message %d: %s:\n%q", i, bad, msg)
		}
		tr, err := repo.CommitTrailers(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		// Accepts carry Orch-Task, Orch-Plan and Orch-Diff; reverts
		// Orch-Task and Orch-Revert.
		if got := tr[TrailerTask]; len(tr) != 2+btoi(i < len(accepts)) || len(got) != 1 || got[0] != "h" {
			t.Errorf("message %d: trailers %q, want orch's own:\n%q", i, tr, msg)
		}
		if subject := gittest.Git(t, dir, "log", "-1", "--format=%s", c); strings.Contains(subject, "Orch-Task") && !strings.Contains(msg, subject+"\n\n") {
			t.Errorf("message %d: the subject spans lines: %q", i, msg)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// orchTrailers: only the block orch writes counts, whoever wrote the
// commit.
func TestOrchTrailers(t *testing.T) {
	sha := strings.Repeat("a", 40)
	for _, tt := range []struct {
		trailers map[string][]string
		want     bool
	}{
		{map[string][]string{"Orch-Task": {"h"}, "Orch-Plan": {"ab"}}, true},
		{map[string][]string{"Orch-Task": {"h"}, "Orch-Revert": {sha}}, true},
		{map[string][]string{"Orch-Task": {"h"}}, false},
		{map[string][]string{"Orch-Task": {"h", "victim"}, "Orch-Plan": {"ab"}}, false},
		{map[string][]string{"Orch-Task": {"h"}, "orch-task": {"victim"}, "Orch-Plan": {"ab"}}, false},
		{map[string][]string{"Orch-Task": {"h"}, "Orch-Plan": {"ab"}, "Orch-Revert": {sha}}, false},
		{map[string][]string{"Orch-Task": {"h"}, "Orch-Revert": {"HEAD~1"}}, false},
		{map[string][]string{"Orch-Task": {"h"}, "Orch-Plan": {"ab"}, "Orch-Diff": {"cd"}}, true},
		{map[string][]string{"Orch-Task": {"h"}, "Orch-Plan": {"ab"}, "Orch-Diff": {"cd", "ef"}}, false},
		{map[string][]string{"Orch-Task": {"h"}, "Orch-Revert": {sha}, "Orch-Diff": {"cd"}}, false},
	} {
		if got := orchTrailers(gitx.TrailerCommit{Trailers: tt.trailers}); got != tt.want {
			t.Errorf("orchTrailers(%v) = %v, want %v", tt.trailers, got, tt.want)
		}
	}
}
