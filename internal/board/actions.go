package board

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/agent/planner"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/fleetlink"
	"github.com/orchdev/orch/internal/landing"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/nextstep"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/work"
	"github.com/orchdev/orch/internal/worker"
)

// flash is the outcome of an action, shown once on the page it returns
// to.
type flash struct {
	Task  string
	OK    bool
	Text  string
	Lines []string
	Code  int
	Exit  string
	// Started marks the notice that a job started: the job's own box
	// shows how it went, so the notice goes once the job has ended.
	Started bool
	// Form names the action that was refused ("override", "accept", …:
	// the last part of its URL) and Kept what was typed into it, so that
	// the page says which form failed and gives the text back to fix.
	Form string
	Kept map[string]string
	at   time.Time
}

// formActions names each form's action as the refusal says it.
var formActions = map[string]string{
	"answer": "Answer", "next": "Next", "override": "Override", "redo": "Redo",
	"accept": "The accept decision", "revert": "Revert", "work": "The run", "cancel": "Cancel",
}

// keptFields are the fields of a refused form given back to the page
// (never the CSRF token or the revision, which the new page sets).
var keptFields = []string{"question", "answer", "to", "reason", "phase", "verdict", "target", "reasons", "allow_incomplete"}

// refusedForm fills in which form of r was refused and what it held.
func refusedForm(r *http.Request, f *flash) {
	i := strings.LastIndexByte(r.URL.Path, '/')
	if i < 0 || r.Method != http.MethodPost {
		return
	}
	f.Form = r.URL.Path[i+1:]
	f.Kept = map[string]string{}
	for _, k := range keptFields {
		if v := r.PostForm.Get(k); v != "" {
			f.Kept[k] = v
		}
	}
}

// What names the refused form's action ("" when none is known).
func (f *flash) What() string { return formActions[f.Form] }

// exitWords names the exit codes of a refusal, as the CLI documents them.
var exitWords = map[exit.Code]string{
	exit.Internal: "internal error",
	exit.Usage:    "usage error",
	exit.Refused:  "refused: nothing changed",
	exit.Invalid:  "invalid state or artifact: nothing changed",
	exit.Busy:     "busy: the task's lock is held",
	exit.Provider: "the model provider failed",
}

// done stores the outcome and sends the browser back to the task page
// (POST, redirect, GET: a reload never repeats an action).
func (s *Server) done(w http.ResponseWriter, r *http.Request, id string, f flash) {
	f.Task, f.at = id, s.now()
	key, err := newSecret()
	if err != nil {
		refuse(w, http.StatusInternalServerError, err.Error())
		return
	}
	s.flashMu.Lock()
	for k, old := range s.flashes {
		if s.now().Sub(old.at) > 10*time.Minute {
			delete(s.flashes, k)
		}
	}
	s.flashes[key] = f
	s.flashMu.Unlock()
	http.Redirect(w, r, "/task/"+url.PathEscape(id)+"?flash="+key+"#actions", http.StatusSeeOther)
}

func (s *Server) takeFlash(key string) (flash, bool) {
	if key == "" {
		return flash{}, false
	}
	s.flashMu.Lock()
	defer s.flashMu.Unlock()
	f, ok := s.flashes[key]
	delete(s.flashes, key)
	return f, ok
}

// failed reports err the way the CLI prints it: its message and the exit
// code it would exit with.
func (s *Server) failed(w http.ResponseWriter, r *http.Request, id string, err error) {
	var stale *orchestrator.StaleError
	if errors.As(err, &stale) {
		if s.fleetOwns(id) {
			s.fleetConflict(w, r, id, stale)
			return
		}
		s.conflict(w, r, id, stale)
		return
	}
	code := exit.Of(err)
	f := flash{Text: exit.Format(err), Code: int(code), Exit: exitWords[code]}
	refusedForm(r, &f)
	if s.fleetOwns(id) {
		f.Kept = nil // a fleet task's page does not fill its forms in again
	}
	s.done(w, r, id, f)
}

