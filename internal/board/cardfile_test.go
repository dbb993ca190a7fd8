package board

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/fileid"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/nextstep"
	"github.com/orchdev/orch/internal/task"
)

// restart empties the cards' caches in memory, as a new `orch serve`
// starts after the last one stopped (writing the cards' cache file when a
// write was waiting): only the cards' cache file is left.
func restart(s *Server) {
	s.states.flush()
	s.states = cardStates{path: s.states.path, saveEvery: s.states.saveEvery}
	s.costs = costTails{}
}

// sameCard compares what a card shows, but its ages (which move with the
// clock).
func sameCard(t *testing.T, what string, got, want Card) {
	t.Helper()
	got.Age, got.InPhase, want.Age, want.InPhase = "", "", "", ""
	if got != want {
		t.Fatalf("%s: card\n%+v\nwant (read without any cache)\n%+v", what, got, want)
	}
}

// TestCardFile: the first page of a board started again takes each card
// from the cards' cache file while the task's state.json and transcript
// are unchanged, and reads them again after any change — a transition, a
// model call appended, a same-size edit of state.json with its mtime put
// back, an edit in the clock tick of the reading on a coarse clock — so
// that a card is always what the files say. A damaged file is ignored and
// rewritten.
func TestCardFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the cards' cache keys by Linux file identities")
	}
	f := NewFixture(t)
	f.Task("c1", "first")
	f.Plan("c1", "First", "", nil)
	f.Task("c2", "second")
	f.Move("c2", lifecycle.Review)
	s, _ := f.Board(Options{})
	truth, _ := f.Board(Options{})
	truth.states.path = ""
	page := func(what string, diskHits int) {
		t.Helper()
		restart(s)
		cols, err := s.boardColumns()
		if err != nil {
			t.Fatal(err)
		}
		restart(truth)
		want, err := truth.boardColumns()
		if err != nil {
			t.Fatal(err)
		}
		for i := range cols {
			if len(cols[i].Cards) != len(want[i].Cards) {
				t.Fatalf("%s: column %s has %d cards, want %d", what, cols[i].Phase, len(cols[i].Cards), len(want[i].Cards))
			}
			for j := range cols[i].Cards {
				sameCard(t, what, cols[i].Cards[j], want[i].Cards[j])
			}
		}
		if s.states.diskHits != diskHits {
			t.Fatalf("%s: %d cards from the file, want %d", what, s.states.diskHits, diskHits)
		}
	}
	wait := func() { t.Helper(); settleBoard(t, s) }

	wait()
	page("first start", 0)
	page("started again, nothing changed", 2)

	f.Move("c1", lifecycle.PlanReview)
	tk, err := f.P.Open("c2")
	if err != nil {
		t.Fatal(err)
	}
	usd := 0.25
	if err := tk.Append(task.NewEvent(event.ModelCall{Phase: "review", Role: "reviewer", Provider: "test", Model: "m", TokensIn: 40, TokensOut: 2, CostUSD: &usd})); err != nil {
		t.Fatal(err)
	}
	wait()
	page("a transition and a model call", 0)
	page("unchanged again", 2)

	// A same-size edit of state.json by hand, its mtime put back.
	p := filepath.Join(f.Dir("c2"), task.StateFile)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(b, []byte(`"phase":"review"`), []byte(`"phase":"accept"`), 1)
	if bytes.Equal(edited, b) || len(edited) != len(b) {
		t.Fatalf("no phase review in %s", b)
	}
	if err := os.WriteFile(p, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	page("a same-size edit", 1)
	restart(s)
	if c := s.card(task.Summary{ID: "c2"}); !strings.Contains(c.Err, "state.json was changed outside orch") {
		t.Fatalf("after a same-size edit: %+v", c)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	wait()
	page("restored", 1)

	// A damaged file is ignored, and rewritten.
	path := s.states.path
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, damage := range []func([]byte) []byte{
		func(b []byte) []byte { b = bytes.Clone(b); b[len(b)-3] ^= 1; return b },
		func(b []byte) []byte { return b[:len(b)/2] },
		func(b []byte) []byte { return bytes.Replace(b, []byte("cards 1"), []byte("cards 9"), 1) },
		func([]byte) []byte { return nil },
	} {
		if err := os.WriteFile(path, damage(good), 0o644); err != nil {
			t.Fatal(err)
		}
		page("a damaged file", 0)
		if m, ok := parseCards(mustReadFile(t, path)); !ok || len(m) != 2 {
			t.Fatalf("the file was not rewritten: %d entries, %v", len(m), ok)
		}
	}
}

// TestCardFileCoarseClock: on a file system whose clock is coarse, an
// edit made in the clock tick of the reading keeps the files' identity;
// the entry the file keeps of that reading is not trusted by a board
// started again, which reads the files and shows the edit.
func TestCardFileCoarseClock(t *testing.T) {
	f := NewFixture(t)
	f.Task("c1", "coarse")
	f.Move("c1", lifecycle.Review)
	s, _ := f.Board(Options{})
	p := filepath.Join(f.Dir("c1"), task.StateFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	since, ok := s.clock.now()
	if !ok {
		t.Fatal("no file system clock")
	}
	coarse := fileid.ID{Size: int64(len(b)), Mtime: since, Ctime: since, Ino: 1, Dev: 1, Mode: 0o100644}
	lstat := func(string) (fileid.ID, bool) { return coarse, true }
	s.states.lstat = lstat
	if c := s.cardAt(task.Summary{ID: "c1"}, since, true); c.Phase != lifecycle.Review || c.Err != "" {
		t.Fatalf("first: %+v", c)
	}
	s.states.save()
	// The edit, in the reading's tick: the identity does not change.
	edited := bytes.Replace(b, []byte(`"phase":"review"`), []byte(`"phase":"accept"`), 1)
	if err := os.WriteFile(p, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	restart(s)
	s.states.lstat = lstat
	if c := s.cardAt(task.Summary{ID: "c1"}, since+int64(time.Second), true); !strings.Contains(c.Err, "state.json was changed outside orch") || s.states.diskHits != 0 {
		t.Fatalf("an edit within the reading's tick was taken from the file: %+v, %d from the file", c, s.states.diskHits)
	}
	// Read a tick after the change, the entry is kept and trusted.
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	restart(s)
	s.states.lstat = lstat
	s.cardAt(task.Summary{ID: "c1"}, since+2*int64(time.Second), true)
	s.states.save()
	restart(s)
	s.states.lstat = lstat
	if c := s.cardAt(task.Summary{ID: "c1"}, since+3*int64(time.Second), true); c.Phase != lifecycle.Review || c.Err != "" || s.states.diskHits != 1 {
		t.Fatalf("an entry read after the files' last change: %+v, %d from the file", c, s.states.diskHits)
	}
}

// TestCardsRoundTrip: what the cards' cache file is given is read back
// the same; anything but the file written is refused.
func TestCardsRoundTrip(t *testing.T) {
	usd := 1.5
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	m := map[string]*diskCard{
		"t1": {State: fileid.ID{Size: 1, Mtime: 2, Ctime: 3, Ino: 4, Dev: 5, Mode: 0o100644}, Since: 9,
			St: task.State{Phase: lifecycle.Codegen, Revision: 4, Task: "t1", CreatedAt: at, UpdatedAt: at.Add(time.Minute),
				Actors: task.Actors{lifecycle.Codegen: {Status: lifecycle.StatusRunning, PID: 42, Extra: map[string]json.RawMessage{"x": json.RawMessage(`[1]`)}}}},
			Pending: &task.Pending{Seq: 7, Kind: event.KindTransition, Revision: 4, Behind: 3},
			Cost:    agent.SumCosts([]event.ModelCall{{Phase: "codegen", TokensIn: 3, CostUSD: &usd}}),
			Entered: Span{Phase: lifecycle.Codegen, Start: at}},
	}
	data, err := encodeCards(m)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := parseCards(data)
	if !ok || len(got) != 1 || got["t1"].St.Actors[lifecycle.Codegen].PID != 42 || *got["t1"].Pending != *m["t1"].Pending ||
		got["t1"].Cost.Total != m["t1"].Cost.Total || !got["t1"].Entered.Start.Equal(at) || got["t1"].State != m["t1"].State {
		t.Fatalf("round trip: %+v, %v", got["t1"], ok)
	}
	bad := map[string]*diskCard{"../x": m["t1"]}
	if data, err := encodeCards(bad); err != nil {
		t.Fatal(err)
	} else if _, ok := parseCards(data); ok {
		t.Fatal("an entry with an invalid task id was accepted")
	}
}

func mustReadFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// settleBoard returns once the board's file system clock is past the
// ctime of every file of every task: readings from then on are not racy.
func settleBoard(t *testing.T, s *Server) {
	t.Helper()
	var newest int64
	_ = filepath.Walk(s.orch.Project.TasksDir(), func(path string, _ os.FileInfo, err error) error {
		if err == nil {
			if id, err := fileid.Lstat(path); err == nil {
				newest = max(newest, id.Ctime)
			}
		}
		return nil
	})
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if now, ok := s.clock.now(); ok && now > newest {
			return
		}
	}
	t.Fatal("the file system's clock did not move in 10 s")
}

// TestCardDecisionFromTail: a card decides from the gate events it read
// of the transcript's tail (evidence.Cache.UseRecords) — in memory, from
// the cards' cache file, after an edit the gates did not judge, and after
// a regression appended to the transcript — exactly what `orch status`
// decides reading the transcript itself.
func TestCardDecisionFromTail(t *testing.T) {
	f := NewFixture(t)
	f.Task("a", "accept me")
	f.ToAccept("a", "Accept me")
	f.Task("r", "test me")
	f.ToTest("r", "Test me")
	f.Task("v", "review me")
	a := "yes"
	f.Plan("v", "Review me", "Shall we greet?", &a)
	f.Next("v")
	f.Write("v", "review/plan-review.json", `{"ok": true, "blocked": false, "reviewers": [{"id": "architecture", "ok": true, "severity": "info", "summary": "fine"}]}`)
	f.Next("v")
	f.Write("v", "code/files/hello.txt", "hello\n")
	f.Write("v", "code/diff.patch", Hello)
	f.Next("v") // → review
	f.Write("v", "review/code-review.json", `{"ok": true, "issues": []}`)
	s, _ := f.Board(Options{})
	check := func(what string, restarted bool) {
		t.Helper()
		if restarted {
			restart(s)
		}
		settleBoard(t, s)
		cols, err := s.boardColumns() // and the cards' cache file written
		if err != nil {
			t.Fatal(err)
		}
		cards := map[string]Card{}
		for _, col := range cols {
			for _, c := range col.Cards {
				cards[c.ID] = c
			}
		}
		if restarted && s.states.diskHits == 0 {
			t.Fatalf("%s: no card from the cards' cache file", what)
		}
		for _, id := range []string{"a", "r", "v"} {
			got := cards[id]
			v, err := f.O.Status(id)
			if err != nil {
				t.Fatal(err)
			}
			step := nextstep.For(v, nextstep.OpenQuestionOf(artifact.LoadPlan(f.Dir(id)), v.Phase))
			words, human := nextstep.Waits(step, v)
			if got.Err != "" || got.Phase != v.Phase || got.Waits != words || got.Human != human || got.Why != step.Why {
				t.Fatalf("%s, task %s: card %+v\nwant phase %s, %q (human %v), why %q", what, id, got, v.Phase, words, human, step.Why)
			}
		}
	}
	check("first", false)
	check("again", false)
	check("restarted", true)
	check("restarted again", true)
	before := s.card(task.Summary{ID: "v"}).Why
	// The patch edited after the gates judged it.
	for _, id := range []string{"a", "r", "v"} {
		f.Write(id, "code/diff.patch", strings.Replace(Hello, "+hello", "+hallo", 1))
		f.Write(id, "code/files/hello.txt", "hallo\n")
	}
	check("an edited patch", false)
	if after := s.card(task.Summary{ID: "v"}).Why; after == before {
		t.Fatalf("the edit did not change the decision: %q", after)
	}
	check("an edited patch, restarted", true)
	// A failing report sends r back to codegen: a regression appended.
	f.Write("r", "test/report.json", `{"status": "completed", "overall_pass": false, "summary": {"passed": 0, "failed": 1, "skipped": 0, "error": 0}, "suites": []}`)
	f.Next("r")
	check("a regression", false)
	check("a regression, restarted", true)
}

// TestCardFileSpaced: a board refreshed often writes the cards' cache
// file at most every saveEvery; a write that waits is made when the
// board stops (Close), so that the next start finds every card read.
func TestCardFileSpaced(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the cards' cache keys by Linux file identities")
	}
	f := NewFixture(t)
	f.Task("s1", "spaced")
	s, _ := f.Board(Options{})
	s.states.saveEvery = time.Hour
	read := func() map[string]*diskCard {
		t.Helper()
		b, err := os.ReadFile(s.states.path)
		if err != nil {
			t.Fatal(err)
		}
		m, ok := parseCards(b)
		if !ok {
			t.Fatal("the cards' cache file does not parse")
		}
		return m
	}
	if _, err := s.boardColumns(); err != nil {
		t.Fatal(err)
	}
	first := read()["s1"]
	if first == nil {
		t.Fatal("the first page wrote no entry")
	}
	f.Move("s1", lifecycle.PlanReview)
	tickPast(t, s, filepath.Join(f.Dir("s1"), task.StateFile), filepath.Join(f.Dir("s1"), task.TranscriptFile))
	if _, err := s.boardColumns(); err != nil {
		t.Fatal(err)
	}
	if d := read()["s1"]; d == nil || d.St.Phase != lifecycle.Planning {
		t.Fatalf("written again within saveEvery: %+v", d)
	}
	if s.states.timer == nil {
		t.Fatal("no write waits")
	}
	s.Close()
	if d := read()["s1"]; d == nil || d.St.Phase != lifecycle.PlanReview {
		t.Fatalf("the waiting write was not made when the board stopped: %+v", d)
	}
}
