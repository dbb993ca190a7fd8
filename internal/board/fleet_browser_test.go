package board_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/orchdev/orch/internal/agent/planner"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/board"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
)

// TestBrowserFleet drives `orch serve` with [fleet] in chromium: the
// fleet's tasks on the board beside a local one, a card that moves when
// the fleet moves its task (no reload), and an answer through the fleet
// from a task's page — first refused by the fleet with orch's message and
// exit code, then carried out. orch-fleet is this test binary
// (fleetstandin_test.go), named by [fleet] binary.
func TestBrowserFleet(t *testing.T) {
	exe := chromium(t)
	local, fl := board.NewFixture(t), board.NewFixture(t)
	local.Task("l1", "a local task")
	fl.Task("f-q", "a question in the fleet")
	fl.Plan("f-q", "Greet from the fleet", "How warmly?", nil)
	fl.Task("f-move", "a task the fleet moves")
	yes := "yes"
	fl.Plan("f-move", "Move me", "Ready?", &yes)
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(local.Root, ".orch", "config.toml")
	old, _ := os.ReadFile(cfg)
	if err := os.WriteFile(cfg, append(old, fmt.Sprintf("\n[fleet]\naddress = \"127.0.0.1:7233\"\nbinary = %q\n", bin)...), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(board.FleetStandinRoot, fl.Root)
	t.Setenv(board.FleetStandinAddr, "127.0.0.1:7233")

	url := serve(t, local.Root)
	base := strings.SplitN(url, "/?", 2)[0]
	ctx := browser(t, exe)
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	do(t, ctx, "open the board", 30*time.Second,
		chromedp.Navigate(url),
		chromedp.WaitVisible(css(card(lifecycle.Planning, "l1"))),
		chromedp.WaitVisible(css(card(lifecycle.Planning, "f-q"))),
		chromedp.WaitVisible(css("#live.on")),
	)
	if text := textOf(t, ctx, "waits", card(lifecycle.Planning, "f-q")+" .waits"); text != "waits for your answer to q1" {
		t.Errorf("the fleet's question card says %q", text)
	}
	if text := textOf(t, ctx, "tag", card(lifecycle.Planning, "f-q")+" .tag"); text != "fleet" {
		t.Errorf("the fleet's card is tagged %q", text)
	}

	// The fleet moves a task: its card moves, without a reload.
	get(t, ctx, "mark the page", chromedp.Evaluate[string](`window.orchMarker = "same page"`))
	fl.Next("f-move") // planning → plan_review, in the fleet
	do(t, ctx, "the fleet's card moves", 30*time.Second, chromedp.WaitVisible(css(card(lifecycle.PlanReview, "f-move"))))
	if m := get(t, ctx, "marker", chromedp.Evaluate[string](`window.orchMarker || ""`)); m != "same page" {
		t.Error("the page was reloaded instead of updated")
	}

	// A blank answer: the fleet refuses it as orch answer does.
	want := planner.CheckAnswer("f-q", lifecycle.Planning, artifact.LoadPlan(fl.Dir("f-q")), "q1", "   ")
	if want == nil {
		t.Fatal("a blank answer is not refused locally: the case tests nothing")
	}
	do(t, ctx, "the fleet task's page", 30*time.Second,
		chromedp.Navigate(base+"/task/f-q"),
		chromedp.WaitVisible(css("#actions #answer-q1")),
		chromedp.WaitVisible(css(`nav.tasks a[aria-current="page"][href="/task/f-q"]`)),
	)
	answer(t, ctx, "   ")
	do(t, ctx, "a blank answer", 60*time.Second, chromedp.WaitVisible(css("#job.finished ul#job-result")))
	first, _, _ := strings.Cut(exit.Format(want), "\n")
	if text := textOf(t, ctx, "refusal", "#job"); !strings.Contains(text, first) || !strings.Contains(text, fmt.Sprintf("exit %d", exit.Of(want))) {
		t.Errorf("the page shows %q, want the fleet's refusal %q with exit %d", text, first, exit.Of(want))
	}

	// The answer, carried out by the fleet (on the page loaded again: the
	// one shown swaps its content as the job ends).
	do(t, ctx, "the page again", 60*time.Second,
		chromedp.Navigate(base+"/task/f-q"),
		chromedp.WaitVisible(css("#actions #answer-q1")),
	)
	answer(t, ctx, "Warmly, by name.")
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	err = chromedp.Do(c, chromedp.WaitVisible(css("#job.finished p#job-result")))
	cancel()
	if err != nil {
		t.Fatalf("the answer's outcome is not shown (%v): %s", err, textOf(t, ctx, "actions", "main"))
	}
	if text := textOf(t, ctx, "result", "#job-result"); !strings.Contains(text, "the fleet: task f-q is in planning at revision") {
		t.Errorf("after answering the page says %q", text)
	}
	plan := artifact.LoadPlan(fl.Dir("f-q"))
	if !plan.OK() || plan.Value.Questions[0].Answer == nil || *plan.Value.Questions[0].Answer != "Warmly, by name." {
		t.Fatalf("the answer is not in the fleet's plan: %+v", plan)
	}
	if n := get(t, ctx, "answer forms", chromedp.Evaluate[int](`document.querySelectorAll("#answers").length`)); n != 0 {
		t.Error("the page still offers to answer an answered question")
	}
}

// answer fills in and submits q1's answer form in one step in the page:
// the page may swap its content (the last job's outcome reloads it) while
// a person, or chromedp key by key, types.
func answer(t *testing.T, ctx context.Context, text string) {
	t.Helper()
	b, _ := json.Marshal(text)
	get(t, ctx, "answer "+string(b), chromedp.Poll[bool](`(() => { const a = document.getElementById("answer-q1");
		if (!a) return null; a.value = `+string(b)+`; a.form.submit(); return true })()`))
}
