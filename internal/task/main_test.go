package task

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// Child modes: the test binary re-executes itself with envChild set to run
// one of these instead of the tests.
const (
	envChild   = "ORCH_TASK_TEST_CHILD"
	envProject = "ORCH_TASK_TEST_PROJECT"
	envTask    = "ORCH_TASK_TEST_TASK"

	childHoldLock   = "holdlock"
	childCommitLoop = "commitloop"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envChild); mode != "" {
		if err := runChild(mode); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runChild(mode string) error {
	p, err := FindProject(os.Getenv(envProject))
	if err != nil {
		return err
	}
	tk, err := p.Open(os.Getenv(envTask))
	if err != nil {
		return err
	}
	switch mode {
	case childHoldLock:
		l, err := tk.Lock(context.Background(), 0)
		if err != nil {
			return err
		}
		defer l.Unlock()
		fmt.Println("locked")
		// Hold the lock until the parent kills us or closes stdin.
		buf := make([]byte, 1)
		os.Stdin.Read(buf)
		return nil
	case childCommitLoop:
		return commitLoop(tk)
	}
	return fmt.Errorf("unknown child mode %q", mode)
}

// commitLoop commits forever, moving work/item between work/a and work/b
// and recording where it is in actors.loop.at; every third step it also
// appends a non-state event.
func commitLoop(tk *Task) error {
	l, err := tk.Lock(context.Background(), 10*time.Second)
	if err != nil {
		return err
	}
	defer l.Unlock()
	if _, err := tk.Recover(time.Now()); err != nil {
		return err
	}
	fmt.Println("ready")
	for i := 0; ; i++ {
		st, err := tk.ReadState()
		if err != nil {
			return err
		}
		at := loopAt(st)
		to := map[string]string{"a": "b", "b": "a"}[at]
		next := st
		next.Revision++
		next.Actors = actorsJSON(fmt.Sprintf(`{"loop": {"at": %q, "i": %d}}`, to, i))
		ev := Event{Kind: "transition", Data: map[string]any{"i": i},
			Moves: []Move{{From: "work/" + at + "/item", To: "work/" + to + "/item"}}}
		if err := tk.Commit(ev, next); err != nil {
			return err
		}
		if i%3 == 0 {
			if err := tk.Append(Event{Kind: "model_call", Data: map[string]any{"i": i, "text": "some output"}}); err != nil {
				return err
			}
		}
	}
}

// loopAt is where the commit loop's state says work/?/item is.
func loopAt(st State) string {
	if at, ok := st.Actors["loop"].Values()["at"].(string); ok {
		return at
	}
	return "a"
}
