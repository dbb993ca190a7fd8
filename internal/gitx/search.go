package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// GrepMatch is one line of a file that matches a pattern.
type GrepMatch struct {
	Path string
	Line int // 1-based
	Text string
}

// GrepOptions bound a search.
type GrepOptions struct {
	// IgnoreCase matches letters in either case.
	IgnoreCase bool
	// MaxPerFile bounds the matches reported per file; 0 means 20.
	MaxPerFile int
	// MaxBytes bounds git's output read; the search stops (Truncated)
	// once it is reached. 0 means 4 MiB.
	MaxBytes int
}

// GrepResult is what Grep found.
type GrepResult struct {
	Matches []GrepMatch
	// Truncated is true when the output bound stopped the search early.
	Truncated bool
}

// Grep searches the text files of commit's tree for the regular expression
// pattern (Perl-compatible when git was built with PCRE, else POSIX
// extended) with `git grep`. Binary files are skipped. No match is an empty
// result, not an error; a pattern git cannot compile is an error.
func (r *Repo) Grep(ctx context.Context, commit, pattern string, opt GrepOptions) (GrepResult, error) {
	if err := checkRev(commit); err != nil {
		return GrepResult{}, err
	}
	sha, err := r.ResolveCommit(ctx, commit)
	if err != nil {
		return GrepResult{}, err
	}
	res, err := r.grep(ctx, sha, pattern, "-P", opt)
	var gerr *Error
	if errors.As(err, &gerr) && strings.Contains(strings.ToLower(gerr.Stderr), "pcre") {
		// git without PCRE support: fall back to extended expressions.
		res, err = r.grep(ctx, sha, pattern, "-E", opt)
	}
	return res, err
}

// limitBuffer keeps the first max bytes written and then calls stop.
type limitBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	max  int
	full bool
	stop func()
}

func (b *limitBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.full {
		return len(p), nil
	}
	if left := b.max - b.buf.Len(); len(p) > left {
		b.buf.Write(p[:left])
		b.full = true
		b.stop()
		return len(p), nil
	}
	b.buf.Write(p)
	return len(p), nil
}

func (r *Repo) grep(ctx context.Context, sha, pattern, flavour string, opt GrepOptions) (GrepResult, error) {
	perFile := opt.MaxPerFile
	if perFile <= 0 {
		perFile = 20
	}
	maxBytes := opt.MaxBytes
	if maxBytes <= 0 {
		maxBytes = 4 << 20
	}
	args := []string{"--no-pager", "-C", r.Dir, "grep", "--null", "-n", "-I", "--no-color", flavour,
		"--max-count", strconv.Itoa(perFile)}
	if opt.IgnoreCase {
		args = append(args, "-i")
	}
	args = append(args, "-e", pattern, sha, "--")
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := r.command(cctx, args, nil)
	out := &limitBuffer{max: maxBytes, stop: cancel}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	runErr := cmd.Run()
	out.mu.Lock()
	data, truncated := out.buf.Bytes(), out.full
	out.mu.Unlock()
	if runErr != nil && !truncated {
		if ctx.Err() != nil {
			return GrepResult{}, &Error{Subcommand: "grep", Args: args, ExitCode: -1, Stderr: stderr.String(), Err: ctx.Err()}
		}
		var exitErr *exec.ExitError
		if errors.As(runErr, &exitErr) && exitErr.ExitCode() == 1 && stderr.Len() == 0 {
			return GrepResult{}, nil // no match
		}
		code := -1
		if errors.As(runErr, &exitErr) {
			code = exitErr.ExitCode()
		}
		return GrepResult{}, &Error{Subcommand: "grep", Args: args, ExitCode: code, Stderr: stderr.String(), Err: runErr}
	}
	matches, err := parseGrepNull(data, sha, truncated)
	if err != nil {
		return GrepResult{}, fmt.Errorf("grep %s: %w", sha, err)
	}
	return GrepResult{Matches: matches, Truncated: truncated}, nil
}

// parseGrepNull reads `git grep --null -n` output over a tree:
// "<sha>:<path>\0<line>\0<text>\n" per match. With partial set, an
// incomplete last record is dropped instead of refused.
func parseGrepNull(b []byte, sha string, partial bool) ([]GrepMatch, error) {
	var out []GrepMatch
	prefix := sha + ":"
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			break
		}
		name := string(b[:i])
		rest := b[i+1:]
		j := bytes.IndexByte(rest, 0)
		if j < 0 {
			break
		}
		line, err := strconv.Atoi(string(rest[:j]))
		if err != nil || line < 1 {
			return nil, fmt.Errorf("unexpected line number %q", rest[:j])
		}
		rest = rest[j+1:]
		k := bytes.IndexByte(rest, '\n')
		if k < 0 {
			if partial {
				break
			}
			k = len(rest)
		}
		if !strings.HasPrefix(name, prefix) {
			return nil, fmt.Errorf("unexpected file name %q", name)
		}
		out = append(out, GrepMatch{Path: strings.TrimPrefix(name, prefix), Line: line, Text: string(rest[:k])})
		if k == len(rest) {
			break
		}
		b = rest[k+1:]
	}
	return out, nil
}
