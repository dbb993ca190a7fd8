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
// phase: the plan without a question, both plan reviews, the codegen run
// that passes its tests (it runs them itself, run_tests), the code review.
func fleetScript(t testing.TB) []byte {
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
			// The demo's plans ask a blocking question (the demo
			// answers it); the fleet's plan asks none, so the task
			// moves on without a person.
			if planners++; planners == 2 {
				r["json"].(map[string]any)["questions"] = []any{}
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

func newCluster(t testing.TB) *cluster {
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
	gittest.Write(t, cl.submitter, ".orch/demo-script.json", string(fleetScript(t)))
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

// killDuring waits for a step (kind, phase) to be running on some worker
// among names, kills that worker in the middle of it, and restarts it in
// its clone. It returns the killed worker's name.
func (cl *cluster) killDuring(ctx context.Context, ids []string, kind StepKind, phase lifecycle.Phase, clones map[string]string, extra map[string][]string) string {
	cl.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		for _, id := range ids {
			v, err := History(ctx, cl.c, id)
			if err != nil || v.Running == nil || v.Running.Kind != kind || v.Running.Phase != phase {
				continue
			}
			d, err := cl.c.DescribeWorkflowExecution(ctx, WorkflowID(id), "")
			if err != nil {
				continue
			}
			for _, pa := range d.GetPendingActivities() {
				who := pa.GetLastWorkerIdentity()
				if pa.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED || clones[who] == "" {
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
	cl.t.Fatalf("no %s %s step seen running", kind, phase)
	return ""
}

// settle waits until every task's workflow is done or waits at a gate.
func (cl *cluster) settle(ctx context.Context, ids []string, timeout time.Duration) map[string]FlowView {
	cl.t.Helper()
	deadline := time.Now().Add(timeout)
	views := map[string]FlowView{}
	for {
		pending := 0
		for _, id := range ids {
			v, err := History(ctx, cl.c, id)
			if err != nil {
				cl.t.Fatalf("query %s: %v", id, err)
			}
			views[id] = v
			if v.Waiting == "" && v.Phase != lifecycle.Done {
				pending++
			}
		}
		if pending == 0 {
			return views
		}
		if time.Now().After(deadline) {
			for id, v := range views {
				cl.t.Logf("%s: phase %s waiting %q running %+v", id, v.Phase, v.Waiting, v.Running)
			}
			cl.dumpLogs()
			cl.t.Fatalf("%d tasks still moving after %s", pending, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
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
// Every task must end waiting at the accept gate (one is then accepted
// through the fleet and ends done), none is committed twice, no model call
// is recorded twice, and every transcript, pulled into a fresh clone,
// verifies and agrees with its workflow's history.
func TestFleetEndToEnd(t *testing.T) {
	needServer(t)
	n := tasksFor(t, 6)
	cl := newCluster(t)
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
		if _, err := Submit(ctx, cl.c, cl.submitter, "origin", id, Params{HeartbeatTimeout: 4 * time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	// A second submission of a task is refused.
	if _, err := Submit(ctx, cl.c, cl.submitter, "origin", ids[0], Params{}); exit.Of(err) != exit.Refused {
		t.Fatalf("second submit: %v (exit %d), want a refusal", err, exit.Of(err))
	}

	killedCodegen := cl.killDuring(ctx, ids, StepWork, lifecycle.Codegen, clones, extra)
	killedTest := cl.killDuring(ctx, ids, StepWork, lifecycle.Test, clones, extra)
	views := cl.settle(ctx, ids, 5*time.Minute)
	t.Logf("%d tasks at their gates in %s (killed %s in codegen, %s in a test run)", n, time.Since(start).Round(time.Millisecond), killedCodegen, killedTest)

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
	calls, codegens := 0, 0
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
	cl := newCluster(b)
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
