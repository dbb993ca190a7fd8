package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/planner"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/landing"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/testphase"
	"github.com/orchdev/orch/internal/view"
	"github.com/orchdev/orch/internal/worker"
)

// Steps carries out a workflow's steps in one worker's clone of the
// repository: its Step method is the activity.
type Steps struct {
	// Root is the clone's top folder (orch init'ed, as committed in the
	// shared repository); Remote the name of the shared remote.
	Root   string
	Remote string
	// Identity names the worker in the workflow's history.
	Identity string
	// Getenv and Environ are the process's environment (the model's key,
	// the test runs' environment).
	Getenv  func(string) string
	Environ []string
	// Sandbox is the test runs' sandbox ("" = the configuration's).
	Sandbox string

	// git serialises the clone's ref transport (fetch, push).
	git sync.Mutex
}

// Step is the activity: fetch the task's ref, check it is where the
// workflow knew it (or that this very activity already pushed), do the
// step with orch's engine in the clone, push the task's folder, and
// observe it.
func (s *Steps) Step(ctx context.Context, st Step) (StepResult, error) {
	res := StepResult{Worker: s.Identity}
	key := activityKey(ctx)
	stop := heartbeat(ctx)
	defer stop()
	head, err := s.fetch(ctx, st.Task)
	if err != nil {
		return res, err
	}
	if head != st.Head {
		return s.reuse(ctx, st, head, key)
	}
	if err := s.materialize(ctx, st.Task, head); err != nil {
		return res, err
	}
	stepErr := s.do(ctx, st)
	if stepErr != nil && exitCode(stepErr) == exit.Internal {
		// Not a refusal of orch: retried (from the ref, as it was).
		return res, stepErr
	}
	commit, err := s.push(ctx, st, head, key)
	if errors.Is(err, errMoved) {
		// Another attempt of this activity (one taken for dead that was
		// only slow) pushed first: its commit is the step's result.
		now, ferr := s.fetch(ctx, st.Task)
		if ferr != nil {
			return res, ferr
		}
		if now == head {
			return res, err // the push was lost, not refused: retried
		}
		return s.reuse(ctx, st, now, key)
	}
	if err != nil {
		return res, err
	}
	if commit != head {
		res.Commit = commit
	}
	if stepErr != nil {
		res.Error, res.ExitCode, res.Hints = stepErr.Error(), int(exitCode(stepErr)), exit.Hints(stepErr)
	}
	res.Observation, err = s.observe(st.Task, commit)
	return res, err
}

// reuse returns the step's result when the task's ref is at head, not at
// the commit the workflow knows: pushed by an earlier attempt of this
// activity (its trailer names the activity), that commit is the result;
// anything else is a conflict, not retried.
func (s *Steps) reuse(ctx context.Context, st Step, head, key string) (StepResult, error) {
	res := StepResult{Worker: s.Identity}
	// git's own reading of the commit message's trailers, one value a
	// line (the output's last newline is cut by git()).
	pushedBy, err := git(ctx, s.Root, nil, "log", "-1", "--format=%(trailers:key="+trailerActivity+",valueonly)", head)
	if err != nil {
		return res, err
	}
	if !slices.Contains(strings.Split(pushedBy, "\n"), key) {
		return res, temporal.NewNonRetryableApplicationError(fmt.Sprintf("the ref %s of task %s is at %.12s, not at %.12s where its workflow left it: someone else changed the task", TaskRef(st.Task), st.Task, head, st.Head), ErrConflict, nil)
	}
	if err := s.materialize(ctx, st.Task, head); err != nil {
		return res, err
	}
	res.Commit, res.Reused = head, true
	res.Observation, err = s.observe(st.Task, head)
	return res, err
}

// activityKey names the activity across its attempts.
func activityKey(ctx context.Context) string {
	if !activity.IsActivity(ctx) {
		return "local"
	}
	info := activity.GetInfo(ctx)
	return info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID + "/" + info.ActivityID
}

// heartbeat records the activity's heartbeat until stop is called: a
// worker that dies stops beating and its step is retried elsewhere.
func heartbeat(ctx context.Context) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	every := time.Second
	if hb := activity.GetInfo(ctx).HeartbeatTimeout; hb > 0 && hb/4 < every {
		every = hb / 4
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
}

// engine returns orch's engine, configuration and project in the clone.
func (s *Steps) engine() (*orchestrator.Orchestrator, config.Config, error) {
	p, err := task.FindProject(s.Root)
	if err != nil {
		return nil, config.Config{}, err
	}
	cfg, err := config.Load(p.Dir)
	if err != nil {
		return nil, cfg, err
	}
	return orchestrator.New(p), cfg, nil
}

