package task

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestList(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	if list, err := p.List(); err != nil || len(list) != 0 {
		t.Fatalf("empty List = %v, %v", list, err)
	}
	for _, id := range []string{"0003-c", "0001-a", "0002-b"} {
		newTask(t, p, id)
	}
	tk, _ := p.Open("0002-b")
	lock(t, tk)
	step(t, tk, "plan_review")
	writeFile(t, filepath.Join(p.TasksDir(), "0001-a", StateFile), `{"phase":"nope","revision":1}`)
	writeFile(t, filepath.Join(p.TasksDir(), "notes.txt"), "not a task")
	writeFile(t, filepath.Join(p.TasksDir(), ".tmp-0004-d-1", StateFile), `{"phase":"planning","revision":1}`)
	if err := os.Mkdir(filepath.Join(p.TasksDir(), "Bad Name"), 0o755); err != nil {
		t.Fatal(err)
	}

	list, err := p.List()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	if strings.Join(ids, ",") != "0001-a,0002-b,0003-c,Bad Name" {
		t.Fatalf("ids = %v", ids)
	}
	if !strings.Contains(list[0].Err, "$.phase") || list[0].Phase != "" {
		t.Fatalf("broken task summary = %+v", list[0])
	}
	if s := list[1]; s.Phase != "plan_review" || s.Revision != 2 || s.UpdatedAt.IsZero() || s.Err != "" {
		t.Fatalf("summary = %+v", s)
	}
	if s := list[2]; s.Phase != "planning" || s.Revision != 1 || !s.UpdatedAt.Equal(t0) {
		t.Fatalf("summary = %+v", s)
	}
	if !strings.Contains(list[3].Err, "task id") {
		t.Fatalf("bad name summary = %+v", list[3])
	}
}

// manyTasks makes n task folders holding only a state.json, quickly.
func manyTasks(b testing.TB, p *Project, n int) {
	for i := range n {
		id := fmt.Sprintf("%04d-task", i+1)
		dir := filepath.Join(p.TasksDir(), id)
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		st := fmt.Sprintf(`{"phase":"codegen","actors":{"planning":{"round":3,"status":"review_ready"},"codegen":{"status":"running"}},"revision":%d,"task":%q,"created_at":"2026-11-25T10:00:00Z","updated_at":"2026-11-25T10:00:00Z"}`+"\n", i%40+1, id)
		if err := os.WriteFile(filepath.Join(dir, StateFile), []byte(st), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

func TestListMany(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	manyTasks(t, p, 300)
	list, err := p.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 300 {
		t.Fatalf("%d summaries", len(list))
	}
	for i, s := range list {
		if s.ID != fmt.Sprintf("%04d-task", i+1) || s.Err != "" || s.Revision != int64(i%40+1) || s.Phase != "codegen" {
			t.Fatalf("summary %d = %+v", i, s)
		}
	}
}

func BenchmarkList10000(b *testing.B) {
	p := newProject(b)
	manyTasks(b, p, 10_000)
	for b.Loop() {
		list, err := p.List()
		if err != nil || len(list) != 10_000 {
			b.Fatal(err, len(list))
		}
	}
}

func BenchmarkCommit(b *testing.B) {
	p := newProject(b)
	tk := newTask(b, p, "0001-a")
	lock(b, tk)
	st, err := tk.ReadState()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		st.Revision++
		if err := tk.Commit(Event{Kind: "transition", Data: map[string]any{"reason": "bench"}}, st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppend(b *testing.B) {
	p := newProject(b)
	tk := newTask(b, p, "0001-a")
	lock(b, tk)
	for b.Loop() {
		if err := tk.Append(Event{Kind: "model_call", Data: map[string]any{"output": "ok"}}); err != nil {
			b.Fatal(err)
		}
	}
}
