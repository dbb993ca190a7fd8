package board_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/board"
	"github.com/orchdev/orch/internal/cli"
	"github.com/orchdev/orch/internal/demo"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

// xssTitle is the plan title that must render as text.
const xssTitle = `<img src=x onerror=alert(1)>`

// chromium finds Debian's chromium (or another Chrome). Without one the
// browser tests skip, unless CI or ORCH_REQUIRE_BROWSER (.ci/run) is set:
// there they must run.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" || os.Getenv("ORCH_REQUIRE_BROWSER") != "" {
		t.Fatal("CI (or ORCH_REQUIRE_BROWSER) is set and no chromium was found: the browser tests must run there (apt-get install chromium; .ci/run installs it)")
	}
	t.Skip("no chromium: the browser tests skip (apt-get install chromium)")
	return ""
}

// browser starts a headless chromium with a fresh profile. The name
// evil.test resolves to this machine, for the cross-site and rebinding
// cases.
func browser(t *testing.T, exe string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true), // we run as root in CI
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("host-resolver-rules", "MAP evil.test 127.0.0.1"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	// No page of the board may ever open a dialog: that would be a
	// script injected through an artifact.
	var mu sync.Mutex
	var dialogs []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			mu.Lock()
			dialogs = append(dialogs, d.Message)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if len(dialogs) > 0 {
			t.Errorf("a page opened JavaScript dialogs: %q", dialogs)
		}
	})
	return ctx
}

// do runs steps within timeout.
func do(t *testing.T, ctx context.Context, what string, timeout time.Duration, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	start := time.Now()
	defer func() { t.Logf("%s: %v", what, time.Since(start).Round(time.Millisecond)) }()
	c, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// textOf waits until the element sel exists with some text and returns
// its text, trimmed. It reads the text in one step in the page, so a page
// whose content the board's script swaps meanwhile is never read half-way.
func textOf(t *testing.T, ctx context.Context, what, sel string) string {
	t.Helper()
	b, _ := json.Marshal(sel)
	return get(t, ctx, what, chromedp.Poll[string](`(() => { const e = document.querySelector(`+string(b)+`);
		return e && e.textContent.trim() ? e.textContent.trim() : null })()`))
}

// get runs one action that returns a value.
func get[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// serve runs `orch serve --addr 127.0.0.1:0` through the CLI in dir and
// returns the URL it printed.
func serve(t *testing.T, dir string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(ctx, cli.Env{Args: []string{"serve", "--addr", "127.0.0.1:0"}, Stdin: strings.NewReader(""), Stdout: pw, Stderr: &stderr,
			Dir: dir, Getenv: os.Getenv, Now: time.Now})
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("orch serve exited %d: %s", code, stderr.String())
		}
	})
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "http://") {
			go io.Copy(io.Discard, pr)
			return line
		}
	}
	t.Fatalf("orch serve printed no URL: %s", stderr.String())
	return ""
}

