package artifact

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// OpenRegular opens the task file rel (task-relative, slash-separated) for
// the readers that show artifacts to people — `orch show` and `orch diff`,
// the board's file view, `orch mcp`'s resources and read_artifact — and
// refuses anything but a regular file without ever blocking: the name
// itself must not be a symbolic link (checked with lstat, below taskDir
// through os.Root so nothing on the way leaves the folder), the open does
// not wait (O_NONBLOCK: a named pipe put there cannot hang the reader),
// and the opened descriptor is checked again (it may have been swapped
// since the lstat). A missing file is an error wrapping fs.ErrNotExist;
// anything else that is not a regular file is an *Error wrapping
// ErrNotRegular, naming what was found ("a named pipe", "a symbolic
// link", "a device").
func OpenRegular(taskDir, rel string) (*os.File, fs.FileInfo, error) {
	root, err := os.OpenRoot(taskDir)
	if err != nil {
		return nil, nil, fmt.Errorf("open task folder: %w", err)
	}
	defer root.Close()
	name := filepath.FromSlash(rel)
	fi, err := root.Lstat(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: %w", rel, fs.ErrNotExist)
		}
		return nil, nil, statError(rel, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, notRegular(rel, fi)
	}
	f, err := root.OpenFile(name, openFlags, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: %w", rel, fs.ErrNotExist)
		}
		return nil, nil, &Error{File: rel, Err: fmt.Errorf("open: %w", err)}
	}
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return nil, nil, &Error{File: rel, Err: fmt.Errorf("stat: %w", err)}
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, notRegular(rel, fi)
	}
	return f, fi, nil
}

// ReadRegular reads at most limit bytes of the task file rel through
// OpenRegular, and whether the file holds more.
func ReadRegular(taskDir, rel string, limit int64) (data []byte, truncated bool, err error) {
	f, _, err := OpenRegular(taskDir, rel)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, false, &Error{File: rel, Err: fmt.Errorf("read: %w", err)}
	}
	if int64(len(data)) > limit {
		return data[:limit], true, nil
	}
	return data, false, nil
}

func notRegular(rel string, fi fs.FileInfo) error {
	return &Error{File: rel, Expected: "a regular file", Got: DescribeMode(fi.Mode()), Err: ErrNotRegular}
}
