package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/work"
)

// recordingWork records calls model calls, stages a plan and returns;
// with die set it kills its own process (SIGKILL) once its work is done,
// before the engine commits.
func recordingWork(calls int, die bool) Func {
	return func(ctx context.Context, in work.Input) (Outcome, error) {
		for i := 0; i < calls; i++ {
			in.Record(event.ModelCall{Phase: in.Phase, Role: "planner", Provider: "test", Model: "m", TokensIn: int64(100 + i), TokensOut: 10})
		}
		if err := in.Out.Write("planning/planning.ai.json", []byte(`{"id":"t","title":"T","brief":"b"}`)); err != nil {
			return Outcome{}, err
		}
		if die {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
		return Outcome{Status: "draft", Round: 1}, nil
	}
}

// TestKilledRunHelper is the process the kill tests kill: it runs a
// planning round of the project in ORCH_RECORDS_DIR that records two model
// calls, and dies where ORCH_RECORDS_DIE says: "work" once the work is
// done (nothing committed), "commit" inside the commit once the phase's
// event is durable (the records are written, state.json is not).
func TestKilledRunHelper(t *testing.T) {
	dir := os.Getenv("ORCH_RECORDS_DIR")
	if dir == "" {
		t.Skip("run by the kill tests only")
	}
	p, err := task.FindProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	o := New(p)
	die := os.Getenv("ORCH_RECORDS_DIE")
	if die == "commit" {
		commits := 0
		o.Hooks.AfterAppend = func() {
			if commits++; commits == 2 { // 1: phase_started, 2: phase_finished
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
		}
	}
	_, err = o.RunPhase(context.Background(), "t", lifecycle.Planning, recordingWork(2, die == "work"))
	t.Fatalf("the run was not killed (err %v)", err)
}

// TestKilledRunRecordsEachCallOnce: a run killed after its work (before
// its commit) or inside its commit (records written, state.json not), then
// run again, leaves each model call in the transcript exactly once: the
// killed run's two, keyed by its run id, and the new run's own.
func TestKilledRunRecordsEachCallOnce(t *testing.T) {
	for _, die := range []string{"work", "commit"} {
		t.Run(die, func(t *testing.T) {
			o, tk := newTask(t)
			cmd := exec.Command(os.Args[0], "-test.run=^TestKilledRunHelper$")
			cmd.Env = append(os.Environ(), "ORCH_RECORDS_DIR="+filepath.Dir(o.Project.Dir), "ORCH_RECORDS_DIE="+die)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the helper was not killed: %v\n%s", err, out)
			}
			killed := state(t, tk).Actors["planning"].Run
			if killed == "" {
				killed = lastRun(t, tk)
			}

			// The budget the re-run is given counts the killed run's
			// calls once (100 and 101 tokens in).
			var spent work.Spent
			rerun := recordingWork(1, false)
			res, err := o.RunPhase(context.Background(), "t", lifecycle.Planning, func(ctx context.Context, in work.Input) (Outcome, error) {
				spent = in.Spent
				return rerun(ctx, in)
			})
			if err != nil {
				t.Fatal(err)
			}
			want := work.Spend{Calls: 2, TokensIn: 201, TokensOut: 20}
			if spent.Total != want || spent.Phase(lifecycle.Planning) != want || len(spent.Phases) != 1 {
				t.Errorf("the re-run's input spent %+v, want %+v in total and in planning", spent, want)
			}
			calls := map[string]int{}
			for _, c := range modelCalls(t, tk) {
				calls[fmt.Sprintf("%s#%d", c.Run, c.N)]++
			}
			if st := state(t, tk); st.Revision != res.Revision {
				t.Fatalf("state %d, result %d", st.Revision, res.Revision)
			}
			for k, n := range calls {
				if n != 1 {
					t.Errorf("call %s recorded %d times", k, n)
				}
			}
			if len(calls) != 3 || calls[killed+"#1"] != 1 || calls[killed+"#2"] != 1 {
				t.Errorf("model calls by run#n: %v, want each of the killed run %s's two and the new run's one once", calls, killed)
			}
			if entries, _ := os.ReadDir(filepath.Join(tk.Dir, StagingDir)); len(entries) != 0 {
				t.Errorf("staging left behind: %v", entries)
			}
			// A third run salvages nothing more; its check and its work
			// are given the three calls.
			in, err := o.Input(context.Background(), "t", lifecycle.Planning)
			if err != nil || in.Spent.Total.Calls != 3 || in.Spent.Total.TokensIn != 301 {
				t.Errorf("the check's input spent %+v (%v), want 3 calls, 301 tokens in", in.Spent, err)
			}
			third := recordingWork(0, false)
			if _, err := o.RunPhase(context.Background(), "t", lifecycle.Planning, func(ctx context.Context, in work.Input) (Outcome, error) {
				spent = in.Spent
				return third(ctx, in)
			}); err != nil {
				t.Fatal(err)
			}
			if spent.Total.Calls != 3 {
				t.Errorf("the third run's input spent %+v, want 3 calls", spent.Total)
			}
			if n := len(modelCalls(t, tk)); n != 3 {
				t.Errorf("%d model calls after a third run, want 3", n)
			}
		})
	}
}

// lastRun is the run of the last phase_started event.
func lastRun(t *testing.T, tk *task.Task) string {
	t.Helper()
	events, err := tk.Transcript()
	if err != nil {
		t.Fatal(err)
	}
	run := ""
	for _, ev := range events {
		if ev.Kind == event.KindPhaseStarted {
			p, err := ev.Decode()
			if err != nil {
				t.Fatal(err)
			}
			run = p.(event.PhaseStarted).Run
		}
	}
	return run
}

// modelCalls decodes the transcript's model calls.
func modelCalls(t *testing.T, tk *task.Task) []event.ModelCall {
	t.Helper()
	events, err := tk.Transcript()
	if err != nil {
		t.Fatal(err)
	}
	var out []event.ModelCall
	for _, ev := range events {
		if ev.Kind != event.KindModelCall {
			continue
		}
		p, err := ev.Decode()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.(event.ModelCall))
	}
	return out
}

