package planner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/artifact"
)

func TestBuildPlanAnswers(t *testing.T) {
	known := []knownAnswer{{ID: "q1", Text: "How many attempts?", Blocking: true, Answer: "five"}}
	tests := []struct {
		name      string
		questions string
		want      []artifact.Question
		restored  []string
		dropped   []string
	}{
		{
			name:      "model keeps the answer",
			questions: `[{"id":"q1","text":"How many attempts?","blocking":true,"answer":"five"}]`,
			want:      []artifact.Question{{ID: "q1", Text: "How many attempts?", Blocking: true, Answer: plPtr("five")}},
		},
		{
			name:      "model drops the answer",
			questions: `[{"id":"q1","text":"How many attempts?","blocking":true}]`,
			want:      []artifact.Question{{ID: "q1", Text: "How many attempts?", Blocking: true, Answer: plPtr("five")}},
			restored:  []string{"q1"},
		},
		{
			name:      "model rewrites the answer and the question",
			questions: `[{"id":"q1","text":"Attempts, at most?","blocking":false,"answer":"ten"}]`,
			want:      []artifact.Question{{ID: "q1", Text: "Attempts, at most?", Blocking: false, Answer: plPtr("five")}},
			restored:  []string{"q1"},
		},
		{
			name:      "model drops the question",
			questions: `[{"id":"q2","text":"Jitter?","blocking":false}]`,
			want: []artifact.Question{
				{ID: "q2", Text: "Jitter?", Answer: nil},
				{ID: "q1", Text: "How many attempts?", Blocking: true, Answer: plPtr("five")},
			},
			restored: []string{"q1"},
		},
		{
			name:      "model answers its own question",
			questions: `[{"id":"q1","text":"How many attempts?","blocking":true,"answer":"five"},{"id":"q2","text":"Jitter?","blocking":true,"answer":"yes, full jitter"}]`,
			want: []artifact.Question{
				{ID: "q1", Text: "How many attempts?", Blocking: true, Answer: plPtr("five")},
				{ID: "q2", Text: "Jitter?", Blocking: true, Answer: nil},
			},
			dropped: []string{"q2"},
		},
		{
			name:      "no questions key",
			questions: ``,
			want:      []artifact.Question{{ID: "q1", Text: "How many attempts?", Blocking: true, Answer: plPtr("five")}},
			restored:  []string{"q1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw := `{"title":"Retry","file_plan":[]`
			if tc.questions != "" {
				raw += `,"questions":` + tc.questions
			}
			raw += `}`
			b, err := buildPlan([]byte(raw), "t1", "the brief", known, "")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(b.Plan.Questions, tc.want) {
				t.Errorf("questions\n got %s\nwant %s", plJS(b.Plan.Questions), plJS(tc.want))
			}
			if !reflect.DeepEqual(b.Restored, tc.restored) || !reflect.DeepEqual(b.Dropped, tc.dropped) {
				t.Errorf("restored %v dropped %v, want %v %v", b.Restored, b.Dropped, tc.restored, tc.dropped)
			}
		})
	}
}

func plPtr(s string) *string { return &s }

