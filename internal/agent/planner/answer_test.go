package planner

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/durable"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

// plHandPlan is a plan a person wrote, with fields orch does not know and
// its own key order.
const plHandPlan = `{
  "zeta": {"kept": [1, 2.50, "x"]},
  "id": "t1",
  "title": "Retry",
  "brief": "add retry",
  "questions": [
    {"text": "How many attempts?", "id": "q1", "blocking": true, "answer": null, "asked_by": "planner"},
    {"id": "q2", "text": "Jitter?", "blocking": false}
  ],
  "file_plan": [{"path": "fetch/fetch.go", "intent": "update"}],
  "custom": 12345678901234567890
}
`

// TestAnswerKeepsEverythingElse: only questions[i].answer changes; other
// fields, unknown fields, numbers and key order are as the person wrote
// them.
func TestAnswerKeepsEverythingElse(t *testing.T) {
	e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, "")
	e.WriteTaskFile(artifact.PlanFile, plHandPlan)
	res, err := AnswerQuestion(agenttest.Ctx, e.O, e.ID, "q1", "five")
	if err != nil {
		t.Fatal(err)
	}
	if res.Previous != nil || res.Question.ID != "q1" || len(res.Open) != 0 {
		t.Errorf("result %+v", res)
	}
	after := e.Read(artifact.PlanFile)
	var before, got map[string]any
	if err := json.Unmarshal([]byte(plHandPlan), &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(after, &got); err != nil {
		t.Fatal(err)
	}
	before["questions"].([]any)[0].(map[string]any)["answer"] = "five"
	if !reflect.DeepEqual(before, got) {
		t.Errorf("the plan changed beyond the answer:\n%s", after)
	}
	for _, s := range []string{"12345678901234567890", "2.50", `"asked_by": "planner"`} {
		if !strings.Contains(string(after), s) {
			t.Errorf("%s lost from\n%s", s, after)
		}
	}
	order := []string{`"zeta"`, `"id"`, `"title"`, `"brief"`, `"questions"`, `"file_plan"`, `"custom"`}
	last := -1
	for _, k := range order {
		i := strings.Index(string(after), k)
		if i < last {
			t.Errorf("key order changed:\n%s", after)
		}
		last = i
	}
	if strings.Index(string(after), `"text": "How many attempts?"`) > strings.Index(string(after), `"id": "q1"`) {
		t.Errorf("question key order changed:\n%s", after)
	}

	// A second answer replaces the first; both are logged.
	if _, err := AnswerQuestion(agenttest.Ctx, e.O, e.ID, "q1", "three"); err != nil {
		t.Fatal(err)
	}
	if a := e.Plan().Questions[0].Answer; a == nil || *a != "three" {
		t.Fatalf("answer %v", a)
	}
	var inputs []map[string]any
	for _, ev := range e.Events() {
		if ev.Kind == "user_input" {
			inputs = append(inputs, ev.Data)
		}
	}
	if len(inputs) != 2 || inputs[0]["question"] != "q1" || inputs[0]["answer"] != "five" || inputs[1]["previous"] != "five" {
		t.Errorf("user_input events %v", inputs)
	}
	entries := parseMeeting(e.Read(artifact.MeetingFile))
	if len(entries) != 2 || entries[1].Line.Answer != "three" || entries[1].Line.Previous == nil || *entries[1].Line.Previous != "five" {
		t.Errorf("meeting %+v", entries)
	}
	// No temporary file is left next to the plan.
	names, _ := os.ReadDir(filepath.Join(e.TaskDir(), "planning"))
	for _, n := range names {
		if strings.Contains(n.Name(), durable.TempInfix) {
			t.Errorf("temporary file left: %s", n.Name())
		}
	}
}