// TestRecordsAreWrittenWithTheCommit: a run's records reach the
// transcript when the run is committed, numbered within the run, and a
// failed run's records are written all the same.
func TestRecordsAreWrittenWithTheCommit(t *testing.T) {
	o, tk := newTask(t)
	var during []event.ModelCall
	_, err := o.RunPhase(context.Background(), "t", lifecycle.Planning, func(ctx context.Context, in work.Input) (Outcome, error) {
		in.Record(event.ModelCall{Phase: in.Phase, Role: "planner"})
		in.Record(event.BudgetExceeded{Phase: in.Phase, Role: "planner", Error: "over"})
		during = modelCalls(t, tk)
		return Outcome{}, fmt.Errorf("model refused")
	})
	if err == nil {
		t.Fatal("the failed run succeeded")
	}
	if len(during) != 0 {
		t.Errorf("records written before the commit: %v", during)
	}
	calls := modelCalls(t, tk)
	run := lastRun(t, tk)
	if len(calls) != 1 || calls[0].Run != run || calls[0].N != 1 {
		t.Errorf("model calls %+v, want one, run %s #1", calls, run)
	}
	events, _ := tk.Transcript()
	budget := 0
	for _, ev := range events {
		if ev.Kind == event.KindBudgetExceeded {
			p, err := ev.Decode()
			if err != nil {
				t.Fatal(err)
			}
			if b := p.(event.BudgetExceeded); b.Run != run || b.N != 2 {
				t.Errorf("budget record %+v, want run %s #2", b, run)
			}
			budget++
		}
	}
	if budget != 1 {
		t.Errorf("%d budget records, want 1", budget)
	}
}
