package patch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/gittest"
)

// gitRepo is a throw-away repository driven by the real git binary.
type gitRepo struct {
	t   *testing.T
	dir string
	env []string
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed: %v", err)
	}
	home := t.TempDir()
	r := &gitRepo{t: t, dir: t.TempDir(), env: append(append(os.Environ(),
		"HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C"),
		gittest.Identity...)}
	r.git("init", "-q", "-b", "main")
	return r
}

func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (r *gitRepo) write(rel, content string) {
	r.t.Helper()
	gittest.Write(r.t, r.dir, rel, content)
}

func (r *gitRepo) remove(rel string) {
	r.t.Helper()
	if err := os.Remove(filepath.Join(r.dir, filepath.FromSlash(rel))); err != nil {
		r.t.Fatal(err)
	}
}

func (r *gitRepo) commit() {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", "base")
}

// diff stages everything and returns the staged diff against HEAD.
func (r *gitRepo) diff(args ...string) string {
	r.t.Helper()
	r.git("add", "-A")
	return r.git(append([]string{"diff", "--cached"}, args...)...)
}

func (r *gitRepo) symlink(target, rel string) {
	r.t.Helper()
	if err := os.Symlink(target, filepath.Join(r.dir, filepath.FromSlash(rel))); err != nil {
		r.t.Fatal(err)
	}
}
