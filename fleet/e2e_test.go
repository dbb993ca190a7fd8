package fleet

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/orchdev/orch/internal/demo"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/phasetest"
	"github.com/orchdev/orch/internal/task"
)

// fleetScript is the demo's script reduced to one pass through every
// phase: the complete plan, both plan reviews, the codegen run that passes
// its tests (it runs them itself, run_tests), the code review. With ask
// the plan keeps the demo's blocking question (q1, bytes or runes), and
// the task waits for its answer at planning; without it the plan asks
// nothing and the task moves on without a person.
func fleetScript(t testing.TB, ask bool) []byte {
	data, err := os.ReadFile(filepath.Join("..", "internal", "demo", "script.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Responses []map[string]any `json:"responses"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	var keep []map[string]any
	planners, reviewers := 0, 0
	for _, r := range s.Responses {
		role := r["role"].(string)
		switch {
		case role == "planner":
			// The demo's first plan is a draft with the question, its
			// second the complete plan, still with the question.
			if planners++; planners == 2 {
				if !ask {
					r["json"].(map[string]any)["questions"] = []any{}
				}
				keep = append(keep, r)
			}
		case strings.HasPrefix(role, "plan_reviewer"):
			keep = append(keep, r)
		case role == "codegen":
			calls, _ := r["tool_calls"].([]any)
			if len(calls) > 0 && strings.HasPrefix(calls[0].(map[string]any)["id"].(string), "call_2_") {
				keep = append(keep, r)
			}
		case role == "code_reviewer":
			if reviewers++; reviewers == 2 {
				keep = append(keep, r)
			}
		}
	}
	out, err := json.MarshalIndent(map[string]any{"responses": keep}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cluster is an embedded Temporal development server, a shared bare
// remote and the machines' clones.
type cluster struct {
	t         testing.TB
	addr, ns  string
	remote    string // the bare repository
	submitter string // the clone tasks are created and submitted in
	fleetBin  string
	orchBin   string
	env       []string
	c         client.Client

	mu      sync.Mutex
	workers map[string]*exec.Cmd
	logs    map[string]*os.File
}

// buildIn builds package pkg of the module in dir into bin.
func buildIn(t testing.TB, dir, pkg, bin string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s in %s: %v\n%s", pkg, dir, err, out)
	}
}

func newCluster(t testing.TB, ask bool) *cluster {
	t.Helper()
	bins := t.TempDir()
	cl := &cluster{t: t, workers: map[string]*exec.Cmd{}, logs: map[string]*os.File{}}
	cl.fleetBin = filepath.Join(bins, "orch-fleet")
	devBin := filepath.Join(bins, "devserver")
	buildIn(t, ".", "./cmd/orch-fleet", cl.fleetBin)
	buildIn(t, "devserver", ".", devBin)
	cl.orchBin = phasetest.BuildOrch(t)

	// The development server, on loopback.
	dev := exec.Command(devBin)
	stdout, err := dev.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	dev.Stderr = nil
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dev.Process.Signal(syscall.SIGTERM); _ = dev.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("devserver: %v", err)
	}
	for _, f := range strings.Fields(line) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "address":
			cl.addr = v
		case "namespace":
			cl.ns = v
		}
	}
	if !strings.HasPrefix(cl.addr, "127.0.0.1:") {
		t.Fatalf("devserver listens on %q, want loopback", cl.addr)
	}
	ctx := context.Background()
	cl.c, err = Dial(ctx, Conn{Address: cl.addr, Namespace: cl.ns, Identity: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.c.Close)

	// The repository: the demo's sample with the fleet's script,
	// committed with its .orch/ and pushed to a bare remote.
	home := t.TempDir()
	cl.env = append(phasetest.OrchEnv(home), "GOCACHE="+os.Getenv("GOCACHE"))
	cl.submitter = filepath.Join(t.TempDir(), "textkit")
	if _, err := demo.Prepare(ctx, cl.submitter, "script"); err != nil {
		t.Fatal(err)
	}
	gittest.Write(t, cl.submitter, ".orch/demo-script.json", string(fleetScript(t, ask)))
	gittest.CommitAll(t, cl.submitter, "orch init")
	cl.remote = filepath.Join(t.TempDir(), "shared.git")
	gittest.Git(t, "", "init", "--quiet", "--bare", cl.remote)
	// The remote's HEAD names the branch pushed below, so that a clone
	// checks it out (git's default initial branch may be another).
	gittest.Git(t, cl.remote, "symbolic-ref", "HEAD", "refs/heads/main")
	gittest.Git(t, cl.submitter, "remote", "add", "origin", cl.remote)
	gittest.Git(t, cl.submitter, "push", "--quiet", "origin", "HEAD:refs/heads/main")
	return cl
}

// clone makes a machine's clone of the shared remote.
func (cl *cluster) clone(name string) string {
	dir := filepath.Join(cl.t.TempDir(), name)
	gittest.Git(cl.t, "", "clone", "--quiet", cl.remote, dir)
	return dir
}

// startWorker starts orch-fleet worker NAME in clone dir.
func (cl *cluster) startWorker(name, dir string, extra ...string) {
	cl.t.Helper()
	args := append([]string{"worker", "--temporal", cl.addr, "--namespace", cl.ns, "--identity", name, "--models", "4", "--tests", "1"}, extra...)
	cmd := exec.Command(cl.fleetBin, args...)
	cmd.Dir = dir
	cmd.Env = cl.env
	logf, err := os.OpenFile(filepath.Join(cl.t.TempDir(), name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		cl.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		cl.t.Fatal(err)
	}
	cl.mu.Lock()
	cl.workers[name], cl.logs[name] = cmd, logf
	cl.mu.Unlock()
	cl.t.Cleanup(func() {
		cl.mu.Lock()
		w := cl.workers[name]
		cl.mu.Unlock()
		if w == cmd {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			_ = cmd.Wait()
		}
	})
}

// kill SIGKILLs worker name's process group (the worker and the test run
// it started) and waits for it.
func (cl *cluster) kill(name string) {
	cl.mu.Lock()
	cmd := cl.workers[name]
	delete(cl.workers, name)
	cl.mu.Unlock()
	if cmd == nil {
		cl.t.Fatalf("no worker %s to kill", name)
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
}

// killDuring waits (at most within) for a step (kind, phase) to be
// running on some worker among clones, kills that worker in the middle of
// it, and restarts it in its clone. It returns the killed worker's name.
// It asks the server for each task's pending activities and queries a
// workflow (a round trip through a worker) only when one has started.
func (cl *cluster) killDuring(ctx context.Context, ids []string, kind StepKind, phase lifecycle.Phase, within time.Duration, clones map[string]string, extra map[string][]string) string {
	cl.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		for _, id := range ids {
			d, err := cl.c.DescribeWorkflowExecution(ctx, WorkflowID(id), "")
			if err != nil {
				continue
			}
			for _, pa := range d.GetPendingActivities() {
				who := pa.GetLastWorkerIdentity()
				if pa.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED || clones[who] == "" {
					continue
				}
				v, err := History(ctx, cl.c, id)
				if err != nil || v.Running == nil || v.Running.Kind != kind || v.Running.Phase != phase {
					continue
				}
				// Let the step get going (model calls made, a test run
				// started), then kill its worker.
				time.Sleep(300 * time.Millisecond)
				cl.kill(who)
				cl.t.Logf("killed %s during %s %s of task %s", who, kind, phase, id)
				cl.startWorker(who, clones[who], extra[who]...)
				return who
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	cl.report(ctx, ids)
	cl.t.Fatalf("no %s %s step seen running in %s", kind, phase, within)
	return ""
}

// report logs where each task is, its pending activities (state,
// attempt, worker, last failure) and the workers' logs.
func (cl *cluster) report(ctx context.Context, ids []string) {
	for _, id := range ids {
		v, err := History(ctx, cl.c, id)
		if err != nil {
			cl.t.Logf("%s: query: %v", id, err)
			continue
		}
		cl.t.Logf("%s: phase %s waiting %q running %+v, %d steps", id, v.Phase, v.Waiting, v.Running, len(v.Steps))
		d, err := cl.c.DescribeWorkflowExecution(ctx, WorkflowID(id), "")
		if err != nil {
			cl.t.Logf("%s: describe: %v", id, err)
			continue
		}
		for _, pa := range d.GetPendingActivities() {
			cl.t.Logf("%s:   activity %s %s attempt %d worker %q last failure %q", id, pa.GetActivityId(), pa.GetState(), pa.GetAttempt(), pa.GetLastWorkerIdentity(), pa.GetLastFailure().GetMessage())
		}
	}
	cl.dumpLogs()
}

// settle waits until every task's workflow is done or waits at a gate.
func (cl *cluster) settle(ctx context.Context, ids []string, timeout time.Duration) map[string]FlowView {
	cl.t.Helper()
	start := time.Now()
	deadline, progress := start.Add(timeout), start.Add(time.Minute)
	views := map[string]FlowView{}
	for {
		pending := 0
		phases := map[lifecycle.Phase]int{}
		for _, id := range ids {
			v, err := History(ctx, cl.c, id)
			if err != nil {
				// A query goes through a worker: on a loaded machine it
				// can time out. The task counts as moving until the
				// deadline.
				cl.t.Logf("query %s: %v", id, err)
				pending++
				continue
			}
			views[id] = v
			phases[v.Phase]++
			if v.Waiting != "" || v.Phase == lifecycle.Done {
				continue
			}
			pending++
			// A workflow that ended (failed) still answers queries
			// with where it was: it would look busy for ever.
			d, err := cl.c.DescribeWorkflowExecution(ctx, WorkflowID(id), "")
			if err != nil {
				cl.t.Fatalf("describe %s: %v", id, err)
			}
			if st := d.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				cl.report(ctx, ids)
				cl.t.Fatalf("task %s's workflow ended (%s) in %s: %s", id, st, v.Phase, closedBecause(ctx, cl.c, id))
			}
		}
		if pending == 0 {
			return views
		}
		if time.Now().After(progress) {
			cl.t.Logf("after %s: %d tasks moving, by phase %v", time.Since(start).Round(time.Second), pending, phases)
			progress = progress.Add(time.Minute)
		}
		if time.Now().After(deadline) {
			cl.report(ctx, ids)
			cl.t.Fatalf("%d tasks still moving after %s", pending, timeout)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// closedBecause is the failure that ended task id's workflow, from its
// history's last event.
func closedBecause(ctx context.Context, c client.Client, id string) string {
	it := c.GetWorkflowHistory(ctx, WorkflowID(id), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return err.Error()
		}
		if a := ev.GetWorkflowExecutionFailedEventAttributes(); a != nil {
			f := a.GetFailure()
			for f.GetCause() != nil {
				f = f.GetCause()
			}
			return a.GetFailure().GetMessage() + ": " + f.GetMessage()
		}
		return ev.GetEventType().String()
	}
	return "no close event"
}

func (cl *cluster) dumpLogs() {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	for name, f := range cl.logs {
		data, _ := os.ReadFile(f.Name())
		cl.t.Logf("worker %s log:\n%s", name, data)
	}
}

// needServer skips unless ORCH_FLEET_E2E=1: the end-to-end test and the
// benchmark build Temporal's server (fleet/devserver, a large build the
// first time) and run it.
func needServer(tb testing.TB) {
	if os.Getenv("ORCH_FLEET_E2E") != "1" {
		tb.Skip("ORCH_FLEET_E2E=1 runs it: it builds and runs Temporal's development server (fleet/devserver)")
	}
}

// tasksFor reads the number of tasks of the end-to-end test.
func tasksFor(t testing.TB, def int) int {
	if s := os.Getenv("ORCH_FLEET_TASKS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("ORCH_FLEET_TASKS=%q: expected a positive number", s)
		}
		return n
	}
	return def
}

// TestFleetEndToEnd runs tasks through every phase on an embedded
// Temporal development server with three worker processes, each in its
// own clone of a shared bare remote; one worker is SIGKILLed in the
// middle of a codegen and one in the middle of a test run, and restarted.
// Every task's plan asks a blocking question, answered through the fleet
// (the answer Update) while the task waits at planning; the answer must
// change the task's folder as `orch answer` does locally. Every task must
// end waiting at the accept gate (one is then accepted through the fleet
// and ends done), none is committed twice, no model call is recorded
// twice, and every transcript, pulled into a fresh clone, verifies and
// agrees with its workflow's history.
func TestFleetEndToEnd(t *testing.T) {
	needServer(t)
	n := tasksFor(t, 6)
	cl := newCluster(t, true)
	ctx := context.Background()

	clones := map[string]string{"w1": cl.clone("w1"), "w2": cl.clone("w2"), "w3": cl.clone("w3")}
	extra := map[string][]string{"w3": {"--land"}}
	for _, name := range []string{"w1", "w2", "w3"} {
		cl.startWorker(name, clones[name], extra[name]...)
	}

	p, err := task.FindProject(cl.submitter)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range n {
		id := fmt.Sprintf("%04d-reverse", i+1)
		if _, _, err := p.CreateTask(id, demo.Brief, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	start := time.Now()
	for _, id := range ids {
		// A short heartbeat timeout, so that the killed workers' steps
		// are retried soon; live workers heartbeat every HeartbeatEvery.
		if _, err := Submit(ctx, cl.c, cl.submitter, "origin", id, Params{HeartbeatTimeout: 8 * time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	// A second submission of a task is refused.
	if _, err := Submit(ctx, cl.c, cl.submitter, "origin", ids[0], Params{}); exit.Of(err) != exit.Refused {
		t.Fatalf("second submit: %v (exit %d), want a refusal", err, exit.Of(err))
	}

	// Budgets for a loaded machine: the steps of the tasks interleave
	// (the queues are first come, first served), so the first test run
	// starts once most tasks are through codegen and review.
	budget := max(5*time.Minute, time.Duration(n)*time.Minute)
	answered := make(chan error, 1)
	go func() { answered <- cl.answerAll(ctx, ids, answer, budget) }()
	killedCodegen := cl.killDuring(ctx, ids, StepWork, lifecycle.Codegen, budget, clones, extra)
	killedTest := cl.killDuring(ctx, ids, StepWork, lifecycle.Test, budget, clones, extra)
	if err := <-answered; err != nil {
		cl.report(ctx, ids)
		t.Fatal(err)
	}
	views := cl.settle(ctx, ids, budget)
	t.Logf("%d tasks at their gates in %s (each answered at planning; killed %s in codegen, %s in a test run)", n, time.Since(start).Round(time.Millisecond), killedCodegen, killedTest)

	for _, id := range ids {
		v := views[id]
		if v.Phase != lifecycle.Accept || !strings.Contains(v.Waiting, "accept decision") {
			t.Errorf("task %s: phase %s, waiting %q; want the accept gate", id, v.Phase, v.Waiting)
		}
	}
	if t.Failed() {
		cl.dumpLogs()
		t.FailNow()
	}

	// A refused gate action: orch's message and exit code, and nothing in
	// the workflow's history.
	before := historyLength(t, cl.c, ids[0])
	_, err = Gate(ctx, cl.c, ids[0], UpdateAnswer, AnswerRequest{Question: "q1", Text: "runes"})
	want := ValidateAnswer(ids[0], Observation{Phase: lifecycle.Accept}, AnswerRequest{Question: "q1", Text: "runes"})
	if err == nil || err.Error() != want.Error() || exit.Of(err) != exit.Refused {
		t.Fatalf("answer in accept through the fleet: %v (exit %d), want %q (exit 3)", err, exit.Of(err), want)
	}
	if after := historyLength(t, cl.c, ids[0]); after != before {
		t.Fatalf("a refused update entered the history: %d events, then %d", before, after)
	}

	// One task accepted through the fleet: the landing worker commits it.
	res, err := Gate(ctx, cl.c, ids[0], UpdateAccept, AcceptRequest{Verdict: "accepted", Reasons: []string{"tests pass (fleet test)"}, Decider: "test"})
	if err != nil {
		t.Fatalf("accept through the fleet: %v", err)
	}
	if res.Phase != lifecycle.Done {
		// accept → done is the workflow's next step.
		t.Logf("accept left the task in %s; the workflow moves it on", res.Phase)
	}
	run := cl.c.GetWorkflow(ctx, WorkflowID(ids[0]), "")
	var final Final
	if err := run.Get(ctx, &final); err != nil {
		t.Fatalf("task %s's workflow: %v", ids[0], err)
	}

	// Every task, pulled into a fresh clone: orch verify passes, no model
	// call is recorded twice, and the transcript is the workflow's log;
	// each step's artifact hashes are those of its commit.
	check := cl.clone("check")
	for _, id := range ids {
		pull := exec.Command(cl.fleetBin, "pull", id)
		pull.Dir, pull.Env = check, cl.env
		if out, err := pull.CombinedOutput(); err != nil {
			t.Fatalf("orch-fleet pull %s: %v\n%s", id, err, out)
		}
		verify := exec.Command(cl.orchBin, "verify", "--task", id)
		verify.Dir, verify.Env = check, cl.env
		if out, err := verify.CombinedOutput(); err != nil {
			t.Errorf("orch verify --task %s: %v\n%s", id, err, out)
		}
		checkTranscript(t, cl, check, id)
	}
	// The answer through the fleet is the answer orch records locally.
	answeredAsLocally(t, cl, ids[len(ids)-1], answer)

	// None committed twice: the landing clone holds one commit of the
	// accepted task and none of the others.
	commits := gittest.Git(t, clones["w3"], "log", "--format=%(trailers:key=Orch-Task,valueonly)", "HEAD")
	count := map[string]int{}
	for _, l := range strings.Split(commits, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			count[l]++
		}
	}
	for i, id := range ids {
		want := 0
		if i == 0 {
			want = 1
		}
		if count[id] != want {
			t.Errorf("task %s committed %d times to the branch, want %d", id, count[id], want)
		}
	}
}

// answer is the end-to-end test's answer to the plan's question.
var answer = AnswerRequest{Question: "q1", Text: "runes: reverse the characters, so that multi-byte text stays valid"}

// answerAll answers req, through the fleet, for each task as soon as it
// waits at its plan's question; it returns once every answer's Update has
// completed (or the first error, or within has passed).
func (cl *cluster) answerAll(ctx context.Context, ids []string, req AnswerRequest, within time.Duration) error {
	deadline := time.Now().Add(within)
	errs := make(chan error, len(ids))
	var wg sync.WaitGroup
	defer wg.Wait()
	left := ids
	for len(left) > 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d tasks never waited at their question in %s: %v", len(left), within, left)
		}
		var still []string
		for _, id := range left {
			v, err := History(ctx, cl.c, id)
			if err != nil || !strings.Contains(v.Waiting, "open blocking question") {
				still = append(still, id)
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := Gate(ctx, cl.c, id, UpdateAnswer, req)
				switch {
				case err != nil:
					errs <- fmt.Errorf("answer %s of task %s through the fleet: %w", req.Question, id, err)
				case res.Phase != lifecycle.Planning || res.Commit == "":
					errs <- fmt.Errorf("answer of task %s: the Update returned phase %s, commit %q; want planning and the answer's commit", id, res.Phase, res.Commit)
				}
			}()
		}
		left = still
		select {
		case err := <-errs:
			return err
		case <-time.After(500 * time.Millisecond):
		}
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// answeredAsLocally checks that the answer through the fleet changed task
// id's folder as `orch answer` changes it locally: in a fresh clone, the
// folder as it was before the answer's step (the parent of the commit the
// step pushed) gets `orch answer` from orch's binary, and every file of
// the folder must then equal the file of the fleet's commit, but for the
// times (ts, updated_at) and the hash chain's links they change (prev).
func answeredAsLocally(t *testing.T, cl *cluster, id string, req AnswerRequest) {
	t.Helper()
	ctx := context.Background()
	v, err := History(ctx, cl.c, id)
	if err != nil {
		t.Fatal(err)
	}
	var after string
	answers := 0
	for _, st := range v.Steps {
		if st.Kind == StepAnswer {
			answers++
			after = st.Commit
		}
	}
	if answers != 1 || after == "" {
		t.Fatalf("%s: %d answer steps in the workflow's history (last commit %q), want 1 with a commit", id, answers, after)
	}
	local := cl.clone("local")
	gittest.Git(t, local, "fetch", "--quiet", "origin", TaskRef(id))
	if err := Materialize(ctx, local, id, after+"^"); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cl.orchBin, "answer", "--task", id, req.Question, req.Text)
	cmd.Dir, cmd.Env = local, cl.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("orch answer locally: %v\n%s", err, out)
	}
	mine, err := hashFolder(taskDir(local, id))
	if err != nil {
		t.Fatal(err)
	}
	theirs := strings.Fields(gittest.Git(t, local, "ls-tree", "-r", "--name-only", after))
	if len(theirs) != len(mine) {
		t.Errorf("%s: the fleet's answer left %d files %v, orch answer %d", id, len(theirs), theirs, len(mine))
	}
	for _, rel := range theirs {
		if _, ok := mine[rel]; !ok {
			t.Errorf("%s: %s is in the fleet's answer commit, not in the local folder", id, rel)
			continue
		}
		fleetData, err := exec.Command("git", "-C", local, "cat-file", "blob", after+":"+rel).Output()
		if err != nil {
			t.Fatal(err)
		}
		localData, err := os.ReadFile(filepath.Join(taskDir(local, id), filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if f, l := timeless(t, rel, fleetData), timeless(t, rel, localData); f != l {
			t.Errorf("%s: %s after the answer differs (times aside):\nfleet: %s\nlocal: %s", id, rel, f, l)
		}
	}
}

// timeless is a task file with the values that record when it was
// written left out: in JSON and JSON lines the members ts, updated_at and
// prev (a transcript line's link to the line before, whose time differs),
// at any depth. Other files are returned as they are.
func timeless(t *testing.T, rel string, data []byte) string {
	if !strings.HasSuffix(rel, ".json") && !strings.HasSuffix(rel, ".jsonl") {
		return string(data)
	}
	var drop func(v any) any
	drop = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range []string{"ts", "updated_at", "prev"} {
				delete(x, k)
			}
			for k, e := range x {
				x[k] = drop(e)
			}
		case []any:
			for i, e := range x {
				x[i] = drop(e)
			}
		}
		return v
	}
	values := []string{string(data)}
	if strings.HasSuffix(rel, ".jsonl") {
		values = strings.Split(strings.TrimSpace(string(data)), "\n")
	}
	var out []string
	for _, line := range values {
		var v any
		d := json.NewDecoder(strings.NewReader(line))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		b, err := json.Marshal(drop(v))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return strings.Join(out, "\n")
}

// historyLength is the number of events in task id's workflow history.
func historyLength(t testing.TB, c client.Client, id string) int {
	it := c.GetWorkflowHistory(context.Background(), WorkflowID(id), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	n := 0
	for it.HasNext() {
		if _, err := it.Next(); err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// checkTranscript checks task id as pulled into clone: each model call
// recorded once, its transcript equal to its workflow's log, and each
// step's artifact hashes equal to the files of the commit it pushed.
func checkTranscript(t *testing.T, cl *cluster, clone, id string) {
	t.Helper()
	p, err := task.FindProject(clone)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := p.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	events, err := tk.Transcript()
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		run string
		n   int
	}
	seen := map[key]bool{}
	calls, codegens, answers := 0, 0, 0
	for _, ev := range events {
		pl, err := ev.Decode()
		if err != nil {
			t.Fatalf("%s: event %d: %v", id, ev.Seq, err)
		}
		switch e := pl.(type) {
		case event.ModelCall:
			calls++
			run, n := e.Key()
			if seen[key{run, n}] {
				t.Errorf("%s: model call %s/%d recorded twice", id, run, n)
			}
			seen[key{run, n}] = true
		case event.UserInput:
			answers++
			if e.Question != answer.Question || e.Answer != answer.Text {
				t.Errorf("%s: user input %s=%q recorded, want %s=%q", id, e.Question, e.Answer, answer.Question, answer.Text)
			}
		case event.PhaseFinished:
			// A run that finished records its status (codegen's own
			// finish status, "completed"); a failed one "failed".
			if e.Phase == lifecycle.Codegen && e.Status == string(lifecycle.StatusCompleted) {
				codegens++
			}
		}
	}
	if calls == 0 {
		t.Errorf("%s: no model call recorded", id)
	}
	if codegens != 1 {
		t.Errorf("%s: %d completed codegen runs recorded, want 1", id, codegens)
	}
	if answers != 1 {
		t.Errorf("%s: %d answers recorded, want 1", id, answers)
	}
	logs, err := Log(context.Background(), cl.c, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != len(events) {
		t.Fatalf("%s: the workflow's log has %d events, the transcript %d", id, len(logs), len(events))
	}
	for i, ev := range events {
		mine, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if string(mine) != string(logs[i]) {
			t.Fatalf("%s: event %d differs:\ntranscript: %s\nworkflow:   %s", id, i+1, mine, logs[i])
		}
	}
	v, err := History(context.Background(), cl.c, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range v.Steps {
		if st.Commit == "" {
			continue
		}
		for rel, sum := range st.Artifacts {
			raw, err := exec.Command("git", "-C", clone, "cat-file", "blob", st.Commit+":"+rel).Output()
			if err != nil {
				t.Fatalf("%s: %s at %.12s: %v", id, rel, st.Commit, err)
			}
			h := sha256.Sum256(raw)
			if hex.EncodeToString(h[:]) != sum {
				t.Errorf("%s: %s at %.12s has sha256 %x, the workflow's history says %s", id, rel, st.Commit, h, sum)
			}
		}
	}
}

// BenchmarkFleetThroughput measures tasks per hour through every phase up
// to the accept gate with 1, 2 and 3 workers (each --models 4 --tests 1,
// in its own clone) on the scripted model; ORCH_FLEET_TASKS sets the
// number of tasks (default 6). docs/fleet.md ("Throughput") and the
// README's "The fleet" have the numbers.
func BenchmarkFleetThroughput(b *testing.B) {
	needServer(b)
	n := tasksFor(b, 6)
	cl := newCluster(b, false)
	ctx := context.Background()
	p, err := task.FindProject(cl.submitter)
	if err != nil {
		b.Fatal(err)
	}
	round := 0
	for _, workers := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			for range b.N {
				round++
				clones := map[string]string{}
				var names []string
				for w := range workers {
					name := fmt.Sprintf("r%dw%d", round, w+1)
					clones[name] = cl.clone(name)
					names = append(names, name)
				}
				var ids []string
				for i := range n {
					id := fmt.Sprintf("r%02d-%04d", round, i+1)
					if _, _, err := p.CreateTask(id, demo.Brief, time.Now().UTC()); err != nil {
						b.Fatal(err)
					}
					ids = append(ids, id)
				}
				for _, name := range names {
					cl.startWorker(name, clones[name])
				}
				start := time.Now()
				for _, id := range ids {
					if _, err := Submit(ctx, cl.c, cl.submitter, "origin", id, Params{}); err != nil {
						b.Fatal(err)
					}
				}
				cl.settle(ctx, ids, 15*time.Minute)
				took := time.Since(start)
				for _, name := range names {
					cl.kill(name)
				}
				b.ReportMetric(float64(n)/took.Hours(), "tasks/hour")
			}
		})
	}
}
