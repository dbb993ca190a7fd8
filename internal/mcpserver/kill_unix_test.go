//go:build unix

package mcpserver_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/agent/agenttest"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/durable"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

// TestKillMCPActions SIGKILLs a real `orch mcp` (the test binary as orch,
// TestMain; its process group) at random moments of an action that
// writes: run_phase planning on an OpenAI-compatible model (an httptest
// server), write_artifact of the plan, or answer. After every kill:
// `orch verify` and `orch status` pass as they are (an interrupted commit
// is not damage); the next command (`orch next`, refused) recovers; then
// state.json is the transcript's last state, every move of the last
// event is done and `orch verify` passes again. At the end an
// uninterrupted run leaves no staging behind. Few rounds by default, more
// when CI is set (ORCH_KILL_ROUNDS overrides both).
func TestKillMCPActions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts orch mcp and kills it many times")
	}
	rounds := 8
	if os.Getenv("CI") != "" {
		rounds = 40
	}
	if n, err := strconv.Atoi(os.Getenv("ORCH_KILL_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	api := agenttest.NewOpenAIAPI(t, func(agenttest.ChatRequest) string {
		return agenttest.JSONOf(t, agenttest.PlannerAnswer("Retry", []map[string]any{agenttest.FileEntry("fetch/fetch.go", "update")},
			agenttest.Question("q1", "How many retries?", false)))
	})
	e := agenttest.NewPlanEnv(t, nil, agenttest.Brief, api.Config())
	k := &mcpKill{t: t, dir: e.Root, p: e.P, taskDir: e.TaskDir(), env: []string{"OPENAI_API_KEY=sk-test-kill"}}

	plan := func(i int) string {
		return fmt.Sprintf(`{"id":"t1","title":"Retry Fetch %d","brief":"add retry","file_plan":[{"path":"fetch/fetch.go","intent":"update"}],"questions":[{"id":"q1","text":"How many retries?","blocking":false,"answer":null}]}`, i)
	}
	actions := map[string]func(i int) map[string]any{
		"run_phase planning": func(int) map[string]any {
			return map[string]any{"name": "run_phase", "arguments": map[string]any{"task": "t1", "phase": "planning"}}
		},
		"write_artifact": func(i int) map[string]any {
			return map[string]any{"name": "write_artifact", "arguments": map[string]any{"task": "t1", "path": "planning/planning.ai.json", "content": plan(i)}}
		},
		"answer": func(i int) map[string]any {
			return map[string]any{"name": "answer", "arguments": map[string]any{"task": "t1", "question": "q1", "text": fmt.Sprintf("%d retries", i)}}
		},
	}
	e.WriteTaskFile("planning/planning.ai.json", plan(0))
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range actions {
			if !yield(n) {
				return
			}
		}
	})

	// How long each action takes uninterrupted, from the start of orch
	// mcp to its response (the shortest of two): kills are spread over it.
	span := map[string]time.Duration{}
	for i := range 2 {
		for _, name := range names {
			d, res := k.call(actions[name](i))
			if res.IsError {
				t.Fatalf("%s uninterrupted: %s", name, res.Text())
			}
			if span[name] == 0 || d < span[name] {
				span[name] = d
			}
		}
	}

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	stages := map[string]int{}
	landed, temps, unanswered := 0, 0, 0
	for i := range rounds {
		name := names[i%len(names)]
		logLen := gittest.Size(t, filepath.Join(k.taskDir, task.TranscriptFile))
		// Half the kills come at a random moment of the action (orch
		// mcp's start included), half within 3 ms of its first event
		// (run_phase: phase_started; the others: their commit or
		// mcp_call).
		kp := killPlan{delay: time.Duration(rng.Int64N(int64(span[name]) + 1))}
		if i%2 == 1 {
			kp = killPlan{afterEvent: true, logLen: logLen, delay: time.Duration(rng.Int64N(int64(3 * time.Millisecond)))}
		}
		killed := k.killAt(actions[name](100+i), kp)
		stage := "finished before the kill"
		if killed {
			landed++
			stage = k.stage(logLen)
		}
		stages[name+": "+stage]++
		k.checkAfterKill(fmt.Sprintf("round %d, %s killed %v (%s)", i, name, kp, stage))
		if name == "answer" && stage == "after the action's commit, before its mcp_call" && k.answerOf("q1") != fmt.Sprintf("%d retries", 100+i) {
			// The user_input event is written first, then the plan
			// (internal/agent/planner): a kill between them leaves the
			// answer in the transcript only. Counted, not failed: the
			// planner is not this package's.
			unanswered++
		}
		if left := k.temps(); len(left) > 0 {
			temps += len(left)
			t.Logf("round %d, %s killed %v (%s): temporary files after the next command: %v", i, name, kp, stage, left)
		}
	}

	// A write and a run, uninterrupted: they clean what killed actions
	// left (temporary files of planning/, staging) and leave nothing of
	// their own.
	if _, res := k.call(actions["write_artifact"](0)); res.IsError {
		t.Fatalf("write_artifact after the kills: %s", res.Text())
	}
	if _, res := k.call(actions["run_phase planning"](0)); res.IsError {
		t.Fatalf("run_phase after the kills: %s", res.Text())
	}
	if left := k.temps(); len(left) != 0 {
		t.Errorf("temporary files left after uninterrupted actions: %v", left)
	}
	if entries, _ := os.ReadDir(filepath.Join(k.taskDir, orchestrator.StagingDir)); len(entries) != 0 {
		var left []string
		for _, en := range entries {
			left = append(left, en.Name())
		}
		t.Errorf("staging left after an uninterrupted run: %v", left)
	}
	k.orch(0, "verify")

	var out []string
	for s, n := range stages {
		out = append(out, fmt.Sprintf("%s: %d", s, n))
	}
	slices.Sort(out)
	t.Logf("%d rounds, %d kills landed while orch mcp ran (spans %v), %d temporary files seen after the next command (all gone after an uninterrupted write), %d answers in the transcript but not in the plan: %s",
		rounds, landed, span, temps, unanswered, strings.Join(out, "; "))
	if rounds >= 20 && landed*2 < rounds {
		t.Errorf("only %d of %d kills landed while orch mcp ran", landed, rounds)
	}
}

