package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// maxWatchedFiles bounds the files GitWatch fingerprints (a hooks folder
// holds a dozen).
const maxWatchedFiles = 10000

// GitWatch holds a fingerprint of what in a checkout's git directories
// would make code run, or change what git does, outside the sandbox: the
// hooks, the config files, and the worktree's .git link and its
// administrative files. A suite that changed one of them got out (or
// something else changed them meanwhile): its run is not to be trusted.
// Refs and objects are not watched; the user may commit while tests run.
type GitWatch struct {
	dir    string
	dirs   []string // the git files and folders, found once
	before map[string]string
}

// WatchGit fingerprints the git directories of dir (none when dir is not
// a git checkout). They are found once, now: a redirected .git link is a
// change of the link, not a new set of directories.
func WatchGit(dir string) (*GitWatch, error) {
	dirs, _ := gitDirs(dir)
	w := &GitWatch{dir: dir, dirs: dirs}
	fp, err := w.fingerprint()
	if err != nil {
		return nil, err
	}
	w.before = fp
	return w, nil
}

// Changed returns the watched paths that appeared, vanished or changed
// since WatchGit, sorted; nil when nothing did.
func (w *GitWatch) Changed() []string {
	now, err := w.fingerprint()
	if err != nil {
		return []string{fmt.Sprintf("%s (%v)", w.dir, err)}
	}
	var out []string
	for p, h := range now {
		if w.before[p] != h {
			out = append(out, p)
		}
	}
	for p := range w.before {
		if _, ok := now[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// fingerprint maps each watched file (and symlink) to its mode and
// content hash.
func (w *GitWatch) fingerprint() (map[string]string, error) {
	fp := map[string]string{}
	add := func(p string) error {
		if len(fp) >= maxWatchedFiles {
			return fmt.Errorf("more than %d files to watch", maxWatchedFiles)
		}
		h, err := fileHash(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		fp[p] = h
		return nil
	}
	for _, g := range w.dirs {
		info, err := os.Lstat(g)
		if err != nil {
			continue
		}
		if !info.IsDir() {
			if err := add(g); err != nil {
				return nil, err
			}
			continue
		}
		var files []string
		for _, name := range []string{"config", "config.worktree", "commondir", "gitdir"} {
			files = append(files, filepath.Join(g, name))
		}
		wts, _ := filepath.Glob(filepath.Join(g, "worktrees", "*"))
		for _, wt := range wts {
			for _, name := range []string{"config.worktree", "commondir", "gitdir"} {
				files = append(files, filepath.Join(wt, name))
			}
		}
		for _, f := range files {
			if err := add(f); err != nil {
				return nil, err
			}
		}
		err = filepath.WalkDir(filepath.Join(g, "hooks"), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if d.IsDir() {
				fp[p] = "dir"
				return nil
			}
			return add(p)
		})
		if err != nil {
			return nil, err
		}
	}
	return fp, nil
}

// fileHash is the mode and sha256 of a file, or a symlink's target.
func fileHash(p string) (string, error) {
	info, err := os.Lstat(p)
	if err != nil {
		return "", err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		t, err := os.Readlink(p)
		return "link:" + t, err
	}
	if !info.Mode().IsRegular() {
		return info.Mode().String(), nil
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, 64<<20)); err != nil {
		return "", err
	}
	return info.Mode().String() + ":" + hex.EncodeToString(h.Sum(nil)), nil
}
