package pager

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCommand(t *testing.T) {
	haveLess := func(string) (string, error) { return "/usr/bin/less", nil }
	noLess := func(string) (string, error) { return "", errors.New("not found") }
	for _, tc := range []struct {
		name string
		env  map[string]string
		look func(string) (string, error)
		want string
	}{
		{"default", nil, haveLess, "less -FRX"},
		{"no less installed", nil, noLess, ""},
		{"PAGER", map[string]string{"PAGER": "more"}, noLess, "more"},
		{"ORCH_PAGER wins", map[string]string{"ORCH_PAGER": "less -S", "PAGER": "more"}, haveLess, "less -S -R"},
		{"less without options gets -R", map[string]string{"PAGER": "less"}, haveLess, "less -R"},
		{"less -r is overridden", map[string]string{"PAGER": "/usr/bin/less -r"}, haveLess, "/usr/bin/less -r -R"},
		{"less ending in R kept", map[string]string{"PAGER": "less -FRX -SR"}, haveLess, "less -FRX -SR"},
		{"a long option is no -R", map[string]string{"PAGER": "less --RAW-CONTROL-CHARS"}, haveLess, "less --RAW-CONTROL-CHARS -R"},
		{"another pager as written", map[string]string{"PAGER": "delta --paging=always"}, haveLess, "delta --paging=always"},
		{"cat means none", map[string]string{"ORCH_PAGER": "cat"}, haveLess, ""},
		{"cat with blanks", map[string]string{"PAGER": " cat "}, haveLess, ""},
		{"empty ORCH_PAGER falls through", map[string]string{"ORCH_PAGER": "", "PAGER": "most"}, haveLess, "most"},
	} {
		got := Command(func(k string) string { return tc.env[k] }, tc.look)
		if got != tc.want {
			t.Errorf("%s: Command = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestEnviron(t *testing.T) {
	got := Environ([]string{"PATH=/bin", "LESS=-i"})
	want := []string{"PATH=/bin", "LESS=-i", "LV=-c"}
	if !slices.Equal(got, want) {
		t.Errorf("Environ kept LESS? %q, want %q", got, want)
	}
	got = Environ([]string{"PATH=/bin"})
	want = []string{"PATH=/bin", "LESS=FRX", "LV=-c"}
	if !slices.Equal(got, want) {
		t.Errorf("Environ = %q, want %q", got, want)
	}
}

// The pager gets the whole output on its stdin, its output goes to the
// terminal given, and it runs through sh -c with git's LESS default.
func TestStartShowsEverything(t *testing.T) {
	dir := t.TempDir()
	screen, err := os.Create(filepath.Join(dir, "screen"))
	if err != nil {
		t.Fatal(err)
	}
	defer screen.Close()
	p, err := Start(`echo "LESS=$LESS"; tr a-z A-Z`, screen, os.Stderr, Environ([]string{"PATH=" + os.Getenv("PATH")}))
	if err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		if _, err := p.Write([]byte("line of the log\n")); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(screen.Name())
	if !strings.HasPrefix(string(data), "LESS=FRX\nLINE OF THE LOG\n") || strings.Count(string(data), "LINE OF THE LOG\n") != 1000 {
		t.Errorf("the pager showed %d bytes: %.80q", len(data), data)
	}
}

// Quitting the pager early (q in less) is no error: the rest of the
// output is dropped quietly.
func TestPagerQuitEarly(t *testing.T) {
	p, err := Start("head -c 10 >/dev/null", os.Stdout, os.Stderr, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	chunk := []byte(strings.Repeat("x", 64<<10))
	for range 64 { // 4 MiB: far more than a pipe holds
		if n, err := p.Write(chunk); err != nil || n != len(chunk) {
			t.Fatalf("write after the pager quit: %d, %v", n, err)
		}
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close after the pager quit: %v", err)
	}
}

// A pager that cannot run is reported, with what to do.
func TestPagerMissing(t *testing.T) {
	var stderr strings.Builder
	p, err := Start("no-such-pager-here", os.Stdout, &stderr, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	p.Write([]byte("text\n"))
	err = p.Close()
	if !strings.Contains(stderr.String(), "no-such-pager-here") {
		t.Errorf("the shell's own message is not passed on: %q", stderr.String())
	}
	if err == nil || !strings.Contains(err.Error(), `"no-such-pager-here" could not run (exit 127)`) || !strings.Contains(err.Error(), "--no-pager") {
		t.Errorf("Close = %v", err)
	}
}
