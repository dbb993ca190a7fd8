package task

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/orchdev/orch/internal/durable"
)

// checkMovePath refuses a move path that is empty, absolute, not clean,
// leaves the task folder or touches the task's own bookkeeping files.
func checkMovePath(p string) error {
	if p == "" || p == "." || path.IsAbs(p) || strings.Contains(p, `\`) || path.Clean(p) != p ||
		p == ".." || strings.HasPrefix(p, "../") {
		return fmt.Errorf("move path %q must be a clean relative path inside the task folder", p)
	}
	first, _, _ := strings.Cut(p, "/")
	switch first {
	case StateFile, TranscriptFile, LockFile:
		return fmt.Errorf("move path %q touches %s", p, first)
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
// move), and the nearest existing parent of each To is a folder. Paths are
// resolved inside the task folder: a symlink cannot lead out of it.
func (t *Task) checkMovesFeasible(moves []Move) error {
	return t.eachMove(moves, func(root root, i int, m Move) error {
		produced, vacated := false, false
		for _, e := range moves[:i] {
			produced = produced || within(m.From, e.To)
			vacated = vacated || within(m.To, e.From)
		}
		if !produced {
			ok, err := rootExists(root, m.From)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("%s does not exist", m.From)
			}
		}
		for dir := path.Dir(m.To); dir != "."; dir = path.Dir(dir) {
			fi, err := root.Stat(dir)
			if err != nil {
				continue
			}
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a folder", dir)
			}
			break
		}
		if !vacated {
			ok, err := rootExists(root, m.To)
			if err != nil {
				return err
			}
			if ok {
				return fmt.Errorf("%s already exists", m.To)
			}
		}
		return nil
	})
}

// applyMoves performs the moves idempotently: a move whose From is gone
// and whose To exists was done before and is skipped. Paths are resolved
// inside the task folder. The first error is returned at once.
//
// Moves are done in order, so every move before the last one found done
// was done too, even when its From is there again: a later move of the
// same event put a new file there (a phase's re-run archives planning/x
// and then moves its staged planning/x in). Such a move is not redone:
// that would archive the new file and lose the staged one.
func (t *Task) applyMoves(moves []Move) error {
	if err := checkMoves(moves); err != nil {
		return fmt.Errorf("task %s: %w", t.ID, err)
	}
	done := -1
	if err := t.eachMove(moves, func(root root, i int, m Move) error {
		ok, err := foundDone(root, moves[:i], m)
		if ok {
			done = i
		}
		return err
	}); err != nil {
		return err
	}
	return t.eachMove(moves, func(root root, i int, m Move) error {
		if i < done {
			return syncMove(root, m)
		}
		return applyMove(root, m)
	})
}

// foundDone reports whether m, preceded by earlier, was done: its From is
// gone and its To is there. A From that an earlier move brings is no
// evidence (it is gone before that move too).
func foundDone(r root, earlier []Move, m Move) (bool, error) {
	for _, e := range earlier {
		if within(m.From, e.To) {
			return false, nil
		}
	}
	fromOK, err := rootExists(r, m.From)
	if err != nil || fromOK {
		return false, err
	}
	return rootExists(r, m.To)
}

// eachMove calls fn for each move in turn with the task folder opened as a
// root, inside which paths are resolved (a symlink cannot lead out of it);
// the first error stops it, naming the move.
func (t *Task) eachMove(moves []Move, fn func(root root, i int, m Move) error) error {
	if len(moves) == 0 {
		return nil
	}
	r, err := t.fsys().OpenRoot(t.Dir)
	if err != nil {
		return fmt.Errorf("task %s: %w", t.ID, err)
	}
	defer r.Close()
	for i, m := range moves {
		if err := fn(r, i, m); err != nil {
			return fmt.Errorf("move %s → %s in task %s: %w", m.From, m.To, t.ID, err)
		}
	}
	return nil
}

// applyMove renames m.From to m.To, creating To's missing parents, then
// fsyncs every folder on the way to To (each holds an entry the move may
// have created) and From's folder (which lost one). A move found done is
// fsynced the same way: an earlier attempt may have failed in an fsync, so
// the entries it made are not known to be durable. From's folder is skipped
// when a later move took it away; that move fsyncs its own folders.
func applyMove(r root, m Move) error {
	fromOK, err := rootExists(r, m.From)
	if err != nil {
		return err
	}
	if fromOK {
		if err := rootMkdirAll(r, path.Dir(m.To)); err != nil {
			return err
		}
		if err := r.Rename(m.From, m.To); err != nil {
			return err
		}
	} else {
		toOK, err := rootExists(r, m.To)
		if err != nil {
			return err
		}
		if !toOK {
			return fmt.Errorf("neither exists")
		}
	}
	return syncMove(r, m)
}

// syncMove fsyncs the folders of a move done: every folder on the way to
// To, and From's folder while it exists.
func syncMove(r root, m Move) error {
	dirs := []string{"."}
	for _, part := range strings.Split(path.Dir(m.To), "/") {
		if part != "." {
			dirs = append(dirs, path.Join(dirs[len(dirs)-1], part))
		}
	}
	if from := path.Dir(m.From); !slices.Contains(dirs, from) {
		ok, err := rootExists(r, from)
		if err != nil {
			return err
		}
		if ok {
			dirs = append(dirs, from)
		}
	}
	for _, d := range dirs {
		if err := rootSyncDir(r, d); err != nil {
			return err
		}
	}
	return nil
}

// rootExists reports whether name exists below root (a final symlink is
// not followed).
func rootExists(r root, name string) (bool, error) {
	_, err := r.Lstat(name)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return false, nil
	}
	return false, err
}

// rootMkdirAll creates dir below root with its missing parents; applyMove
// fsyncs them. Existing folders are not touched.
func rootMkdirAll(r root, dir string) error {
	if dir == "." {
		return nil
	}
	cur := "."
	for _, part := range strings.Split(dir, "/") {
		next := path.Join(cur, part)
		fi, err := r.Stat(next)
		switch {
		case err == nil && !fi.IsDir():
			return fmt.Errorf("%s is not a folder", next)
		case errors.Is(err, fs.ErrNotExist):
			if err := r.Mkdir(next, 0o755); err != nil {
				return err
			}
		case err != nil:
			return err
		}
		cur = next
	}
	return nil
}

// rootOpener opens folders below a root for durable.SyncDir.
type rootOpener struct{ r root }

func (o rootOpener) OpenFile(name string, _ int, _ fs.FileMode) (durable.File, error) {
	return o.r.Open(name)
}

// rootSyncDir fsyncs a folder below root. A failed fsync is returned,
// never retried.
func rootSyncDir(r root, dir string) error { return durable.SyncDir(rootOpener{r}, dir) }
