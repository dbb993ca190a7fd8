package board

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/fileid"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

// TestCostTails: a card's cost is read from the transcript's tail — what
// was appended since the last refresh — and is always the sum over the
// whole transcript: a transcript replaced or cut is read again whole.
func TestCostTails(t *testing.T) {
	f := NewFixture(t)
	f.Task("c1", "costs")
	tk, err := f.P.Open("c1")
	if err != nil {
		t.Fatal(err)
	}
	call := func(in int64) {
		t.Helper()
		usd := 0.5
		if err := tk.Append(task.NewEvent(event.ModelCall{Phase: "planning", Role: "planner", Provider: "test", Model: "m", TokensIn: in, TokensOut: 1, CostUSD: &usd})); err != nil {
			t.Fatal(err)
		}
	}
	var ct costTails
	check := func(what string) {
		t.Helper()
		got, entered, err := ct.of(tk)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := tk.Transcript()
		if err != nil {
			t.Fatal(err)
		}
		want := agent.SumCosts(task.ModelCalls(evs))
		if got.Total != want.Total {
			t.Fatalf("%s: %+v, want %+v", what, got.Total, want.Total)
		}
		if sp := phaseSpans(evs); len(sp) == 0 || entered.Phase != sp[len(sp)-1].Phase || !entered.Start.Equal(sp[len(sp)-1].Start) {
			t.Fatalf("%s: entered %+v, spans %+v", what, entered, sp)
		}
	}
	check("no call")
	call(100)
	check("one call")
	reason := "cards test"
	if _, err := f.O.Next(t.Context(), "c1", orchestrator.NextRequest{To: lifecycle.PlanReview, Override: &reason}); err != nil {
		t.Fatal(err)
	}
	check("moved")
	offset := ct.m["c1"].offset
	call(200)
	call(300)
	check("two more calls")
	if ct.m["c1"].offset <= offset || ct.m["c1"].sum.Total.Calls != 3 {
		t.Fatalf("tail not read: %+v", ct.m["c1"])
	}
	// Replaced by a shorter transcript (a copy, another inode).
	p := filepath.Join(tk.Dir, task.TranscriptFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	cut := b[:offset]
	if err := os.WriteFile(p+".new", cut, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".new", p); err != nil {
		t.Fatal(err)
	}
	check("replaced")
	// Rewritten in place with the same size (a line's bytes changed).
	call(400)
	check("after a call")
	b, _ = os.ReadFile(p)
	edited := bytes.Replace(b, []byte(`"tokens_in":400`), []byte(`"tokens_in":900`), 1)
	if bytes.Equal(edited, b) {
		t.Fatalf("no tokens_in 400 in %s", b)
	}
	if err := os.WriteFile(p, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := ct.of(tk); got.Total.TokensIn != 1000 {
		t.Fatalf("a rewritten last line was not read again whole: %+v", got.Total)
	}
}

// TestCardTailExact: a card's committed state, decided from the
// transcript's lines as the board read them (task.StateFold), is always
// what CommittedState reads from the files, and its cost the sum over the
// whole transcript: after a model call appended (read from the tail, with
// state.json not read again), a transition, a same-size edit in place of
// a state-carrying line that is not the last (also with the file's
// identity kept, as on a coarse clock, in the tick of the reading), the
// transcript cut back in place, a last line torn by a crash and then
// completed, or cut off and followed by another event, and the
// transcript replaced by another file or rewritten in place. The same
// holds when the tail is read as a stream (more than maxPread bytes),
// and when the bytes to check are too many to keep (more than
// maxRegion: the state is then read by CommittedState).
func TestCardTailExact(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the cards' cache keys by Linux file identities")
	}
	defer func(p, r int64) { maxPread, maxRegion = p, r }(maxPread, maxRegion)
	for _, tc := range []struct {
		name   string
		pread  int64
		region int64
	}{
		{"one read", maxPread, maxRegion},
		{"streamed", 64, maxRegion},
		{"too many bytes to keep", maxPread, 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			maxPread, maxRegion = tc.pread, tc.region
			testCardTailExact(t, tc.region >= 64<<10)
		})
	}
}

