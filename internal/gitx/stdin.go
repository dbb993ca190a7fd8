package gitx

import (
	"fmt"
	"io"
	"os"
)

// stdinFile returns a file that holds exactly data, read from its start,
// for a git command's standard input. git is given the file itself, never a
// pipe that orch fills while git runs: a pipe holds 64 KiB, so an orch
// killed while writing more would leave git reading a cut last record at
// end of input, and git's line readers hand that record on as if it were
// whole (`git update-index --index-info` would write an entry for a cut
// path into the index and commit it). The file is complete before git
// starts, so git reads all of the input or, when orch dies first, never
// runs (docs/git-effects.md, "Input git reads"). The caller calls release
// once git has exited; nothing is left on disk.
func stdinFile(data []byte) (f *os.File, release func(), err error) {
	f, release, err = anonymousFile()
	if err != nil {
		return nil, nil, fmt.Errorf("standard input for git: %w", err)
	}
	if _, err = f.Write(data); err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("standard input for git: %w", err)
	}
	return f, release, nil
}

// tempStdinFile is a file in the temporary folder, removed at once where
// the system allows removing an open file (then only the descriptor keeps
// it), else when released.
func tempStdinFile() (*os.File, func(), error) {
	f, err := os.CreateTemp("", "orch-git-stdin-")
	if err != nil {
		return nil, nil, err
	}
	if os.Remove(f.Name()) == nil {
		return f, func() { f.Close() }, nil
	}
	return f, func() { f.Close(); os.Remove(f.Name()) }, nil
}
