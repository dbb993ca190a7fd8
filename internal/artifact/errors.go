package artifact

import (
	"errors"
	"strings"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/patch"
	"github.com/orchdev/orch/internal/safepath"
	"github.com/orchdev/orch/internal/strictjson"
)

// Sentinel errors, matched with errors.Is through *Error.
var (
	// ErrTooLarge: the file exceeds its size limit.
	ErrTooLarge = safepath.ErrTooLarge
	// ErrUnsafePath: a path is absolute, escapes the repository, points
	// into .git or .orch, or is otherwise refused by CheckPath; also a
	// symlink or special file where a regular file is required.
	ErrUnsafePath = safepath.ErrUnsafe
	// ErrInvalidJSON: the bytes are not one well-formed JSON object
	// (syntax, invalid UTF-8, duplicate keys, nesting, trailing data).
	ErrInvalidJSON = strictjson.ErrInvalid
	// ErrSchema: well-formed JSON whose shape does not match the contract.
	ErrSchema = errors.New("artifact does not match its schema")
	// ErrNotRegular: a directory or special file where a file is required.
	ErrNotRegular = safepath.ErrNotRegular
	// ErrInvalidDiff: code/diff.patch cannot be parsed or is refused.
	ErrInvalidDiff = patch.ErrInvalid
)

// CheckPath refuses a path that is not a plain repository-relative path:
// safepath.Check. The error is a *safepath.PathError wrapping
// ErrUnsafePath.
func CheckPath(p string) error { return safepath.Check(p) }

// PathError says why CheckPath refused a path.
type PathError = safepath.PathError

// Error describes why an artifact is invalid.
//
// File is relative to the task folder (for example
// "planning/planning.ai.json"). JSONPath is like "$.questions[2].blocking"
// and empty when the problem is not inside the JSON. Expected and Got say
// what the contract wants and what was found; they are empty when Err says
// it all. Err is one of the sentinels above, possibly wrapping more detail.
type Error struct {
	File     string
	JSONPath string
	Expected string
	Got      string
	Err      error
}

// ExitCode: an invalid artifact is exit 4.
func (e *Error) ExitCode() exit.Code { return exit.Invalid }

// Error renders "file: $.path: expected X, got Y" (parts that are empty are
// left out).
func (e *Error) Error() string {
	var parts []string
	if e.File != "" {
		parts = append(parts, e.File)
	}
	if e.JSONPath != "" {
		parts = append(parts, e.JSONPath)
	}
	switch {
	case e.Expected != "":
		got := e.Got
		if got == "" {
			got = "nothing"
		}
		parts = append(parts, "expected "+e.Expected+", got "+got)
	case e.Err != nil:
		parts = append(parts, e.Err.Error())
	default:
		parts = append(parts, "invalid")
	}
	return strings.Join(parts, ": ")
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// parseDocument parses an artifact's bytes strictly (package strictjson,
// at most MaxDepth levels deep). The error is an *Error naming file and
// wrapping ErrInvalidJSON.
func parseDocument(file string, data []byte) (*strictjson.Node, error) {
	n, err := strictjson.Parse(data, MaxDepth)
	var se *strictjson.Error
	if errors.As(err, &se) {
		return nil, &Error{File: file, JSONPath: se.JSONPath, Expected: se.Expected, Got: se.Got, Err: se.Err}
	}
	return n, err
}
