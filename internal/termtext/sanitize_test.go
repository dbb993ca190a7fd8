package termtext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/hostile"
)

func TestSanitize(t *testing.T) {
	tests := []struct{ in, want, line, message string }{
		{"plain\ttext\n", "plain\ttext\n", "plain text", "plain\ttext\n"},
		{"red \x1b[31mtext\x1b[0m", "red ^[[31mtext^[[0m", "red ^[[31mtext^[[0m", "red [31mtext[0m"},
		{"osc \x1b]52;c;ZXZpbA==\x07", "osc ^[]52;c;ZXZpbA==^G", "osc ^[]52;c;ZXZpbA==^G", "osc ]52;c;ZXZpbA=="},
		{"crlf\r\nline", "crlf\nline", "crlf line", "crlf\nline"},
		{"lone\rcr", "lone^Mcr", "lone^Mcr", "lone\ncr"},
		{"bs\bx", "bs^Hx", "bs^Hx", "bsx"},
		{"del\x7f", "del^?", "del^?", "del"},
		{"c1 \u009b31m", `c1 \u009b31m`, `c1 \u009b31m`, "c1 31m"},
		{"bidi \u202eevil\u2066", `bidi \u202eevil\u2066`, `bidi \u202eevil\u2066`, "bidi evil"},
		{"bad \xff utf8", `bad \xff utf8`, `bad \xff utf8`, "bad  utf8"},
		{"héllo — ok", "héllo — ok", "héllo — ok", "héllo — ok"},
		{"  two\n\nlines \t ", "  two\n\nlines \t ", "two lines", "  two\n\nlines \t "},
	}
	for _, tt := range tests {
		if got := Sanitize(tt.in); got != tt.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := Line(tt.in); got != tt.line {
			t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
		}
		if got := Message(tt.in); got != tt.message {
			t.Errorf("Message(%q) = %q, want %q", tt.in, got, tt.message)
		}
	}
	if got := (Style{Color: true}).Text("a\x1b]0;x\x07"); got != "a"+sgrReverse+"^["+sgrNoReverse+"]0;x"+sgrReverse+"^G"+sgrNoReverse {
		t.Errorf("styled notation = %q", got)
	}
	if got := (Style{}).Text("a\x1b"); got != "a^[" {
		t.Errorf("notation without colour = %q", got)
	}
	if got := Subject("Fix\r\rOrch-Task: x\n\nbody\u2028more"); got != "Fix Orch-Task: x body more" {
		t.Errorf("Subject = %q", got)
	}
}

// Every line of the hostile terminal corpus comes out of Sanitize, Line,
// Message and the Writer without a control character.
func TestSanitizeHostileCorpus(t *testing.T) {
	for _, c := range hostile.TerminalCases() {
		for name, got := range map[string]string{
			"Sanitize": Sanitize(c.Text), "Line": Line(c.Text), "Message": Message(c.Text),
			"Subject": Subject(c.Text), "Style.Text": (Style{Color: true}).Text(c.Text),
			"Writer":   writeThrough(c.Text, 3),
			"Markdown": Markdown("# "+c.Text+"\n\n- "+c.Text+"\n\n| a |\n|---|\n| "+c.Text+" |\n", Style{Terminal: true, Color: true, Width: 30}),
		} {
			if bad := hostile.TerminalViolation(got); bad != "" {
				t.Errorf("%s: %s(...) = %q: %s", c, name, got, bad)
			}
		}
		if strings.Contains(Subject(c.Text), "\n") {
			t.Errorf("%s: the subject has a line break", c)
		}
	}
}

// writeThrough writes s through a Writer in chunks of n bytes.
func writeThrough(s string, n int) string {
	var out bytes.Buffer
	w := NewWriter(&out)
	for len(s) > 0 {
		k := min(n, len(s))
		w.Write([]byte(s[:k]))
		s = s[k:]
	}
	w.Flush()
	return out.String()
}

func TestWriter(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain\n", "plain\n"},
		{"\x1b[1;31mred\x1b[0m\n", "\x1b[1;31mred\x1b[0m\n"},
		{"\x1b[2K\rfake", "^[[2K^Mfake"},
		{"\x1b]52;c;ZXZpbA==\x07", "^[]52;c;ZXZpbA==^G"},
		{"\u009b2J \u202e \xff", `\u009b2J \u202e \xff`},
		{"a\r\nb", "a\nb"},
		{Sanitize("\x1b[31m"), "^[[31m"},
		{`{"a":"\u001b` + "\u009b\x7f\"}", `{"a":"\u001b\u009b\u007f"}`},
	}
	for _, tt := range tests {
		for _, n := range []int{1, 2, 5, 1000} {
			if got := writeThrough(tt.in, n); got != tt.want {
				t.Errorf("Writer(%q) in chunks of %d = %q, want %q", tt.in, n, got, tt.want)
			}
		}
	}
	// JSON as encoding/json writes it is the same JSON value after the
	// guard.
	for _, c := range hostile.TerminalCases() {
		enc, err := json.Marshal(map[string]string{"text": c.Text})
		if err != nil {
			t.Fatal(err)
		}
		var before, after map[string]string
		if err := json.Unmarshal(enc, &before); err != nil {
			t.Fatal(err)
		}
		guarded := writeThrough(string(enc)+"\n", 7)
		if err := json.Unmarshal([]byte(guarded), &after); err != nil || after["text"] != before["text"] {
			t.Errorf("%s: JSON through the guard = %q (%v), want the value of %q", c, guarded, err, enc)
		}
	}
	// A dangling ESC or half a rune at the end is shown by Flush.
	if got := writeThrough("x\x1b", 1000); got != "x^[" {
		t.Errorf("dangling ESC: %q", got)
	}
	if got := writeThrough("x\xe2\x80", 1000); got != `x\xe2\x80` {
		t.Errorf("half a rune: %q", got)
	}
}

// FuzzSanitize: whatever the input, Sanitize, Line, Message, Subject and
// the Writer give valid UTF-8 with no control character but tab and
// newline (and the Writer's and Style.Text's SGR codes), and Sanitize keeps
// safe text as it is.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"", "a\x1b[2Jb", "\r\n\r", "\xc2\x9b", "\xff", "ok", "\u202e", "\x1b[", "\x1b[1;3"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, chunk int) {
		if chunk < 1 || chunk > 64 {
			chunk = 1
		}
		for name, got := range map[string]string{
			"Sanitize": Sanitize(s), "Line": Line(s), "Message": Message(s), "Subject": Subject(s),
			"Style.Text": (Style{Color: true}).Text(s), "Writer": writeThrough(s, chunk),
		} {
			if bad := hostile.TerminalViolation(got); bad != "" {
				t.Fatalf("%s(%q) = %q: %s", name, s, got, bad)
			}
		}
		if Safe(s) && Sanitize(s) != strings.ReplaceAll(s, "\r\n", "\n") {
			t.Fatalf("safe text changed: %q → %q", s, Sanitize(s))
		}
		if w := writeThrough(Sanitize(s), chunk); w != Sanitize(s) {
			t.Fatalf("the Writer changed sanitized text %q to %q", Sanitize(s), w)
		}
		if strings.ContainsAny(Line(s), "\n\t") || strings.Contains(Subject(s), "\n") {
			t.Fatalf("one-line form of %q has a line break", s)
		}
		if !utf8.ValidString(Message(s)) {
			t.Fatalf("Message(%q) is not valid UTF-8", s)
		}
	})
}
