package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/demo"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/fleetlink"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/view"
)

// TestFleetThroughOrch drives a fleet task with orch's own commands
// (internal/fleetlink running the real orch-fleet; docs/fleet.md, "orch's
// commands and the fleet"): orch submit hands it over (a second submit is
// refused, exit 3), orch status and orch log read its workflow once it
// waits at the accept gate, orch list shows it and the worker, a refused
// orch answer exits 3 with the local check's message and leaves the
// workflow's history alone, and orch accept through the fleet takes it to
// done, committed once on the landing clone's branch. Opt-in with the
// end-to-end test (ORCH_FLEET_E2E=1); one worker, one task.
func TestFleetThroughOrch(t *testing.T) {
	needServer(t)
	cl := newCluster(t, false)
	ctx := context.Background()
	land := cl.clone("land")
	cl.startWorker("w1", land, "--land")

	// [fleet] in the submitting clone's configuration, with the
	// orch-fleet just built.
	cfg := filepath.Join(cl.submitter, ".orch", "config.toml")
	old, err := os.ReadFile(cfg)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("%s\n[fleet]\naddress = %q\nnamespace = %q\nbinary = %q\n", old, cl.addr, cl.ns, cl.fleetBin)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	orch := func(want exit.Code, args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(cl.orchBin, args...)
		cmd.Dir, cmd.Env = cl.submitter, cl.env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := exit.OK
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = exit.Code(ee.ExitCode())
		} else if err != nil {
			t.Fatalf("orch %s: %v", strings.Join(args, " "), err)
		}
		if code != want {
			t.Fatalf("orch %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, out.String(), errb.String())
		}
		return out.String(), errb.String()
	}

	p, err := task.FindProject(cl.submitter)
	if err != nil {
		t.Fatal(err)
	}
	const id = "0001-reverse"
	if _, _, err := p.CreateTask(id, demo.Brief, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	out, _ := orch(exit.OK, "submit", id)
	if !strings.HasPrefix(out, "submitted "+id+": refs/orch/tasks/"+id+" at ") {
		t.Fatalf("orch submit: %q", out)
	}
	if known, err := fleetlink.Known(cl.submitter, id); err != nil || !known {
		t.Fatalf("after orch submit, Known = %v, %v", known, err)
	}
	if _, stderr := orch(exit.Refused, "submit", id); !strings.Contains(stderr, "is already in the fleet") {
		t.Fatalf("second orch submit: %q", stderr)
	}

	views := cl.settle(ctx, []string{id}, 5*time.Minute)
	if v := views[id]; v.Phase != lifecycle.Accept {
		t.Fatalf("task %s: phase %s, waiting %q; want the accept gate", id, v.Phase, v.Waiting)
	}

	// Status and log through orch: the workflow's.
	out, _ = orch(exit.OK, "status", "--task", id, "--json")
	var st view.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("orch status --json: %v\n%s", err, out)
	}
	raw, err := Status(ctx, cl.c, id)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out) != strings.TrimSpace(string(raw)) || st.Phase != lifecycle.Accept {
		t.Fatalf("orch status --json:\n%s\nthe workflow's status query:\n%s", out, raw)
	}
	out, _ = orch(exit.OK, "status", "--task", id)
	if !strings.Contains(out, "task "+id+"  phase accept") || !strings.Contains(out, "fleet: the task's workflow takes its steps") {
		t.Fatalf("orch status: %s", out)
	}
	out, _ = orch(exit.OK, "log", "--task", id, "--json")
	lines, err := Log(ctx, cl.c, id)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(strings.TrimSpace(out), "\n") + 1; n != len(lines) || len(lines) < 5 {
		t.Fatalf("orch log --json: %d events, the workflow's log query %d", n, len(lines))
	}
	out, _ = orch(exit.OK, "list", "--json")
	var list struct {
		Fleet fleetlink.Listing `json:"fleet"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("orch list --json: %v\n%s", err, out)
	}
	if ts := list.Fleet.Phases[lifecycle.Accept]; len(ts) != 1 || ts[0].Task != id || len(list.Fleet.Workers[QueueLand]) != 1 {
		t.Fatalf("orch list --json's fleet: %+v", list.Fleet)
	}

	// A refused gate action through orch: the local check's message and
	// exit code, nothing in the workflow's history.
	before := historyLength(t, cl.c, id)
	_, stderr := orch(exit.Refused, "answer", "--task", id, "q1", "runes")
	want := ValidateAnswer(id, Observation{Phase: lifecycle.Accept}, AnswerRequest{Question: "q1", Text: "runes"})
	if strings.TrimSpace(stderr) != exit.Format(want) {
		t.Fatalf("orch answer in accept through the fleet:\n%s\nwant\n%s", stderr, exit.Format(want))
	}
	if after := historyLength(t, cl.c, id); after != before {
		t.Fatalf("a refused answer entered the history: %d events, then %d", before, after)
	}

	// The decision through orch: the landing worker commits the change.
	out, _ = orch(exit.OK, "accept", "--task", id, "--verdict", "accepted", "--reason", "reviewed (orch through the fleet)", "--expect", fmt.Sprint(st.Revision))
	if !strings.HasPrefix(out, "decision accepted recorded through the fleet: task "+id+" is in ") {
		t.Fatalf("orch accept: %q", out)
	}
	var final Final
	if err := cl.c.GetWorkflow(ctx, WorkflowID(id), "").Get(ctx, &final); err != nil {
		t.Fatalf("task %s's workflow: %v", id, err)
	}
	commits := strings.Fields(strings.TrimSpace(gittest.Git(t, land, "log", "--format=%(trailers:key=Orch-Task,valueonly)", "HEAD")))
	if n := strings.Count(strings.Join(commits, " "), id); n != 1 {
		t.Fatalf("task %s committed %d times on the landing clone's branch, want 1", id, n)
	}
}