// conflict answers an action taken on a page older than the task: 409,
// with the task page as it is now and the refusal saying what changed
// (README, "Every gate action names what it acted on").
func (s *Server) conflict(w http.ResponseWriter, r *http.Request, id string, e *orchestrator.StaleError) {
	msg := exit.Prefix + e.Explain("after this page was loaded")
	stamp := s.watch.Gen()
	tp, err := s.taskPage(r.Context(), id)
	if err != nil {
		refuse(w, http.StatusConflict, msg)
		return
	}
	f := flash{Task: id, Text: msg, Code: int(exit.Refused), Exit: exitWords[exit.Refused], at: s.now()}
	s.renderStatus(w, "task.tmpl", page{Title: tp.Title + " · orch", Task: id, T: tp, Stamp: stamp, Flash: &f}, http.StatusConflict)
}

// seenRevision reads the task revision a gate form was rendered at:
// every such form carries it, and the action is refused when the task
// moved on since.
func seenRevision(r *http.Request) (int64, error) {
	v := strings.TrimSpace(r.PostForm.Get("revision"))
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, exit.New(exit.ErrUsage, "the form names no task revision (field revision, got %q): reload the page and decide on what it shows", v)
	}
	return n, nil
}

// checkSeen refuses a form whose revision (seenRevision) is not the
// task's as committed (orchestrator.CheckSeen): the answer and revert
// forms, checked just before they act.
func (s *Server) checkSeen(r *http.Request, id string) error {
	seen, err := seenRevision(r)
	if err != nil {
		return err
	}
	return s.orch.CheckSeen(r.Context(), id, seen)
}

// taskOf reads the task id of an action's URL; a bad one is refused.
func taskOf(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if err := task.ValidID(id); err != nil {
		refuse(w, http.StatusBadRequest, err.Error())
		return "", false
	}
	return id, true
}

// settle finishes or undoes an accept or revert killed in its git effect,
// as every CLI command does first (landing.RecoverGit); what it did is
// reported with the action's outcome.
func (s *Server) settle(ctx context.Context) []string {
	settled, err := orchestrator.RecoverGit(ctx, s.opt.Project, 2*time.Second)
	var out []string
	for _, st := range settled {
		out = append(out, st.String())
	}
	if err != nil {
		out = append(out, exit.Prefix+"warning: "+err.Error())
	}
	return out
}

// handleAnswer: `orch answer ID TEXT`.
func (s *Server) handleAnswer(w http.ResponseWriter, r *http.Request) {
	id, ok := taskOf(w, r)
	if !ok {
		return
	}
	if s.fleetOwns(id) {
		s.fleetAnswer(w, r, id)
		return
	}
	if err := s.checkSeen(r, id); err != nil {
		s.failed(w, r, id, err)
		return
	}
	notes := s.settle(r.Context())
	qid := strings.TrimSpace(r.PostForm.Get("question"))
	text := strings.TrimRight(r.PostForm.Get("answer"), "\r\n")
	res, err := planner.AnswerQuestion(r.Context(), s.orch, id, qid, text)
	if err != nil {
		s.failed(w, r, id, err)
		return
	}
	f := flash{OK: true, Text: fmt.Sprintf("answered %s in %s: %s", qid, artifact.PlanFile, res.Question.Text), Lines: notes}
	if len(res.Open) > 0 {
		var open []string
		for _, q := range res.Open {
			open = append(open, q.ID)
		}
		f.Lines = append(f.Lines, "still open: "+strings.Join(open, ", "))
	} else {
		f.Lines = append(f.Lines, "no open blocking question left; the next planning round plans with your answer")
	}
	s.done(w, r, id, f)
}