// testCardTailExact is TestCardTailExact; region says whether the bytes
// to check are kept (then the state is decided from the lines read).
func testCardTailExact(t *testing.T, region bool) {
	f := NewFixture(t)
	f.Task("c1", "exact")
	f.Plan("c1", "Exact", "", nil)
	f.Move("c1", lifecycle.PlanReview)
	s, _ := f.Board(Options{})
	tk, err := f.P.Open("c1")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(tk.Dir, task.TranscriptFile)
	usd := 0.5
	call := func(in int64) {
		t.Helper()
		if err := tk.Append(task.NewEvent(event.ModelCall{Phase: "codegen", Role: "codegen", Provider: "test", Model: "m", TokensIn: in, TokensOut: 1, CostUSD: &usd})); err != nil {
			t.Fatal(err)
		}
	}
	render := func(st task.State, pending *task.Pending, err error) string {
		b, _ := json.Marshal(st)
		return fmt.Sprintf("%s %+v %v", b, pending, err)
	}
	// check reads the card's committed state at the file system's time
	// since (0: now) and compares it with CommittedState and its cost
	// with the whole transcript's; fold says whether the state must have
	// been decided from the lines read (not from the cards' cache nor
	// CommittedState), stateRead whether state.json must have been read.
	check := func(what string, since int64, fold, stateRead bool) {
		t.Helper()
		if since == 0 {
			since = tickPast(t, s, filepath.Join(tk.Dir, task.StateFile), p)
		}
		folds, reads := s.states.folds, s.states.stateReads
		cm := s.states.committed(tk, since, true, &s.costs)
		if got, want := render(cm.st, cm.pending, cm.err), render(tk.CommittedState()); got != want {
			t.Fatalf("%s: the card's state\n%s\nCommittedState\n%s", what, got, want)
		}
		fold, stateRead = fold && region, stateRead && region
		if got := s.states.folds - folds; got != map[bool]int{true: 1}[fold] {
			t.Fatalf("%s: %d states decided from the lines read, want fold %v", what, got, fold)
		}
		if got := s.states.stateReads - reads; got != map[bool]int{true: 1}[stateRead] {
			t.Fatalf("%s: state.json read %d times, want %v", what, got, stateRead)
		}
		sum, _, err := s.costs.of(tk)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := tk.Transcript()
		if err != nil {
			t.Fatal(err)
		}
		if want := agent.SumCosts(task.ModelCalls(evs)); sum.Total != want.Total {
			t.Fatalf("%s: cost %+v, want %+v", what, sum.Total, want.Total)
		}
	}
	// setRevision sets the digit of the last logged state's revision in
	// place (the same size).
	setRevision := func(digit byte) {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.LastIndex(b, []byte(`"revision":`))
		if i < 0 || b[i+len(`"revision":`)+1] != ',' {
			t.Fatalf("no one-digit revision in %s", b)
		}
		fh, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		if _, err := fh.WriteAt([]byte{digit}, int64(i+len(`"revision":`))); err != nil {
			t.Fatal(err)
		}
	}
	appendRaw := func(b string) {
		t.Helper()
		fh, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		if _, err := fh.WriteString(b); err != nil {
			t.Fatal(err)
		}
	}

	check("first", 0, true, true)
	check("unchanged", 0, false, false)
	call(10)
	check("a model call", 0, true, false)
	f.Move("c1", lifecycle.Codegen)
	check("a transition", 0, true, true)
	call(20)
	call(30)
	check("two model calls", 0, true, false)
	kept, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}

	// The last transition's state edited in place, the same size:
	// state.json no longer agrees with the transcript.
	st, err := tk.ReadState()
	if err != nil || st.Revision > 8 {
		t.Fatalf("state %+v, %v", st, err)
	}
	rev := byte('0' + st.Revision)
	setRevision(rev + 1)
	check("a state line edited in place", 0, true, false)
	setRevision(rev)
	check("restored", 0, true, false)

	// The same on a coarse clock: the transcript keeps its identity (its
	// mtime and ctime are the tick's) through an edit in the tick of the
	// reading.
	tick, _ := s.clock.now()
	s.states.lstat = func(path string) (fileid.ID, bool) {
		id, ok := lstatID(path)
		if filepath.Base(path) == task.TranscriptFile {
			id.Mtime, id.Ctime = tick, tick
		}
		return id, ok
	}
	check("a coarse clock", tick, true, false)
	setRevision(rev + 1)
	check("edited in the reading's tick", tick+int64(time.Second), true, false)
	tick += 2 * int64(time.Second)
	setRevision(rev)
	check("restored in the next tick", tick+int64(time.Second), true, false)
	check("unchanged since", tick+2*int64(time.Second), false, false)
	s.states.lstat = nil

	// Cut back in place to before the transition and its calls.
	cut := bytes.LastIndexByte(kept[:bytes.LastIndex(kept, []byte(`"revision":`))], '\n') + 1
	if err := os.Truncate(p, int64(cut)); err != nil {
		t.Fatal(err)
	}
	check("cut back", 0, true, false)
	if err := os.WriteFile(p, kept, 0o644); err != nil {
		t.Fatal(err)
	}
	check("grown back", 0, true, false)

	// A last line torn by a crash, then completed.
	appendRaw(`{"seq":90,"ts":"2026-11-27T10:00:00Z","kind":"note"`)
	check("a torn last line", 0, true, false)
	appendRaw(`,"prev":""}` + "\n")
	check("completed", 0, true, false)
	// Torn again, cut off (as Recover does) and followed by a call.
	appendRaw(`{"seq":91,"ts":"2026-11-27T10:00:00Z","kind":"transition","state":{"ph`)
	check("torn again", 0, true, false)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, int64(bytes.LastIndexByte(b, '\n')+1)); err != nil {
		t.Fatal(err)
	}
	call(40)
	check("cut off and followed by a call", 0, true, false)

	// Replaced by another file: the transcript kept above.
	if err := os.WriteFile(p+".new", kept, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".new", p); err != nil {
		t.Fatal(err)
	}
	check("replaced", 0, true, false)
	// Rewritten in place (the same file), longer, its last state changed.
	if err := os.WriteFile(p, append(bytes.Clone(kept), `{"seq":99,"ts":"2026-11-27T10:00:00Z","kind":"note","prev":""}`+"\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	setRevision(rev + 1)
	check("rewritten in place", 0, true, false)
}

// tickPast returns the file system's time once it is past the last
// change of the files at paths: a reading that begins then is trusted
// while they do not change (a reading in the tick of a change is not).
func tickPast(t *testing.T, s *Server, paths ...string) int64 {
	t.Helper()
	var last int64
	for _, p := range paths {
		if id, ok := lstatID(p); ok {
			last = max(last, id.Mtime, id.Ctime)
		}
	}
	for start := time.Now(); time.Since(start) < 10*time.Second; {
		now, ok := s.clock.now()
		if !ok {
			t.Fatal("no file system clock")
		}
		if now > last {
			return now
		}
		runtime.Gosched()
	}
	t.Fatal("the file system's clock did not move")
	return 0
}
