package gitx

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// IndexFiles lists the entries tracked in the index (`git ls-files -s`),
// one per path (the first stage of a conflicted path), in git's order.
func (r *Repo) IndexFiles(ctx context.Context) ([]TreeEntry, error) {
	out, err := r.run(ctx, call{sub: "ls-files", args: []string{"-z", "-s", "--cached"}})
	if err != nil {
		return nil, fmt.Errorf("tracked files of %s: %w", r.Dir, err)
	}
	entries, err := parseLsFilesStageZ(out)
	if err != nil {
		return nil, fmt.Errorf("tracked files of %s: %w", r.Dir, err)
	}
	kept := entries[:0]
	for i, e := range entries {
		if i > 0 && kept[len(kept)-1].Path == e.Path {
			continue // ls-files lists the stages of one path together
		}
		kept = append(kept, e)
	}
	return kept, nil
}

// TreeFiles lists every entry of commit's tree, recursively (`git ls-tree
// -r`): files, symbolic links and submodules, not folders.
func (r *Repo) TreeFiles(ctx context.Context, commit string) ([]TreeEntry, error) {
	sha, err := r.ResolveCommit(ctx, commit)
	if err != nil {
		return nil, err
	}
	out, err := r.run(ctx, call{sub: "ls-tree", args: []string{"-r", "-z", "--full-tree", sha}})
	if err != nil {
		return nil, fmt.Errorf("files of %s: %w", commit, err)
	}
	entries, err := parseLsTreeZ(out)
	if err != nil {
		return nil, fmt.Errorf("files of %s: %w", commit, err)
	}
	return entries, nil
}

// CatBlobs streams the content of each blob in shas through one `git
// cat-file --batch`, calling fn in order with the index into shas and the
// content (valid only during the call). A blob larger than maxBytes is
// skipped (fn gets nil data and its size); a missing object is an error.
// An error from fn stops the stream and is returned.
func (r *Repo) CatBlobs(ctx context.Context, shas []string, maxBytes int64, fn func(i int, data []byte, size int64) error) error {
	return r.catBlobs(ctx, shas, maxBytes, false, fn)
}

// CatBlobHeads is CatBlobs giving the first maxBytes of a larger blob
// instead of skipping it (fn still gets its whole size).
func (r *Repo) CatBlobHeads(ctx context.Context, shas []string, maxBytes int64, fn func(i int, data []byte, size int64) error) error {
	return r.catBlobs(ctx, shas, maxBytes, true, fn)
}

func (r *Repo) catBlobs(ctx context.Context, shas []string, maxBytes int64, head bool, fn func(i int, data []byte, size int64) error) error {
	if len(shas) == 0 {
		return nil
	}
	for _, s := range shas {
		if !isHex(s) {
			return fmt.Errorf("cat-file: %q is not an object name", s)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	args := []string{"--no-pager", "-C", r.Dir, "cat-file", "--batch"}
	cmd := r.command(ctx, args, nil)
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("cat-file: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("cat-file: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return &Error{Subcommand: "cat-file", Args: args, ExitCode: -1, Err: err}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w := bufio.NewWriterSize(stdin, 64<<10)
		for _, s := range shas {
			if _, err := w.WriteString(s + "\n"); err != nil {
				break
			}
		}
		w.Flush()
		stdin.Close()
	}()
	readErr := readBatch(bufio.NewReaderSize(stdout, 256<<10), shas, maxBytes, head, fn)
	if readErr != nil {
		cancel()
	}
	io.Copy(io.Discard, stdout)
	wg.Wait()
	waitErr := cmd.Wait()
	switch {
	case readErr != nil:
		return readErr
	case ctx.Err() != nil:
		return ctx.Err()
	case waitErr != nil:
		return &Error{Subcommand: "cat-file", Args: args, ExitCode: exitCodeOf(waitErr), Stderr: errBuf.String(), Err: waitErr}
	}
	return nil
}

// readBatch parses `cat-file --batch` output: "<sha> <type> <size>\n
// <content>\n" per object, "<name> missing\n" for an absent one. A blob
// larger than maxBytes gets nil data, or with head its first maxBytes.
func readBatch(br *bufio.Reader, shas []string, maxBytes int64, head bool, fn func(int, []byte, int64) error) error {
	var buf []byte
	for i, want := range shas {
		header, err := br.ReadString('\n')
		if err != nil {
			return fmt.Errorf("cat-file: object %s: %w", want, errShort(err))
		}
		fields := strings.Fields(header)
		if len(fields) == 2 && fields[1] == "missing" {
			return fmt.Errorf("cat-file: object %s is missing", want)
		}
		if len(fields) != 3 || fields[0] != want {
			return fmt.Errorf("cat-file: object %s: unexpected header %q", want, strings.TrimSpace(header))
		}
		size, err := strconv.ParseInt(fields[2], 10, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("cat-file: object %s: bad size in %q", want, strings.TrimSpace(header))
		}
		var data []byte
		n := size // the bytes read into data
		switch {
		case size <= maxBytes:
		case head:
			n = max(maxBytes, 0)
		default:
			n = 0
		}
		if size <= maxBytes || head {
			if int64(cap(buf)) < n {
				buf = make([]byte, n)
			}
			data = buf[:n]
			if _, err := io.ReadFull(br, data); err != nil {
				return fmt.Errorf("cat-file: object %s: %w", want, errShort(err))
			}
		}
		if _, err := br.Discard(int(size - n)); err != nil {
			return fmt.Errorf("cat-file: object %s: %w", want, errShort(err))
		}
		if b, err := br.ReadByte(); err != nil || b != '\n' {
			return fmt.Errorf("cat-file: object %s: missing record terminator", want)
		}
		if err := fn(i, data, size); err != nil {
			return err
		}
	}
	return nil
}

func errShort(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

func exitCodeOf(err error) int {
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && exitErr.Exited() {
		return exitErr.ExitCode()
	}
	return -1
}