// handleNext: `orch next [--to P] [--from P]`.
func (s *Server) handleNext(w http.ResponseWriter, r *http.Request) {
	id, ok := taskOf(w, r)
	if !ok {
		return
	}
	if s.fleetOwns(id) {
		s.failed(w, r, id, fleetRefusedHere(id, "takes the transitions that hold"))
		return
	}
	var req orchestrator.NextRequest
	var err error
	if req.To, err = phaseField(r, "to"); err == nil {
		req.From, err = phaseField(r, "from")
	}
	if err == nil {
		req.Revision, err = seenRevision(r)
	}
	if err != nil {
		s.failed(w, r, id, err)
		return
	}
	s.next(w, r, id, req)
}

// handleOverride: `orch next --override REASON [--to P]`.
func (s *Server) handleOverride(w http.ResponseWriter, r *http.Request) {
	id, ok := taskOf(w, r)
	if !ok {
		return
	}
	to, err := phaseField(r, "to")
	var seen int64
	if err == nil {
		seen, err = seenRevision(r)
	}
	if err != nil {
		s.failed(w, r, id, err)
		return
	}
	reason := r.PostForm.Get("reason")
	if s.fleetOwns(id) {
		s.fleetOverride(w, r, id, reason, to)
		return
	}
	s.next(w, r, id, orchestrator.NextRequest{To: to, Override: &reason, Revision: seen})
}

func (s *Server) next(w http.ResponseWriter, r *http.Request, id string, req orchestrator.NextRequest) {
	notes := s.settle(r.Context())
	res, err := s.orch.Next(r.Context(), id, req)
	if err != nil {
		s.failed(w, r, id, err)
		return
	}
	f := flash{OK: true, Lines: notes}
	if res.Override {
		f.Text = fmt.Sprintf("%s: %s → %s by override (%s)", res.Task, res.From, res.To, res.Reason)
		if len(res.Skipped) > 0 {
			f.Lines = append(f.Lines, fmt.Sprintf("skipped phases: %v", res.Skipped))
		}
		if res.To == lifecycle.Done {
			if warn := nextstep.DoneWithoutCommit(s.orch.Project, id); warn != "" {
				f.Lines = append(f.Lines, "warning: "+warn)
			}
		}
	} else {
		f.Text = fmt.Sprintf("%s: %s → %s (%s)", res.Task, res.From, res.To, res.Reason)
	}
	if res.Archived != "" {
		f.Lines = append(f.Lines, "earlier artifacts archived in "+res.Archived)
	}
	s.done(w, r, id, f)
}

// handleRedo: `orch redo [PHASE] --reason R`.
func (s *Server) handleRedo(w http.ResponseWriter, r *http.Request) {
	id, ok := taskOf(w, r)
	if !ok {
		return
	}
	p, err := phaseField(r, "phase")
	var seen int64
	if err == nil {
		seen, err = seenRevision(r)
	}
	if err != nil {
		s.failed(w, r, id, err)
		return
	}
	if s.fleetOwns(id) {
		s.fleetRedo(w, r, id, p, r.PostForm.Get("reason"))
		return
	}
	notes := s.settle(r.Context())
	res, err := s.orch.RedoSeen(r.Context(), id, p, r.PostForm.Get("reason"), seen)
	if err != nil {
		s.failed(w, r, id, err)
		return
	}
	f := flash{OK: true, Text: fmt.Sprintf("%s: %s → %s (redo)", res.Task, res.From, res.To), Lines: notes}
	if res.Archived != "" {
		f.Lines = append(f.Lines, "artifacts archived in "+res.Archived)
	}
	s.done(w, r, id, f)
}

// phaseField reads an optional phase from the form; a bad name is a
// usage error, as the CLI's flags.
func phaseField(r *http.Request, name string) (lifecycle.Phase, error) {
	v := strings.TrimSpace(r.PostForm.Get(name))
	if v == "" {
		return "", nil
	}
	p, err := lifecycle.ParsePhase(v)
	if err != nil {
		return "", exit.New(exit.ErrUsage, "--%s: %v", name, err)
	}
	return p, nil
}