// mcpKill runs orch and orch mcp in a project.
type mcpKill struct {
	t       *testing.T
	dir     string
	p       *task.Project
	taskDir string
	env     []string
}

// callResult is a tools/call result.
type callResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
}

func (r callResult) Text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// start starts orch mcp in its own process group and writes the session's
// opening and one tools/call (id 2) to it.
func (k *mcpKill) start(params map[string]any) (*exec.Cmd, *bufio.Reader) {
	k.t.Helper()
	bin, err := os.Executable()
	if err != nil {
		k.t.Fatal(err)
	}
	cmd := exec.Command(bin, "mcp")
	cmd.Dir = k.dir
	cmd.Env = append(append(os.Environ(), runOrch+"=1", "GORACE=atexit_sleep_ms=0"), k.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		k.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		k.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		k.t.Fatal(err)
	}
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
	go func() {
		// Standard input stays open: the client is still there when the
		// kill comes (the writes fail once it has).
		_, _ = io.WriteString(in, initLines+string(req)+"\n")
	}()
	return cmd, bufio.NewReader(out)
}

// response reads messages until the response to id 2.
func response(out *bufio.Reader) (callResult, error) {
	for {
		line, err := out.ReadBytes('\n')
		if err != nil {
			return callResult{}, err
		}
		var m struct {
			ID     *int        `json:"id"`
			Result *callResult `json:"result"`
		}
		if json.Unmarshal(line, &m) == nil && m.ID != nil && *m.ID == 2 {
			if m.Result == nil {
				return callResult{}, fmt.Errorf("response without a result: %s", line)
			}
			return *m.Result, nil
		}
	}
}

// call runs one action to its response and returns how long it took.
func (k *mcpKill) call(params map[string]any) (time.Duration, callResult) {
	k.t.Helper()
	start := time.Now()
	cmd, out := k.start(params)
	res, err := response(out)
	d := time.Since(start)
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
	if err != nil {
		k.t.Fatalf("orch mcp %v: %v", params, err)
	}
	return d, res
}

// killPlan places a kill: delay after the start, or with afterEvent
// delay after the transcript grows past logLen.
type killPlan struct {
	afterEvent bool
	logLen     int
	delay      time.Duration
}

func (p killPlan) String() string {
	if p.afterEvent {
		return fmt.Sprintf("%v after its first event", p.delay)
	}
	return fmt.Sprintf("%v after its start", p.delay)
}

