package task

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/gittest"
)

func TestInitProjectIdempotent(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	p, created, err := InitProject(root)
	if err != nil || !created {
		t.Fatalf("first init: created=%v err=%v", created, err)
	}
	if p.Root != root || p.Dir != filepath.Join(root, ".orch") {
		t.Fatalf("project = %+v", p)
	}
	cfg := gittest.ReadFile(t, filepath.Join(p.Dir, "config.toml"))
	if !strings.Contains(cfg, "optional") {
		t.Fatalf("config template does not say keys are optional:\n%s", cfg)
	}
	ign := gittest.ReadFile(t, filepath.Join(p.Dir, ".gitignore"))
	for _, want := range []string{"tasks/*/.lock", "tasks/.tmp-*"} {
		if !strings.Contains(ign, want) {
			t.Fatalf(".gitignore lacks %q:\n%s", want, ign)
		}
	}
	writeFile(t, filepath.Join(p.Dir, "config.toml"), "mine = 1\n")
	_, created, err = InitProject(root)
	if err != nil || created {
		t.Fatalf("second init: created=%v err=%v", created, err)
	}
	if got := gittest.ReadFile(t, filepath.Join(p.Dir, "config.toml")); got != "mine = 1\n" {
		t.Fatalf("second init overwrote config: %q", got)
	}
	if fi, err := os.Stat(p.TasksDir()); err != nil || !fi.IsDir() {
		t.Fatalf("tasks folder: %v", err)
	}
}

func TestInitProjectOverFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, ".orch"), "")
	if _, _, err := InitProject(root); err == nil {
		t.Fatal("init over a file named .orch succeeded")
	}
}

func TestFindProject(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	deep := filepath.Join(p.Root, "a", "b", "c")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, start := range []string{p.Root, deep} {
		got, err := FindProject(start)
		if err != nil {
			t.Fatal(err)
		}
		if got.Root != p.Root || got.Dir != p.Dir {
			t.Fatalf("FindProject(%s) = %+v", start, got)
		}
	}
	_, err := FindProject(t.TempDir())
	if !errors.Is(err, ErrNoProject) || !strings.Contains(err.Error(), "orch init") {
		t.Fatalf("FindProject without .orch: %v", err)
	}
}

func TestCurrent(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	if _, err := p.Current(); !errors.Is(err, ErrNoCurrent) {
		t.Fatalf("absent: %v", err)
	}
	writeFile(t, filepath.Join(p.Dir, "current"), "  \n")
	if _, err := p.Current(); !errors.Is(err, ErrNoCurrent) {
		t.Fatalf("empty: %v", err)
	}
	writeFile(t, filepath.Join(p.Dir, "current"), "../etc\n")
	if _, err := p.Current(); !errors.Is(err, ErrBadID) {
		t.Fatalf("bad id: %v", err)
	}
	if err := p.SetCurrent("0002-x"); err != nil {
		t.Fatal(err)
	}
	if id, err := p.Current(); err != nil || id != "0002-x" {
		t.Fatalf("Current = %q, %v", id, err)
	}
	if err := p.SetCurrent("Bad"); !errors.Is(err, ErrBadID) {
		t.Fatalf("SetCurrent(Bad) = %v", err)
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	newTask(t, p, "0001-a")
	tk, err := p.Open("0001-a")
	if err != nil || tk.ID != "0001-a" || tk.Dir != filepath.Join(p.TasksDir(), "0001-a") {
		t.Fatalf("Open = %+v, %v", tk, err)
	}
	if _, err := p.Open("../x"); !errors.Is(err, ErrBadID) {
		t.Fatalf("Open(../x) = %v", err)
	}
	_, err = p.Open("0009-none")
	// The message names the folder and no command: each front end says
	// how to list the tasks in its own syntax.
	if !errors.Is(err, ErrNoTask) || !strings.Contains(err.Error(), "no folder") || strings.Contains(err.Error(), "orch ") {
		t.Fatalf("Open(missing) = %v", err)
	}
	for typed, want := range map[string]string{"0001-b": `did you mean "0001-a"?`, "0001": `did you mean "0001-a"?`} {
		if _, err := p.Open(typed); !errors.Is(err, ErrNoTask) || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%s) = %v, want %s", typed, err, want)
		}
	}
	writeFile(t, filepath.Join(p.TasksDir(), "afile"), "")
	if _, err := p.Open("afile"); !errors.Is(err, ErrNoTask) {
		t.Fatalf("Open(file) = %v", err)
	}
}