func plJS(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

func TestBuildPlanForcesIDAndBriefKeepsExtras(t *testing.T) {
	raw := `{"notes":{"why":"x"},"title":"Retry","id":"other","brief":"changed","file_plan":[{"path":"a.go","intent":"create","summary":"new","extra":1}]}`
	b, err := buildPlan([]byte(raw), "t1", "the brief", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if b.Plan.ID != "t1" || b.Plan.Brief != "the brief" {
		t.Errorf("id %q brief %q", b.Plan.ID, b.Plan.Brief)
	}
	obj, err := parseOrderedJSON(b.Data)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, m := range obj {
		keys = append(keys, m.Key)
	}
	if want := []string{"id", "title", "brief", "notes", "file_plan", "questions"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	if v, _ := obj.get("notes"); string(v) != `{"why":"x"}` && !strings.Contains(string(v), `"why": "x"`) {
		t.Errorf("extra field lost: %s", v)
	}
}

func TestBuildPlanRefuses(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "pkg"), 0o755))
	must(os.WriteFile(filepath.Join(root, "pkg", "a.go"), []byte("package pkg\n"), 0o644))
	must(os.Symlink("a.go", filepath.Join(root, "pkg", "link.go")))
	must(os.Symlink("pkg", filepath.Join(root, "linkdir")))
	tests := []struct {
		name, raw, want string
	}{
		{"not an object", `[1,2]`, "not a JSON object"},
		{"title missing", `{"file_plan":[]}`, "$.title"},
		{"title wrong type", `{"title":5}`, "$.title"},
		{"file_plan wrong type", `{"title":"x","file_plan":"a.go"}`, "$.file_plan"},
		{"traversal", `{"title":"x","file_plan":[{"path":"../etc/passwd","intent":"update"}]}`, `".." element`},
		{"absolute", `{"title":"x","file_plan":[{"path":"/etc/passwd","intent":"update"}]}`, "absolute"},
		{"into .git", `{"title":"x","file_plan":[{"path":".git/config","intent":"update"}]}`, ".git"},
		{"into .orch", `{"title":"x","file_plan":[{"path":".orch/config.toml","intent":"update"}]}`, ".orch"},
		{"bad intent", `{"title":"x","file_plan":[{"path":"pkg/a.go","intent":"rewrite"}]}`, "intent"},
		{"duplicate path", `{"title":"x","file_plan":[{"path":"pkg/a.go","intent":"update"},{"path":"pkg/a.go","intent":"delete"}]}`, "unique"},
		{"update a missing file", `{"title":"x","file_plan":[{"path":"pkg/b.go","intent":"update"}]}`, `use intent "create"`},
		{"create an existing file", `{"title":"x","file_plan":[{"path":"pkg/a.go","intent":"create"}]}`, `use intent "update"`},
		{"symlink", `{"title":"x","file_plan":[{"path":"pkg/link.go","intent":"update"}]}`, "symbolic link"},
		{"through a symlinked folder", `{"title":"x","file_plan":[{"path":"linkdir/a.go","intent":"update"}]}`, "symbolic link"},
		{"a folder", `{"title":"x","file_plan":[{"path":"pkg","intent":"update"}]}`, "folder"},
		{"question without blocking", `{"title":"x","questions":[{"id":"q1","text":"?"}]}`, "$.questions[0].blocking"},
		{"question id with spaces", `{"title":"x","questions":[{"id":"q 1","text":"?","blocking":true}]}`, "short id"},
		{"duplicate question ids", `{"title":"x","questions":[{"id":"q1","text":"?","blocking":true},{"id":"q1","text":"!","blocking":false}]}`, "unique question ids"},
		{"duplicate keys", `{"title":"x","title":"y"}`, "duplicate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := buildPlan([]byte(tc.raw), "t1", "brief", nil, root)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want it to mention %q", err, tc.want)
			}
		})
	}
	if _, err := buildPlan([]byte(`{"title":"x","file_plan":[{"path":"pkg/a.go","intent":"update"},{"path":"pkg/new.go","intent":"create"},{"path":"new/dir/x.go","intent":"create"}]}`), "t1", "brief", nil, root); err != nil {
		t.Errorf("a valid plan was refused: %v", err)
	}
}

// TestPlanDraftSchemaIsStrict: the planner's schema is in OpenAI's strict
// subset (every field required, objects closed), so providers can enforce it.
func TestPlanDraftSchemaIsStrict(t *testing.T) {
	agenttest.CheckStrictSchema(t, planDraft{})
}

// FuzzBuildPlan: whatever the model answers, buildPlan never panics, and
// what it accepts is a valid plan with id and brief forced and the
// person's answer in place.
func FuzzBuildPlan(f *testing.F) {
	for _, seed := range []string{
		`{"title":"x"}`,
		`{"title":"x","questions":[{"id":"q1","text":"?","blocking":true}]}`,
		`{"title":"x","questions":[{"id":"q1","text":"?","blocking":true,"answer":"no"}],"file_plan":[{"path":"a.go","intent":"create"}]}`,
		`{"title":"x","questions":null,"id":5}`,
		`{"title":"x","questions":[1]}`,
		`{"title":"x","file_plan":[{"path":"../a","intent":"create"}]}`,
		`[]`, `null`, `{"title":"\u0000"}`,
	} {
		f.Add([]byte(seed))
	}
	known := []knownAnswer{{ID: "q1", Text: "?", Blocking: true, Answer: "yes"}}
	f.Fuzz(func(t *testing.T, raw []byte) {
		b, err := buildPlan(raw, "t1", "brief", known, "")
		if err != nil {
			return
		}
		p, err := artifact.DecodePlan(artifact.PlanFile, b.Data)
		if err != nil {
			t.Fatalf("accepted plan does not decode: %v\n%s", err, b.Data)
		}
		if p.ID != "t1" || p.Brief != "brief" {
			t.Fatalf("id %q brief %q", p.ID, p.Brief)
		}
		found := false
		for _, q := range p.Questions {
			if q.ID == "q1" {
				found = q.Answer != nil && *q.Answer == "yes"
			} else if q.Answer != nil {
				t.Fatalf("question %s carries a model answer", q.ID)
			}
		}
		if !found {
			t.Fatalf("the person's answer is missing:\n%s", b.Data)
		}
		for _, fe := range p.FilePlan {
			if err := artifact.CheckPath(fe.Path); err != nil {
				t.Fatalf("unsafe path accepted: %v", err)
			}
		}
	})
}

// FuzzParseOrderedJSON: an accepted object re-encodes to the same JSON
// value.
func FuzzParseOrderedJSON(f *testing.F) {
	for _, seed := range []string{`{}`, `{"a":1,"b":[1,{"c":null}]}`, `{"a":1,"a":2}`, `{"a":1} x`, `[1]`, `{"x":1e400}`, `{"k":"\ud800"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := parseOrderedJSON(data)
		if err != nil {
			return
		}
		out, err := json.Marshal(obj)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		var a, b any
		if json.Unmarshal(data, &a) != nil {
			return // encoding/json refuses what the token reader took
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("re-encoded JSON does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("value changed:\n in %s\nout %s", data, out)
		}
	})
}
