package demo

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

// TestDemo runs the offline demo end to end and checks its end state: the
// task is done, the transcript verifies, the commit exists with its
// trailers, and the history holds the failed first attempt.
func TestDemo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "textkit")
	var out bytes.Buffer
	res, err := Run(context.Background(), Options{Dir: dir, Out: &out})
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	if res.Phase != lifecycle.Done || res.Commit == "" {
		t.Fatalf("result %+v\n%s", res, out.String())
	}
	for _, want := range []string{"question q1 (blocking)", "you answer q1", "testing suggests", "FAIL TestReverse", "test → codegen", "overall_pass=true", "accept → done"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo's narration lacks %q", want)
		}
	}
	p, err := task.FindProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := p.Open(TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := tk.ReadState(); err != nil || st.Phase != "done" {
		t.Errorf("state %+v %v", st, err)
	}
	if rep, err := tk.Verify(); err != nil || !rep.OK {
		t.Errorf("verify %+v %v", rep, err)
	}
	msg := gittest.Git(t, dir, "log", "-1", "--format=%B")
	if !strings.Contains(msg, "Orch-Task: "+TaskID) || !strings.Contains(msg, "Orch-Plan: ") {
		t.Errorf("commit message lacks trailers:\n%s", msg)
	}
	if got := gittest.Git(t, dir, "rev-parse", "HEAD"); got != res.Commit {
		t.Errorf("HEAD %s, decision commit %s", got, res.Commit)
	}
	if files := gittest.Git(t, dir, "show", "--name-only", "--format=", "HEAD"); !strings.Contains(files, "reverse.go") || !strings.Contains(files, "reverse_test.go") {
		t.Errorf("commit files: %s", files)
	}
	// The first attempt's failing report was archived by the regression.
	matches, _ := filepath.Glob(filepath.Join(tk.Dir, "history", "*-codegen", "test", "report.json"))
	if len(matches) != 1 {
		t.Fatalf("archived reports: %v", matches)
	}
	tr := artifact.LoadTestReport(filepath.Dir(filepath.Dir(matches[0])))
	if !tr.OK() || tr.Value.OverallPass {
		t.Errorf("archived report: %+v", tr)
	}
}

// TestDemoOddPath: a repository whose path holds a colon, a newline, a
// double quote and a backslash (all legal in a path) goes through codegen,
// test and accept as any other: git is told about its object store with a
// quoted alternate.
func TestDemoOddPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a:b\nc \"d\\e", "textkit")
	var out bytes.Buffer
	res, err := Run(context.Background(), Options{Dir: dir, Out: &out})
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	if res.Phase != lifecycle.Done || res.Commit == "" {
		t.Fatalf("result %+v\n%s", res, out.String())
	}
	if got := gittest.Git(t, dir, "rev-parse", "HEAD"); got != res.Commit {
		t.Errorf("HEAD %s, decision commit %s", got, res.Commit)
	}
	if files := gittest.Git(t, dir, "show", "--name-only", "--format=", "HEAD"); !strings.Contains(files, "reverse.go") {
		t.Errorf("commit files: %s", files)
	}
}
