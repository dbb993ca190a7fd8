package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/codegen"
	"github.com/orchdev/orch/internal/agent/planner"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/fleetlink"
	"github.com/orchdev/orch/internal/landing"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/testphase"
	"github.com/orchdev/orch/internal/view"
	"github.com/orchdev/orch/internal/worker"
)

// The tools' names.
const (
	ToolListTasks     = "list_tasks"
	ToolStatus        = "status"
	ToolNewTask       = "new_task"
	ToolNext          = "next"
	ToolLog           = "log"
	ToolReadArtifact  = "read_artifact"
	ToolWriteArtifact = "write_artifact"
	ToolAnswer        = "answer"
	ToolRunPhase      = "run_phase"
	ToolSubmitCode    = "submit_code"
	ToolCost          = "cost"
	ToolAccept        = "accept"
	ToolRevert        = "revert"
	ToolOverride      = "override"
	ToolRedo          = "redo"
)

// The human gates, as [mcp] allow names them (config.MCPGates).
const (
	GateAccept   = "accept"
	GateRevert   = "revert"
	GateOverride = "override"
	GateRedo     = "redo"
)

// toolDef is one tool: its name, the gate that must be allowed for it to
// be offered ("" for none), what docs/mcp.md says it returns, its hints,
// and how it is added to an SDK server.
type toolDef struct {
	name    string
	gate    string
	returns string
	hints   hints
	add     func(*mcp.Server)
}

// hints are a tool's annotations as MCP defines them (ToolAnnotations),
// set per tool in tools(): what a client may assume without reading the
// description.
type hints struct {
	// readOnly: the tool changes nothing (reads, status).
	readOnly bool
	// idempotent: calling it again with the same arguments has no
	// further effect (the mcp_call event a call logs aside).
	idempotent bool
	// destructive: it may replace or undo what exists (a file, a
	// commit, a gate's judgement) rather than only add to it.
	destructive bool
	// openWorld: it reaches outside the project (model providers).
	openWorld bool
}

// The hints of the tools that only read.
var reads = hints{readOnly: true, idempotent: true}

// def binds a typed handler as a tool. Its input and output schemas are
// inferred from In and Out (schemaFor: phases as an enum of the
// lifecycle's phases), enums narrows string arguments to their values;
// the SDK checks every call's arguments against the input schema (unknown
// fields refused) and every result against the output schema.
func def[In, Out any](name, gate, desc, returns string, h hints, handler mcp.ToolHandlerFor[In, Out], enums ...enumArg) toolDef {
	ann := &mcp.ToolAnnotations{ReadOnlyHint: h.readOnly, IdempotentHint: h.idempotent, OpenWorldHint: ptr(h.openWorld)}
	if !h.readOnly {
		ann.DestructiveHint = ptr(h.destructive)
	}
	return toolDef{name: name, gate: gate, returns: returns, hints: h, add: func(s *mcp.Server) {
		in := schemaFor[In]()
		for _, e := range enums {
			e.apply(name, in)
		}
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: desc, Annotations: ann, InputSchema: in, OutputSchema: schemaFor[Out]()}, handler)
	}}
}

func ptr[T any](v T) *T { return &v }

// TaskArg names the task; empty means .orch/current, as --task does.
type TaskArg struct {
	Task string `json:"task,omitempty" jsonschema:"task id (default: the current task, .orch/current)"`
}

// SeenArg names the task's revision an acting tool's caller read (from
// status or any result that carries revision): the action is refused
// (exit 3, nothing done) when the task moved on since, saying what changed
// (README, "Every gate action names what it acted on").
type SeenArg struct {
	Revision int64 `json:"revision,omitempty" jsonschema:"the task's revision you read (status, or a result's revision): refused with exit 3 when the task moved on since; 0 or absent names none"`
}

