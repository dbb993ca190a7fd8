package fleet

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/orchdev/orch/internal/safepath"
	"github.com/orchdev/orch/internal/task"
)

// errMoved is a push refused because the task's ref is no longer at the
// step's parent.
var errMoved = errors.New("the task's ref moved")

// trailerActivity names, in a commit of a task's ref, the activity that
// pushed it (workflow id / run id / activity id).
const trailerActivity = "Orch-Activity"

// git runs git in dir with the extra environment env and returns its
// output without the trailing newline.
func git(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimRight(out.String(), "\n"), nil
}

// taskDir is task id's folder in the clone at root.
func taskDir(root, id string) string { return filepath.Join(root, task.OrchDir, "tasks", id) }

// fetch brings task id's ref from the shared remote and returns its commit.
func (s *Steps) fetch(ctx context.Context, id string) (string, error) {
	s.git.Lock()
	defer s.git.Unlock()
	return FetchRef(ctx, s.Root, s.Remote, id)
}

// FetchRef brings task id's ref from remote into the clone at root (as
// LocalRef) and returns its commit.
func FetchRef(ctx context.Context, root, remote, id string) (string, error) {
	if _, err := git(ctx, root, nil, "fetch", "--quiet", remote, "+"+TaskRef(id)+":"+LocalRef(id)); err != nil {
		return "", err
	}
	return git(ctx, root, nil, "rev-parse", "--verify", LocalRef(id)+"^{commit}")
}

// materialize replaces task id's folder in the clone by the tree of the
// ref's commit (the lock file stays: it is never deleted).
func (s *Steps) materialize(ctx context.Context, id, commit string) error {
	return Materialize(ctx, s.Root, id, commit)
}

// Materialize replaces task id's folder in the clone at root by the tree
// of commit. Every path is checked (safepath) before anything is written.
func Materialize(ctx context.Context, root, id, commit string) error {
	if err := task.ValidID(id); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "git", "archive", "--format=tar", commit)
	cmd.Dir = root
	var errb bytes.Buffer
	cmd.Stderr = &errb
	data, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git archive %s: %w: %s", commit, err, strings.TrimSpace(errb.String()))
	}
	type file struct {
		rel  string
		mode os.FileMode
		data []byte
	}
	var files []file
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read the tree of %s: %w", commit, err)
		}
		switch h.Typeflag {
		case tar.TypeDir, tar.TypeXGlobalHeader:
			continue
		case tar.TypeReg:
		default:
			return fmt.Errorf("task %s's ref %.12s holds %s, which is not a regular file", id, commit, h.Name)
		}
		if err := safepath.Check(h.Name); err != nil {
			return fmt.Errorf("task %s's ref %.12s: %w", id, commit, err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		files = append(files, file{rel: h.Name, mode: os.FileMode(h.Mode) & 0o755, data: body})
	}
	dir := taskDir(root, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == ".lock" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.data, f.mode|0o600); err != nil {
			return err
		}
	}
	return nil
}

// push commits task id's folder on top of head (the ref's commit the step
// started from) with a message naming the activity key, and pushes it to
// the shared remote as a fast-forward: a ref moved meanwhile refuses the
// push. It returns the new commit, or head when the folder did not change.
func (s *Steps) push(ctx context.Context, st Step, head, key string) (string, error) {
	s.git.Lock()
	defer s.git.Unlock()
	commit, err := CommitFolder(ctx, s.Root, st.Task, head, stepMessage(st, key))
	if err != nil || commit == head {
		return commit, err
	}
	if _, err := git(ctx, s.Root, nil, "push", "--quiet", s.Remote, commit+":"+TaskRef(st.Task)); err != nil {
		// Refused as a non-fast-forward, or lost: the caller looks at
		// the ref again.
		return "", fmt.Errorf("%w: %v", errMoved, err)
	}
	if _, err := git(ctx, s.Root, nil, "update-ref", LocalRef(st.Task), commit); err != nil {
		return "", err
	}
	return commit, nil
}

// stepMessage is the message of the commit step st pushes as activity
// key: its trailers name the task and the activity.
func stepMessage(st Step, key string) string {
	what := string(st.Kind)
	if st.Phase != "" {
		what += " " + string(st.Phase)
	}
	return fmt.Sprintf("orch fleet: %s %s\n\nOrch-Fleet-Task: %s\n%s: %s\n", st.Task, what, st.Task, trailerActivity, key)
}

// CommitFolder commits task id's folder in the clone at root as a commit
// whose parent is parent ("" for none) and returns it; when the folder's
// tree is parent's, it returns parent. The repository's index and work
// tree are not touched (a temporary index).
func CommitFolder(ctx context.Context, root, id, parent, msg string) (string, error) {
	idx, err := os.CreateTemp("", "orch-fleet-index-")
	if err != nil {
		return "", err
	}
	idx.Close()
	os.Remove(idx.Name())
	defer os.Remove(idx.Name())
	dir := taskDir(root, id)
	env := []string{"GIT_INDEX_FILE=" + idx.Name(),
		"GIT_AUTHOR_NAME=orch fleet", "GIT_AUTHOR_EMAIL=orch-fleet@localhost",
		"GIT_COMMITTER_NAME=orch fleet", "GIT_COMMITTER_EMAIL=orch-fleet@localhost"}
	gitDir, err := git(ctx, root, nil, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return "", err
	}
	if _, err := git(ctx, dir, env, "--git-dir="+gitDir, "--work-tree="+dir, "add", "--all", "--force", "--",
		".", ":(exclude).lock", ":(exclude).staging", ":(exclude,glob)**/*.tmp-*"); err != nil {
		return "", err
	}
	tree, err := git(ctx, dir, env, "--git-dir="+gitDir, "write-tree")
	if err != nil {
		return "", err
	}
	args := []string{"--git-dir=" + gitDir, "commit-tree", tree, "-m", msg}
	if parent != "" {
		old, err := git(ctx, dir, nil, "--git-dir="+gitDir, "rev-parse", parent+"^{tree}")
		if err != nil {
			return "", err
		}
		if old == tree {
			return parent, nil
		}
		args = append(args, "-p", parent)
	}
	return git(ctx, dir, env, args...)
}
