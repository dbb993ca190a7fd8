package board

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/fileid"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

// TestCardStateTrusted: a cached committed state is trusted only when
// both files' identities are unchanged and both were last changed before
// the reading began (fileid's rule, tested in internal/fileid); a
// transcript missing then and now has nothing to change.
func TestCardStateTrusted(t *testing.T) {
	const since = 1000
	old := fileid.ID{Size: 10, Mtime: 900, Ctime: 900, Ino: 7, Dev: 1, Mode: 0o100644}
	racy := withID(old, func(id *fileid.ID) { id.Mtime, id.Ctime = since, since })
	for _, tc := range []struct {
		name       string
		cachedLog  fileid.ID
		state, log fileid.ID
		want       bool
	}{
		{"unchanged, older than the reading", old, old, old, true},
		{"transcript missing then and now", fileid.ID{}, old, fileid.ID{}, true},
		{"transcript created since", fileid.ID{}, old, old, false},
		{"transcript removed since", old, old, fileid.ID{}, false},
		{"state.json changed", old, withID(old, func(id *fileid.ID) { id.Size++ }), old, false},
		{"transcript changed", old, old, withID(old, func(id *fileid.ID) { id.Ino++ }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &cardState{state: old, log: tc.cachedLog, since: since}
			if got := e.trusted(tc.state, tc.log); got != tc.want {
				t.Fatalf("trusted = %v, want %v", got, tc.want)
			}
			// The cards' cache file's entries follow the same rule.
			d := &diskCard{State: old, Log: tc.cachedLog, Since: since}
			if got := d.trusted(tc.state, tc.log); got != tc.want {
				t.Fatalf("file entry trusted = %v, want %v", got, tc.want)
			}
		})
	}
	// Either file changed in the clock tick the reading began: not trusted.
	if e := (&cardState{state: racy, log: old, since: since}); e.trusted(racy, old) {
		t.Fatal("racy state.json trusted")
	}
	if e := (&cardState{state: old, log: racy, since: since}); e.trusted(old, racy) {
		t.Fatal("racy transcript trusted")
	}
	if d := (&diskCard{State: racy, Log: old, Since: since}); d.trusted(racy, old) {
		t.Fatal("racy state.json trusted from the file")
	}
	if d := (&diskCard{State: old, Log: racy, Since: since}); d.trusted(old, racy) {
		t.Fatal("racy transcript trusted from the file")
	}
}

func withID(id fileid.ID, change func(*fileid.ID)) fileid.ID {
	change(&id)
	return id
}

// TestCardCache: a refresh takes a card's committed state from the cards'
// cache while state.json and the transcript are unchanged, and reads it
// again after any change: a transition, a model call appended, a
// same-size edit of state.json by hand (with its mtime put back), and —
// on a file system whose clock is coarse, where such an edit keeps the
// file's identity — an edit made in the same clock tick as the reading.
func TestCardCache(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the cards' cache keys by Linux file identities")
	}
	f := NewFixture(t)
	f.Task("c1", "cached card")
	f.Plan("c1", "Cached card", "", nil)
	s, _ := f.Board(Options{})
	card := func() Card {
		t.Helper()
		since, ok := s.clock.now()
		if !ok {
			t.Fatal("no file system clock")
		}
		return s.cardAt(task.Summary{ID: "c1"}, since, true)
	}
	counts := func(what string, hits, misses int) {
		t.Helper()
		if s.states.hits != hits || s.states.misses != misses {
			t.Fatalf("%s: %d hits and %d misses, want %d and %d", what, s.states.hits, s.states.misses, hits, misses)
		}
	}

	first := card()
	if first.Phase != lifecycle.Planning || first.Err != "" {
		t.Fatalf("first card: %+v", first)
	}
	counts("first read", 0, 1)
	if again := card(); again != first {
		t.Fatalf("from the cache: %+v, want %+v", again, first)
	}
	counts("unchanged", 1, 1)

	// A transition (state.json replaced, the transcript appended).
	f.Move("c1", lifecycle.Review)
	if c := card(); c.Phase != lifecycle.Review || c.Err != "" {
		t.Fatalf("after the move: %+v", c)
	}
	counts("moved", 1, 2)

	// A model call appended: the cost is read from the new tail.
	tk, err := f.P.Open("c1")
	if err != nil {
		t.Fatal(err)
	}
	usd := 0.25
	if err := tk.Append(task.NewEvent(event.ModelCall{Phase: "review", Role: "reviewer", Provider: "test", Model: "m", TokensIn: 40, TokensOut: 2, CostUSD: &usd})); err != nil {
		t.Fatal(err)
	}
	if c := card(); c.Tokens != 42 || c.Cost == "" {
		t.Fatalf("after a model call: %+v", c)
	}
	counts("model call", 1, 3)

	// A same-size edit of state.json by hand, its mtime put back: the
	// phase review becomes accept (as long), which the transcript does
	// not explain; ctime moved, so it is read again.
	p := filepath.Join(f.Dir("c1"), task.StateFile)
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
	if c := card(); c.Phase != lifecycle.Review || !strings.Contains(c.Err, "state.json was changed outside orch") {
		t.Fatalf("after a same-size edit: %+v", c)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}

	// A coarse clock: the files keep their identity through an edit made
	// in the tick the card was read in (mtime and ctime equal to the
	// reading's time). The entry made then is not trusted: the edit shows.
	since, _ := s.clock.now()
	coarse := fileid.ID{Size: int64(len(b)), Mtime: since, Ctime: since, Ino: 1, Dev: 1, Mode: 0o100644}
	s.states.lstat = func(string) (fileid.ID, bool) { return coarse, true }
	if c := s.cardAt(task.Summary{ID: "c1"}, since, true); c.Phase != lifecycle.Review || c.Err != "" {
		t.Fatalf("restored: %+v", c)
	}
	if err := os.WriteFile(p, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if c := s.cardAt(task.Summary{ID: "c1"}, since+int64(time.Second), true); !strings.Contains(c.Err, "state.json was changed outside orch") {
		t.Fatalf("an edit within the reading's tick was taken from the cache: %+v", c)
	}
	// Read again a tick later, the entry is trusted.
	hits := s.states.hits
	s.cardAt(task.Summary{ID: "c1"}, since+2*int64(time.Second), true)
	if s.states.hits != hits+1 {
		t.Fatalf("an entry stamped after the files' last change was not trusted")
	}

	// Without a clock nothing is cached.
	s.states.lstat = nil
	misses := s.states.misses
	s.cardAt(task.Summary{ID: "c1"}, 0, false)
	s.cardAt(task.Summary{ID: "c1"}, 0, false)
	if s.states.misses != misses+2 {
		t.Fatal("cached without a clock")
	}
}