// killAt starts an action and SIGKILLs orch mcp's process group as
// planned. It reports whether the kill came before the response.
func (k *mcpKill) killAt(params map[string]any, plan killPlan) bool {
	k.t.Helper()
	cmd, out := k.start(params)
	answered := make(chan error, 1)
	go func() {
		_, err := response(out)
		answered <- err
	}()
	finished := func(err error) bool {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if err != nil {
			k.t.Fatalf("orch mcp %v ended before the kill without a response: %v", params, err)
		}
		return false
	}
	if plan.afterEvent {
		// Polling; no timing is asserted, it only places the kill.
		log := filepath.Join(k.taskDir, task.TranscriptFile)
		for grown := false; !grown; {
			select {
			case err := <-answered:
				return finished(err)
			case <-time.After(200 * time.Microsecond):
			}
			fi, err := os.Stat(log)
			grown = err == nil && int(fi.Size()) > plan.logLen
		}
	}
	select {
	case err := <-answered:
		return finished(err)
	case <-time.After(plan.delay):
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	err := cmd.Wait()
	<-answered
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		k.t.Fatalf("orch mcp %v after the kill: %v", params, err)
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

// answerOf is the answer to question id in the plan ("" when none).
func (k *mcpKill) answerOf(id string) string {
	plan := artifact.LoadPlan(k.taskDir)
	if !plan.OK() {
		return ""
	}
	for _, q := range plan.Value.Questions {
		if q.ID == id && q.Answer != nil {
			return *q.Answer
		}
	}
	return ""
}

// temps lists the temporary files of durable writes in the task folder
// (history/ aside).
func (k *mcpKill) temps() []string {
	var out []string
	filepath.WalkDir(k.taskDir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == "history" {
			return filepath.SkipDir
		}
		if !d.IsDir() && durable.IsTemp(d.Name(), "") {
			rel, _ := filepath.Rel(k.taskDir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// stage says how far the killed action got, from the transcript's new
// events (logLen: its length before the action).
func (k *mcpKill) stage(logLen int) string {
	data, err := os.ReadFile(filepath.Join(k.taskDir, task.TranscriptFile))
	if err != nil {
		k.t.Fatal(err)
	}
	added := data[min(logLen, len(data)):]
	has := func(kind string) bool { return bytes.Contains(added, []byte(`"kind":"`+kind+`"`)) }
	switch {
	case has("mcp_call"):
		return "after its mcp_call event"
	case has("phase_finished"), has("user_input"):
		return "after the action's commit, before its mcp_call"
	case has("phase_started"):
		return "during the run"
	case len(added) > 0:
		return "after other events"
	}
	return "before any event"
}

// checkAfterKill checks the task after a kill (what says where).
func (k *mcpKill) checkAfterKill(what string) {
	k.t.Helper()
	// Readers accept the interrupted commit as it is and change nothing.
	if code, out := k.orch(-1, "verify"); code != 0 {
		k.t.Fatalf("%s: orch verify right after the kill exited %d\n%s", what, code, out)
	}
	if code, out := k.orch(-1, "status", "--task", "t1"); code != 0 {
		k.t.Fatalf("%s: orch status right after the kill exited %d\n%s", what, code, out)
	}
	// The next command recovers first (and then refuses: the task plans).
	if code, out := k.orch(-1, "next", "--task", "t1", "--from", "plan_review"); code != 3 {
		k.t.Fatalf("%s: orch next --from plan_review exited %d, want 3 (refused after recovering)\n%s", what, code, out)
	}
	tk, err := k.p.Open("t1")
	if err != nil {
		k.t.Fatal(err)
	}
	evs, err := tk.Transcript()
	if err != nil {
		k.t.Fatalf("%s: transcript: %v", what, err)
	}
	st, err := tk.ReadState()
	if err != nil {
		k.t.Fatalf("%s: state.json: %v", what, err)
	}
	var last *task.Event
	for i := len(evs) - 1; i >= 0 && last == nil; i-- {
		if evs[i].State != nil {
			last = &evs[i]
		}
	}
	if last == nil || last.State.Revision != st.Revision || last.State.Phase != st.Phase {
		k.t.Fatalf("%s: state.json (revision %d, %s) is not the transcript's last state %+v", what, st.Revision, st.Phase, last)
	}
	// Every move of the last event is done: its source is gone unless a
	// later move of the event put something there (a phase's new
	// artifact where the old one was archived from), its destination is
	// there unless a later move took it on.
	for i, m := range last.Moves {
		refilled, movedOn := false, false
		for _, later := range last.Moves[i+1:] {
			refilled = refilled || later.To == m.From
			movedOn = movedOn || later.From == m.To
		}
		if _, err := os.Lstat(filepath.Join(k.taskDir, filepath.FromSlash(m.From))); err == nil && !refilled {
			k.t.Errorf("%s: move %s → %s of event %d not done after the next command", what, m.From, m.To, last.Seq)
		}
		if _, err := os.Lstat(filepath.Join(k.taskDir, filepath.FromSlash(m.To))); err != nil && !movedOn {
			k.t.Errorf("%s: move %s → %s of event %d: %v", what, m.From, m.To, last.Seq, err)
		}
	}
	if code, out := k.orch(-1, "verify"); code != 0 {
		k.t.Fatalf("%s: orch verify after the next command exited %d\n%s", what, code, out)
	}
}

// orch runs the test binary as orch to completion in the project. With
// want >= 0 another exit code fails the test.
func (k *mcpKill) orch(want int, args ...string) (int, string) {
	k.t.Helper()
	bin, err := os.Executable()
	if err != nil {
		k.t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = k.dir
	cmd.Env = append(append(os.Environ(), runOrch+"=1", "GORACE=atexit_sleep_ms=0"), k.env...)
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		k.t.Fatalf("orch %v: %v", args, err)
	}
	if want >= 0 && code != want {
		k.t.Fatalf("orch %v: exit %d, want %d\n%s", args, code, want, out)
	}
	return code, string(out)
}
