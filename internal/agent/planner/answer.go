package planner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/durable"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/work"
)

// MaxAnswerBytes bounds one answer.
const MaxAnswerBytes = 64 << 10

// AnswerResult reports a recorded answer.
type AnswerResult struct {
	Question artifact.Question // as recorded, with its answer
	Previous *string           // the answer it replaced, if any
	// Open lists the blocking questions still open after this answer.
	Open []artifact.Question
}

// Answer records a person's answer to question questionID of task id's
// plan, without a model: planning/planning.ai.json gets the answer (every
// other byte of meaning preserved: other fields, their order, unknown
// fields), a user_input event is logged, and a line is appended to
// planning/meeting.jsonl. It holds the task's lock and replaces each file
// atomically. The task must be in planning with no planning round
// running.
func Answer(ctx context.Context, tasks work.Tasks, id, questionID, text string) error {
	_, err := AnswerQuestion(ctx, tasks, id, questionID, text)
	return err
}

// AnswerQuestion is Answer returning what was recorded.
func AnswerQuestion(ctx context.Context, tasks work.Tasks, id, questionID, text string) (AnswerResult, error) {
	var res AnswerResult
	if err := checkAnswerText(questionID, text); err != nil {
		return res, err
	}
	err := tasks.Edit(ctx, id, func(t work.Locked) error {
		var err error
		res, err = answerLocked(t, questionID, text)
		return err
	})
	return res, err
}

// answerLocked records the answer in t, held under its lock.
func answerLocked(t work.Locked, questionID, text string) (AnswerResult, error) {
	var res AnswerResult
	id, now := t.ID(), t.Now()
	if t.Phase() != lifecycle.Planning {
		return res, notPlanning(id, t.Phase())
	}
	if pid, ok := t.Running(lifecycle.Planning); ok {
		return res, exit.New(exit.ErrRefused, "a planning round is running for task %s (pid %d): answer once it has finished, so the round does not overwrite your answer", id, pid)
	}
	planningDir := filepath.Join(t.Dir(), "planning")
	durable.RemoveTemps(planningDir, "")

	plan := artifact.LoadPlan(t.Dir())
	idx, err := questionIndex(id, plan, questionID)
	if err != nil {
		return res, err
	}

	planPath := filepath.Join(t.Dir(), filepath.FromSlash(artifact.PlanFile))
	data, err := os.ReadFile(planPath)
	if err != nil {
		return res, fmt.Errorf("read %s: %w", artifact.PlanFile, err)
	}
	updated, err := setAnswer(data, idx, text)
	if err != nil {
		return res, exit.New(exit.ErrInvalid, "cannot record the answer in %s: %w", artifact.PlanFile, err)
	}
	after, err := artifact.DecodePlan(artifact.PlanFile, updated)
	if err != nil {
		return res, fmt.Errorf("the edited plan does not read back: %w", err)
	}
	q := plan.Value.Questions[idx]
	res.Previous = q.Answer
	res.Question = after.Questions[idx]
	res.Open = after.OpenQuestions()

	// The event first (the transcript is the write-ahead log), then the
	// files, each replaced atomically.
	ev := event.UserInput{
		Phase: lifecycle.Planning, Input: "answer", Question: questionID,
		Answer: text, File: artifact.PlanFile, Previous: q.Answer,
	}
	if err := t.Append(ev); err != nil {
		return res, err
	}
	if err := durable.WriteFile(planPath, updated, 0o644); err != nil {
		return res, err
	}
	line := meetingLine{Kind: meetingAnswer, TS: now, Question: questionID, Text: q.Text, Answer: text, Previous: q.Answer}
	if err := appendMeeting(filepath.Join(t.Dir(), filepath.FromSlash(artifact.MeetingFile)), line); err != nil {
		return res, err
	}
	return res, nil
}

// setAnswer sets questions[idx].answer in a plan's JSON, keeping every
// other member and the order of keys.
func setAnswer(data []byte, idx int, text string) ([]byte, error) {
	root, err := parseOrderedJSON(data)
	if err != nil {
		return nil, err
	}
	raw, ok := root.get("questions")
	if !ok {
		return nil, errors.New("no questions")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("questions: %w", err)
	}
	if idx < 0 || idx >= len(items) {
		return nil, fmt.Errorf("no question at index %d", idx)
	}
	q, err := parseOrderedJSON(items[idx])
	if err != nil {
		return nil, fmt.Errorf("questions[%d]: %w", idx, err)
	}
	if err := q.setValue("answer", text); err != nil {
		return nil, err
	}
	if items[idx], err = json.Marshal(q); err != nil {
		return nil, err
	}
	if err := root.setValue("questions", items); err != nil {
		return nil, err
	}
	return agent.IndentJSON(root)
}

// appendMeeting adds one line to the minutes, replacing the file
// atomically.
func appendMeeting(path string, line meetingLine) error {
	prev, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", artifact.MeetingFile, err)
	}
	if len(prev) > 0 && prev[len(prev)-1] != '\n' {
		prev = append(prev, '\n')
	}
	data, err := line.encode()
	if err != nil {
		return err
	}
	return durable.WriteFile(path, append(prev, data...), 0o644)
}

// CheckAnswer refuses, with Answer's own messages and exit codes, an
// answer that Answer would refuse on task id in phase with plan (read
// as committed), without a lock and without writing: the fleet's answer
// gate validates with it (docs/fleet.md). A planning round running is
// checked by Answer only.
func CheckAnswer(id string, phase lifecycle.Phase, plan artifact.Loaded[artifact.Plan], questionID, text string) error {
	if err := checkAnswerText(questionID, text); err != nil {
		return err
	}
	if phase != lifecycle.Planning {
		return notPlanning(id, phase)
	}
	_, err := questionIndex(id, plan, questionID)
	return err
}

func checkAnswerText(questionID, text string) error {
	if strings.TrimSpace(text) == "" {
		return exit.New(exit.ErrUsage, "the answer to %s is blank: give the answer as text, or - to read it from stdin", questionID)
	}
	if len(text) > MaxAnswerBytes {
		return exit.New(exit.ErrUsage, "the answer is %d bytes; at most %d are accepted", len(text), MaxAnswerBytes)
	}
	return nil
}

func notPlanning(id string, phase lifecycle.Phase) error {
	return exit.New(exit.ErrRefused, "task %s is in %s, not planning: answers go to the plan during planning (to revise the plan now, go back with `orch next --override \"REASON\" --to planning`, which keeps the plan)", id, phase)
}

// questionIndex finds question questionID in task id's plan.
func questionIndex(id string, plan artifact.Loaded[artifact.Plan], questionID string) (int, error) {
	switch {
	case !plan.Present:
		return -1, exit.New(exit.ErrRefused, "task %s has no plan yet, so no question to answer: run `orch plan` first", id)
	case plan.Err != nil:
		return -1, exit.New(exit.ErrInvalid, "cannot record the answer: %w", plan.Err)
	}
	known := make([]string, 0, len(plan.Value.Questions))
	for i, q := range plan.Value.Questions {
		known = append(known, q.ID)
		if q.ID == questionID {
			return i, nil
		}
	}
	list := "the plan has no questions"
	if len(known) > 0 {
		list = "known ids: " + strings.Join(known, ", ")
	}
	return -1, exit.New(exit.ErrUsage, "task %s: no question %q in %s (%s)", id, questionID, artifact.PlanFile, list)
}
