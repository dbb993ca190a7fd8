package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// copyBack applies the directory's upper layer (what the suites wrote
// there, at most the run's bound) to the directory on disk, so that what
// a run leaves in its worktree (reports, a kept worktree) is there after
// it: files and symbolic links are written again, a whiteout (a file the
// suites removed) is removed, an opaque folder (removed and made again)
// is emptied first. Everything goes through an os.Root of dir: a symbolic
// link in the directory never leads a write outside it. Owners are kept
// as root (the suite's user); modes and modification times always.
func copyBack(upper, dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	asRoot := os.Geteuid() == 0
	return filepath.WalkDir(upper, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(upper, p)
		if err != nil || rel == "." {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st, _ := info.Sys().(*syscall.Stat_t)
		switch {
		case info.Mode()&fs.ModeCharDevice != 0 && st != nil && st.Rdev == 0:
			return removeIn(root, rel)
		case info.IsDir():
			if opaqueDir(p) {
				if err := removeIn(root, rel); err != nil {
					return err
				}
			}
			if cur, err := root.Lstat(rel); err == nil && !cur.IsDir() {
				if err := removeIn(root, rel); err != nil {
					return err
				}
			}
			if err := root.Mkdir(rel, info.Mode().Perm()); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			if err := root.Chmod(rel, info.Mode()&(fs.ModePerm|fs.ModeSticky|fs.ModeSetgid)); err != nil {
				return err
			}
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := removeIn(root, rel); err != nil {
				return err
			}
			if err := root.Symlink(target, rel); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			if err := removeIn(root, rel); err != nil {
				return err
			}
			if err := copyFileIn(root, rel, p, info.Mode().Perm()); err != nil {
				return err
			}
			_ = root.Chtimes(rel, info.ModTime(), info.ModTime())
		default:
			return nil // a socket or device a suite made: not a file of the worktree
		}
		if asRoot && st != nil {
			if err := root.Lchown(rel, int(st.Uid), int(st.Gid)); err != nil {
				return err
			}
		}
		return nil
	})
}

// removeIn removes rel (and what is below it) inside root; nothing there
// is fine.
func removeIn(root *os.Root, rel string) error {
	if err := root.RemoveAll(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", rel, err)
	}
	return nil
}

// copyFileIn writes the file src to rel inside root (a new file).
func copyFileIn(root *os.Root, rel, src string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return root.Chmod(rel, perm)
}

// opaqueDir reports whether overlayfs marked the upper folder p opaque
// (it hides the lower one): trusted.overlay.opaque as root,
// user.overlay.opaque in a user namespace.
func opaqueDir(p string) bool {
	buf := make([]byte, 8)
	for _, name := range []string{"trusted.overlay.opaque", "user.overlay.opaque"} {
		if n, err := unix.Lgetxattr(p, name, buf); err == nil && n > 0 && buf[0] == 'y' {
			return true
		}
	}
	return false
}
