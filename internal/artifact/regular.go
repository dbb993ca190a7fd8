package artifact

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/orchdev/orch/internal/safepath"
)

// OpenRegular opens the task file rel (task-relative, slash-separated) for
// the readers that show artifacts to people — `orch show` and `orch diff`,
// the board's file view, `orch mcp`'s resources and read_artifact — through
// the one bounded reader (safepath.OpenRegular): never a symbolic link,
// nothing outside taskDir, and never blocking on a named pipe. A missing
// file is an error wrapping fs.ErrNotExist; anything else that is not a
// regular file is an *Error wrapping ErrNotRegular, naming what was found
// ("a named pipe", "a symbolic link", "a device").
func OpenRegular(taskDir, rel string) (*os.File, fs.FileInfo, error) {
	f, fi, err := safepath.OpenRegular(taskDir, rel, safepath.NoLinks)
	if err != nil {
		return nil, nil, fromSafe(err)
	}
	return f, fi, nil
}

// ReadRegular reads at most limit bytes of the task file rel through
// OpenRegular, and whether the file holds more.
func ReadRegular(taskDir, rel string, limit int64) (data []byte, truncated bool, err error) {
	data, size, err := safepath.ReadPart(taskDir, rel, limit, safepath.Head)
	if err != nil {
		return nil, false, fromSafe(err)
	}
	return data, size > limit, nil
}

// fromSafe turns a refusal of the bounded reader (*safepath.FileError)
// into the artifact's *Error; a missing file stays an error wrapping
// fs.ErrNotExist.
func fromSafe(err error) error {
	var fe *safepath.FileError
	if !errors.As(err, &fe) {
		return err
	}
	switch {
	case errors.Is(fe.Err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w", fe.File, fs.ErrNotExist)
	case errors.Is(fe.Err, ErrUnsafePath):
		return &Error{File: fe.File, Expected: "a file inside the task folder", Got: "a symbolic link that leaves it", Err: fe.Err}
	}
	return &Error{File: fe.File, Expected: fe.Expected, Got: fe.Got, Err: fe.Err}
}
