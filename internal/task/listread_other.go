//go:build !unix

package task

import "path/filepath"

// dirReader reads the state.json of task folders below a tasks folder.
type dirReader struct{ dir string }

func openDirReader(dir string) (*dirReader, error) { return &dirReader{dir: dir}, nil }

func (r *dirReader) Close() error { return nil }

func (r *dirReader) readState(id string, _ *[]byte) (State, *fieldProblem) {
	data, p := readBounded(filepath.Join(r.dir, id, StateFile))
	if p != nil {
		return State{}, p
	}
	return parseStateMode(data, "$", false)
}
