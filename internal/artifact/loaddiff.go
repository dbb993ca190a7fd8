package artifact

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/orchdev/orch/internal/patch"
)

// LoadDiff stream-parses code/diff.patch with patch.Parse, hashing it on the
// way. Value.Bytes is the size read. An empty or white-space-only patch is
// Present with no files and no error: deciding what "empty" means is the
// caller's business. A parse error is an *Error whose Err is the
// *patch.Error (matching ErrInvalidDiff).
func LoadDiff(taskDir string) Loaded[patch.Diff] {
	f, _, present, err := openArtifact(taskDir, DiffFile, MaxDiffBytes)
	if f == nil {
		return Loaded[patch.Diff]{Present: present, Err: err}
	}
	defer f.Close()
	h := sha256.New()
	cr := &countingReader{r: io.LimitReader(f, MaxDiffBytes+1)}
	d, err := patch.Parse(io.TeeReader(cr, h))
	if cr.n > MaxDiffBytes { // the file grew after the stat
		return Loaded[patch.Diff]{Present: true, Err: tooLarge(DiffFile, MaxDiffBytes, fmt.Sprintf("more than %d bytes", MaxDiffBytes))}
	}
	if err != nil {
		var de *patch.Error
		if !errors.As(err, &de) {
			err = fmt.Errorf("read: %w", err)
		}
		return Loaded[patch.Diff]{Present: true, Err: &Error{File: DiffFile, Err: err}}
	}
	return Loaded[patch.Diff]{Present: true, Value: d, SHA256: hex.EncodeToString(h.Sum(nil))}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

// ReadDiff reads code/diff.patch whole, by the rules of every loader here:
// a regular file inside the task folder, at most MaxDiffBytes. present is
// false when there is none; err is then nil.
func ReadDiff(taskDir string) (data []byte, present bool, err error) {
	return readArtifact(taskDir, DiffFile, MaxDiffBytes)
}

// ReadPatch reads code/diff.patch (ReadDiff) and checks those very bytes
// with patch.Parse (structure, path safety, no symbolic links or mode
// changes), so that what git applies is what was checked. A missing file is
// an error; a blank one is nil: no change.
func ReadPatch(taskDir string) ([]byte, error) {
	data, present, err := ReadDiff(taskDir)
	switch {
	case err != nil:
		return nil, err
	case !present:
		return nil, &Error{File: DiffFile, Expected: "a patch", Got: "no file"}
	case len(bytes.TrimSpace(data)) == 0:
		return nil, nil
	}
	if _, err := patch.Parse(bytes.NewReader(data)); err != nil {
		return nil, &Error{File: DiffFile, Err: err}
	}
	return data, nil
}