// tools lists every tool in the order docs/mcp.md shows them.
func (s *Server) tools() []toolDef {
	return []toolDef{
		def(ToolListTasks, "", "List every task of the project: id, phase, revision, last change, which one is current, its title and what it waits for (orch list --json).",
			"`tasks` as `orch list --json`", reads, s.listTasks),
		def(ToolStatus, "", "A task's phase, actors, every outgoing edge with whether its condition holds and why, the suggested edge and the command that moves it on (orch status --json).",
			"the object `orch status --json` prints (the same fields)", reads, s.status),
		def(ToolNewTask, "", "Create a task in phase planning with the brief as planning/brief.md; it becomes the current task (orch new).",
			"`task`, `phase`, `revision`, `dir`", hints{}, s.newTask),
		def(ToolNext, "", "Take the first outgoing edge whose condition holds (orch next); with to, only that edge; with from, nothing happens unless the task is in that phase (safe retries). Refused (nothing changed) when no condition holds: the message says what is missing.",
			"the object `orch next --json` prints", hints{}, s.next),
		def(ToolLog, "", "The task's transcript: hash-chained events, oldest first (orch log --json). since and limit page through it.",
			"`task`, `events[]`, `total`, `pending`", reads, s.log),
		def(ToolReadArtifact, "", "Read a file of the task folder's artifact areas (planning/, review/, code/, test/, accept/, revert/), e.g. planning/planning.ai.json or review/code-review.md. Same content as the resource orch://task/<id>/<path>.",
			"`task`, `path`, `uri`, `size`, `sha256`, `text` or `base64`, `offset`, `truncated`", reads, s.readArtifact),
		def(ToolWriteArtifact, "", "Write an artifact an author may write while the task plans: planning/planning.ai.json, planning/plan.files.json or planning/plan.md. JSON is checked by the same strict decoders as orch next and refused with the same messages (nothing written). Never state.json, the transcript, reviews, test reports or decisions.",
			"`task`, `path`, `uri`, `bytes`, `sha256`", hints{idempotent: true, destructive: true}, s.writeArtifact),
		def(ToolAnswer, "", "Answer a blocking question of the plan (orch answer): recorded in planning/planning.ai.json, planning/meeting.jsonl and the transcript; the next planning round plans with it.",
			"`task`, `question`, `answer`, `previous`, `open_questions[]`", hints{destructive: true}, s.answer),
		def(ToolRunPhase, "", "Run a phase's worker from orch's registry: planning (orch plan), plan_review (orch review plan), codegen (orch codegen), review (orch review code) or test (orch test, sandboxed). Sends progress notifications when the request has a progress token; cancelling the request cancels the run (recorded as cancelled).",
			"`task`, `phase`, `status`, `entered`, `summary`, `archived`, `revision`, `notes`", hints{openWorld: true}, s.runPhase, enumArg{"phase", RunPhases()}),
		def(ToolSubmitCode, "", "Submit the code change your agent wrote, while the task is in codegen and no codegen run is live (instead of run_phase codegen): edits (search/replace on the base files), files (whole new or rewritten files), deletes, as orch's codegen model answers. orch checks it exactly as that answer (every path inside the reviewed file plan, each old_string found, the plan unchanged since its review), stages code/files, computes code/diff.patch with git and records code/codegen.json with the base commit and attempt (orch codegen's run, without a model call). Refused with codegen's own message, nothing written, when a check fails.",
			"`task`, `phase`, `status`, `summary`, `archived`, `revision`, `base`, `attempt`, `files`, `deletes`, `untouched`", hints{}, s.submitCode),
		def(ToolCost, "", "Sum the model calls of the task, or of every task with all: calls, tokens, cost in USD where the price is known, budgets (orch cost --json).",
			"the object `orch cost --json` prints", reads, s.cost),
		def(ToolAccept, GateAccept, "Record the accept decision (orch accept): accepted applies the change and commits it; changes_requested sends the task back to target; rejected and revert lead to revert. The decider is recorded as an agent named after the MCP client. Offered only when [mcp] allow names accept.",
			"`decision` (what `orch accept --json` prints), `entered`", hints{destructive: true}, s.accept, enumArg{"verdict", artifact.Verdicts()}, enumArg{"target", artifact.Targets()}),
		def(ToolRevert, GateRevert, "Undo the accepted change with a revert commit and finish the task (orch revert). Offered only when [mcp] allow names revert.",
			"`record` (what `orch revert --json` prints), `done`", hints{destructive: true}, s.revert),
		def(ToolOverride, GateOverride, "Move without checking conditions (orch next --override REASON [--to PHASE]); the reason, skipped conditions and phases are logged. Offered only when [mcp] allow names override.",
			"the object `orch next --json` prints", hints{destructive: true}, s.override),
		def(ToolRedo, GateRedo, "Re-open a phase (orch redo): its artifacts and every later phase's move to history/. The only way out of done. Offered only when [mcp] allow names redo.",
			"the object `orch redo --json` prints", hints{destructive: true}, s.redo),
	}
}

// taskID resolves a task argument: a valid id, or the current task.
func (s *Server) taskID(arg string) (string, error) {
	if arg != "" {
		if err := task.ValidID(arg); err != nil {
			return "", err
		}
		return arg, nil
	}
	return s.project.Current()
}

// act is every tool that acts on a task: it resolves the task, settles
// interrupted git effects, runs fn, logs the mcp_call event, rescans the
// artifacts (notifying subscribers), and returns the tool's result: out
// of the task's id and next step when fn succeeded, else the refusal with
// the next step.
func act[Out any](s *Server, ctx context.Context, req *mcp.CallToolRequest, tool, taskArg string, args map[string]string,
	fn func(id string) error, out func(id string, next Next) Out) (*mcp.CallToolResult, Out, error) {
	var zero Out
	id, err := s.taskID(taskArg)
	if err != nil {
		return nil, zero, s.refuse("", err)
	}
	s.settle(ctx)
	err = fn(id)
	s.logCall(ctx, req, tool, id, args, err)
	s.watch.scan(ctx)
	// acted hears the call once all of it is done: the refusal and the
	// next step read the task (and write its observation cache) too.
	if err != nil {
		refusal := s.refuse(id, err)
		s.heard(tool, id, err)
		return nil, zero, refusal
	}
	result := out(id, s.nextFor(id))
	s.heard(tool, id, nil)
	return nil, result, nil
}

