package artifact

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/orchdev/orch/internal/safepath"
)

// ScanCodeFiles lists the regular files under code/files as sorted,
// repository-relative slash paths. A missing code/files is not Present. The
// scan never follows a symbolic link: a link anywhere (even one pointing
// inside), a special file, a name CheckPath refuses, a file larger than
// MaxCodeFileBytes, or more than MaxCodeFiles files (or directories) makes
// the result invalid, with an error naming the path.
func ScanCodeFiles(taskDir string) Loaded[[]string] {
	return scanCodeFiles(taskDir, scanLimits{files: MaxCodeFiles, dirs: MaxCodeFiles, fileBytes: MaxCodeFileBytes})
}

// MaxCodeDepth bounds how deep folders under code/files may nest: opening
// a folder resolves every level, so a scan of very deep trees costs the
// square of their depth.
const MaxCodeDepth = 128

// scanLimits bounds a scan; tests use small ones.
type scanLimits struct {
	files, dirs int
	fileBytes   int64
}

func scanCodeFiles(taskDir string, lim scanLimits) Loaded[[]string] {
	root, err := os.OpenRoot(taskDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Loaded[[]string]{}
		}
		return Loaded[[]string]{Present: true, Err: &Error{File: CodeFilesDir, Err: fmt.Errorf("open task folder: %w", err)}}
	}
	defer root.Close()
	// Lstat each component ourselves: os.Root would follow an in-root link.
	for _, rel := range []string{"code", CodeFilesDir} {
		fi, err := root.Lstat(rel)
		if errors.Is(err, fs.ErrNotExist) {
			return Loaded[[]string]{}
		}
		if err != nil {
			return Loaded[[]string]{Present: true, Err: &Error{File: rel, Err: fmt.Errorf("stat: %w", err)}}
		}
		if !fi.IsDir() {
			return Loaded[[]string]{Present: true, Err: notWalkable(rel, fi.Mode(), "a directory")}
		}
	}
	sub, err := root.OpenRoot(CodeFilesDir)
	if err != nil {
		return Loaded[[]string]{Present: true, Err: &Error{File: CodeFilesDir, Err: fmt.Errorf("open: %w", err)}}
	}
	defer sub.Close()
	w := &codeWalker{root: sub, lim: lim}
	if err := w.walk(); err != nil {
		return Loaded[[]string]{Present: true, Err: err}
	}
	slices.Sort(w.files)
	if w.files == nil {
		w.files = []string{}
	}
	return Loaded[[]string]{Present: true, Value: w.files}
}

// notWalkable reports an entry of the wrong type. Symbolic links are unsafe
// paths; other special files are not regular.
func notWalkable(rel string, m fs.FileMode, expected string) error {
	err := ErrNotRegular
	if m&fs.ModeSymlink != 0 {
		err = ErrUnsafePath
	}
	return &Error{File: rel, Expected: expected, Got: DescribeMode(m), Err: err}
}

// codeWalker walks code/files depth-first with an explicit stack, holding
// one directory open at a time.
type codeWalker struct {
	root  *os.Root
	lim   scanLimits
	files []string
	dirs  int
}

func (w *codeWalker) walk() error {
	stack := []string{"."}
	for len(stack) > 0 {
		dir := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		entries, err := w.readDir(dir)
		if err != nil {
			return err
		}
		// Visit in reverse name order so the stack pops in name order and
		// the first problem reported does not depend on directory order.
		for i := len(entries) - 1; i >= 0; i-- {
			sub, err := w.visit(dir, entries[i])
			if err != nil {
				return err
			}
			if sub != "" {
				stack = append(stack, sub)
			}
		}
	}
	return nil
}

// readDir lists dir sorted by name, refusing more entries than the limits
// allow before holding them all.
func (w *codeWalker) readDir(dir string) ([]fs.DirEntry, error) {
	rel := taskRel(dir)
	f, err := w.root.Open(dir)
	if err != nil {
		return nil, &Error{File: rel, Err: fmt.Errorf("open: %w", err)}
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.IsDir() { // swapped since it was listed
		return nil, &Error{File: rel, Expected: "a directory", Got: "something else after listing", Err: ErrUnsafePath}
	}
	var all []fs.DirEntry
	for {
		batch, err := f.ReadDir(512)
		all = append(all, batch...)
		// Bound the memory of one listing; files and directories are
		// counted against their own limits as they are visited.
		if max := w.lim.files + w.lim.dirs; len(all) > max {
			return nil, tooMany("entries in one directory", max)
		}
		if err == io.EOF || (err == nil && len(batch) == 0) {
			break
		}
		if err != nil {
			return nil, &Error{File: rel, Err: fmt.Errorf("read directory: %w", err)}
		}
	}
	slices.SortFunc(all, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return all, nil
}

// visit checks one entry; it returns the entry's path when it is a
// directory to descend into.
func (w *codeWalker) visit(dir string, e fs.DirEntry) (string, error) {
	p := e.Name()
	if dir != "." {
		p = dir + "/" + p
	}
	if err := CheckPath(p); err != nil {
		return "", &Error{File: CodeFilesDir, Expected: "safe repository-relative file names", Got: safepath.Reason(err), Err: err}
	}
	rel := taskRel(p)
	switch t := e.Type(); {
	case t.IsDir():
		if depth := strings.Count(p, "/") + 1; depth >= MaxCodeDepth {
			return "", &Error{File: rel, Expected: fmt.Sprintf("folders nested fewer than %d levels deep", MaxCodeDepth), Got: fmt.Sprintf("%d levels", depth), Err: ErrUnsafePath}
		}
		w.dirs++
		if w.dirs > w.lim.dirs {
			return "", tooMany("directories", w.lim.dirs)
		}
		return p, nil
	case !t.IsRegular():
		return "", notWalkable(rel, t, "a regular file or a directory")
	}
	fi, err := e.Info() // an lstat: never follows a link
	if err != nil {
		return "", &Error{File: rel, Err: fmt.Errorf("stat: %w", err)}
	}
	if !fi.Mode().IsRegular() {
		return "", notWalkable(rel, fi.Mode(), "a regular file or a directory")
	}
	if fi.Size() > w.lim.fileBytes {
		return "", tooLarge(rel, w.lim.fileBytes, fmt.Sprintf("%d bytes", fi.Size()))
	}
	w.files = append(w.files, p)
	if len(w.files) > w.lim.files {
		return "", tooMany("files", w.lim.files)
	}
	return "", nil
}

func tooMany(what string, limit int) error {
	return &Error{File: CodeFilesDir, Expected: fmt.Sprintf("at most %d %s", limit, what), Got: "more", Err: ErrTooLarge}
}

// taskRel turns a path below code/files into a task-relative one.
func taskRel(p string) string {
	if p == "." {
		return CodeFilesDir
	}
	return path.Join(CodeFilesDir, p)
}