// handleAccept: `orch accept --verdict V [--to P] --reason R…
// [--allow-incomplete]`, run as a job (accepting may run the suites again
// when HEAD moved).
func (s *Server) handleAccept(w http.ResponseWriter, r *http.Request) {
	id, ok := taskOf(w, r)
	if !ok {
		return
	}
	var reasons []string
	for _, l := range strings.Split(r.PostForm.Get("reasons"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			reasons = append(reasons, l)
		}
	}
	opt := landing.AcceptOptions{
		Verdict: r.PostForm.Get("verdict"), Reasons: reasons,
		AllowIncomplete: r.PostForm.Get("allow_incomplete") == "yes",
		Decider:         artifact.Decider{Kind: "human", Name: s.opt.Decider},
	}
	if opt.Verdict == artifact.VerdictChangesRequested {
		opt.Target = r.PostForm.Get("target")
	}
	if err := landing.CheckDecision(opt); err != nil {
		s.failed(w, r, id, exit.New(exit.ErrUsage, "%v", err))
		return
	}
	if s.fleetOwns(id) {
		// The revision the page showed goes with the decision (orch-fleet
		// accept --expect); the evidence is the fleet's.
		seen, err := seenRevision(r)
		if err != nil {
			s.failed(w, r, id, err)
			return
		}
		s.fleetAccept(w, r, id, fleetlink.Decision{Verdict: opt.Verdict, Target: opt.Target, Reasons: opt.Reasons,
			Decider: s.opt.Decider, AllowIncomplete: opt.AllowIncomplete, Revision: seen})
		return
	}
	// What the page showed: its revision and the evidence hashes above the
	// button. Checked now (409 before the job starts) and again by accept
	// on the revision of its run and the bytes it commits.
	seen, err := seenRevision(r)
	if err != nil {
		s.failed(w, r, id, err)
		return
	}
	opt.Expect = landing.Expectation{Revision: seen, SHA256: map[string]string{}}
	for _, k := range lifecycle.HashKeys() {
		if v := strings.TrimSpace(r.PostForm.Get("sha256_" + k)); v != "" {
			opt.Expect.SHA256[k] = v
		}
	}
	if err := landing.CheckExpectation(opt.Expect); err != nil {
		s.failed(w, r, id, exit.New(exit.ErrUsage, "%v", err))
		return
	}
	if err := landing.CheckExpected(s.orch, id, opt.Expect); err != nil {
		s.failed(w, r, id, err)
		return
	}
	// Tests that failed need the confirmation: refused here, the form
	// given back, rather than by the job after the page was left.
	if opt.Verdict == artifact.VerdictAccepted {
		if err := landing.CheckComplete(filepath.Join(s.orch.Project.TasksDir(), id), opt.AllowIncomplete); err != nil {
			s.failed(w, r, id, err)
			return
		}
	}
	s.startJob(w, r, id, "accept", func(ctx context.Context, j *Job, cfg config.Config) (string, error) {
		opt.Test = s.testOptions(j)
		out, err := s.work(ctx, j, cfg, lifecycle.Accept, worker.Run{Task: id, Accept: &opt})
		if err != nil {
			return "", err
		}
		res := *out.Accept
		d := res.Decision
		msg := "decision recorded: " + d.Verdict
		if d.Target != "" {
			msg += " (target " + d.Target + ")"
		}
		if d.Commit != "" && d.Verdict == artifact.VerdictAccepted {
			msg += "; commit " + d.Commit
		}
		for _, n := range d.Notes {
			j.say("note: " + n)
		}
		// The decision is what a person asked for: apply it, as the
		// second step `orch next --from accept` would (done with the
		// commit, revert, or back to the target), and say where the task
		// went.
		j.say(msg)
		nr, err := s.orch.Next(ctx, id, orchestrator.NextRequest{From: lifecycle.Accept})
		if err != nil {
			return "", exit.New(exit.KindOf(exit.Of(err)), "the decision is recorded but the task did not move on: %w", err)
		}
		msg += fmt.Sprintf("; %s → %s (%s)", nr.From, nr.To, nr.Reason)
		if nr.To == lifecycle.Revert {
			msg += "; the revert form is on this page"
		}
		return msg, nil
	})
}

