package task

import (
	"bytes"
	"fmt"
	"io"
)

// tailChunk is how much of the transcript is read at a time from its end.
const tailChunk = 64 << 10

// findEnd returns the length of the complete part of a log of the given
// size: the offset just after its last '\n' (0 when it has none).
func findEnd(f file, size int64) (int64, error) {
	buf := make([]byte, tailChunk)
	for pos := size; pos > 0; {
		n := min(int64(len(buf)), pos)
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil && err != io.EOF {
			return 0, fmt.Errorf("read %s: %w", f.Name(), err)
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return pos + int64(i) + 1, nil
		}
	}
	return 0, nil
}

// revLines yields the complete lines of f[0:end] from the last to the
// first, without their '\n'. end must be 0 or just after a '\n'.
type revLines struct {
	f   file
	pos int64  // file offset of buf[0]
	buf []byte // f[pos:lineEnd], where lineEnd ends the next line to yield
	eof bool
}

func newRevLines(f file, end int64) *revLines {
	if end == 0 {
		return &revLines{f: f, eof: true}
	}
	return &revLines{f: f, pos: end - 1} // drop the final '\n'
}

// next returns the previous line and its offset; ok is false at the start
// of the file. The returned slice stays valid after later calls.
func (r *revLines) next() (line []byte, off int64, ok bool, err error) {
	for {
		if r.eof {
			return nil, 0, false, nil
		}
		if i := bytes.LastIndexByte(r.buf, '\n'); i >= 0 {
			line, off = r.buf[i+1:], r.pos+int64(i)+1
			r.buf = r.buf[:i:i]
			return line, off, true, nil
		}
		if r.pos == 0 {
			r.eof = true
			return r.buf, 0, true, nil
		}
		n := min(int64(tailChunk), r.pos)
		chunk := make([]byte, n, n+int64(len(r.buf)))
		if _, err := r.f.ReadAt(chunk, r.pos-n); err != nil && err != io.EOF {
			return nil, 0, false, fmt.Errorf("read %s: %w", r.f.Name(), err)
		}
		r.pos -= n
		r.buf = append(chunk, r.buf...)
	}
}