func TestAnswerRefusals(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(e *agenttest.PlanEnv)
		qid      string
		text     string
		kind     error
		contains string
	}{
		{name: "unknown id", setup: func(e *agenttest.PlanEnv) { e.WriteTaskFile(artifact.PlanFile, plHandPlan) },
			qid: "q9", text: "x", kind: exit.ErrUsage, contains: "known ids: q1, q2"},
		{name: "blank text", setup: func(e *agenttest.PlanEnv) { e.WriteTaskFile(artifact.PlanFile, plHandPlan) },
			qid: "q1", text: " \n\t", kind: exit.ErrUsage, contains: "blank"},
		{name: "no plan", setup: func(*agenttest.PlanEnv) {},
			qid: "q1", text: "x", kind: exit.ErrRefused, contains: "orch plan"},
		{name: "invalid plan", setup: func(e *agenttest.PlanEnv) { e.WriteTaskFile(artifact.PlanFile, `{"id":"t1","title":"x"}`) },
			qid: "q1", text: "x", kind: exit.ErrInvalid, contains: "$.brief"},
		{name: "not in planning", setup: func(e *agenttest.PlanEnv) {
			e.WriteTaskFile(artifact.PlanFile, plHandPlan)
			reason := "test"
			if _, err := e.O.Next(agenttest.Ctx, e.ID, orchestrator.NextRequest{Override: &reason}); err != nil {
				e.T.Fatal(err)
			}
		}, qid: "q1", text: "x", kind: exit.ErrRefused, contains: "is in plan_review, not planning"},
		{name: "round running", setup: func(e *agenttest.PlanEnv) {
			e.WriteTaskFile(artifact.PlanFile, plHandPlan)
			markPlanningRunning(e)
		}, qid: "q1", text: "x", kind: exit.ErrRefused, contains: "planning round is running"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, "")
			tc.setup(e)
			var before []byte
			if e.Exists(artifact.PlanFile) {
				before = e.Read(artifact.PlanFile)
			}
			n := len(e.Events())
			err := Answer(agenttest.Ctx, e.O, e.ID, tc.qid, tc.text)
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.contains) {
				t.Fatalf("err %v, want %v mentioning %q", err, tc.kind, tc.contains)
			}
			if before != nil && string(e.Read(artifact.PlanFile)) != string(before) {
				t.Error("the plan changed")
			}
			if len(e.Events()) != n || e.Exists(artifact.MeetingFile) {
				t.Error("something was logged")
			}
		})
	}
}

// markPlanningRunning marks planning running by this (live) process, as
// RunPhase does while a round works.
func markPlanningRunning(e *agenttest.PlanEnv) {
	e.T.Helper()
	tk, err := e.P.Open(e.ID)
	if err != nil {
		e.T.Fatal(err)
	}
	st := e.State()
	next := st
	next.Revision++
	next.Actors = task.Actors{"planning": {Status: "running", PID: os.Getpid()}}
	if err := tk.Commit(task.NewEvent(event.PhaseStarted{Phase: "planning"}), next); err != nil {
		e.T.Fatal(err)
	}
}

// TestAnswerRemovesStrayTemps: a temporary file left by a crash is cleaned
// by the next answer.
func TestAnswerRemovesStrayTemps(t *testing.T) {
	e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, "")
	e.WriteTaskFile(artifact.PlanFile, plHandPlan)
	stray := "planning/planning.ai.json" + durable.TempInfix + "123"
	e.WriteTaskFile(stray, "{half")
	if err := Answer(agenttest.Ctx, e.O, e.ID, "q2", "no jitter"); err != nil {
		t.Fatal(err)
	}
	if e.Exists(stray) {
		t.Error("stray temporary file kept")
	}
}

func TestSetAnswer(t *testing.T) {
	out, err := setAnswer([]byte(plHandPlan), 1, "yes \"quoted\" \u2713")
	if err != nil {
		t.Fatal(err)
	}
	p, err := artifact.DecodePlan(artifact.PlanFile, out)
	if err != nil {
		t.Fatal(err)
	}
	if a := p.Questions[1].Answer; a == nil || *a != "yes \"quoted\" \u2713" {
		t.Errorf("answer %v", a)
	}
	for _, bad := range []struct {
		data string
		idx  int
	}{{`{"questions":[]}`, 0}, {`{"title":"x"}`, 0}, {`{"questions":{}}`, 0}, {`{"questions":[1]}`, 0}, {`[]`, 0}} {
		if _, err := setAnswer([]byte(bad.data), bad.idx, "x"); err == nil {
			t.Errorf("%s: no error", bad.data)
		}
	}
}

// FuzzSetAnswer: on any plan the decoder accepts, setting an answer
// changes that answer only.
func FuzzSetAnswer(f *testing.F) {
	f.Add([]byte(plHandPlan), "answer")
	f.Add([]byte(`{"id":"a","title":"b","brief":"c","questions":[{"id":"q","text":"t","blocking":true}]}`), "x\u0000y")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		p, err := artifact.DecodePlan(artifact.PlanFile, data)
		if err != nil || len(p.Questions) == 0 {
			return
		}
		out, err := setAnswer(data, 0, text)
		if err != nil {
			t.Fatalf("setAnswer on a valid plan: %v", err)
		}
		q, err := artifact.DecodePlan(artifact.PlanFile, out)
		if err != nil {
			t.Fatalf("the edited plan is invalid: %v\n%s", err, out)
		}
		var want, got map[string]any
		if json.Unmarshal(data, &want) != nil || json.Unmarshal(out, &got) != nil {
			t.Fatal("not JSON")
		}
		if q.Questions[0].Answer == nil {
			t.Fatal("no answer")
		}
		want["questions"].([]any)[0].(map[string]any)["answer"] = *q.Questions[0].Answer
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("more than the answer changed:\n%s\n%s", data, out)
		}
	})
}
