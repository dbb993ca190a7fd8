//go:build unix

package task

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// noBlock fails the test when fn does not return within a few seconds: a
// reader blocked on a named pipe would never return.
func noBlock(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s blocked on a named pipe", what)
	}
}

func fifo(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
}

// A named pipe where state.json or the transcript should be is refused by
// the readers (status, list, log), never waited on.
func TestReadersRefuseNamedPipes(t *testing.T) {
	p := newProject(t)
	tk := newTask(t, p, "0001-a")
	state := filepath.Join(tk.Dir, StateFile)
	good, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	fifo(t, state)
	noBlock(t, "ReadState", func() {
		if _, err := tk.ReadState(); err == nil || !strings.Contains(err.Error(), "a named pipe") {
			t.Errorf("ReadState = %v, want a refusal naming a named pipe", err)
		}
	})
	noBlock(t, "CommittedState", func() {
		if _, _, err := tk.CommittedState(); err == nil {
			t.Errorf("CommittedState: no error")
		}
	})
	noBlock(t, "List", func() {
		if sums, err := p.List(); err != nil || len(sums) != 1 || !strings.Contains(sums[0].Err, "a named pipe") {
			t.Errorf("List = %+v, %v; want the task listed with the refusal", sums, err)
		}
	})
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	writeFile(t, state, string(good))

	fifo(t, filepath.Join(tk.Dir, TranscriptFile))
	noBlock(t, "Transcript", func() {
		if _, err := tk.Transcript(); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Transcript = %v, want a refusal", err)
		}
	})
	noBlock(t, "CommittedState with a pipe for a transcript", func() {
		if st, _, err := tk.CommittedState(); err != nil || st.Revision != 1 {
			t.Errorf("CommittedState = %+v, %v; want state.json (the log is for verify to report)", st, err)
		}
	})
	noBlock(t, "List with a pipe for a transcript", func() {
		if sums, err := p.List(); err != nil || len(sums) != 1 || sums[0].Err != "" {
			t.Errorf("List = %+v, %v", sums, err)
		}
	})
}
