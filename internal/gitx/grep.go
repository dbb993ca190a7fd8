package gitx

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
)

// GrepWords finds whole-word, fixed-string occurrences of words in the
// tracked text files (`git grep -F -w -o -n -I`): in the work tree's
// tracked files when commit is "" (the fastest: no blob to inflate), else
// in that commit's tree. fn is called once per occurrence, in
// git's order, with the repository path, the 1-based line and the word
// matched. No match is
// no error. The output is streamed, so a common word costs time, not
// memory.
func (r *Repo) GrepWords(ctx context.Context, words []string, commit string, fn func(path string, line int, word string)) error {
	if len(words) == 0 {
		return nil
	}
	args := []string{"--no-pager", "-C", r.Dir, "grep", "-z", "-o", "-n", "-I", "-F", "-w", "--no-color", "--full-name"}
	for _, w := range words {
		if w == "" || strings.ContainsAny(w, "\x00\n") {
			return fmt.Errorf("grep: %q is not a word", w)
		}
		args = append(args, "-e", w)
	}
	prefix := ""
	if commit != "" {
		sha, err := r.ResolveCommit(ctx, commit)
		if err != nil {
			return err
		}
		args = append(args, sha)
		prefix = sha + ":"
	}
	args = append(args, "--")
	cmd := r.command(ctx, args, nil)
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("grep: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return &Error{Subcommand: "grep", Args: args, ExitCode: -1, Err: err}
	}
	br := bufio.NewReaderSize(stdout, 256<<10)
	for {
		// "<path>\0<line>\0<match>\n"; a path may hold any byte but NUL.
		p, err := br.ReadString(0)
		if err != nil {
			break
		}
		ln, err := br.ReadString(0)
		if err != nil {
			break
		}
		m, err := br.ReadString('\n')
		if err != nil {
			break
		}
		line, _ := strconv.Atoi(ln[:len(ln)-1])
		fn(strings.TrimPrefix(p[:len(p)-1], prefix), line, m[:len(m)-1])
	}
	err = cmd.Wait()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if code := exitCodeOf(err); code == 1 && errBuf.Len() == 0 {
		return nil // no match
	}
	return &Error{Subcommand: "grep", Args: args, ExitCode: exitCodeOf(err), Stderr: errBuf.String(), Err: err}
}