// heard tells acted (tests) that tool acted on task id.
func (s *Server) heard(tool, id string, err error) {
	if s.acted != nil {
		s.acted(tool, id, err)
	}
}

// --- read-only tools

// ListOutput is list_tasks' result.
type ListOutput struct {
	Tasks []view.ListEntry `json:"tasks"`
	// Fleet is the fleet's running tasks by phase and its workers by
	// queue, when [fleet] is configured (orch list's fleet part).
	Fleet *fleetlink.Listing `json:"fleet,omitempty"`
	Next  Next               `json:"next"`
}

func (s *Server) listTasks(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, ListOutput, error) {
	entries, err := view.List(s.orchestrator())
	if err != nil {
		return nil, ListOutput{}, s.refuse("", err)
	}
	fleet, err := s.fleetListing(ctx)
	if err != nil {
		return nil, ListOutput{}, s.refuse("", err)
	}
	cur, _ := s.project.Current()
	next := Next{Tool: ToolNewTask, Arguments: map[string]string{"brief": "WHAT THE CHANGE SHOULD DO"}, Why: "no task yet: create one"}
	if cur != "" {
		next = s.nextFor(cur)
	} else if len(entries) > 0 {
		next = Next{Tool: ToolStatus, Arguments: map[string]string{"task": entries[len(entries)-1].ID}, Why: "no current task: look at one"}
	}
	return nil, ListOutput{Tasks: entries, Fleet: fleet, Next: next}, nil
}

// StatusOutput is status' result: `orch status --json` plus next.
type StatusOutput struct {
	view.Status
	Next Next `json:"next"`
}

func (s *Server) status(ctx context.Context, req *mcp.CallToolRequest, in TaskArg) (*mcp.CallToolResult, StatusOutput, error) {
	if l, id, err := s.fleetTask(in.Task); err != nil || l != nil {
		if err == nil {
			var out StatusOutput
			if out, err = s.fleetStatus(ctx, l, id); err == nil {
				return nil, out, nil
			}
		}
		return nil, StatusOutput{}, s.fleetRefuse(id, err)
	}
	id, err := s.taskID(in.Task)
	if err != nil {
		return nil, StatusOutput{}, s.refuse("", err)
	}
	st, step, err := view.StatusOf(s.orchestrator(), id)
	if err != nil {
		return nil, StatusOutput{}, s.refuse(id, err)
	}
	return nil, StatusOutput{Status: st, Next: s.nextOf(id, step)}, nil
}

// LogInput pages through the transcript.
type LogInput struct {
	TaskArg
	Since int64 `json:"since,omitempty" jsonschema:"only events with a larger seq"`
	Limit int   `json:"limit,omitempty" jsonschema:"at most this many events, the newest of the selection (default 200, at most 2000)"`
}

// LogOutput is log's result.
type LogOutput struct {
	Task    string        `json:"task"`
	Events  []task.Event  `json:"events"`
	Total   int           `json:"total"`
	Pending *task.Pending `json:"pending,omitempty"`
	Next    Next          `json:"next"`
}

func (s *Server) log(ctx context.Context, req *mcp.CallToolRequest, in LogInput) (*mcp.CallToolResult, LogOutput, error) {
	if l, id, err := s.fleetTask(in.Task); err != nil || l != nil {
		if err == nil {
			var out LogOutput
			if out, err = s.fleetLog(ctx, l, id, in); err == nil {
				return nil, out, nil
			}
		}
		return nil, LogOutput{}, s.fleetRefuse(id, err)
	}
	id, err := s.taskID(in.Task)
	if err != nil {
		return nil, LogOutput{}, s.refuse("", err)
	}
	t, err := s.project.Open(id)
	if err != nil {
		return nil, LogOutput{}, s.refuse(id, err)
	}
	evs, err := t.Transcript()
	if err != nil {
		return nil, LogOutput{}, s.refuse(id, err)
	}
	out := pageLog(id, evs, in)
	out.Next = s.nextFor(id)
	if _, pending, err := t.CommittedState(); err == nil {
		out.Pending = pending
	}
	return nil, out, nil
}

// pageLog is log's page of task id's events evs: those after in.Since,
// at most in.Limit (default 200, at most 2000), the newest.
func pageLog(id string, evs []task.Event, in LogInput) LogOutput {
	limit := in.Limit
	if limit <= 0 {
		limit = 200
	}
	limit = min(limit, 2000)
	sel := make([]task.Event, 0, len(evs))
	for _, ev := range evs {
		if ev.Seq > in.Since {
			sel = append(sel, ev)
		}
	}
	if len(sel) > limit {
		sel = sel[len(sel)-limit:]
	}
	return LogOutput{Task: id, Events: sel, Total: len(evs)}
}

// CostInput selects the task or every task.
type CostInput struct {
	TaskArg
	All bool `json:"all,omitempty" jsonschema:"sum every task of the project (task is then ignored)"`
}

// CostOutput is cost's result: `orch cost --json` plus next.
type CostOutput struct {
	view.Cost
	Next Next `json:"next"`
}