// do carries the step out with orch's engine.
func (s *Steps) do(ctx context.Context, st Step) error {
	o, cfg, err := s.engine()
	if err != nil {
		return err
	}
	getenv := s.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	test := testphase.Options{Sandbox: s.Sandbox, Env: s.Environ}
	deps := worker.Deps{Orch: o, Config: cfg, Test: test}
	id := st.Task
	switch st.Kind {
	case StepObserve:
		return nil
	case StepWork:
		rt, err := runtime(o.Project, cfg, getenv)
		if err != nil {
			return err
		}
		deps.Agents = rt
		w, ok := worker.Registry(deps).For(st.Phase)
		if !ok || st.Phase == lifecycle.Accept || st.Phase == lifecycle.Revert {
			return exit.New(exit.ErrRefused, "%s has no work a fleet worker runs by itself", st.Phase)
		}
		_, err = w.Work(ctx, worker.Run{Task: id})
		return err
	case StepNext:
		_, err := o.Next(ctx, id, orchestrator.NextRequest{From: st.Phase})
		return err
	case StepAnswer:
		_, err := planner.AnswerQuestion(ctx, o, id, st.Answer.Question, st.Answer.Text)
		return err
	case StepOverride:
		reason := st.Override.Reason
		_, err := o.Next(ctx, id, orchestrator.NextRequest{Override: &reason, To: st.Override.To})
		return err
	case StepRedo:
		_, err := o.Redo(ctx, id, st.Redo.Phase, st.Redo.Reason)
		return err
	case StepAccept:
		r := st.Accept
		decider := r.Decider
		if decider == "" {
			decider = "fleet"
		}
		opt := landing.AcceptOptions{Verdict: r.Verdict, Target: r.Target, Reasons: r.Reasons, AllowIncomplete: r.AllowIncomplete,
			Decider: artifact.Decider{Kind: "human", Name: decider}, Test: test, Expect: landing.Expectation{Revision: r.Revision}}
		if err := landing.CheckDecision(opt); err != nil {
			return exit.New(exit.ErrUsage, "%v", err)
		}
		w, _ := worker.Registry(deps).For(lifecycle.Accept)
		_, err := w.Work(ctx, worker.Run{Task: id, Accept: &opt})
		return err
	case StepRevert:
		w, _ := worker.Registry(deps).For(lifecycle.Revert)
		_, err := w.Work(ctx, worker.Run{Task: id, Reason: st.Reason})
		return err
	}
	return fmt.Errorf("unknown step %q", st.Kind)
}

// runtime is the agents' runtime for one step. A scripted model replays
// its script from the start in every step, whichever machine ran the
// task's earlier steps: its cursors are the step's own, never a file of
// the clone shared by the tasks.
func runtime(p *task.Project, cfg config.Config, getenv func(string) string) (*agent.Runtime, error) {
	rt := agent.NewRuntime(p, cfg, getenv)
	for name, pc := range cfg.Providers {
		if pc.Type != llm.TypeScript {
			continue
		}
		file := pc.Script
		if !filepath.IsAbs(file) {
			file = filepath.Join(p.Root, file)
		}
		lc := llm.Config{Type: pc.Type, Name: name, Model: pc.Model, ScriptFile: file}
		prov, err := llm.New(lc, getenv, rt.Options...)
		if err != nil {
			return nil, err
		}
		rt.SetProvider(name, prov, lc)
	}
	return rt, nil
}

// observe reads task id in the clone, as committed at the ref's commit
// head: what orch status --json and orch log --json print, and the hashes
// of its files.
func (s *Steps) observe(id, head string) (Observation, error) {
	obs := Observation{Head: head}
	o, _, err := s.engine()
	if err != nil {
		return obs, err
	}
	sj, step, err := view.StatusOf(o, id)
	if err != nil {
		return obs, err
	}
	v := sj.StatusView
	obs.Phase, obs.Revision, obs.Movable, obs.Reason, obs.Invalid, obs.Step = v.Phase, v.Revision, v.Suggested != nil, v.Reason, v.Invalid, step
	for p, a := range v.Actors {
		if _, ok := a.LivePID(); ok {
			obs.Running = append(obs.Running, p)
		}
	}
	slices.Sort(obs.Running)
	if obs.Status, err = json.Marshal(sj); err != nil {
		return obs, err
	}
	t, err := o.Project.Open(id)
	if err != nil {
		return obs, err
	}
	plan := artifact.LoadPlan(t.Dir)
	obs.Plan.Present, obs.Plan.Questions = plan.Present, plan.Value.Questions
	if plan.Err != nil {
		obs.Plan.Err = plan.Err.Error()
	}
	events, err := t.Transcript()
	if err != nil {
		return obs, err
	}
	for _, ev := range events {
		line, err := json.Marshal(ev)
		if err != nil {
			return obs, err
		}
		obs.Log = append(obs.Log, line)
	}
	obs.Artifacts, err = hashFolder(t.Dir)
	return obs, err
}

// hashFolder maps every file of a task folder that travels in its ref to
// its sha256.
func hashFolder(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == orchestrator.StagingDir {
				return filepath.SkipDir
			}
			return nil
		}
		if !travels(rel) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	return out, err
}

// travels reports whether the task-relative file rel belongs in the
// task's ref: everything but the lock, stages and temporary files.
func travels(rel string) bool {
	base := filepath.Base(rel)
	return rel != ".lock" && !strings.HasPrefix(rel, orchestrator.StagingDir+"/") && !strings.Contains(base, ".tmp-")
}