// handleRevert: `orch revert --reason R`, as a job.
func (s *Server) handleRevert(w http.ResponseWriter, r *http.Request) {
	id, ok := taskOf(w, r)
	if !ok {
		return
	}
	reason := r.PostForm.Get("reason")
	if strings.TrimSpace(reason) == "" {
		s.failed(w, r, id, exit.New(exit.ErrUsage, "revert needs a non-blank --reason"))
		return
	}
	if s.fleetOwns(id) {
		s.fleetRevert(w, r, id, reason)
		return
	}
	seen, err := seenRevision(r)
	if err == nil {
		err = s.orch.CheckSeen(r.Context(), id, seen)
	}
	if err != nil {
		s.failed(w, r, id, err)
		return
	}
	s.startJob(w, r, id, "revert", func(ctx context.Context, j *Job, cfg config.Config) (string, error) {
		// A done task is re-opened at revert first, as `orch revert`
		// does from done (a redo logged with the reason), on the
		// revision the page showed.
		if v, err := s.orch.Status(id); err == nil && v.Phase == lifecycle.Done && v.Pending == nil {
			res, err := s.orch.RedoSeen(ctx, id, lifecycle.Revert, "orch revert: "+reason, seen)
			if err != nil {
				return "", err
			}
			j.say(fmt.Sprintf("%s: %s → %s (redo, to revert the done task)", res.Task, res.From, res.To))
		}
		out, err := s.work(ctx, j, cfg, lifecycle.Revert, worker.Run{Task: id, Reason: reason})
		if err != nil {
			return "", err
		}
		rec := out.Revert.Record
		switch rec.Status {
		case artifact.RevertReverted:
			return fmt.Sprintf("reverted %s in %s", rec.RevertedCommit, rec.RevertCommit), nil
		case artifact.RevertPartial:
			return "NOT reverted: conflicts in " + strings.Join(rec.Conflicts, ", ") + "; the repository is as it was", nil
		}
		return "nothing to revert", nil
	})
}

// handleWork runs the current phase's worker (`orch plan`, `orch review
// plan`, `orch codegen`, `orch review code`, `orch test`) as a job.
func (s *Server) handleWork(w http.ResponseWriter, r *http.Request) {
	id, ok := taskOf(w, r)
	if !ok {
		return
	}
	if s.fleetOwns(id) {
		s.failed(w, r, id, fleetRefusedHere(id, "runs the phases"))
		return
	}
	p, err := phaseField(r, "phase")
	if err != nil || p == "" {
		s.failed(w, r, id, exit.New(exit.ErrUsage, "which phase's work? (the form names it)"))
		return
	}
	wk, ok := s.workers().For(p)
	if !ok || p == lifecycle.Accept || p == lifecycle.Revert {
		s.failed(w, r, id, exit.New(exit.ErrUsage, "%s has no worker to start from here", p))
		return
	}
	s.startJob(w, r, id, wk.Command(), func(ctx context.Context, j *Job, cfg config.Config) (string, error) {
		out, err := s.work(ctx, j, cfg, p, worker.Run{Task: id})
		if err != nil {
			return "", err
		}
		if out.Phase.Entered != nil {
			j.say(fmt.Sprintf("%s → %s (%s)", out.Phase.Entered.From, out.Phase.Entered.To, out.Phase.Entered.Reason))
		}
		msg, passed := runOutcome(wk.Command(), out.Phase.Outcome)
		if !passed {
			j.notPassed()
		}
		return msg, nil
	})
}