func (s *Server) cost(ctx context.Context, req *mcp.CallToolRequest, in CostInput) (*mcp.CallToolResult, CostOutput, error) {
	id := ""
	if !in.All {
		var err error
		if id, err = s.taskID(in.Task); err != nil {
			return nil, CostOutput{}, s.refuse("", err)
		}
	}
	c, err := view.CostOf(s.project, id, in.All)
	if err != nil {
		return nil, CostOutput{}, s.refuse(id, err)
	}
	next := Next{Tool: ToolListTasks, Why: "look at the tasks"}
	if id != "" {
		next = s.nextFor(id)
	}
	return nil, CostOutput{Cost: c, Next: next}, nil
}

// --- tools that act

// optPhase parses the optional phase argument arg ("" when absent); a bad
// name is a usage error naming arg.
func optPhase(arg, v string) (lifecycle.Phase, error) {
	if v == "" {
		return "", nil
	}
	p, err := lifecycle.ParsePhase(v)
	if err != nil {
		return "", exit.New(exit.ErrUsage, "%s: %v", arg, err)
	}
	return p, nil
}

// NewTaskInput is new_task's arguments.
type NewTaskInput struct {
	Brief string `json:"brief" jsonschema:"what the change should do (becomes planning/brief.md)"`
	ID    string `json:"id,omitempty" jsonschema:"task id (default: NNNN-slug from the brief)"`
}

// NewTaskOutput is new_task's result.
type NewTaskOutput struct {
	Task     string          `json:"task"`
	Phase    lifecycle.Phase `json:"phase"`
	Revision int64           `json:"revision"`
	Dir      string          `json:"dir"`
	Next     Next            `json:"next"`
}

func (s *Server) newTask(ctx context.Context, req *mcp.CallToolRequest, in NewTaskInput) (*mcp.CallToolResult, NewTaskOutput, error) {
	if strings.TrimSpace(in.Brief) == "" {
		return nil, NewTaskOutput{}, s.refuse("", exit.New(exit.ErrUsage, "the brief is blank: say what the change should do"))
	}
	if len(in.Brief) > 1<<20 {
		return nil, NewTaskOutput{}, s.refuse("", exit.New(exit.ErrUsage, "the brief is %d bytes; at most %d are accepted", len(in.Brief), 1<<20))
	}
	s.settle(ctx)
	if err := s.project.CleanStrays(); err != nil {
		return nil, NewTaskOutput{}, s.refuse("", err)
	}
	id := in.ID
	var err error
	if id == "" {
		if id, err = s.project.NewID(in.Brief); err != nil {
			return nil, NewTaskOutput{}, s.refuse("", err)
		}
	} else if err := task.ValidID(id); err != nil {
		return nil, NewTaskOutput{}, s.refuse("", err)
	}
	t, st, err := s.project.CreateTask(id, in.Brief, s.opt.Now().UTC())
	if err != nil {
		return nil, NewTaskOutput{}, s.refuse("", err)
	}
	s.logCall(ctx, req, ToolNewTask, t.ID, argMap([]string{"brief"}, "id", in.ID, "brief", in.Brief), nil)
	s.watch.scan(ctx)
	return nil, NewTaskOutput{Task: t.ID, Phase: st.Phase, Revision: st.Revision, Dir: t.Dir, Next: s.nextFor(t.ID)}, nil
}

// NextInput is next's arguments.
type NextInput struct {
	TaskArg
	To   lifecycle.Phase `json:"to,omitempty" jsonschema:"take the edge to this phase, only if its condition holds"`
	From lifecycle.Phase `json:"from,omitempty" jsonschema:"act only if the task is in this phase (safe retries)"`
	SeenArg
}

// NextOutput is next's and override's result.
type NextOutput struct {
	orchestrator.NextResult
	// Fleet is, for a task in the fleet, what its gate's step returned.
	Fleet *fleetlink.GateResult `json:"fleet,omitempty"`
	Next  Next                  `json:"next"`
}

func (s *Server) next(ctx context.Context, req *mcp.CallToolRequest, in NextInput) (*mcp.CallToolResult, NextOutput, error) {
	var nreq orchestrator.NextRequest
	var err error
	if nreq.To, err = optPhase("to", string(in.To)); err != nil {
		return nil, NextOutput{}, s.refuse(in.Task, err)
	}
	if nreq.From, err = optPhase("from", string(in.From)); err != nil {
		return nil, NextOutput{}, s.refuse(in.Task, err)
	}
	nreq.Revision = in.Revision
	return s.takeNext(ctx, req, ToolNext, "", in.Task, nreq, argMap(nil, "to", string(in.To), "from", string(in.From)))
}

// takeNext runs orchestrator.Next for next and override (gate names the
// human gate the tool needs, "" for none).
func (s *Server) takeNext(ctx context.Context, req *mcp.CallToolRequest, tool, gate, taskArg string, nreq orchestrator.NextRequest, args map[string]string) (*mcp.CallToolResult, NextOutput, error) {
	var res orchestrator.NextResult
	return act(s, ctx, req, tool, taskArg, args, func(id string) error {
		if gate != "" {
			if err := s.gate(gate); err != nil {
				return err
			}
		}
		var err error
		res, err = s.orchestrator().Next(ctx, id, nreq)
		return err
	}, func(id string, next Next) NextOutput {
		return NextOutput{NextResult: res, Next: next}
	})
}

