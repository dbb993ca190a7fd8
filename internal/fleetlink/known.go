package fleetlink

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/task"
)

// LocalRef is a clone's copy of task id's ref refs/orch/tasks/<id> of the
// shared remote: orch-fleet submit writes it when it hands the task over,
// orch-fleet pull and every worker's step when they fetch it. It is the
// same name as the fleet's own (fleet.LocalRef; a test of fleet/fleetcli
// keeps them equal).
func LocalRef(id string) string { return "refs/remotes/orch-fleet/tasks/" + id }

// Known reports whether the clone at root knows task id as the fleet's:
// whether it has LocalRef(id). This is how orch's commands tell a fleet
// task from a local one (docs/fleet.md, "orch's commands and the fleet").
// It reads the ref where git keeps it, without starting git: the loose
// ref file in the repository's common git folder, else packed-refs; only
// a repository whose refs are in a reftable asks git.
func Known(root, id string) (bool, error) {
	if err := task.ValidID(id); err != nil {
		return false, err
	}
	common, err := commonDir(root)
	if err != nil {
		return askGit(root, id)
	}
	ref := LocalRef(id)
	fi, err := os.Lstat(filepath.Join(common, filepath.FromSlash(ref)))
	switch {
	case err == nil:
		return fi.Mode().IsRegular(), nil
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return false, fmt.Errorf("look for %s: %w", ref, err)
	}
	if _, err := os.Stat(filepath.Join(common, "reftable")); err == nil {
		return askGit(root, id)
	}
	data, err := os.ReadFile(filepath.Join(common, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look for %s: %w", ref, err)
	}
	return packed(data, ref), nil
}

// packed reports whether the packed-refs file data lists ref.
func packed(data []byte, ref string) bool {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		if _, name, ok := strings.Cut(line, " "); ok && name == ref {
			return true
		}
	}
	return false
}

// commonDir is the common git folder of the work tree at root: root/.git,
// or for a linked work tree the folder its .git file names and that
// folder's commondir.
func commonDir(root string) (string, error) {
	dotgit := filepath.Join(root, ".git")
	fi, err := os.Lstat(dotgit)
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		return dotgit, nil
	}
	data, err := os.ReadFile(dotgit)
	if err != nil {
		return "", err
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
	if !ok {
		return "", fmt.Errorf("%s: not a gitdir link", dotgit)
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	cd, err := os.ReadFile(filepath.Join(dir, "commondir"))
	if errors.Is(err, fs.ErrNotExist) {
		return dir, nil
	}
	if err != nil {
		return "", err
	}
	c := strings.TrimSpace(string(cd))
	if !filepath.IsAbs(c) {
		c = filepath.Join(dir, c)
	}
	return c, nil
}

// askGit asks git whether the clone has the task's local ref.
func askGit(root, id string) (bool, error) {
	cmd := exec.CommandContext(context.Background(), "git", "rev-parse", "--verify", "--quiet", LocalRef(id))
	cmd.Dir = root
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		return false, nil
	default:
		return false, fmt.Errorf("git rev-parse %s: %w", LocalRef(id), err)
	}
}

// NotHere is the refusal to run a phase's work (what: an agent, a test
// run, code or an artifact handed in) on this clone's copy of fleet task
// id: the fleet's workers run its phases, and work done on the copy would
// never reach its workflow (docs/fleet.md, "orch's commands and the
// fleet"). Exit 3, with where to look instead.
func NotHere(id, what string) *exit.Error {
	return exit.New(exit.ErrRefused, "task %s is in the fleet: its workflow runs %s on the fleet's workers, not on this clone's copy", id, what).
		WithHint("`orch status --task %s` shows where the fleet has it; `orch pull %s` brings its folder here", id, id)
}
