package task

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// reserved are the task files a move may never touch.
var reserved = [...]string{StateFile, TranscriptFile, LockFile}

// checkMovePath refuses a move path that is empty, absolute, not clean,
// leaves the task folder or touches the task's own bookkeeping files.
func checkMovePath(p string) error {
	if p == "" || p == "." || path.IsAbs(p) || strings.Contains(p, `\`) || path.Clean(p) != p ||
		p == ".." || strings.HasPrefix(p, "../") {
		return fmt.Errorf("move path %q must be a clean relative path inside the task folder", p)
	}
	first, _, _ := strings.Cut(p, "/")
	for _, r := range reserved {
		if first == r {
			return fmt.Errorf("move path %q touches %s", p, r)
		}
	}
	return nil
}

// within reports whether p is base or below it.
func within(p, base string) bool {
	return p == base || strings.HasPrefix(p, base+"/")
}

func checkMoves(moves []Move) error {
	for _, m := range moves {
		if err := checkMovePath(m.From); err != nil {
			return err
		}
		if err := checkMovePath(m.To); err != nil {
			return err
		}
		if within(m.To, m.From) || within(m.From, m.To) {
			return fmt.Errorf("move %s → %s: one path contains the other", m.From, m.To)
		}
	}
	return nil
}

// checkMovesFeasible tells, before anything is logged, whether the moves
// can be performed on the folder as it is: each From exists (or is brought
// there by an earlier move), each To is free (or vacated by an earlier
// move), and the nearest existing parent of each To is a folder.
func (t *Task) checkMovesFeasible(moves []Move) error {
	for i, m := range moves {
		produced, vacated := false, false
		for _, e := range moves[:i] {
			produced = produced || within(m.From, e.To)
			vacated = vacated || within(m.To, e.From)
		}
		if !produced {
			ok, err := exists(filepath.Join(t.Dir, m.From))
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("move %s → %s in task %s: %s does not exist", m.From, m.To, t.ID, m.From)
			}
		}
		if !vacated {
			ok, err := exists(filepath.Join(t.Dir, m.To))
			if err != nil {
				return err
			}
			if ok {
				return fmt.Errorf("move %s → %s in task %s: %s already exists", m.From, m.To, t.ID, m.To)
			}
		}
		for dir := path.Dir(m.To); dir != "."; dir = path.Dir(dir) {
			fi, err := os.Lstat(filepath.Join(t.Dir, dir))
			if err != nil {
				continue
			}
			if !fi.IsDir() {
				return fmt.Errorf("move %s → %s in task %s: %s is not a folder", m.From, m.To, t.ID, dir)
			}
			break
		}
	}
	return nil
}

// applyMoves performs the moves idempotently: a move whose From is gone
// and whose To exists was done before and is skipped. Every folder touched
// is fsynced.
func (t *Task) applyMoves(moves []Move) error {
	if err := checkMoves(moves); err != nil {
		return fmt.Errorf("task %s: %w", t.ID, err)
	}
	for _, m := range moves {
		from, to := filepath.Join(t.Dir, m.From), filepath.Join(t.Dir, m.To)
		fromOK, err := exists(from)
		if err != nil {
			return err
		}
		if !fromOK {
			toOK, err := exists(to)
			if err != nil {
				return err
			}
			if toOK {
				continue
			}
			return fmt.Errorf("move %s → %s in task %s: neither exists", m.From, m.To, t.ID)
		}
		if err := mkdirAllSync(t.Dir, path.Dir(m.To)); err != nil {
			return fmt.Errorf("move %s → %s in task %s: %w", m.From, m.To, t.ID, err)
		}
		if err := os.Rename(from, to); err != nil {
			return fmt.Errorf("move %s → %s in task %s: %w", m.From, m.To, t.ID, err)
		}
		if err := syncDir(filepath.Dir(to)); err != nil {
			return err
		}
		if filepath.Dir(from) != filepath.Dir(to) {
			if err := syncDir(filepath.Dir(from)); err != nil {
				return err
			}
		}
	}
	return nil
}
