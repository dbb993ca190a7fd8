package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Commit records the current work-tree state of exactly paths as a new
// commit on HEAD (`git commit --only`) and returns its sha. New files are
// included (registered with `git add --intent-to-add` first, and
// unregistered again if the commit fails), and a path deleted from the work
// tree or removed with `git rm` is committed as a deletion. Other staged
// and unstaged changes of the user stay exactly as they were. No hook runs.
// A missing identity fails with git's own message; gitx never invents one. ErrNothingToCommit when the paths do not differ from HEAD;
// ErrOperationInProgress during a merge, rebase, etc.
func (r *Repo) Commit(ctx context.Context, msg string, paths []string) (string, error) {
	if len(paths) == 0 {
		return "", fmt.Errorf("commit: %w: no paths given", ErrBadPath)
	}
	if err := checkPaths(paths); err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	if strings.TrimSpace(msg) == "" {
		return "", errors.New("commit: empty commit message")
	}
	if err := r.refuseInProgress(ctx, "commit"); err != nil {
		return "", err
	}
	newPaths, err := r.untrackedExisting(ctx, paths)
	if err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	if len(newPaths) > 0 {
		if _, err := r.run(ctx, call{sub: "add", args: []string{
			"--intent-to-add", "--pathspec-from-file=-", "--pathspec-file-nul",
		}, stdin: nulJoin(newPaths)}); err != nil {
			return "", fmt.Errorf("commit: register new files: %w", err)
		}
	}
	sha, err := r.commitOnly(ctx, msg, paths)
	if err != nil && len(newPaths) > 0 {
		// Make the new files untracked again, as they were.
		_, uerr := r.run(context.WithoutCancel(ctx), call{sub: "rm", args: []string{
			"--cached", "--quiet", "--pathspec-from-file=-", "--pathspec-file-nul",
		}, stdin: nulJoin(newPaths)})
		if uerr != nil {
			err = errors.Join(err, fmt.Errorf("commit: unregister new files: %w", uerr))
		}
	}
	return sha, err
}

func (r *Repo) commitOnly(ctx context.Context, msg string, paths []string) (string, error) {
	tmp, err := os.MkdirTemp("", "gitx-commit-")
	if err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	defer os.RemoveAll(tmp)
	msgFile := filepath.Join(tmp, "MSG")
	if err := os.WriteFile(msgFile, []byte(msg), 0o600); err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	_, err = r.run(ctx, call{sub: "commit", args: []string{
		"--quiet", "--only", "--cleanup=whitespace", "--file", msgFile,
		"--pathspec-from-file=-", "--pathspec-file-nul",
	}, stdin: nulJoin(paths)})
	if err != nil {
		var gerr *Error
		if errors.As(err, &gerr) && gerr.ExitCode == 1 && nothingToCommit(gerr.Stdout+gerr.Stderr) {
			return "", fmt.Errorf("commit %s: %w", strings.Join(paths, ", "), ErrNothingToCommit)
		}
		return "", fmt.Errorf("commit %s: %w", strings.Join(paths, ", "), err)
	}
	return r.Head(ctx)
}

func nothingToCommit(out string) bool {
	return strings.Contains(out, "nothing to commit") ||
		strings.Contains(out, "no changes added to commit") ||
		strings.Contains(out, "nothing added to commit")
}

// untrackedExisting returns those of paths that exist in the work tree but
// have no index entry.
func (r *Repo) untrackedExisting(ctx context.Context, paths []string) ([]string, error) {
	idx, err := r.indexEntries(ctx, paths)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(r.Dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var out []string
	for _, p := range paths {
		if len(idx[p]) > 0 {
			continue
		}
		st, err := readState(root, p)
		if err != nil {
			return nil, err
		}
		if st.kind == 'f' || st.kind == 'l' {
			out = append(out, p)
		}
	}
	return out, nil
}

func nulJoin(paths []string) []byte {
	var b bytes.Buffer
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte(0)
	}
	return b.Bytes()
}