// orch runs an orch command in dir, as a person at a terminal would.
func orch(t *testing.T, dir string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), cli.Env{Args: args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: dir, Getenv: os.Getenv, Now: time.Now})
	if code != 0 {
		t.Fatalf("orch %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

// card is the selector of task id's card in phase p's column.
func card(p lifecycle.Phase, id string) string {
	return fmt.Sprintf(`section.column[data-phase="%s"] a.card[data-task="%s"]`, p, id)
}

// TestBrowser drives the board in headless chromium: the demo's task and
// hand-made ones on the board, refusals without the token, with a foreign
// Host and from another site, the injected title kept as text, an answer,
// an accept that commits, a card that moves when the CLI moves its task,
// and the screenshots of docs/.
func TestBrowser(t *testing.T) {
	exe := chromium(t)
	// The demo's repository: a task through the whole lifecycle, with
	// everything a task page shows.
	start := time.Now()
	defer func() { t.Logf("total %v", time.Since(start)) }()
	root := filepath.Join(t.TempDir(), "textkit")
	if _, err := demo.Run(context.Background(), demo.Options{Dir: root, Getenv: os.Getenv}); err != nil {
		t.Fatalf("demo: %v", err)
	}
	p, err := task.FindProject(root)
	if err != nil {
		t.Fatal(err)
	}
	f := &board.Fixture{T: t, Root: root, P: p, O: orchestrator.New(p)}
	f.Task("0002-question", "greet people")
	f.Plan("0002-question", "Greet people", "How warmly should we greet?", nil)
	f.Task("0003-hello", "add hello.txt")
	f.ToAccept("0003-hello", "Add hello.txt")
	f.Task("0004-move", "a task the CLI moves")
	yes := "yes"
	f.Plan("0004-move", "Move me", "Ready?", &yes)
	f.Next("0004-move") // → plan_review
	f.Write("0004-move", "review/plan-review.json", `{"ok": true, "blocked": false, "reviewers": [{"id": "risk", "ok": true}]}`)
	f.Task("0005-xss", "hostile title")
	f.Plan("0005-xss", xssTitle, "", nil)

	t.Logf("demo and tasks: %v", time.Since(start))
	url := serve(t, root)
	base := strings.SplitN(url, "/?", 2)[0]
	ctx := browser(t, exe)
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }

	// Refused: no token; a rebound name; a form posted from another site.
	do(t, ctx, "no token", 30*time.Second, chromedp.Navigate(base+"/"))
	if text := textOf(t, ctx, "body", "body"); !strings.Contains(text, "needs its token") {
		t.Errorf("without the token the board says %q", text)
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
	do(t, ctx, "foreign Host", 30*time.Second, chromedp.Navigate("http://evil.test:"+port+"/?token=x"))
	if text := textOf(t, ctx, "body", "body"); !strings.Contains(text, "only to its own address") {
		t.Errorf("with a foreign Host the board says %q", text)
	}

	// The board from the printed URL.
	do(t, ctx, "open the board", 30*time.Second,
		chromedp.Navigate(url),
		chromedp.WaitVisible(css(card(lifecycle.Done, "0001-add-reverse"))),
		chromedp.WaitVisible(css("#live.on")), // the script runs under the policy and the stream is open
	)
	if loc := get(t, ctx, "location", chromedp.Location()); strings.Contains(loc, "token=") {
		t.Errorf("the token stayed in the address bar: %s", loc)
	}
	for id, ph := range map[string]lifecycle.Phase{"0002-question": lifecycle.Planning, "0003-hello": lifecycle.Accept, "0004-move": lifecycle.PlanReview, "0005-xss": lifecycle.Planning} {
		do(t, ctx, "card "+id, 10*time.Second, chromedp.WaitVisible(css(card(ph, id))))
	}
	title := textOf(t, ctx, "the hostile title", card(lifecycle.Planning, "0005-xss")+" .title")
	injected := get(t, ctx, "injected elements", chromedp.Evaluate[int](`document.querySelectorAll("main img, main script, main iframe").length`))
	if title != xssTitle || injected != 0 {
		t.Errorf("the title renders as %q with %d injected elements, want the text %q", title, injected, xssTitle)
	}
	if text := textOf(t, ctx, "waits", card(lifecycle.Planning, "0002-question")+" .waits"); text != "waits for your answer to q1" {
		t.Errorf("the question's card says %q", text)
	}
	shot(t, ctx, "board.png", false)

	// The CLI moves a task: its card moves, without a reload.
	get(t, ctx, "mark the page", chromedp.Evaluate[string](`window.orchMarker = "same page"`))
	orch(t, root, "next", "--task", "0004-move")
	do(t, ctx, "the card moves", 10*time.Second, chromedp.WaitVisible(css(card(lifecycle.Codegen, "0004-move"))))
	if m := get(t, ctx, "marker", chromedp.Evaluate[string](`window.orchMarker || ""`)); m != "same page" {
		t.Error("the page was reloaded instead of updated")
	}

	// A POST without the CSRF token, from the board's own page: refused.
	status := get(t, ctx, "POST without CSRF", chromedp.Evaluate[int](
		`fetch("/task/0002-question/override", {method: "POST", body: new URLSearchParams({reason: "x", to: "codegen"})}).then(r => r.status)`,
		chromedp.EvalAwaitPromise))
	if status != http.StatusForbidden {
		t.Errorf("a POST without the CSRF token: status %d, want 403", status)
	}
	// A form another site submits: the strict cookie is not sent, nothing
	// moves.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<form id="f" method="post" action="%s/task/0002-question/override"><input name="reason" value="pwned"><input name="to" value="codegen"></form><script>document.getElementById("f").submit()</script>`, base)
	}))
	defer evil.Close()
	_, evilPort, _ := net.SplitHostPort(strings.TrimPrefix(evil.URL, "http://"))
	do(t, ctx, "cross-site form", 30*time.Second, chromedp.Navigate("http://evil.test:"+evilPort+"/"))
	t.Logf("after the cross-site form: %s %q", get(t, ctx, "loc", chromedp.Location()), textOf(t, ctx, "body", "body"))
	do(t, ctx, "cross-site form", 30*time.Second,
		chromedp.Poll[chromedp.Void](`location.host !== "evil.test:`+evilPort+`" && document.readyState === "complete"`))
	if text := textOf(t, ctx, "body", "body"); !strings.Contains(text, "needs its token") && !strings.Contains(text, "another site") {
		t.Errorf("the cross-site form got %q", text)
	}
	if ph := f.Phase("0002-question"); ph != lifecycle.Planning {
		t.Fatalf("a refused POST moved the task to %s", ph)
	}

	// Answer the planner's question in the page: its form is under
	// Actions, and the task list marks the task shown.
	do(t, ctx, "answer", 30*time.Second,
		chromedp.Navigate(base+"/task/0002-question"),
		chromedp.WaitVisible(css("#actions #answer-q1")),
		chromedp.WaitVisible(css(`nav.tasks a[aria-current="page"][href="/task/0002-question"]`)),
	)
	do(t, ctx, "answer", 30*time.Second,
		chromedp.SendKeys(css("#answer-q1"), "Warmly, by name."),
		chromedp.Submit(css("#answer-q1")),
		chromedp.WaitVisible(css("#flash.ok")),
	)
	if text := textOf(t, ctx, "flash", "#flash"); !strings.Contains(text, "answered q1") {
		t.Errorf("after answering the page says %q", text)
	}
	plan := artifact.LoadPlan(f.Dir("0002-question"))
	if !plan.OK() || plan.Value.Questions[0].Answer == nil || *plan.Value.Questions[0].Answer != "Warmly, by name." {
		t.Fatalf("the answer is not in the plan: %+v", plan)
	}

	// Accept a change: the evidence above the button, then the commit.
	head := gittest.Git(t, root, "rev-parse", "HEAD")
	do(t, ctx, "the accept form", 30*time.Second, chromedp.Navigate(base+"/task/0003-hello"), chromedp.WaitVisible(css("#btn-accept")))
	evidenceFirst := get(t, ctx, "evidence", chromedp.Evaluate[bool](`(() => { const e = document.querySelector(".evidence-summary"), b = document.getElementById("btn-accept");
		return !!e && e.offsetHeight > 0 && (e.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0 })()`))
	if !evidenceFirst {
		t.Error("the evidence is not shown before the accept button")
	}
	do(t, ctx, "accept", 30*time.Second,
		chromedp.SendKeys(css("#accept-reasons"), "the test passes\nI read the diff"),
		chromedp.Click(css("#btn-accept")),
		chromedp.WaitVisible(css("#job")),
	)
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	err = chromedp.Do(c, chromedp.WaitVisible(css("#commit")))
	cancel()
	if err != nil {
		t.Fatalf("no commit on the page (%v): %s", err, textOf(t, ctx, "actions", "#actions"))
	}
	commit := get(t, ctx, "commit", chromedp.Poll[string](`(() => { const e = document.getElementById("commit");
		return e && /^[0-9a-f]{40,64}$/.test(e.textContent) ? e.textContent : null })()`))
	now := gittest.Git(t, root, "rev-parse", "HEAD")
	if now == head || commit != now {
		t.Fatalf("the page shows commit %q; HEAD was %s, is %s", commit, head, now)
	}
	if msg := gittest.Git(t, root, "log", "-1", "--format=%B"); !strings.Contains(msg, "Orch-Task: 0003-hello") {
		t.Errorf("the commit's message lacks its trailer: %q", msg)
	}
	if d := artifact.LoadDecision(f.Dir("0003-hello")); !d.OK() || len(d.Value.Reasons) != 2 {
		t.Errorf("the decision's reasons: %+v", d)
	}
	// The decision is applied without a second click: the page (not
	// reloaded) shows the task in done with its commit, no accept form,
	// and no "started" notice over the outcome.
	do(t, ctx, "the task in done", 30*time.Second,
		chromedp.WaitVisible(css(`svg.lifecycle g.node.current[data-phase="done"]`)),
		chromedp.WaitVisible(css("#task-commit")),
	)
	if ph, tc := textOf(t, ctx, "phase", "#phase"), textOf(t, ctx, "task commit", "#task-commit"); ph != "done" || tc != now || f.Phase("0003-hello") != lifecycle.Done {
		t.Errorf("after the decision the page says phase %q, commit %q (HEAD %s)", ph, tc, now)
	}
	if n := get(t, ctx, "leftovers", chromedp.Evaluate[int](`document.querySelectorAll("#form-accept, #flash[data-started]").length`)); n != 0 {
		t.Errorf("after the decision the page still has the accept form or the started notice (%d)", n)
	}

	// The demo's task page at its accept gate, for docs/: reopened from
	// the CLI, the page shows the evidence and the decision form.
	do(t, ctx, "the demo's task page", 30*time.Second,
		chromedp.Navigate(base+"/task/0001-add-reverse"),
		chromedp.WaitVisible(css(`svg.lifecycle g.node.current[data-phase="done"]`)),
		chromedp.WaitVisible(css("#diff .file")),
	)
	orch(t, root, "redo", "accept", "--task", "0001-add-reverse", "--reason", "look at the change again")
	do(t, ctx, "the page follows the redo", 10*time.Second,
		chromedp.WaitVisible(css(`svg.lifecycle g.node.current[data-phase="accept"]`)),
		chromedp.WaitVisible(css("#btn-accept")),
	)
	shot(t, ctx, "task.png", true)
}

// shot takes a screenshot of the viewport and checks it is an image; with
// ORCH_SCREENSHOTS=1 it rewrites docs/NAME (the README's pictures).
func shot(t *testing.T, ctx context.Context, name string, tall bool) {
	t.Helper()
	h := int64(900)
	if tall {
		h = 2200
	}
	do(t, ctx, "viewport", 10*time.Second, chromedp.EmulateViewport(1400, h))
	buf := get(t, ctx, "screenshot "+name, chromedp.CaptureScreenshot())
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if b := img.Bounds(); b.Dx() < 1000 || b.Dy() < 800 {
		t.Fatalf("screenshot %s is %v", name, b)
	}
	if os.Getenv("ORCH_SCREENSHOTS") != "" {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", name), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
