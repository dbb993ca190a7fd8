package board

import (
	"net/url"
	"strings"
	"testing"
)

// xss are hostile strings put into every artifact text the pages show.
var xss = []string{
	`<img src=x onerror=alert(1)>`,
	`<script>alert(2)</script>`,
	`"><svg onload=alert(3)>`,
	`javascript:alert(4)`,
	`<iframe src="//evil.example">`,
}

// Artifact and model text renders as text everywhere: titles, questions,
// Markdown (raw HTML omitted, javascript: links dropped), reviews, the
// diff, test output and logs, the timeline, the answer's echo.
func TestXSS(t *testing.T) {
	f := NewFixture(t)
	all := strings.Join(xss, " ")
	f.Task("x1", "brief "+all)
	f.Plan("x1", xss[0], "which? "+all, nil)
	f.Write("x1", "planning/plan.md", "# Plan "+xss[0]+"\n\n"+xss[1]+"\n\n[click](javascript:alert(4)) <a href=\"javascript:alert(4)\">a</a>\n\n"+xss[4]+"\n")
	f.Task("x2", "second")
	f.ToAccept("x2", xss[0])
	f.Write("x2", "review/plan-review.md", "review "+all)
	f.Write("x2", "test/logs/go.log", "log "+all+"\n")
	f.Write("x2", "test/report.json", `{"status": "completed", "overall_pass": false, "summary": {"passed": 0, "failed": 1, "skipped": 0, "error": 0},
	  "suites": [{"id": "go", "kind": "test", "command": "go test `+jsonEsc(xss[1])+`", "exit_code": 1, "overall_pass": false, "log": "test/logs/go.log",
	  "summary": {"passed": 0, "failed": 1, "skipped": 0, "error": 0},
	  "cases": [{"name": "Test`+jsonEsc(xss[0])+`", "status": "fail", "message": `+`"`+jsonEsc(xss[2])+`"`+`, "output": "`+jsonEsc(all)+`"}]}]}`)
	s, ts := f.Board(Options{})

	// An answer that is hostile too, echoed by the page after the POST.
	code, _, res := post(t, s, ts, "/task/x1/answer", url.Values{"question": {"q1"}, "answer": {xss[0]}})
	if code != 303 {
		t.Fatalf("answer: %d", code)
	}
	pages := map[string]string{}
	for _, p := range []string{"/", "/task/x1", "/task/x2", res.Header.Get("Location")} {
		code, body := get(t, s, ts, p)
		if code != 200 {
			t.Fatalf("%s: %d %s", p, code, body)
		}
		pages[p] = body
	}
	for p, body := range pages {
		for _, bad := range []string{"<img src=x", "<script>alert", "<svg onload", `href="javascript`, "href=javascript", "<iframe", "onerror=alert(1)>"} {
			if strings.Contains(body, bad) {
				i := strings.Index(body, bad)
				t.Errorf("%s: %q is in the page: …%s…", p, bad, body[max(0, i-80):min(len(body), i+80)])
			}
		}
	}
	// And it is there, as text.
	want := "&lt;img src=x onerror=alert(1)&gt;"
	for _, p := range []string{"/", "/task/x1", "/task/x2", res.Header.Get("Location")} {
		if !strings.Contains(pages[p], want) {
			t.Errorf("%s does not show the title as text", p)
		}
	}
	if !strings.Contains(pages["/task/x2"], "&lt;script&gt;alert(2)&lt;/script&gt;") {
		t.Error("the test command is not shown as text")
	}
}

func jsonEsc(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return r.Replace(s)
}
