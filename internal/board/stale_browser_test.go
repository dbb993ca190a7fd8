package board_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/board"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
)

// TestBrowserStalePage drives every gate form of a task page in chromium
// after the CLI changed the task behind it: the person is half-way through
// the form (so the page keeps it and shows its reload banner), submits it,
// and gets HTTP 409 with the task as it is now and the refusal saying what
// changed; nothing was done. The accept case is the attack of issue 27: the
// change redone and another patch brought back to accept.
func TestBrowserStalePage(t *testing.T) {
	exe := chromium(t)
	f := board.NewFixture(t)
	evil := "diff --git a/hello.txt b/hello.txt\nnew file mode 100644\n--- /dev/null\n+++ b/hello.txt\n@@ -0,0 +1 @@\n+EVIL\n"
	bg := context.Background()
	cases := []struct {
		action string
		setup  func(id string)
		// fill types into the form (the person is half-way through it);
		// submit sends it.
		fill, submit []chromedp.Action[chromedp.Void]
		meanwhile    func(id string)
		says         string
	}{
		{"next", func(id string) {
			yes := "yes"
			f.Plan(id, "Greet", "Ready?", &yes)
		}, []chromedp.Action[chromedp.Void]{chromedp.SendKeys(chromedp.CSS("#redo-reason"), "thinking about it")},
			[]chromedp.Action[chromedp.Void]{chromedp.Click(chromedp.CSS("#btn-next"))},
			func(id string) { f.Move(id, lifecycle.PlanReview) }, "moved planning → plan_review by override"},
		{"override", func(id string) {},
			[]chromedp.Action[chromedp.Void]{chromedp.SendKeys(chromedp.CSS("#override-reason"), "hotfix")},
			[]chromedp.Action[chromedp.Void]{chromedp.Click(chromedp.CSS("#btn-override"))},
			func(id string) {
				if _, err := f.O.Redo(bg, id, lifecycle.Planning, "again"); err != nil {
					t.Fatal(err)
				}
			}, "planning was redone"},
		{"redo", func(id string) { f.ToTest(id, "Greet") },
			[]chromedp.Action[chromedp.Void]{chromedp.SendKeys(chromedp.CSS("#redo-reason"), "once more")},
			[]chromedp.Action[chromedp.Void]{chromedp.Click(chromedp.CSS("#btn-redo"))},
			func(id string) { f.Move(id, lifecycle.Accept) }, "moved test → accept by override"},
		{"answer", func(id string) { f.Plan(id, "Greet", "How warmly?", nil) },
			[]chromedp.Action[chromedp.Void]{chromedp.SendKeys(chromedp.CSS("#answer-q1"), "warmly")},
			[]chromedp.Action[chromedp.Void]{chromedp.Submit(chromedp.CSS("#answer-q1"))},
			func(id string) {
				f.Move(id, lifecycle.PlanReview)
				f.Move(id, lifecycle.Planning)
			}, "moved plan_review → planning by override"},
		{"accept", func(id string) { f.ToAccept(id, "Greet") },
			[]chromedp.Action[chromedp.Void]{chromedp.SendKeys(chromedp.CSS("#accept-reasons"), "I read the diff: it says hello")},
			[]chromedp.Action[chromedp.Void]{chromedp.Click(chromedp.CSS("#btn-accept"))},
			func(id string) {
				if _, err := f.O.Redo(bg, id, lifecycle.Codegen, "another try"); err != nil {
					t.Fatal(err)
				}
				f.Write(id, "code/files/hello.txt", "EVIL\n")
				f.Write(id, "code/diff.patch", evil)
				f.Next(id)
				f.Write(id, "review/code-review.json", `{"ok": true, "issues": []}`)
				f.Next(id)
				f.Write(id, "test/report.json", `{"status": "completed", "overall_pass": true, "summary": {"passed": 1, "failed": 0, "skipped": 0, "error": 0}, "suites": [{"id": "go", "kind": "test", "command": "go test ./...", "exit_code": 0, "overall_pass": true, "summary": {"passed": 1, "failed": 0, "skipped": 0, "error": 0}, "cases": [{"name": "TestHello", "status": "pass"}]}]}`)
				f.Next(id)
			}, "the change was redone after this page was loaded"},
		{"revert", func(id string) { f.Move(id, lifecycle.Revert) },
			[]chromedp.Action[chromedp.Void]{chromedp.SendKeys(chromedp.CSS("#revert-reason"), "not wanted")},
			[]chromedp.Action[chromedp.Void]{chromedp.Click(chromedp.CSS("#btn-revert"))},
			func(id string) {
				if _, err := f.O.Redo(bg, id, lifecycle.Revert, "look again"); err != nil {
					t.Fatal(err)
				}
			}, "revert was redone"},
	}
	for _, c := range cases {
		f.Task("stale-"+c.action, "a task for the stale "+c.action+" form")
		c.setup("stale-" + c.action)
	}
	s, _ := f.Board(board.Options{})
	ctx := browser(t, exe)
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	base := strings.SplitN(s.URL(), "/?", 2)[0]
	do(t, ctx, "open the board", 30*time.Second, chromedp.Navigate(s.URL()), chromedp.WaitVisible(css("#live.on")))
	for _, c := range cases {
		t.Run(c.action, func(t *testing.T) {
			id := "stale-" + c.action
			do(t, ctx, "the task page", 30*time.Second, chromedp.Navigate(base+"/task/"+id), chromedp.WaitVisible(css("#live.on")))
			do(t, ctx, "half-way through the form", 10*time.Second, c.fill...)
			head := gittest.Git(t, f.Root, "rev-parse", "HEAD")
			c.meanwhile(id)
			before, err := f.O.Status(id)
			if err != nil {
				t.Fatal(err)
			}
			// The page noticed and kept the form under the person's hands.
			do(t, ctx, "the reload banner", 15*time.Second, chromedp.WaitVisible(css("#stale")))
			do(t, ctx, "submit the old form", 30*time.Second, append(c.submit, chromedp.WaitVisible(css("#flash.error")))...)
			msg := textOf(t, ctx, "the refusal", "#flash .msg")
			if !strings.Contains(msg, c.says) || !strings.Contains(msg, "review it again") {
				t.Errorf("the refusal says %q, want %q", msg, c.says)
			}
			status := get(t, ctx, "the status", chromedp.Evaluate[int](`performance.getEntriesByType("navigation")[0].responseStatus`))
			if status != 409 {
				t.Errorf("the old form got HTTP %d, want 409", status)
			}
			if ph := textOf(t, ctx, "the phase", "#phase"); ph != string(before.Phase) {
				t.Errorf("the page shows phase %s, the task is in %s", ph, before.Phase)
			}
			// The page's deferred script replaces the address once it runs,
			// which may be just after the refusal is visible: wait for it.
			c2, cancel2 := context.WithTimeout(ctx, 10*time.Second)
			err = chromedp.Do(c2, chromedp.Poll[chromedp.Void](`location.pathname === "/task/`+id+`"`))
			cancel2()
			if loc := get(t, ctx, "location", chromedp.Location()); err != nil || !strings.HasSuffix(strings.SplitN(loc, "#", 2)[0], "/task/"+id) {
				t.Errorf("the page's address is %s, want the task's (%v)", loc, err)
			}
			after, err := f.O.Status(id)
			if err != nil {
				t.Fatal(err)
			}
			if after.Revision != before.Revision {
				t.Errorf("the refused %s changed the task: revision %d → %d", c.action, before.Revision, after.Revision)
			}
			if now := gittest.Git(t, f.Root, "rev-parse", "HEAD"); now != head {
				t.Errorf("HEAD moved: %s → %s", head, now)
			}
			if c.action == "accept" {
				if d := artifact.LoadDecision(f.Dir(id)); d.Present {
					t.Errorf("a decision was recorded: %+v", d.Value)
				}
			}
		})
	}
}