// AnswerInput is answer's arguments.
type AnswerInput struct {
	TaskArg
	Question string `json:"question" jsonschema:"the question's id (q1, …)"`
	Text     string `json:"text" jsonschema:"the answer"`
	SeenArg
}

// AnswerOutput is answer's result.
type AnswerOutput struct {
	Task     string   `json:"task"`
	Question string   `json:"question"`
	Answer   string   `json:"answer"`
	Previous *string  `json:"previous"`
	Open     []string `json:"open_questions"`
	// Fleet is, for a task in the fleet, what its gate's step returned
	// (previous and open_questions are then not known here: read the
	// task's status).
	Fleet *fleetlink.GateResult `json:"fleet,omitempty"`
	Next  Next                  `json:"next"`
}

func (s *Server) answer(ctx context.Context, req *mcp.CallToolRequest, in AnswerInput) (*mcp.CallToolResult, AnswerOutput, error) {
	if l, id, err := s.fleetTask(in.Task); err != nil || l != nil {
		var res fleetlink.GateResult
		if err == nil {
			_, res, err = s.fleetGate(ctx, l, "", id, in.Revision, func() (fleetlink.GateResult, error) { return l.Answer(ctx, id, in.Question, in.Text) })
		}
		if err != nil {
			return nil, AnswerOutput{}, s.fleetRefuse(id, err)
		}
		return nil, AnswerOutput{Task: id, Question: in.Question, Answer: in.Text, Open: []string{}, Fleet: &res, Next: s.fleetNext(id, "")}, nil
	}
	var res planner.AnswerResult
	return act(s, ctx, req, ToolAnswer, in.Task, argMap(nil, "question", in.Question, "text", in.Text), func(id string) error {
		if err := s.orchestrator().CheckSeen(ctx, id, in.Revision); err != nil {
			return err
		}
		var err error
		res, err = planner.AnswerQuestion(ctx, s.orchestrator(), id, in.Question, in.Text)
		return err
	}, func(id string, next Next) AnswerOutput {
		open := make([]string, len(res.Open))
		for i, q := range res.Open {
			open[i] = q.ID
		}
		return AnswerOutput{Task: id, Question: in.Question, Answer: in.Text, Previous: res.Previous, Open: open, Next: next}
	})
}

// RunPhaseInput is run_phase's arguments.
type RunPhaseInput struct {
	TaskArg
	Phase lifecycle.Phase `json:"phase" jsonschema:"planning, plan_review, codegen, review or test"`
	Fresh bool            `json:"fresh,omitempty" jsonschema:"ask the models again instead of reusing cached answers"`
}

// RunPhaseOutput is run_phase's result.
type RunPhaseOutput struct {
	Task     string                   `json:"task"`
	Phase    lifecycle.Phase          `json:"phase"`
	Status   string                   `json:"status"`
	Entered  *orchestrator.NextResult `json:"entered,omitempty"`
	Summary  *event.PhaseSummary      `json:"summary,omitempty"`
	Archived string                   `json:"archived,omitempty"`
	Revision int64                    `json:"revision"`
	Notes    []string                 `json:"notes,omitempty"`
	Next     Next                     `json:"next"`
}

func (s *Server) runPhase(ctx context.Context, req *mcp.CallToolRequest, in RunPhaseInput) (*mcp.CallToolResult, RunPhaseOutput, error) {
	if err := s.notInFleet(in.Task, ToolRunPhase); err != nil {
		return nil, RunPhaseOutput{}, s.refuse(in.Task, err)
	}
	p, err := lifecycle.ParsePhase(string(in.Phase))
	if err != nil || !isPhase(p) {
		return nil, RunPhaseOutput{}, s.refuse(in.Task, exit.New(exit.ErrUsage, "phase: expected planning, plan_review, codegen, review or test, got %q (accept and revert are human gates)", in.Phase))
	}
	cfg, err := s.config()
	if err != nil {
		return nil, RunPhaseOutput{}, s.refuse(in.Task, err)
	}
	pr := newProgress(ctx, req)
	rt := agent.NewRuntime(s.project, cfg, s.opt.Getenv)
	rt.Fresh = in.Fresh
	rt.Now = s.opt.Now
	rt.Options = s.opt.LLMOptions
	rt.OnTool = pr.tool
	var environ []string
	if s.opt.Environ != nil {
		environ = s.opt.Environ()
	}
	deps := worker.Deps{Orch: s.orchestrator(), Config: cfg, Agents: rt,
		Test: testphase.Options{Stream: pr.lines(), Env: environ}}
	var out worker.Outcome
	args := argMap(nil, "phase", string(p))
	if in.Fresh {
		args["fresh"] = "true"
	}
	return act(s, ctx, req, ToolRunPhase, in.Task, args, func(id string) error {
		w, _ := worker.Registry(deps).For(p)
		pr.say(fmt.Sprintf("%s: started (%s)", p, w.Command()))
		start := time.Now()
		var err error
		out, err = w.Work(ctx, worker.Run{Task: id})
		if err != nil {
			pr.say(fmt.Sprintf("%s: failed after %s", p, time.Since(start).Round(time.Millisecond)))
			return err
		}
		pr.say(fmt.Sprintf("%s: %s after %s", p, out.Phase.Outcome.Status, time.Since(start).Round(time.Millisecond)))
		return nil
	}, func(id string, next Next) RunPhaseOutput {
		ph := out.Phase
		return RunPhaseOutput{Task: id, Phase: p, Status: string(ph.Outcome.Status), Entered: ph.Entered, Summary: ph.Outcome.Summary,
			Archived: ph.Archived, Revision: ph.Revision, Notes: rt.Notes, Next: next}
	})
}

