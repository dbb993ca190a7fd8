package testreport

import (
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/clip"
)

// Bounds of what a case keeps of its output and message.
const (
	caseOutputHead = 4 << 10  // first bytes kept
	caseOutputTail = 12 << 10 // last bytes kept
	MaxMessage     = 300      // characters of a case message
)

// BoundedBuf keeps the first caseOutputHead and the last caseOutputTail
// bytes written to it and counts what it dropped in between.
type BoundedBuf struct {
	head    []byte
	tail    []byte // ring of the last bytes, start at tailPos when full
	tailPos int
	full    bool
	dropped int64
}

func (b *BoundedBuf) WriteString(s string) {
	if room := caseOutputHead - len(b.head); room > 0 {
		n := min(room, len(s))
		b.head = append(b.head, s[:n]...)
		s = s[n:]
	}
	for len(s) > 0 {
		if !b.full {
			room := caseOutputTail - len(b.tail)
			n := min(room, len(s))
			b.tail = append(b.tail, s[:n]...)
			s = s[n:]
			if len(b.tail) == caseOutputTail {
				b.full = true
				b.tailPos = 0
			}
			continue
		}
		// Overwrite the oldest bytes of the ring.
		n := min(caseOutputTail-b.tailPos, len(s))
		b.dropped += int64(n)
		copy(b.tail[b.tailPos:], s[:n])
		b.tailPos = (b.tailPos + n) % caseOutputTail
		s = s[n:]
	}
}

func (b *BoundedBuf) Len() int { return len(b.head) + len(b.tail) }

// String returns the kept output, with a marker where bytes were dropped.
// The result is valid UTF-8 (cut runes are replaced).
func (b *BoundedBuf) String() string {
	var sb strings.Builder
	sb.Write(b.head)
	if b.dropped > 0 {
		fmt.Fprintf(&sb, "\n[orch: %d bytes of output dropped]\n", b.dropped)
	}
	if b.full {
		sb.Write(b.tail[b.tailPos:])
		sb.Write(b.tail[:b.tailPos])
	} else {
		sb.Write(b.tail)
	}
	return strings.ToValidUTF8(sb.String(), "\uFFFD")
}

// firstLine returns the first line of s that says something: not blank and
// not one of the framing lines go test prints around a test. The result is
// trimmed and at most MaxMessage characters long.
func FirstLine(s string) string {
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "=== ") || strings.HasPrefix(line, "--- ") {
			continue
		}
		return clip.Runes(line, MaxMessage)
	}
	return ""
}
