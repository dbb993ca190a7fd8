//go:build unix

package task

import (
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// dirReader reads the state.json of task folders relative to an open
// tasks folder: openat + read + close, fewer system calls and path walks
// than os.ReadFile, which is what makes List fast over many tasks.
type dirReader struct{ fd int }

func openDirReader(dir string) (*dirReader, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	return &dirReader{fd: fd}, nil
}

func (r *dirReader) Close() error { return unix.Close(r.fd) }

// readState reads <id>/state.json into buf (grown as needed) and parses it.
func (r *dirReader) readState(id string, buf *[]byte) (State, *fieldProblem) {
	var fd int
	var err error
	for {
		// Without blocking: a named pipe there is refused below.
		fd, err = unix.Openat(r.fd, id+"/"+StateFile, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return State{}, openProblem(errnoErr(err))
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return State{}, openProblem(errnoErr(err))
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		return State{}, folderProblem()
	case unix.S_IFIFO:
		return State{}, specialProblem(fs.ModeNamedPipe)
	case unix.S_IFSOCK:
		return State{}, specialProblem(fs.ModeSocket)
	default:
		return State{}, specialProblem(fs.ModeDevice)
	}
	data := (*buf)[:0]
	for {
		if len(data) == cap(data) {
			if cap(data) > maxStateSize {
				return State{}, tooLargeProblem(int64(len(data)))
			}
			data = append(data, make([]byte, max(cap(data), 4096))...)[:len(data)]
		}
		n, err := unix.Read(fd, data[len(data):cap(data)])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EISDIR {
			return State{}, folderProblem()
		}
		if err != nil {
			return State{}, openProblem(errnoErr(err))
		}
		if n == 0 {
			break
		}
		data = data[:len(data)+n]
	}
	*buf = data
	if len(data) > maxStateSize {
		return State{}, tooLargeProblem(int64(len(data)))
	}
	return parseStateMode(data, "$", false)
}

// errnoErr maps ENOENT to fs.ErrNotExist for the messages.
func errnoErr(err error) error {
	if errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("%w (%w)", fs.ErrNotExist, err)
	}
	return err
}