// SubmitCodeInput is submit_code's arguments: a codegen answer
// (codegen.Answer) and the task.
type SubmitCodeInput struct {
	TaskArg
	Status    string             `json:"status,omitempty" jsonschema:"completed (default): edits, files and deletes hold the change; plan_unclear: the plan is too unclear to implement, ask in questions; failed: say why in notes"`
	Edits     []codegen.Edit     `json:"edits,omitempty" jsonschema:"changes to existing files, applied in order: old_string (copied exactly from the file at the base commit, HEAD) is replaced by new_string; it must occur exactly once unless replace_all"`
	Files     []codegen.File     `json:"files,omitempty" jsonschema:"new files, or files rewritten entirely, with their complete content"`
	Deletes   []string           `json:"deletes,omitempty" jsonschema:"repository paths of files to delete"`
	Questions []codegen.Question `json:"questions,omitempty" jsonschema:"with plan_unclear: what the plan must answer"`
	Notes     string             `json:"notes,omitempty" jsonschema:"anything the reviewers should know"`
}

// SubmitCodeOutput is submit_code's result.
type SubmitCodeOutput struct {
	Task      string              `json:"task"`
	Phase     lifecycle.Phase     `json:"phase"`
	Status    string              `json:"status"`
	Summary   *event.PhaseSummary `json:"summary,omitempty"`
	Archived  string              `json:"archived,omitempty"`
	Revision  int64               `json:"revision"`
	Base      string              `json:"base"`
	Attempt   int                 `json:"attempt"`
	Files     []string            `json:"files"`
	Deletes   []string            `json:"deletes"`
	Untouched []string            `json:"untouched,omitempty"`
	Next      Next                `json:"next"`
}

func (s *Server) submitCode(ctx context.Context, req *mcp.CallToolRequest, in SubmitCodeInput) (*mcp.CallToolResult, SubmitCodeOutput, error) {
	if err := s.notInFleet(in.Task, ToolSubmitCode); err != nil {
		return nil, SubmitCodeOutput{}, s.refuse(in.Task, err)
	}
	a := codegen.Answer{Status: in.Status, Edits: in.Edits, Files: in.Files, Deletes: in.Deletes, Questions: in.Questions, Notes: in.Notes}
	if a.Status == "" {
		a.Status = artifact.CodegenCompleted
	}
	raw, err := json.Marshal(a)
	if err != nil {
		return nil, SubmitCodeOutput{}, s.refuse(in.Task, exit.New(exit.ErrUsage, "submit_code: %v", err))
	}
	paths := make([]string, 0, len(a.Edits)+len(a.Files)+len(a.Deletes))
	for _, e := range a.Edits {
		paths = append(paths, e.Path)
	}
	for _, f := range a.Files {
		paths = append(paths, f.Path)
	}
	paths = append(paths, a.Deletes...)
	args := argMap([]string{"answer"}, "status", a.Status, "paths", strings.Join(paths, ", "), "answer", string(raw))
	var res codegen.Result
	var ph orchestrator.PhaseResult
	return act(s, ctx, req, ToolSubmitCode, in.Task, args, func(id string) error {
		cfg, err := s.config()
		if err != nil {
			return err
		}
		rt := agent.NewRuntime(s.project, cfg, s.opt.Getenv)
		rt.Now = s.opt.Now
		ph, res, err = worker.Submit(ctx, rt, s.orchestrator(), id, raw)
		return err
	}, func(id string, next Next) SubmitCodeOutput {
		return SubmitCodeOutput{Task: id, Phase: lifecycle.Codegen, Status: string(ph.Outcome.Status), Summary: ph.Outcome.Summary,
			Archived: ph.Archived, Revision: ph.Revision, Base: res.Record.Base, Attempt: res.Record.Attempt,
			Files: res.Record.Files, Deletes: res.Record.Deletes, Untouched: res.Record.Untouched, Next: next}
	})
}

// --- the human gates (offered only when [mcp] allow names them)

// gate refuses a gate that the configuration no longer allows.
func (s *Server) gate(name string) error {
	cfg, err := s.config()
	if err != nil {
		return err
	}
	if !cfg.MCP.Allows(name) {
		return exit.New(exit.ErrRefused, "%s is a human gate and .orch/config.toml's [mcp] allow does not name it: ask the user to run it", name)
	}
	return nil
}