// runOutcome says how a phase's run ended, as its phase_finished event
// records it: the status and the summary in words (the timeline's), and
// whether it is a pass. A run that worked but found failing tests, a
// review that is not ok or a blocked plan is not: the page must not show
// "finished" in green above a red test report.
func runOutcome(command string, out work.Output) (string, bool) {
	status := out.Status
	if status == "" {
		status = lifecycle.StatusCompleted
	}
	msg := fmt.Sprintf("orch %s finished: %s", command, status)
	if t := summaryAfter(string(status), out.Summary); t != "" {
		msg += " · " + t
	}
	passed := status != lifecycle.RunFailed && status != lifecycle.RunCancelled
	if s := out.Summary; s != nil {
		if s.OverallPass != nil && !*s.OverallPass || s.OK != nil && !*s.OK || s.Blocked != nil && *s.Blocked {
			passed = false
		}
	}
	return msg, passed
}

// handleCancel cancels the task's running job (Ctrl-C in the CLI: the
// run is recorded as cancelled).
func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	id, ok := taskOf(w, r)
	if !ok {
		return
	}
	j := s.jobs.get(id, r.PostForm.Get("job"))
	if j == nil || !j.Running() {
		s.done(w, r, id, flash{Text: exit.Prefix + "no running job to cancel"})
		return
	}
	j.cancel()
	s.done(w, r, id, flash{OK: true, Text: "cancelling orch " + j.Action + ": the run is recorded as cancelled"})
}

// work runs phase p's worker from the registry, with the agents' runtime
// and the test options of a job: the CLI's phase commands do exactly this.
func (s *Server) work(ctx context.Context, j *Job, cfg config.Config, p lifecycle.Phase, run worker.Run) (worker.Outcome, error) {
	deps := worker.Deps{Orch: s.orch, Config: cfg, Agents: s.runtime(cfg, j), Test: s.testOptions(j)}
	wk, ok := worker.Registry(deps).For(p)
	if !ok {
		return worker.Outcome{}, exit.New(exit.ErrInternal, "no worker for phase %s", p)
	}
	out, err := wk.Work(ctx, run)
	if deps.Agents != nil {
		for _, n := range deps.Agents.Notes {
			j.say("note: " + n)
		}
	}
	if err == nil && out.Phase.FailedKept != "" {
		j.say("the failed run's output is kept in " + out.Phase.FailedKept)
	}
	return out, err
}

// startJob loads the configuration (as each CLI command does), starts fn
// in the background and sends the browser to the task page, where its
// progress streams.
func (s *Server) startJob(w http.ResponseWriter, r *http.Request, id, action string, fn func(ctx context.Context, j *Job, cfg config.Config) (string, error)) {
	cfg, err := config.Load(s.opt.Project.Dir)
	if err != nil {
		s.failed(w, r, id, err)
		return
	}
	settle := func() []string { return s.settle(r.Context()) }
	s.launch(w, r, id, action, settle, func(ctx context.Context, j *Job) (string, error) { return fn(ctx, j, cfg) })
}

// launch registers a job of task id (one at a time per task), says first
// what before returns (nil: nothing), runs fn in the background and
// sends the browser to the task page, where its progress streams.
func (s *Server) launch(w http.ResponseWriter, r *http.Request, id, action string, before func() []string, fn func(ctx context.Context, j *Job) (string, error)) {
	key, err := newSecret()
	if err != nil {
		s.failed(w, r, id, err)
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	j := &Job{ID: key[:12], Task: id, Action: action, Started: s.now(), cancel: cancel}
	if !s.jobs.start(j) {
		cancel()
		s.failed(w, r, id, exit.New(exit.ErrRefused, "%s is already running for task %s from this board: wait for it or cancel it", s.jobs.last(id).Action, id))
		return
	}
	if before != nil {
		for _, n := range before() {
			j.say(n)
		}
	}
	j.say("orch " + action + " for task " + id)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		res, err := fn(ctx, j)
		if err != nil && errors.Is(err, context.Canceled) {
			j.say("cancelled")
		}
		j.finish(res, err)
	}()
	s.done(w, r, id, flash{OK: true, Started: true, Text: "started orch " + action + "; its progress is below"})
}
