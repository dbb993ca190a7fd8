package mcpserver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/nextstep"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/view"
	"github.com/orchdev/orch/internal/worker"
)

// Next is what every tool result says to do next: the tool of this server
// that moves the task on, with its arguments, and the orch command a
// person would run for the same step (what `orch status` prints).
type Next struct {
	// Tool is the tool to call; empty when no tool of this server takes
	// the step (a human gate that [mcp] allow does not name, a run in
	// progress, a task that is done).
	Tool string `json:"tool,omitempty" jsonschema:"the tool of this server that takes the step; empty when none does"`
	// Arguments for Tool; values in CAPITALS are for the caller to fill.
	Arguments map[string]string `json:"arguments,omitempty" jsonschema:"arguments for tool; values in CAPITALS are placeholders"`
	// Command is the step in orch's CLI words ("orch codegen").
	Command string `json:"command,omitempty" jsonschema:"the same step as an orch command"`
	// Why says why this is the step.
	Why string `json:"why" jsonschema:"why this is the step"`
	// Human is set when the step is a person's decision this server does
	// not take (accept, revert): ask the user to run Command.
	Human bool `json:"human,omitempty" jsonschema:"the step is a person's decision: ask the user to run command"`
	// Or lists other tools that take the same step, each as good as Tool:
	// in codegen, submit_code (the host's own agent writes the change)
	// besides run_phase codegen (orch's codegen model writes it).
	Or []Alternative `json:"or,omitempty" jsonschema:"other tools that take the same step instead of tool"`
}

// Alternative is another tool that takes a step instead of Next.Tool.
type Alternative struct {
	Tool      string            `json:"tool" jsonschema:"the tool"`
	Arguments map[string]string `json:"arguments,omitempty" jsonschema:"arguments for tool; values in CAPITALS are placeholders"`
	Why       string            `json:"why" jsonschema:"when to take this tool instead"`
}

// Why the step in codegen offers both ways of writing the change.
const (
	codegenWhy = "orch's codegen model writes it with run_phase, or your own agent writes it and submits it with submit_code " +
		"(checked against the reviewed file plan exactly as the model's answer; see or)"
	submitWhy = "write the change with your own agent instead of orch's codegen model: edits (path, old_string copied exactly from the file at HEAD, new_string), " +
		"files (path, complete content) and deletes, only paths of the reviewed file plan (read_artifact planning/plan.files.json or planning/planning.ai.json)"
)

// nextOf turns a step of internal/nextstep (the one `orch status` prints)
// into tool terms for task id.
func (s *Server) nextOf(id string, st nextstep.Step) Next {
	n := Next{Why: st.Why}
	if st.Args == "" {
		return n
	}
	n.Command = "orch " + st.Args
	if id != "" {
		n.Command += " --task " + id
	}
	args := func(kv ...string) map[string]string {
		m := map[string]string{}
		if id != "" {
			m["task"] = id
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	words := strings.Fields(st.Args)
	switch {
	case words[0] == "next":
		n.Tool, n.Arguments = ToolNext, args()
		if len(words) == 3 && words[1] == "--from" {
			n.Arguments["from"] = words[2]
		}
	case words[0] == "answer" && len(words) >= 2:
		n.Tool, n.Arguments = ToolAnswer, args("question", words[1], "text", "YOUR ANSWER")
	case words[0] == "accept":
		if s.cfg.MCP.Allows(GateAccept) {
			n.Tool, n.Arguments = ToolAccept, args("verdict", "accepted|changes_requested|rejected", "reason", "REASON")
		} else {
			n.Human = true
		}
	case words[0] == "revert":
		if s.cfg.MCP.Allows(GateRevert) {
			n.Tool, n.Arguments = ToolRevert, args("reason", "REASON")
		} else {
			n.Human = true
		}
	default:
		for p, cmd := range worker.Commands() {
			if cmd == st.Args {
				n.Tool, n.Arguments = ToolRunPhase, args("phase", string(p))
			}
		}
		if n.Tool == ToolRunPhase && n.Arguments["phase"] == string(lifecycle.Codegen) {
			// An MCP host has an agent of its own: it may write the
			// change instead of orch's codegen model.
			n.Why += "; " + codegenWhy
			n.Or = []Alternative{{Tool: ToolSubmitCode, Why: submitWhy,
				Arguments: args("edits", "EDITS", "files", "FILES", "deletes", "DELETES", "notes", "NOTES FOR THE REVIEWERS")}}
		}
	}
	if n.Human {
		n.Why += "; this server does not take human decisions: ask the user to run the command"
	}
	return n
}

// nextFor is the step of task id as `orch status` decides it now; when
// the status cannot be read, the step is to look at it.
func (s *Server) nextFor(id string) Next {
	if id == "" {
		return Next{Tool: ToolListTasks, Why: "no task named: list the tasks, or create one with new_task"}
	}
	_, st, err := view.StatusOf(s.orchestrator(), id)
	switch {
	case errors.Is(err, task.ErrNoTask) || errors.Is(err, task.ErrBadID):
		return Next{Tool: ToolListTasks, Command: "orch list", Why: fmt.Sprintf("there is no task %q: list the tasks, or create one with new_task", id)}
	case err != nil:
		// Calling status again would only repeat the error: the
		// transcript and state.json need a look (orch verify).
		return Next{Command: "orch verify --task " + id, Why: "the task's status could not be read: " + err.Error()}
	}
	return s.nextOf(id, st)
}

// outcomeOf classes an error for the mcp_call event: refused when a check
// said no (nothing changed), failed otherwise.
func outcomeOf(err error) string {
	switch exit.Of(err) {
	case exit.Usage, exit.Refused, exit.Invalid, exit.Busy:
		return "refused"
	}
	return "failed"
}

// toolError is a refusal or failure as the client sees it: orch's message
// (with its exit code's meaning) and what to do next.
type toolError struct {
	err  error
	next Next
}

func (e *toolError) Error() string {
	var b strings.Builder
	b.WriteString(exit.Format(e.err))
	fmt.Fprintf(&b, " (exit code %d, as the orch command would exit)", exit.Of(e.err))
	if e.next.Tool != "" || e.next.Command != "" || e.next.Why != "" {
		b.WriteString("\nnext: ")
		switch {
		case e.next.Tool != "":
			b.WriteString("call " + e.next.Tool)
			if e.next.Command != "" {
				b.WriteString(" (`" + e.next.Command + "`)")
			}
		case e.next.Command != "":
			b.WriteString("`" + e.next.Command + "`")
		}
		if e.next.Why != "" {
			b.WriteString(": " + e.next.Why)
		}
		for _, a := range e.next.Or {
			b.WriteString("\nor: call " + a.Tool + ": " + a.Why)
		}
	}
	return b.String()
}

func (e *toolError) Unwrap() error { return e.err }

// refuse wraps err with the task's next step.
func (s *Server) refuse(id string, err error) error {
	var te *toolError
	if errors.As(err, &te) {
		return err
	}
	return &toolError{err: err, next: s.nextFor(id)}
}

// isPhase reports whether p names a phase with a worker this server runs.
func isPhase(p lifecycle.Phase) bool {
	_, ok := worker.Commands()[p]
	return ok && p != lifecycle.Accept && p != lifecycle.Revert
}
