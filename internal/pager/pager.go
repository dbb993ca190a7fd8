// Package pager shows long output through the user's pager when it goes to
// a terminal, the way git does: the pager named by ORCH_PAGER, else PAGER,
// else `less -FRX` (quit when the text fits one screen, keep colours, leave
// the text on the screen), with LESS=FRX and LV=-c in its environment
// unless they are set. An empty value or `cat` means no pager.
//
// What reaches the pager carries no control sequence but orch's own
// colours (the CLI writes it through termtext.Writer). less is still given
// -R last on its command line, so a LESS or a pager line asking for -r
// (every control character raw) cannot turn a stray one into a terminal
// command: options on the command line come after LESS, and the last wins.
package pager

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"strings"
	"sync"
	"syscall"
)

// Default is the pager used when neither ORCH_PAGER nor PAGER is set.
const Default = "less -FRX"

// Command returns the pager command line from the environment, or "" for
// none: ORCH_PAGER, then PAGER (the first that is set, even to ""), then
// Default when `less` is installed (lookPath finds it).
func Command(getenv func(string) string, lookPath func(string) (string, error)) string {
	line, set := "", false
	for _, k := range []string{"ORCH_PAGER", "PAGER"} {
		if v := getenv(k); v != "" {
			line, set = v, true
			break
		}
	}
	if !set {
		if _, err := lookPath("less"); err != nil {
			return ""
		}
		line = Default
	}
	line = strings.TrimSpace(line)
	if line == "cat" {
		return ""
	}
	return colorsOnly(line)
}

// colorsOnly appends -R to a less command line whose last option cluster
// lacks it:
// less then passes SGR colours and shows every other control character
// as ^X, whatever LESS or the line's earlier options say (-r).
func colorsOnly(line string) string {
	f := strings.Fields(line)
	if len(f) == 0 || path.Base(f[0]) != "less" {
		return line
	}
	if last := f[len(f)-1]; strings.HasPrefix(last, "-") && !strings.HasPrefix(last, "--") && strings.Contains(last, "R") && !strings.Contains(last, "r") {
		return line
	}
	return line + " -R"
}

// Environ returns environ with git's defaults for the pager added: LESS=FRX
// and LV=-c, each only when it is not set.
func Environ(environ []string) []string {
	has := func(k string) bool {
		for _, kv := range environ {
			if strings.HasPrefix(kv, k+"=") {
				return true
			}
		}
		return false
	}
	out := append([]string(nil), environ...)
	if !has("LESS") {
		out = append(out, "LESS=FRX")
	}
	if !has("LV") {
		out = append(out, "LV=-c")
	}
	return out
}

// Pager is a running pager; what is written to it is what it shows.
type Pager struct {
	cmd *exec.Cmd
	in  io.WriteCloser

	mu   sync.Mutex
	gone bool // the pager quit before the output ended: the rest is dropped
	done bool
	err  error
}

// Start runs the pager command line through `sh -c` (so a line such as
// `less -S` or `delta --paging=always` works as in git) with its output on
// tty and its errors on stderr.
func Start(line string, tty *os.File, stderr io.Writer, environ []string) (*Pager, error) {
	cmd := exec.Command("sh", "-c", line)
	cmd.Stdout = tty
	cmd.Stderr = stderr
	cmd.Env = environ
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the pager %q: %w", line, err)
	}
	return &Pager{cmd: cmd, in: in}, nil
}

// Write sends p to the pager. Once the person has quit the pager (a
// broken pipe), the rest of the output is dropped without an error, as
// git does: quitting early is how a pager is used.
func (p *Pager) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gone || p.done {
		return len(b), nil
	}
	n, err := p.in.Write(b)
	if err != nil && (errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed)) {
		p.gone = true
		return len(b), nil
	}
	return n, err
}

// Close ends the output and waits until the person quits the pager. A
// pager that exits non-zero (less quit with Ctrl-C, q before the end) is
// no error of the command; one that could not run is (exit status 126 or
// 127 from the shell).
func (p *Pager) Close() error {
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return p.err
	}
	p.done = true
	p.mu.Unlock()
	p.in.Close()
	err := p.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if c := ee.ExitCode(); c == 126 || c == 127 {
			p.err = fmt.Errorf("the pager %q could not run (exit %d): set ORCH_PAGER, or use --no-pager", strings.Join(p.cmd.Args[2:], " "), c)
		}
	} else if err != nil {
		p.err = err
	}
	return p.err
}
