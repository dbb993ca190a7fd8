package testreport

import (
	"strings"
	"testing"
)

func TestBoundedBuf(t *testing.T) {
	var b BoundedBuf
	b.WriteString("HEAD")
	b.WriteString(strings.Repeat("m", caseOutputHead+3*caseOutputTail))
	b.WriteString("TAIL")
	s := b.String()
	if !strings.HasPrefix(s, "HEAD") || !strings.HasSuffix(s, "TAIL") {
		t.Errorf("bounded output lost its head or tail")
	}
	total := len("HEAD") + caseOutputHead + 3*caseOutputTail + len("TAIL")
	if want := int64(total - caseOutputHead - caseOutputTail); !strings.Contains(s, "bytes of output dropped") || b.dropped != want {
		t.Errorf("dropped %d, want %d", b.dropped, want)
	}
	if len(s) > caseOutputHead+caseOutputTail+100 {
		t.Errorf("kept %d bytes", len(s))
	}
	var small BoundedBuf
	small.WriteString("short")
	if small.String() != "short" {
		t.Errorf("small buffer = %q", small.String())
	}
}
