package testrun

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestCappedWriter(t *testing.T) {
	tests := []struct {
		name   string
		limit  int64
		writes []string
		kept   string
		marked bool
	}{
		{"under the cap", 10, []string{"abc", "def"}, "abcdef", false},
		{"exactly the cap, nothing more", 6, []string{"abc", "def"}, "abcdef", false},
		{"write ends exactly at the cap, then more", 6, []string{"abcdef", "g"}, "abcdef", true},
		{"write crosses the cap", 4, []string{"abc", "def"}, "abcd", true},
		{"zero cap", 0, []string{"x"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			c := newCappedWriter(&buf, tt.limit)
			total := 0
			for _, w := range tt.writes {
				n, err := c.Write([]byte(w))
				if n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
				total += len(w)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			got := buf.String()
			if !strings.HasPrefix(got, tt.kept) {
				t.Errorf("log %q does not start with %q", got, tt.kept)
			}
			dropped := int64(total) - int64(len(tt.kept))
			if c.Dropped() != dropped {
				t.Errorf("dropped %d, want %d", c.Dropped(), dropped)
			}
			if marked := strings.Contains(got, "log cap; further output is dropped"); marked != tt.marked {
				t.Errorf("cap marker present %v, want %v: %q", marked, tt.marked, got)
			}
			if tt.marked != strings.Contains(got, "bytes of output dropped]") {
				t.Errorf("dropped count line presence wrong: %q", got)
			}
		})
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestCappedWriterKeepsFirstError(t *testing.T) {
	c := newCappedWriter(failingWriter{}, 100)
	if n, err := c.Write([]byte("abc")); n != 3 || err != nil {
		t.Fatalf("Write = %d, %v; the producer must not see the error", n, err)
	}
	if err := c.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Close = %v, want the write error", err)
	}
	q := &quietWriter{w: failingWriter{}}
	if n, err := q.Write([]byte("x")); n != 1 || err != nil {
		t.Errorf("quietWriter.Write = %d, %v", n, err)
	}
}