// AcceptInput is accept's arguments.
type AcceptInput struct {
	TaskArg
	Verdict         string   `json:"verdict" jsonschema:"accepted, changes_requested, rejected or revert"`
	Target          string   `json:"target,omitempty" jsonschema:"with changes_requested: codegen, review or planning"`
	Reasons         []string `json:"reasons" jsonschema:"why (at least one non-blank)"`
	AllowIncomplete bool     `json:"allow_incomplete,omitempty" jsonschema:"confirm accepting with failing, incomplete or missing tests"`
	SeenArg
	DiffSHA256 string `json:"diff_sha256,omitempty" jsonschema:"the sha256 of code/diff.patch you judged (8 or more hex digits): refused with exit 3 when the patch is another"`
}

// AcceptOutput is accept's result.
type AcceptOutput struct {
	Decision landing.Decision         `json:"decision"`
	Entered  *orchestrator.NextResult `json:"entered,omitempty"`
	// Fleet is, for a task in the fleet, what its gate's step returned;
	// decision then holds the decision sent (the recorded one is in the
	// task's ref: orch pull).
	Fleet *fleetlink.GateResult `json:"fleet,omitempty"`
	Next  Next                  `json:"next"`
}

func (s *Server) accept(ctx context.Context, req *mcp.CallToolRequest, in AcceptInput) (*mcp.CallToolResult, AcceptOutput, error) {
	var res landing.AcceptResult
	var entered *orchestrator.NextResult
	args := argMap(nil, "verdict", in.Verdict, "target", in.Target, "reasons", strings.Join(in.Reasons, "; "))
	if l, id, err := s.fleetTask(in.Task); err != nil || l != nil {
		var res fleetlink.GateResult
		name := clientName(req) + " (orch mcp)"
		if err == nil && in.DiffSHA256 != "" {
			err = exit.New(exit.ErrUsage, "diff_sha256: through the fleet, an accept names the revision it judged (revision), not the patch's hash")
		}
		if err == nil {
			_, res, err = s.fleetGate(ctx, l, GateAccept, id, 0, func() (fleetlink.GateResult, error) {
				return l.Accept(ctx, id, fleetlink.Decision{Verdict: in.Verdict, Target: in.Target, Reasons: in.Reasons, Decider: name, AllowIncomplete: in.AllowIncomplete, Revision: in.Revision})
			})
		}
		if err != nil {
			return nil, AcceptOutput{}, s.fleetRefuse(id, err)
		}
		var d landing.Decision
		d.Verdict, d.Target, d.Reasons, d.Decider = in.Verdict, in.Target, in.Reasons, artifact.Decider{Kind: "agent", Name: name}
		d.Judged.Revision, d.Judged.SHA256 = in.Revision, map[string]string{}
		return nil, AcceptOutput{Decision: d, Fleet: &res, Next: s.fleetNext(id, "")}, nil
	}
	return act(s, ctx, req, ToolAccept, in.Task, args, func(id string) error {
		if err := s.gate(GateAccept); err != nil {
			return err
		}
		cfg, err := s.config()
		if err != nil {
			return err
		}
		var environ []string
		if s.opt.Environ != nil {
			environ = s.opt.Environ()
		}
		opt := landing.AcceptOptions{Verdict: in.Verdict, Target: in.Target, Reasons: in.Reasons, AllowIncomplete: in.AllowIncomplete,
			Decider: artifact.Decider{Kind: "agent", Name: clientName(req) + " (orch mcp)"},
			Test:    testphase.Options{Env: environ}}
		opt.Expect.Revision = in.Revision
		if in.DiffSHA256 != "" {
			opt.Expect.SHA256 = map[string]string{lifecycle.HashDiff: in.DiffSHA256}
		}
		if err := landing.CheckDecision(opt); err != nil {
			return exit.New(exit.ErrUsage, "%v", err)
		}
		w, _ := worker.Registry(worker.Deps{Orch: s.orchestrator(), Config: cfg}).For(lifecycle.Accept)
		out, err := w.Work(ctx, worker.Run{Task: id, Accept: &opt})
		if err != nil {
			return err
		}
		res, entered = *out.Accept, out.Phase.Entered
		return nil
	}, func(id string, next Next) AcceptOutput {
		return AcceptOutput{Decision: res.Decision, Entered: entered, Next: next}
	})
}

// RevertInput is revert's arguments.
type RevertInput struct {
	TaskArg
	Reason string `json:"reason" jsonschema:"why the change is reverted"`
	SeenArg
}

// RevertOutput is revert's result.
type RevertOutput struct {
	Record landing.Record           `json:"record"`
	Done   *orchestrator.NextResult `json:"done,omitempty"`
	// Fleet is, for a task in the fleet, what its gate's step returned;
	// record then holds the reason only (the record is in the task's ref).
	Fleet *fleetlink.GateResult `json:"fleet,omitempty"`
	Next  Next                  `json:"next"`
}

