package termtext

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/hostile"
)

const planMD = "# Add retry\n\nRetry **idempotent** requests.\n\n- at most 5 attempts\n- exponential backoff\n\n\x1b]52;c;ZXZpbA==\x07\n"

func TestMarkdown(t *testing.T) {
	t.Run("no terminal: the text as written, sanitized", func(t *testing.T) {
		got := Markdown(planMD, Style{})
		if got != Sanitize(planMD) {
			t.Errorf("got %q", got)
		}
	})
	t.Run("terminal without colour: laid out, no escape codes", func(t *testing.T) {
		got := Markdown(planMD, Style{Terminal: true, Width: 60})
		if strings.Contains(got, "\x1b") {
			t.Errorf("escape codes without colour: %q", got)
		}
		for _, want := range []string{"Add retry", "idempotent", "• at most 5 attempts", "^[]52"} {
			if !strings.Contains(got, want) {
				t.Errorf("rendered plan lacks %q:\n%s", want, got)
			}
		}
		for _, l := range strings.Split(got, "\n") {
			if strings.HasSuffix(l, " ") {
				t.Errorf("line padded with blanks: %q", l)
			}
		}
	})
	t.Run("terminal with colour", func(t *testing.T) {
		got := Markdown(planMD, Style{Terminal: true, Color: true, Width: 60})
		if !strings.Contains(got, "\x1b[") || !strings.Contains(got, "idempotent") {
			t.Errorf("no colour or text: %q", got)
		}
		if strings.Contains(got, "\x1b]") {
			t.Errorf("the plan's own escape sequence reached the terminal: %q", got)
		}
		for _, l := range strings.Split(got, "\n") {
			if strings.HasSuffix(l, " ") || strings.HasSuffix(l, " \x1b[0m") {
				t.Errorf("line padded with blanks: %q", l)
			}
		}
	})
	t.Run("wrapping keeps words whole", func(t *testing.T) {
		got := Markdown("- "+strings.Repeat("word ", 30)+"\n", Style{Terminal: true, Width: 40})
		for _, l := range strings.Split(strings.TrimRight(got, "\n"), "\n") {
			if len([]rune(l)) > 38 || strings.HasSuffix(l, " ") {
				t.Errorf("line %q is longer than the wrap width or padded", l)
			}
		}
	})
}

const patch = "diff --git a/retry.go b/retry.go\nnew file mode 100644\n--- /dev/null\n+++ b/retry.go\n@@ -0,0 +1,2 @@\n+package retry\n-old \x1b[2J\n context\n"

func TestShowDiff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "diff.patch")
	if err := os.WriteFile(path, []byte(patch), 0o644); err != nil {
		t.Fatal(err)
	}
	var plain, color bytes.Buffer
	if err := ShowDiff(&plain, path, Style{Terminal: true}); err != nil {
		t.Fatal(err)
	}
	if want := Sanitize(patch); plain.String() != want {
		t.Errorf("plain diff = %q, want %q", plain.String(), want)
	}
	if err := ShowDiff(&color, path, Style{Terminal: true, Color: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		sgrBold + "diff --git a/retry.go b/retry.go" + sgrReset + "\n",
		sgrBold + "+++ b/retry.go" + sgrReset + "\n",
		sgrCyan + "@@ -0,0 +1,2 @@" + sgrReset + "\n",
		sgrGreen + "+package retry" + sgrReset + "\n",
		sgrRed + "-old " + sgrReverse + "^[" + sgrNoReverse + "[2J" + sgrReset + "\n",
		"\n context\n",
	} {
		if !strings.Contains(color.String(), want) {
			t.Errorf("coloured diff lacks %q:\n%q", want, color.String())
		}
	}
}

func TestReadCapped(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, truncated, err := ReadCapped(big, 4)
	if err != nil || !truncated || string(data) != "0123" {
		t.Errorf("ReadCapped(10 bytes, 4) = %q, %v, %v", data, truncated, err)
	}
	data, truncated, err = ReadCapped(big, 10)
	if err != nil || truncated || string(data) != "0123456789" {
		t.Errorf("ReadCapped(10 bytes, 10) = %q, %v, %v", data, truncated, err)
	}
	if _, _, err := ReadCapped(filepath.Join(dir, "none"), 4); !errors.Is(err, ErrMissing) {
		t.Errorf("missing file: %v", err)
	}
	if _, _, err := ReadCapped(dir, 4); err == nil || !strings.Contains(err.Error(), "expected a regular file, got a directory") {
		t.Errorf("directory: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if _, _, err := ReadCapped(fifo, 4); err == nil || !strings.Contains(err.Error(), "expected a regular file, got a named pipe") {
		t.Errorf("fifo: %v", err)
	}
}

const tableMD = "| reviewer | ok | notes |\n|---|:-:|--:|\n| risk | **no** | the retry loop never stops when the server keeps answering 503 |\n| 日本語 | yes | `a|b` \\| c |\n"

func TestMarkdownTable(t *testing.T) {
	got := Markdown(tableMD, Style{Terminal: true, Width: 40})
	// Columns as wide as their cells, the widest wrapped to fit 38
	// columns; the third column right-aligned (--:), escaped pipes and
	// pipes in code kept; no trailing blanks.
	want := "reviewer │ ok  │                 notes\n" +
		"─────────┼─────┼──────────────────────\n" +
		"risk     │ no  │  the retry loop never\n" +
		"         │     │ stops when the server\n" +
		"         │     │   keeps answering 503\n" +
		"日本語   │ yes │               a|b | c\n"
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	for _, l := range strings.Split(strings.TrimRight(got, "\n"), "\n") {
		if w := visibleLen(l); w > 38 {
			t.Errorf("line of %d columns in a 40-column terminal: %q", w, l)
		}
		if strings.Contains(l, "|---") {
			t.Errorf("raw delimiter row: %q", l)
		}
	}
	for _, wantCell := range []string{"日本語", "a|b", "| c", "503"} {
		if !strings.Contains(got, wantCell) {
			t.Errorf("table lacks %q:\n%s", wantCell, got)
		}
	}
	// Without a terminal: the Markdown as written.
	if plain := Markdown(tableMD, Style{}); plain != tableMD {
		t.Errorf("plain table = %q", plain)
	}
}

// FuzzMarkdown: whatever the text, the rendering ends, is valid UTF-8,
// carries no escape sequence but the renderer's own colours (none without
// colour), and keeps table rows within the width when they can be.
func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{planMD, tableMD, "| a |\n|---|\n| 日日日日日日日日日日 |\n", "|x|\n|-|\n|\u0301|\n", "1. a\n> b\n---\n- [ ] c\n", "```\ncode\n"} {
		f.Add(s, 30, false)
	}
	f.Fuzz(func(t *testing.T, s string, width int, color bool) {
		if width < 0 || width > 400 {
			return
		}
		got := Markdown(s, Style{Terminal: true, Color: color, Width: width})
		if !utf8.ValidString(got) {
			t.Fatalf("not valid UTF-8: %q", got)
		}
		rest := got
		for _, sgr := range []string{sgrReset, sgrBold, sgrRed, sgrGreen, sgrCyan, sgrReverse, sgrNoReverse} {
			rest = strings.ReplaceAll(rest, sgr, "")
		}
		if strings.Contains(rest, "\x1b") {
			t.Fatalf("an escape sequence not of the renderer's: %q", got)
		}
		if !color && strings.Contains(got, "\x1b") {
			t.Fatalf("colour without colours: %q", got)
		}
		if bad := hostile.TerminalViolation(got); bad != "" {
			t.Fatalf("%s: %q", bad, got)
		}
	})
}
