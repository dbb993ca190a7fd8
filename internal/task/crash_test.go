package task

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/gittest"
)

// TestCrashKill runs a child that commits (with moves) and appends in a
// loop, SIGKILLs it at a random moment, and checks after every kill that
// recovery leaves a verified task whose files agree with its state.
func TestCrashKill(t *testing.T) {
	t.Parallel()
	kills := 50
	if testing.Short() {
		kills = 10
	}
	p := newProject(t)
	tk := newTask(t, p, "0001-loop")
	writeFile(t, filepath.Join(tk.Dir, "work", "a", "item"), "the item\n")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	var lastRev int64
	mid := 0 // kills that landed inside a commit: recovery had something to repair
	for i := range kills {
		child := startChild(t, childCommitLoop, p, tk.ID, "ready")
		time.Sleep(time.Duration(rng.IntN(20_000)) * time.Microsecond) // a random moment, not a wait for anything
		if err := child.Process.Kill(); err != nil {                   // SIGKILL
			t.Fatal(err)
		}
		child.Wait()

		l, err := tk.Lock(context.Background(), 10*time.Second)
		if err != nil {
			t.Fatalf("kill %d: lock: %v", i, err)
		}
		rec, err := tk.Recover(time.Now())
		if err != nil {
			t.Fatalf("kill %d: recover: %v", i, err)
		}
		if rec.Repaired() {
			mid++
		}
		rep, err := tk.Verify()
		if err != nil || !rep.OK {
			t.Fatalf("kill %d: verify: %+v, %v", i, rep, err)
		}
		st, err := tk.ReadState()
		if err != nil {
			t.Fatalf("kill %d: read state: %v", i, err)
		}
		if st.Revision < lastRev {
			t.Fatalf("kill %d: revision went back from %d to %d", i, lastRev, st.Revision)
		}
		lastRev = st.Revision
		at := loopAt(st)
		other := map[string]string{"a": "b", "b": "a"}[at]
		if got := gittest.ReadFile(t, filepath.Join(tk.Dir, "work", at, "item")); got != "the item\n" {
			t.Fatalf("kill %d: item at %s = %q", i, at, got)
		}
		if _, err := os.Stat(filepath.Join(tk.Dir, "work", other, "item")); !os.IsNotExist(err) {
			t.Fatalf("kill %d: item also at %s", i, other)
		}
		entries, _ := os.ReadDir(tk.Dir)
		for _, e := range entries {
			if len(e.Name()) > len(StateFile) && e.Name()[:len(StateFile)] == StateFile {
				t.Fatalf("kill %d: temp file %s left after recovery", i, e.Name())
			}
		}
		if err := l.Unlock(); err != nil {
			t.Fatal(err)
		}
	}
	if lastRev < 2 {
		t.Fatalf("the child never committed (revision %d)", lastRev)
	}
	t.Logf("%d kills, %d inside a commit (rolled forward, torn line cut or temp file removed), final revision %d", kills, mid, lastRev)
	if mid == 0 {
		t.Errorf("none of the %d kills landed inside a commit: the test checked only idle moments", kills)
	}
}
