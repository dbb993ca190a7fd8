package gitx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func init() {
	helperRoles["sync-paths"] = helperSyncPaths
	helperRoles["git-kill-parent"] = helperGitKillParent
}

// cutReport is what helperGitKillParent writes once the real git it ran
// has exited.
type cutReport struct {
	Stdin    string `json:"stdin"`     // "pipe" or "file"
	Buffered int    `json:"buffered"`  // bytes git could read when orch was killed
	PipeSize int    `json:"pipe_size"` // the pipe's capacity, for a pipe
	Exit     int    `json:"exit"`
	Stderr   string `json:"stderr"`
	Err      string `json:"err"`
}

// helperSyncPaths is orch: it runs SyncPaths as an accept does after its
// branch move, with git replaced by helperGitKillParent.
func helperSyncPaths() int {
	list, err := os.ReadFile(os.Getenv("GITX_TEST_PATHS"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r := &Repo{Dir: os.Getenv("GITX_TEST_DIR"), Env: []string{"GITX_TEST_ROLE=git-kill-parent"}}
	paths := strings.Split(strings.TrimSuffix(string(list), "\x00"), "\x00")
	res, err := r.SyncPaths(context.Background(), os.Getenv("GITX_TEST_OLD"), os.Getenv("GITX_TEST_NEW"), paths)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("synced %d paths, left %d\n", len(res.Updated), len(res.Left))
	return 0
}

// helperGitKillParent is git for helperSyncPaths. It runs the real git
// ($GITX_TEST_REAL_GIT), except for the subcommand $GITX_TEST_CUT: there it
// first waits until its standard input holds all orch will write before
// orch blocks (a pipe's whole capacity; a file is complete already), kills
// orch (SIGKILL, as the OOM killer would) and then runs the real git on
// that input, which outlives orch in its own process group, and reports
// to $GITX_TEST_REPORT.
func helperGitKillParent() int {
	real := os.Getenv("GITX_TEST_REAL_GIT")
	args := os.Args[1:]
	if !slices.Contains(args, os.Getenv("GITX_TEST_CUT")) {
		err := syscall.Exec(real, append([]string{"git"}, args...), os.Environ())
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var rep cutReport
	write := func() int {
		data, _ := json.Marshal(rep)
		path := os.Getenv("GITX_TEST_REPORT")
		if err := os.WriteFile(path+".tmp", data, 0o644); err != nil {
			return 1
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			return 1
		}
		return 0
	}
	var st unix.Stat_t
	if err := unix.Fstat(0, &st); err != nil {
		rep.Err = err.Error()
		return write()
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		rep.Stdin = "pipe"
		size, err := unix.FcntlInt(0, unix.F_GETPIPE_SZ, 0)
		if err != nil {
			rep.Err = err.Error()
			return write()
		}
		rep.PipeSize = size
		// There is no event for a full pipe: look until it is (TIOCINQ
		// is FIONREAD, the bytes a read would get).
		for deadline := time.Now().Add(time.Minute); rep.Buffered < size; time.Sleep(time.Millisecond) {
			if rep.Buffered, err = unix.IoctlGetInt(0, unix.TIOCINQ); err != nil || time.Now().After(deadline) {
				rep.Err = fmt.Sprintf("the pipe never filled: %d of %d bytes (%v)", rep.Buffered, size, err)
				return write()
			}
		}
	case unix.S_IFREG:
		rep.Stdin = "file"
		rep.Buffered = int(st.Size)
	default:
		rep.Err = fmt.Sprintf("standard input is neither a pipe nor a file (mode %o)", st.Mode)
		return write()
	}
	if err := unix.Kill(os.Getppid(), unix.SIGKILL); err != nil {
		rep.Err = "kill orch: " + err.Error()
		return write()
	}
	cmd := exec.Command(real, args...)
	cmd.Stdin = os.Stdin
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	rep.Stderr = stderr.String()
	if err != nil {
		rep.Exit = -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			rep.Exit = ee.ExitCode()
		}
		rep.Err = err.Error()
	}
	return write()
}

// TestSyncKilledWhileFeedingGit kills orch in SyncPaths while it gives
// `git update-index --index-info` more entries than a pipe holds (about
// 100 KB; the git outlives orch, as in TestKillWhileGitRuns of
// internal/landing). Fed through a pipe, git read the first 64 KiB, then
// end of input in the middle of a path, and wrote the cut path into the
// user's index as an entry of its own, beside 65 entries moved to the new
// commit and 35 left on the old one. Given as a file complete before git
// starts, the input is all or nothing: the index holds exactly the
// entries of one commit and no other path, and the next SyncPaths (the
// recovery of docs/git-effects.md) brings files and index to the new
// commit.
func TestSyncKilledWhileFeedingGit(t *testing.T) {
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := newRepo(t)
	// 100 records of exactly 1,000 bytes ("100644 <sha> 0\t<path>\x00"):
	// 65,536 and 4,096 bytes, the usual pipe capacities, end inside a path.
	const n = 100
	writeFile(t, r, "seed", "seed\n")
	oldC := commitAll(t, r, "seed")
	plen := 1000 - len("100644  0\t\x00") - len(oldC)
	dirs := strings.Repeat("d"+strings.Repeat("a", 199)+"/", 4)
	paths := make([]string, n)
	for i := range paths {
		name := fmt.Sprintf("f%03d-", i)
		paths[i] = dirs + name + strings.Repeat("x", plen-len(dirs)-len(name))
		writeFile(t, r, paths[i], fmt.Sprintf("old %d\n", i))
	}
	oldC = commitAll(t, r, "old")
	for i, p := range paths {
		writeFile(t, r, p, fmt.Sprintf("new %d\n", i))
	}
	newC := commitAll(t, r, "new")
	// The state right after accept's branch move: HEAD on the new commit,
	// the index and files still the old one's.
	runGit(t, r.Dir, "checkout", "-q", oldC, "--", ".")
	want := map[string][2]string{} // path -> old and new "mode sha"
	oldE, newE := indexOf(t, r), map[string]string{}
	for _, e := range lsTree(t, r, newC) {
		newE[e.Path] = e.Mode + " " + e.SHA
	}
	for p, e := range oldE {
		want[p] = [2]string{e, newE[p]}
	}

	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "git")); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(t.TempDir(), "paths")
	if err := os.WriteFile(list, []byte(strings.Join(paths, "\x00")), 0o644); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GITX_TEST_ROLE=sync-paths", "GITX_TEST_DIR="+r.Dir, "GITX_TEST_PATHS="+list,
		"GITX_TEST_OLD="+oldC, "GITX_TEST_NEW="+newC,
		"GITX_TEST_REAL_GIT="+realGit, "GITX_TEST_CUT=update-index", "GITX_TEST_REPORT="+report)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("orch was not killed in git update-index (%v):\n%s", err, out)
	}
	var rep cutReport
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		data, err := os.ReadFile(report)
		if err == nil {
			if err := json.Unmarshal(data, &rep); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the git that outlived orch never reported")
		}
	}
	t.Logf("git's input: a %s, %d bytes readable when orch was killed (pipe capacity %d)", rep.Stdin, rep.Buffered, rep.PipeSize)
	if rep.Err != "" || rep.Exit != 0 {
		t.Fatalf("git update-index: exit %d: %s\n%s", rep.Exit, rep.Err, rep.Stderr)
	}

	// All or nothing: no path but the repository's, every entry of one
	// commit.
	var atOld, atNew int
	for p, e := range indexOf(t, r) {
		w, ok := want[p]
		switch {
		case !ok:
			t.Errorf("the index holds %.40q… (%d bytes), a path orch never wrote: git read a cut record", p, len(p))
		case w[0] == w[1]:
		case e == w[0]:
			atOld++
		case e == w[1]:
			atNew++
		}
	}
	if atOld != 0 && atNew != 0 {
		t.Errorf("git applied part of the input: %d entries on the new commit, %d on the old", atNew, atOld)
	}

	// The recovery finishes the job.
	if _, err := r.SyncPaths(testCtx(t), oldC, newC, paths); err != nil {
		t.Fatal(err)
	}
	got := indexOf(t, r)
	if len(got) != len(newE) {
		t.Errorf("after the recovery the index has %d entries, want the new commit's %d", len(got), len(newE))
	}
	for p, e := range newE {
		if got[p] != e {
			t.Errorf("after the recovery %.40q… is %q in the index, want %q", p, got[p], e)
		}
	}
	for i, p := range paths {
		if data := readFile(t, r, p); data != fmt.Sprintf("new %d\n", i) {
			t.Errorf("after the recovery file %d holds %q", i, data)
		}
	}
}

// indexOf returns the stage-0 entries of r's index as "mode sha" by path.
func indexOf(t *testing.T, r *Repo) map[string]string {
	t.Helper()
	out, err := gitOut(r.Dir, nil, "ls-files", "-s", "-z")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := parseLsFilesStageZ([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	res := map[string]string{}
	for _, e := range entries {
		res[e.Path] = e.Mode + " " + e.SHA
	}
	return res
}

// lsTree returns the blobs of commit c.
func lsTree(t *testing.T, r *Repo, c string) []TreeEntry {
	t.Helper()
	out, err := gitOut(r.Dir, nil, "ls-tree", "-r", "-z", "--full-tree", c)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := parseLsTreeZ([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	return entries
}
