package mcpserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/gittest"
)

// FleetAnswersEnv makes the test binary orch-fleet's stand-in
// (fleetlinktest), answering from the folder it names (main_test.go).
const FleetAnswersEnv = "ORCH_MCP_TEST_FLEET"

// TestFleetRouting: with [fleet] configured, the tools on a task this
// clone knows as the fleet's (its fleet ref) go through orch-fleet — here
// the test binary as fleetlinktest's stand-in, answering in orch-fleet's
// --json wire format — and every result passes the tool's output schema;
// a local task stays local and starts no process; a refusal keeps
// orch-fleet's message and exit code.
func TestFleetRouting(t *testing.T) {
	answers := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, "[fleet]\naddress = \"127.0.0.1:7233\"\nbinary = \""+self+"\"\n\n[mcp]\nallow = [\"accept\", \"redo\", \"override\", \"revert\"]\n")
	t.Setenv(FleetAnswersEnv, answers)
	for _, id := range []string{"0001-local", "0002-fleet"} {
		if _, _, err := f.project.CreateTask(id, "a brief", time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
	}
	gittest.Git(t, f.dir, "update-ref", "refs/remotes/orch-fleet/tasks/0002-fleet", "HEAD")
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(answers, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	calls := func() string {
		data, _ := os.ReadFile(filepath.Join(answers, "calls"))
		return string(data)
	}
	args := func(cmd string) string {
		data, err := os.ReadFile(filepath.Join(answers, cmd+".args"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.ReplaceAll(strings.TrimSpace(string(data)), "\n", " ")
	}

	// A local task: no process.
	if st := f.call(ToolStatus, map[string]any{"task": "0001-local"}); st["phase"] != "planning" {
		t.Fatalf("local status: %v", st)
	}
	if c := calls(); c != "" {
		t.Fatalf("orch-fleet ran for a local task: %q", c)
	}

	write("status.out", `{"task":"0002-fleet","phase":"accept","revision":12,"updated_at":"2026-11-27T18:41:25Z","actors":{"accept":{"status":"pending"}},"edges":[{"to":"done","label":"accepted","condition":"accepted","holds":false,"reason":"accept/decision.json is missing"}],"suggested":null,"reason":"accept/decision.json is missing","run":"accept --verdict accepted|changes_requested|rejected --reason R"}`)
	st := f.call(ToolStatus, map[string]any{"task": "0002-fleet"})
	if st["phase"] != "accept" || st["revision"] != float64(12) || js(st["next"]) == "" || !strings.Contains(js(st["next"]), `"tool":"accept"`) {
		t.Fatalf("fleet status: %v", st)
	}
	if a := args("status"); a != "--json --temporal 127.0.0.1:7233 status --task 0002-fleet" {
		t.Fatalf("status args %q", a)
	}

	write("log.out", `{"seq":1,"ts":"2026-11-27T18:41:25Z","kind":"created","state":{"phase":"planning","actors":{},"revision":1,"task":"0002-fleet","created_at":"2026-11-27T18:41:25Z","updated_at":"2026-11-27T18:41:25Z"},"prev":""}`+"\n")
	if lg := f.call(ToolLog, map[string]any{"task": "0002-fleet"}); lg["total"] != float64(1) || !strings.Contains(js(lg["events"]), `"kind":"created"`) {
		t.Fatalf("fleet log: %v", lg)
	}

	write("list.out", `{"phases":{"accept":[{"task":"0002-fleet","revision":12,"waiting":"the accept decision"}]},"workers":{"orch-model":["w1"]}}`)
	if l := f.call(ToolListTasks, nil); !strings.Contains(js(l["fleet"]), `"task":"0002-fleet"`) || !strings.Contains(js(l["tasks"]), "0001-local") {
		t.Fatalf("list_tasks: %v", l)
	}

	// A refused gate: orch-fleet's message and exit code.
	write("answer.err", `{"error":"task 0002-fleet is in accept, not planning: answers go to the plan during planning","exit_code":3}`+"\n")
	write("answer.code", "3")
	msg := f.refused(ToolAnswer, map[string]any{"task": "0002-fleet", "question": "q1", "text": "runes"})
	if !strings.Contains(msg, "orch: task 0002-fleet is in accept, not planning") || !strings.Contains(msg, "exit code 3") {
		t.Fatalf("refused answer: %s", msg)
	}

	// The gates through the fleet, each result within its schema.
	write("accept.out", `{"task":"0002-fleet","phase":"done","revision":13,"commit":"0123456789abcdef"}`)
	acc := f.call(ToolAccept, map[string]any{"task": "0002-fleet", "verdict": "accepted", "reasons": []string{"reviewed"}, "revision": 12})
	if !strings.Contains(js(acc["fleet"]), `"phase":"done"`) || !strings.Contains(js(acc["decision"]), `"verdict":"accepted"`) {
		t.Fatalf("accept: %v", acc)
	}
	if a := args("accept"); a != "--json --temporal 127.0.0.1:7233 accept --task 0002-fleet --verdict accepted --reason reviewed --decider test-host 1.0 (orch mcp) --expect 12" {
		t.Fatalf("accept args %q", a)
	}
	write("redo.out", `{"task":"0002-fleet","phase":"codegen","revision":14}`)
	redo := f.call(ToolRedo, map[string]any{"task": "0002-fleet", "phase": "codegen", "reason": "again"})
	if redo["from"] != "accept" || redo["to"] != "codegen" || redo["revision"] != float64(14) {
		t.Fatalf("redo: %v", redo)
	}
	// A revision that moved: refused before anything is sent.
	before := calls()
	if msg := f.refused(ToolRedo, map[string]any{"task": "0002-fleet", "reason": "again", "revision": 3}); !strings.Contains(msg, "moved on since revision 3") {
		t.Fatalf("stale redo: %s", msg)
	}
	if strings.Count(calls(), "redo") != strings.Count(before, "redo") {
		t.Fatal("a stale redo was sent to the fleet")
	}
	write("next.out", `{"task":"0002-fleet","phase":"test","revision":15}`)
	ov := f.call(ToolOverride, map[string]any{"task": "0002-fleet", "reason": "hotfix", "to": "test"})
	if ov["from"] != "accept" || ov["to"] != "test" || ov["override"] != true {
		t.Fatalf("override: %v", ov)
	}
	if a := args("next"); a != "--json --temporal 127.0.0.1:7233 next --task 0002-fleet --override hotfix --to test" {
		t.Fatalf("override args %q", a)
	}
	write("revert.out", `{"task":"0002-fleet","phase":"done","revision":16}`)
	if rv := f.call(ToolRevert, map[string]any{"task": "0002-fleet", "reason": "broke the build"}); !strings.Contains(js(rv["fleet"]), `"phase":"done"`) {
		t.Fatalf("revert: %v", rv)
	}
	// The phases' work is the fleet workers': refused on this clone's copy
	// (exit 3), nothing written, orch-fleet not asked.
	sent := calls()
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{ToolRunPhase, map[string]any{"task": "0002-fleet", "phase": "codegen"}},
		{ToolSubmitCode, map[string]any{"task": "0002-fleet", "files": []map[string]any{{"path": "a.go", "content": "package a\n"}}}},
		{ToolWriteArtifact, map[string]any{"task": "0002-fleet", "path": "planning/planning.md", "content": "# plan\n"}},
	} {
		msg := f.refused(c.tool, c.args)
		if !strings.Contains(msg, "task 0002-fleet is in the fleet: its workflow runs "+c.tool+" on the fleet's workers") || !strings.Contains(msg, "exit code 3") {
			t.Fatalf("%s on a fleet task: %s", c.tool, msg)
		}
	}
	if _, err := os.Stat(filepath.Join(f.dir, ".orch", "tasks", "0002-fleet", "planning", "planning.md")); !os.IsNotExist(err) {
		t.Fatalf("write_artifact wrote into the fleet task's copy: %v", err)
	}
	if c := calls(); c != sent {
		t.Fatalf("a refused phase tool ran orch-fleet: %q", c)
	}

	// No mcp_call event went into this clone's copy of the fleet task.
	if evs := f.events("0002-fleet", "mcp_call"); len(evs) != 0 {
		t.Fatalf("mcp_call events in the local copy of a fleet task: %d", len(evs))
	}
}