func TestCreateTask(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk, st, err := p.CreateTask("0001-add-retry", "Add retry", t0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Phase != "planning" || st.Revision != 1 || st.Task != "0001-add-retry" || !st.CreatedAt.Equal(t0) || !st.UpdatedAt.Equal(t0) {
		t.Fatalf("state = %+v", st)
	}
	if got := gittest.ReadFile(t, filepath.Join(tk.Dir, "planning", "brief.md")); got != "Add retry\n" {
		t.Fatalf("brief = %q", got)
	}
	read, err := tk.ReadState()
	if err != nil {
		t.Fatal(err)
	}
	if v := read.Actors["planning"].Values(); v["status"] != "draft" || v["round"].(interface{ String() string }).String() != "0" {
		t.Fatalf("actors = %#v", read.Actors)
	}
	evs, err := tk.Transcript()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("Add retry\n"))
	if len(evs) != 1 || evs[0].Kind != event.KindCreated || evs[0].Seq != 1 || evs[0].Prev != "" ||
		evs[0].State == nil || evs[0].State.Revision != 1 || evs[0].Data["brief_sha256"] != hex.EncodeToString(sum[:]) {
		t.Fatalf("transcript = %+v", evs)
	}
	if id, _ := p.Current(); id != "0001-add-retry" {
		t.Fatalf("current = %q", id)
	}
	mustVerify(t, tk)

	if _, _, err := p.CreateTask("0001-add-retry", "again", t0); !errors.Is(err, ErrExists) {
		t.Fatalf("second create = %v", err)
	}
	if _, _, err := p.CreateTask("Bad ID", "x", t0); !errors.Is(err, ErrBadID) {
		t.Fatalf("bad id create = %v", err)
	}
	entries, _ := os.ReadDir(p.TasksDir())
	if len(entries) != 1 {
		t.Fatalf("tasks folder holds %d entries, want 1", len(entries))
	}
}

func TestCreateTaskStraysIgnoredAndCleaned(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	newTask(t, p, "0001-a")
	// What a CreateTask that crashed half-way leaves behind.
	stray := filepath.Join(p.TasksDir(), ".tmp-0002-b-123456")
	writeFile(t, filepath.Join(stray, "planning", "brief.md"), "half")
	writeFile(t, filepath.Join(p.Dir, "current.tmp-999"), "0002-b")

	list, err := p.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != "0001-a" {
		t.Fatalf("List = %+v", list)
	}
	if _, err := p.Open(".tmp-0002-b-123456"); !errors.Is(err, ErrBadID) {
		t.Fatalf("Open(stray) = %v", err)
	}
	if err := p.CleanStrays(); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{stray, filepath.Join(p.Dir, "current.tmp-999")} {
		if _, err := os.Lstat(gone); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s not removed: %v", gone, err)
		}
	}
	if _, err := p.Open("0001-a"); err != nil {
		t.Fatalf("CleanStrays touched a real task: %v", err)
	}
	if id, _ := p.Current(); id != "0001-a" {
		t.Fatalf("current = %q", id)
	}
}

func TestCreateTaskConcurrentWithCleanStrays(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	const n = 8
	errs := make(chan error, 2*n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, _, err := p.CreateTask(fmt.Sprintf("%04d-t", i), "brief", t0)
			errs <- err
		}()
		go func() {
			defer wg.Done()
			errs <- p.CleanStrays()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	list, err := p.List()
	if err != nil || len(list) != n {
		t.Fatalf("List = %d tasks, %v", len(list), err)
	}
	for _, s := range list {
		tk, _ := p.Open(s.ID)
		mustVerify(t, tk)
	}
}

func TestCreateTaskSameIDRace(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			_, _, err := p.CreateTask("0001-same", "brief", t0)
			errs <- err
		}()
	}
	created := 0
	for range 4 {
		switch err := <-errs; {
		case err == nil:
			created++
		case !errors.Is(err, ErrExists):
			t.Fatal(err)
		}
	}
	if created != 1 {
		t.Fatalf("%d creations succeeded", created)
	}
}
