package autopilot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/worker"
)

// fake writes artifacts by hand, as a person or tool would, so the
// autopilot's decisions can be checked without models or git.
type fake struct {
	t          *testing.T
	dir        string
	question   bool // the first plan round asks a blocking question
	testsPass  func(attempt int) bool
	codegens   int
	reviewPlan bool
	repo       string // the repository the task belongs to
}

func (f *fake) write(rel, content string) {
	p := filepath.Join(f.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// fakeWorker is a worker of phase p that runs fn.
func fakeWorker(p lifecycle.Phase, fn func() error) worker.Worker {
	return worker.Func(p, string(p), func(context.Context, worker.Run) (worker.Outcome, error) { return worker.Outcome{}, fn() })
}

func (f *fake) answer(ctx context.Context, id, q, text string) error {
	f.write("planning/planning.ai.json", `{"id":"t","title":"T","brief":"b","questions":[{"id":"q1","text":"which?","blocking":true,"answer":"`+text+`"}],"file_plan":[{"path":"a.go","intent":"create"}]}`)
	return nil
}

func (f *fake) workers() worker.Set {
	return worker.Set{
		lifecycle.Planning: fakeWorker(lifecycle.Planning, func() error {
			if f.question {
				f.question = false
				f.write("planning/planning.ai.json", `{"id":"t","title":"T","brief":"b","questions":[{"id":"q1","text":"which?","blocking":true,"answer":null}],"file_plan":[{"path":"a.go","intent":"create"}]}`)
				return nil
			}
			f.write("planning/planning.ai.json", `{"id":"t","title":"T","brief":"b","file_plan":[{"path":"a.go","intent":"create"}]}`)
			return nil
		}),
		lifecycle.PlanReview: fakeWorker(lifecycle.PlanReview, func() error {
			f.reviewPlan = true
			f.write("review/plan-review.json", `{"ok":true,"blocked":false,"reviewers":[]}`)
			return nil
		}),
		lifecycle.Codegen: fakeWorker(lifecycle.Codegen, func() error {
			// Each attempt writes another change: after a regression the
			// same patch would not pass codegen → review again.
			f.codegens++
			line := fmt.Sprintf("package a // attempt %d", f.codegens)
			f.write("code/files/a.go", line+"\n")
			f.write("code/diff.patch", "--- /dev/null\n+++ b/a.go\n@@ -0,0 +1 @@\n+"+line+"\n")
			return nil
		}),
		lifecycle.Review: fakeWorker(lifecycle.Review, func() error {
			f.write("review/code-review.json", `{"ok":true,"issues":[]}`)
			return nil
		}),
		lifecycle.Test: fakeWorker(lifecycle.Test, func() error {
			pass := f.testsPass(f.codegens)
			f.write("test/report.json", `{"status":"completed","overall_pass":`+map[bool]string{true: "true", false: "false"}[pass]+`,"summary":{"passed":1,"failed":0,"skipped":0,"error":0},"suites":[]}`)
			return nil
		}),
		lifecycle.Accept: fakeWorker(lifecycle.Accept, func() error {
			f.write("accept/decision.json", `{"verdict":"accepted","reasons":["autopilot"],"decider":{"kind":"human"}}`)
			// What orch accept does: commit the change with orch's trailers
			// (accept → done needs that commit).
			patch, err := os.ReadFile(filepath.Join(f.dir, "code", "diff.patch"))
			if err != nil {
				return err
			}
			sum := sha256.Sum256(patch)
			gittest.Write(f.t, f.repo, "a.go", "package a\n")
			gittest.Git(f.t, f.repo, "add", "a.go")
			gittest.Git(f.t, f.repo, "commit", "-q", "-m", "T\n\nOrch-Task: t\nOrch-Plan: p\nOrch-Diff: "+hex.EncodeToString(sum[:]))
			return nil
		}),
	}
}

func setup(t *testing.T) (*orchestrator.Orchestrator, *fake) {
	t.Helper()
	dir := t.TempDir()
	// A repository with a commit: codegen → review applies the patch to
	// the base (HEAD) to compare it with code/files.
	gittest.Git(t, dir, "init", "-q")
	gittest.CommitAll(t, dir, "base")
	p, _, err := task.InitProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	tk, _, err := p.CreateTask("t", "brief", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	o := orchestrator.New(p)
	return o, &fake{t: t, dir: tk.Dir, repo: dir, testsPass: func(int) bool { return true }}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		opt      Options
		question bool
		pass     func(int) bool
		stop     Stop
		phase    lifecycle.Phase
		codegens int
		msg      string
	}{
		{name: "to done with --yes", opt: Options{Yes: true}, stop: StopDone, phase: lifecycle.Done, codegens: 1},
		{name: "stops at the accept gate", opt: Options{}, stop: StopGate, phase: lifecycle.Accept, codegens: 1, msg: "orch accept"},
		{name: "open question stops", opt: Options{Yes: true}, question: true, stop: StopGate, phase: lifecycle.Planning, msg: "q1: which?"},
		{name: "answers given", opt: Options{Yes: true, Answers: map[string]string{"q1": "this"}}, question: true, stop: StopDone, phase: lifecycle.Done, codegens: 1},
		{name: "fix loop then pass", opt: Options{Yes: true}, pass: func(n int) bool { return n >= 2 }, stop: StopDone, phase: lifecycle.Done, codegens: 2},
		{name: "attempts bounded", opt: Options{Yes: true, MaxAttempts: 3}, pass: func(int) bool { return false }, stop: StopAttempts, phase: lifecycle.Codegen, codegens: 3, msg: "3 times"},
		{name: "until review", opt: Options{Until: lifecycle.Review}, stop: StopUntil, phase: lifecycle.Review, codegens: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, f := setup(t)
			f.question = tt.question
			if tt.pass != nil {
				f.testsPass = tt.pass
			}
			var events []Event
			tt.opt.Event = func(e Event) { events = append(events, e) }
			tt.opt.Answer = f.answer
			res, err := Run(context.Background(), o, "t", f.workers(), tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if res.Stop != tt.stop || res.Phase != tt.phase || f.codegens != tt.codegens || !strings.Contains(res.Message, tt.msg) {
				t.Errorf("result %+v after %d codegen runs; want stop %s in %s after %d, message with %q", res, f.codegens, tt.stop, tt.phase, tt.codegens, tt.msg)
			}
			if last := events[len(events)-1]; last.Event != "stop" || last.Stop != tt.stop {
				t.Errorf("last event %+v", last)
			}
			tk, _ := o.Project.Open("t")
			if rep, err := tk.Verify(); err != nil || !rep.OK {
				t.Errorf("verify: %+v %v", rep, err)
			}
		})
	}
}

func TestRunStuckPhase(t *testing.T) {
	o, f := setup(t)
	ws := f.workers()
	ws[lifecycle.Review] = fakeWorker(lifecycle.Review, func() error { return nil }) // writes nothing
	res, err := Run(context.Background(), o, "t", ws, Options{Yes: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != StopStuck || res.Phase != lifecycle.Review || !strings.Contains(res.Message, "review/code-review.json is missing") {
		t.Errorf("result %+v", res)
	}
}
