package safepath

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// The one way orch reads a file it did not write itself: a regular file
// below a folder (a task folder, a work tree), with a size limit.
//
//   - Nothing on the way leaves the folder: the name is resolved through
//     os.Root, so ".." or a symbolic link pointing out of it is refused.
//   - The name itself must not be a symbolic link, unless the caller asks
//     to follow links that stay inside the folder (Links).
//   - Only a regular file is read, and the open never blocks: a named pipe,
//     a socket or a device put there is refused without waiting on it
//     (O_NONBLOCK), and the opened descriptor is checked again, since the
//     name may have been swapped after the first look.
//   - More than the limit is refused before reading (or, for a part,
//     cut), with a message naming the file, its size and the limit.
//
// Every refusal is a *FileError naming the file as the caller named it
// and wrapping fs.ErrNotExist, ErrNotRegular, ErrTooLarge or ErrUnsafe.

// ErrNotRegular: a directory, a symbolic link or a special file where a
// regular file is required. ErrTooLarge: the file exceeds its limit.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("file too large")
)

// FileError says which file was refused and why.
type FileError struct {
	// File is the file as the caller named it (relative to its folder).
	File string
	// Expected and Got say what was wanted and what was found ("a regular
	// file", "a named pipe"); empty when Err says it all.
	Expected, Got string
	// Size is the file's size when it was too large.
	Size int64
	Err  error
}

func (e *FileError) Error() string {
	if e.Expected != "" {
		return fmt.Sprintf("%s: expected %s, got %s", e.File, e.Expected, e.Got)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

// Unwrap returns the sentinel (or the system's error) behind e.
func (e *FileError) Unwrap() error { return e.Err }

// Links says what to do with a name that is a symbolic link.
type Links int

const (
	// NoLinks refuses a name that is a symbolic link.
	NoLinks Links = iota
	// LinksInside follows a symbolic link that stays inside the folder.
	LinksInside
)

// OpenRegular opens the file rel (slash-separated, relative to dir) for
// reading and returns it with its information, refusing anything but a
// regular file below dir without blocking. A missing file is a *FileError
// wrapping fs.ErrNotExist.
func OpenRegular(dir, rel string, links Links) (*os.File, fs.FileInfo, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, &FileError{File: rel, Err: fs.ErrNotExist}
		}
		return nil, nil, &FileError{File: rel, Err: fmt.Errorf("open folder %s: %w", dir, err)}
	}
	defer root.Close()
	name := filepath.FromSlash(rel)
	stat := root.Lstat
	if links == LinksInside {
		stat = root.Stat
	}
	fi, err := stat(name)
	if err != nil {
		return nil, nil, statError(rel, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, NotRegular(rel, fi.Mode())
	}
	f, err := root.OpenFile(name, openFlags, 0)
	if err != nil {
		return nil, nil, statError(rel, err)
	}
	after, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, &FileError{File: rel, Err: fmt.Errorf("stat: %w", err)}
	}
	if !after.Mode().IsRegular() || !os.SameFile(fi, after) {
		f.Close()
		got := DescribeMode(after.Mode())
		if after.Mode().IsRegular() {
			got = "another file (replaced while being opened)"
		}
		return nil, nil, &FileError{File: rel, Expected: "a regular file", Got: got, Err: ErrNotRegular}
	}
	return f, after, nil
}

// ReadRegular reads the whole file rel below dir (OpenRegular), refusing
// it when it holds more than limit bytes.
func ReadRegular(dir, rel string, limit int64, links Links) ([]byte, error) {
	f, fi, err := OpenRegular(dir, rel, links)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, TooLarge(rel, fi.Size(), limit)
	}
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, &FileError{File: rel, Err: fmt.Errorf("read: %w", err)}
	}
	if int64(buf.Len()) > limit { // it grew after the stat
		return nil, TooLarge(rel, int64(buf.Len()), limit)
	}
	return buf.Bytes(), nil
}

// Part says which part of a file ReadPart reads.
type Part int

const (
	// Head is the file's start.
	Head Part = iota
	// Tail is the file's end.
	Tail
)

// ReadPart reads at most limit bytes of the start (Head) or end (Tail)
// of the file rel below dir (OpenRegular, never following a symbolic
// link), and the file's size: the part was cut when size > limit.
func ReadPart(dir, rel string, limit int64, part Part) (data []byte, size int64, err error) {
	f, fi, err := OpenRegular(dir, rel, NoLinks)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	limit = max(limit, 0)
	size = fi.Size()
	if part == Tail && size > limit {
		if _, err := f.Seek(size-limit, io.SeekStart); err != nil {
			return nil, 0, &FileError{File: rel, Err: fmt.Errorf("seek: %w", err)}
		}
	}
	data, err = io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return nil, 0, &FileError{File: rel, Err: fmt.Errorf("read: %w", err)}
	}
	return data, max(size, int64(len(data))), nil
}

// TooLarge is the refusal of file rel of size bytes (or more), above
// limit.
func TooLarge(rel string, size, limit int64) *FileError {
	return &FileError{File: rel, Expected: fmt.Sprintf("at most %d bytes", limit), Got: fmt.Sprintf("%d bytes", size), Size: size, Err: ErrTooLarge}
}

// NotRegular is the refusal of file rel, of mode m, where a regular file
// is required.
func NotRegular(rel string, m fs.FileMode) *FileError {
	return &FileError{File: rel, Expected: "a regular file", Got: DescribeMode(m), Err: ErrNotRegular}
}

// statError explains why rel could not be looked at or opened.
func statError(rel string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &FileError{File: rel, Err: fs.ErrNotExist}
	case isEscape(err):
		return &FileError{File: rel, Expected: "a file inside its folder", Got: "a path or symbolic link that leaves it", Err: fmt.Errorf("%w: %w", ErrUnsafe, err)}
	case isNotDir(err):
		return &FileError{File: rel, Expected: "a regular file", Got: "a path through something that is not a directory", Err: ErrNotRegular}
	case isLoop(err):
		return &FileError{File: rel, Expected: "a regular file", Got: "a symbolic link", Err: ErrNotRegular}
	}
	return &FileError{File: rel, Err: err}
}

// isEscape reports whether err is os.Root refusing a path that leaves it.
func isEscape(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == "path escapes from parent"
}

// DescribeMode names the type of a file for messages ("a named pipe",
// "a symbolic link", …).
func DescribeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file"
}