func (s *Server) revert(ctx context.Context, req *mcp.CallToolRequest, in RevertInput) (*mcp.CallToolResult, RevertOutput, error) {
	var res landing.RevertResult
	var done *orchestrator.NextResult
	if l, id, err := s.fleetTask(in.Task); err != nil || l != nil {
		var res fleetlink.GateResult
		if err == nil {
			_, res, err = s.fleetGate(ctx, l, GateRevert, id, in.Revision, func() (fleetlink.GateResult, error) { return l.Revert(ctx, id, in.Reason) })
		}
		if err != nil {
			return nil, RevertOutput{}, s.fleetRefuse(id, err)
		}
		var r landing.Record
		r.Reason = in.Reason
		return nil, RevertOutput{Record: r, Fleet: &res, Next: s.fleetNext(id, "")}, nil
	}
	return act(s, ctx, req, ToolRevert, in.Task, argMap(nil, "reason", in.Reason), func(id string) error {
		if err := s.gate(GateRevert); err != nil {
			return err
		}
		if strings.TrimSpace(in.Reason) == "" {
			return exit.New(exit.ErrUsage, "revert needs a non-blank reason")
		}
		if err := s.orchestrator().CheckSeen(ctx, id, in.Revision); err != nil {
			return err
		}
		cfg, err := s.config()
		if err != nil {
			return err
		}
		w, _ := worker.Registry(worker.Deps{Orch: s.orchestrator(), Config: cfg}).For(lifecycle.Revert)
		out, err := w.Work(ctx, worker.Run{Task: id, Reason: in.Reason})
		if err != nil {
			return err
		}
		res, done = *out.Revert, out.Done
		return nil
	}, func(id string, next Next) RevertOutput {
		return RevertOutput{Record: res.Record, Done: done, Next: next}
	})
}

// OverrideInput is override's arguments.
type OverrideInput struct {
	TaskArg
	Reason string          `json:"reason" jsonschema:"why the conditions are skipped (logged)"`
	To     lifecycle.Phase `json:"to,omitempty" jsonschema:"target phase (default: the forward edge)"`
	SeenArg
}

func (s *Server) override(ctx context.Context, req *mcp.CallToolRequest, in OverrideInput) (*mcp.CallToolResult, NextOutput, error) {
	to, err := optPhase("to", string(in.To))
	if err != nil {
		return nil, NextOutput{}, s.refuse(in.Task, err)
	}
	if l, id, err := s.fleetTask(in.Task); err != nil || l != nil {
		var res fleetlink.GateResult
		var before view.Status
		if err == nil {
			before, res, err = s.fleetGate(ctx, l, GateOverride, id, in.Revision, func() (fleetlink.GateResult, error) { return l.Override(ctx, id, in.Reason, to) })
		}
		if err != nil {
			return nil, NextOutput{}, s.fleetRefuse(id, err)
		}
		return nil, fleetNextOutput(id, before, res, in.Reason, s.fleetNext(id, "")), nil
	}
	nreq := orchestrator.NextRequest{Override: &in.Reason, To: to, Revision: in.Revision}
	return s.takeNext(ctx, req, ToolOverride, GateOverride, in.Task, nreq, argMap(nil, "reason", in.Reason, "to", string(in.To)))
}

// RedoInput is redo's arguments.
type RedoInput struct {
	TaskArg
	Phase  lifecycle.Phase `json:"phase,omitempty" jsonschema:"the phase to re-open (default: the current one; from done, planning)"`
	Reason string          `json:"reason,omitempty" jsonschema:"why (logged)"`
	SeenArg
}

// RedoOutput is redo's result.
type RedoOutput struct {
	orchestrator.RedoResult
	// Fleet is, for a task in the fleet, what its gate's step returned.
	Fleet *fleetlink.GateResult `json:"fleet,omitempty"`
	Next  Next                  `json:"next"`
}

func (s *Server) redo(ctx context.Context, req *mcp.CallToolRequest, in RedoInput) (*mcp.CallToolResult, RedoOutput, error) {
	p, err := optPhase("phase", string(in.Phase))
	if err != nil {
		return nil, RedoOutput{}, s.refuse(in.Task, err)
	}
	if l, id, err := s.fleetTask(in.Task); err != nil || l != nil {
		var res fleetlink.GateResult
		var before view.Status
		if err == nil {
			before, res, err = s.fleetGate(ctx, l, GateRedo, id, in.Revision, func() (fleetlink.GateResult, error) { return l.Redo(ctx, id, p, in.Reason) })
		}
		if err != nil {
			return nil, RedoOutput{}, s.fleetRefuse(id, err)
		}
		return nil, RedoOutput{RedoResult: orchestrator.RedoResult{Task: id, From: before.Phase, To: res.Phase, Reason: in.Reason, Revision: res.Revision}, Fleet: &res, Next: s.fleetNext(id, "")}, nil
	}
	var res orchestrator.RedoResult
	return act(s, ctx, req, ToolRedo, in.Task, argMap(nil, "phase", string(in.Phase), "reason", in.Reason), func(id string) error {
		if err := s.gate(GateRedo); err != nil {
			return err
		}
		var err error
		res, err = s.orchestrator().RedoSeen(ctx, id, p, in.Reason, in.Revision)
		return err
	}, func(id string, next Next) RedoOutput {
		return RedoOutput{RedoResult: res, Next: next}
	})
}
