package mcpserver_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/mcpserver"
	"github.com/orchdev/orch/internal/task"
)

// TestTypeScriptClient: a client no one here wrote, the official
// TypeScript SDK's stdio client (testdata/tsclient, installed by `npm ci`
// there; .ci/run does it), starts the built `orch mcp`, lists the tools
// and calls them. Without node or the installed SDK the test skips, but
// fails when CI or ORCH_REQUIRE_ECOSYSTEMS (.ci/run) is set: in CI it
// must run.
func TestTypeScriptClient(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "tsclient"))
	if err != nil {
		t.Fatal(err)
	}
	missing := func(why string) {
		if os.Getenv("CI") != "" || os.Getenv("ORCH_REQUIRE_ECOSYSTEMS") != "" {
			t.Fatalf("%s: in CI (CI or ORCH_REQUIRE_ECOSYSTEMS set) the TypeScript client must run: `npm ci` in %s", why, dir)
		}
		t.Skipf("%s: run `npm ci` in %s to run this test", why, dir)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		missing("@modelcontextprotocol/sdk is not installed")
	}
	// The test binary is orch when runOrch is set (TestMain).
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	project, _ := gittest.Seed(t, map[string]string{"main.go": "package main\n\nfunc main() {}\n"})
	if _, _, err := task.InitProject(project); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "client.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ORCH_BIN="+bin, "ORCH_PROJECT="+project, runOrch+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client.mjs: %v\n%s", err, stderr.String())
	}
	var got struct {
		Server  map[string]any            `json:"server"`
		Tools   []string                  `json:"tools"`
		Schemas map[string]map[string]any `json:"schemas"`
		Outputs map[string]map[string]any `json:"outputSchemas"`
		Hints   map[string]map[string]any `json:"annotations"`
		Valid   struct {
			Valid         bool   `json:"valid"`
			Error         string `json:"error"`
			TamperedValid bool   `json:"tamperedValid"`
			TamperedError string `json:"tamperedError"`
		} `json:"statusValid"`
		Created map[string]any `json:"created"`
		Status  map[string]any `json:"status"`
		Bad     struct {
			IsError bool   `json:"isError"`
			Text    string `json:"text"`
		} `json:"bad"`
		Good    map[string]any `json:"good"`
		Next    map[string]any `json:"next"`
		Refused struct {
			IsError bool   `json:"isError"`
			Text    string `json:"text"`
		} `json:"refused"`
		Accept    map[string]any `json:"accept"`
		Resources []string       `json:"resources"`
		Brief     string         `json:"brief"`
		Log       []string       `json:"log"`
	}
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("client output %q: %v\n%s", stdout, err, stderr.String())
	}
	if got.Server["name"] != "orch" {
		t.Errorf("server: %v", got.Server)
	}
	want := []string{mcpserver.ToolAnswer, mcpserver.ToolCost, mcpserver.ToolListTasks, mcpserver.ToolLog, mcpserver.ToolNewTask, mcpserver.ToolNext, mcpserver.ToolReadArtifact, mcpserver.ToolRunPhase, mcpserver.ToolStatus, mcpserver.ToolSubmitCode, mcpserver.ToolWriteArtifact}
	if !slices.Equal(got.Tools, want) {
		t.Errorf("tools %v, want %v", got.Tools, want)
	}
	if req, _ := got.Schemas[mcpserver.ToolWriteArtifact]["required"].([]any); len(req) != 2 {
		t.Errorf("write_artifact's schema as the client sees it: %v", got.Schemas[mcpserver.ToolWriteArtifact])
	}
	// What the client sees of the schemas: phases as enums, an output
	// schema for every tool, the read-only tools marked.
	enumOf := func(tool, prop string) []string {
		props, _ := got.Schemas[tool]["properties"].(map[string]any)
		p, _ := props[prop].(map[string]any)
		var out []string
		for _, v := range asSlice(p["enum"]) {
			s, _ := v.(string)
			out = append(out, s)
		}
		return out
	}
	phases := []string{"planning", "plan_review", "codegen", "review", "test", "accept", "revert", "done"}
	if e := enumOf(mcpserver.ToolNext, "to"); !slices.Equal(e, phases) {
		t.Errorf("next's to: enum %v, want %v", e, phases)
	}
	if e := enumOf(mcpserver.ToolNext, "from"); !slices.Equal(e, phases) {
		t.Errorf("next's from: enum %v, want %v", e, phases)
	}
	if e := enumOf(mcpserver.ToolRunPhase, "phase"); !slices.Equal(e, mcpserver.RunPhases()) || len(e) != 5 {
		t.Errorf("run_phase's phase: enum %v, want %v", e, mcpserver.RunPhases())
	}
	readOnly := []string{mcpserver.ToolCost, mcpserver.ToolListTasks, mcpserver.ToolLog, mcpserver.ToolReadArtifact, mcpserver.ToolStatus}
	for _, name := range got.Tools {
		if o := got.Outputs[name]; o == nil || o["type"] != "object" || !slices.Contains(asSlice(o["required"]), any("next")) {
			t.Errorf("%s: output schema %v", name, o)
		}
		h := got.Hints[name]
		ro := slices.Contains(readOnly, name)
		if h == nil || h["readOnlyHint"] != any(ro) || (ro && h["idempotentHint"] != true) || (!ro && h["destructiveHint"] == nil) {
			t.Errorf("%s: annotations %v (read-only: %v)", name, h, ro)
		}
	}
	if got.Hints[mcpserver.ToolNext]["idempotentHint"] == true || got.Hints[mcpserver.ToolWriteArtifact]["idempotentHint"] != true {
		t.Errorf("idempotent hints: next %v, write_artifact %v", got.Hints[mcpserver.ToolNext], got.Hints[mcpserver.ToolWriteArtifact])
	}
	if !got.Valid.Valid || got.Valid.TamperedValid || !strings.Contains(got.Valid.TamperedError, "phase") {
		t.Errorf("status' output against its schema (the SDK's validator): %+v", got.Valid)
	}
	if got.Created["task"] != "ts1" || got.Status["phase"] != "planning" || got.Status["run"] != "plan" {
		t.Errorf("new_task %v, status %v", got.Created, got.Status)
	}
	if !got.Bad.IsError || !strings.Contains(got.Bad.Text, "planning/planning.ai.json: $.title") || !strings.Contains(got.Bad.Text, "nothing written") {
		t.Errorf("invalid plan: %+v", got.Bad)
	}
	if got.Good["path"] != "planning/planning.ai.json" || got.Next["to"] != "plan_review" {
		t.Errorf("write %v, next %v", got.Good, got.Next)
	}
	if !got.Refused.IsError || !strings.Contains(got.Refused.Text, "not planning") {
		t.Errorf("retried next: %+v", got.Refused)
	}
	if got.Accept["isError"] != true && got.Accept["thrown"] == nil {
		t.Errorf("accept without [mcp] allow: %v", got.Accept)
	}
	if !slices.Contains(got.Resources, "orch://task/ts1/planning/planning.ai.json") || !strings.Contains(got.Brief, "from TypeScript") {
		t.Errorf("resources %v, brief %q", got.Resources, got.Brief)
	}
	wantLog := []string{"created", "mcp_call:ts-sdk-test 1.0.0", "mcp_call:ts-sdk-test 1.0.0", "mcp_call:ts-sdk-test 1.0.0", "transition", "mcp_call:ts-sdk-test 1.0.0", "mcp_call:ts-sdk-test 1.0.0"}
	if !slices.Equal(got.Log, wantLog) {
		t.Errorf("log %v, want %v", got.Log, wantLog)
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
