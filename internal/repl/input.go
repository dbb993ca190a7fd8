package repl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/chzyer/readline"
	"github.com/orchdev/orch/internal/exit"
)

// maxLine bounds a line read without a terminal.
const maxLine = 1 << 20

// lineReader reads the session's lines. readLine returns io.EOF when the
// input ends (Ctrl-D) and errInterrupt for Ctrl-C at the prompt, with the
// discarded text.
type lineReader interface {
	readLine(ctx context.Context, prompt string) (string, error)
	close() error
}

// editor edits lines in a terminal with readline.
type editor struct {
	rl *readline.Instance
	// stdin is closed first: readline's Close waits for its reader, which
	// only a closed stdin releases.
	stdin *readline.CancelableStdin
	once  sync.Once
}

// newEditor starts readline on the terminal in and out, with history in
// historyFile ("" for none) and completion from src.
func newEditor(in io.Reader, out io.Writer, historyFile string, src sources) (*editor, error) {
	f, ok := in.(*os.File)
	if !ok {
		return nil, exit.New(exit.ErrUsage, "line editing needs a terminal as standard input")
	}
	stdin := readline.NewCancelableStdin(f)
	rl, err := readline.NewEx(&readline.Config{
		Stdin:             stdin,
		Stdout:            out,
		HistoryFile:       historyFile,
		HistoryLimit:      1000,
		HistorySearchFold: true,
		AutoComplete:      completer{src: src},
		FuncIsTerminal:    func() bool { return true },
	})
	if err != nil {
		stdin.Close()
		return nil, fmt.Errorf("start the line editor: %w", err)
	}
	return &editor{rl: rl, stdin: stdin}, nil
}

func (e *editor) readLine(ctx context.Context, prompt string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	e.rl.SetPrompt(prompt)
	// Leaving the session (SIGTERM) closes the editor, which ends Readline.
	stop := context.AfterFunc(ctx, func() { e.close() })
	defer stop()
	line, err := e.rl.Readline()
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case errors.Is(err, readline.ErrInterrupt):
		return line, errInterrupt
	}
	return line, err
}

func (e *editor) close() error {
	var err error
	e.once.Do(func() {
		e.stdin.Close()
		err = e.rl.Close()
	})
	return err
}

// plain reads lines without a terminal: no prompt, no editing. Lines are
// read by a goroutine so that leaving the session (or an interrupt while
// waiting) never waits on the input.
type plain struct {
	lines chan lineOrErr
	intr  <-chan os.Signal
	done  chan struct{}
	once  sync.Once
}

type lineOrErr struct {
	line string
	err  error
}

func newPlain(in io.Reader, intr <-chan os.Signal) *plain {
	p := &plain{lines: make(chan lineOrErr), intr: intr, done: make(chan struct{})}
	go p.scan(in)
	return p
}

func (p *plain) scan(in io.Reader) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	for sc.Scan() {
		select {
		case p.lines <- lineOrErr{line: sc.Text()}:
		case <-p.done:
			return
		}
	}
	err := sc.Err()
	if err == nil {
		err = io.EOF
	} else {
		err = fmt.Errorf("read the input: %w", err)
	}
	for {
		select {
		case p.lines <- lineOrErr{err: err}:
		case <-p.done:
			return
		}
	}
}

func (p *plain) readLine(ctx context.Context, _ string) (string, error) {
	select {
	case l := <-p.lines:
		return l.line, l.err
	case <-ctx.Done():
		return "", ctx.Err()
	case <-p.intr:
		// Ctrl-C with no command running and no prompt to clear: leave.
		return "", io.EOF
	}
}

func (p *plain) close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}
