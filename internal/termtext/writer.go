package termtext

import (
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// Writer is the last guard before a terminal or a pager: it passes orch's
// own SGR colour codes (ESC [ params m with params from orch's palette:
// reset, bold, dim, reverse, red, green, yellow, cyan and their ends, so
// never concealed or black-on-black text) and shows every
// other control character, bidirectional override and invalid UTF-8 byte
// in Sanitize's notation. Text that went through Sanitize already passes
// unchanged; text that did not cannot drive the terminal. JSON as
// encoding/json writes it stays the same JSON value: the notation of C1
// controls, DEL and the overrides (\u009b, \u007f, \u202e) is JSON's own
// escape, and the encoder emits no other control character raw.
//
// A sequence or rune cut across two writes is held until the next Write;
// Flush writes what is held (shown, as it is incomplete).
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	held []byte
	buf  []byte
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Unwrap returns the writer w writes to: callers that ask whether an
// output is a terminal look through the guard.
func (w *Writer) Unwrap() io.Writer { return w.w }

// maxSGR bounds an SGR sequence the writer holds across writes.
const maxSGR = 64

// Write filters p to the underlying writer. It reports len(p) written
// unless the underlying writer fails.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	data := p
	if len(w.held) > 0 {
		data = append(w.held, p...)
		w.held = nil
	}
	n := w.filter(data, false)
	if n < len(data) {
		w.held = append([]byte(nil), data[n:]...)
	}
	if _, err := w.w.Write(w.buf); err != nil {
		w.buf = w.buf[:0]
		return 0, err
	}
	w.buf = w.buf[:0]
	return len(p), nil
}

// Flush writes what a previous Write held back.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.held) == 0 {
		return nil
	}
	data := w.held
	w.held = nil
	w.filter(data, true)
	_, err := w.w.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}

// filter appends the safe form of data to w.buf and returns how much of
// data it consumed: all of it when final, else up to an incomplete SGR
// sequence or rune at the end.
func (w *Writer) filter(data []byte, final bool) int {
	for i := 0; i < len(data); {
		c := data[i]
		if c == 0x1b {
			n, complete := sgrLen(data[i:])
			if n > 0 {
				w.buf = append(w.buf, data[i:i+n]...)
				i += n
				continue
			}
			if !complete && !final {
				return i
			}
		}
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != 0x7f || c == '\n' || c == '\t' {
				w.buf = append(w.buf, c)
			} else if c == 0x7f {
				// JSON's escape rather than ^?: encoding/json writes DEL raw.
				w.buf = append(w.buf, `\u007f`...)
			} else if c == '\r' && i+1 < len(data) && data[i+1] == '\n' {
				// CRLF: the LF alone.
			} else if c == '\r' && i+1 == len(data) && !final {
				return i
			} else {
				w.buf = append(w.buf, Sanitize(string(c))...)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 && !final && !utf8.FullRune(data[i:]) {
			return i
		}
		if r == utf8.RuneError && size <= 1 || unsafeRune(r) {
			w.buf = append(w.buf, Sanitize(string(data[i:i+size]))...)
		} else {
			w.buf = append(w.buf, data[i:i+size]...)
		}
		i += size
	}
	return len(data)
}

// palette are the SGR parameters of orch's own colours.
var palette = map[string]bool{"": true, "0": true, "1": true, "2": true, "7": true, "22": true, "27": true, "31": true, "32": true, "33": true, "36": true, "39": true}

// sgrLen returns the length of the SGR sequence (ESC [ [0-9;]* m) at the
// start of b, or 0; complete is false when b ends inside what may still
// become one.
func sgrLen(b []byte) (n int, complete bool) {
	if len(b) < 2 {
		return 0, false
	}
	if b[1] != '[' {
		return 0, true
	}
	for i := 2; i < len(b) && i < maxSGR; i++ {
		switch c := b[i]; {
		case c == 'm':
			for _, p := range strings.Split(string(b[2:i]), ";") {
				if !palette[p] {
					return 0, true
				}
			}
			return i + 1, true
		case c >= '0' && c <= '9' || c == ';':
		default:
			return 0, true
		}
	}
	return 0, len(b) >= maxSGR
}
