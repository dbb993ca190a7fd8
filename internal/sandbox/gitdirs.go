package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/clip"
)

// gitDiscoveryEnv are the variables that would make git look at another
// repository than the directory's own.
var gitDiscoveryEnv = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_NAMESPACE"}

// gitDirs returns the git files and folders of dir that the sandbox binds
// read-only: dir/.git (a linked worktree's link file, or a repository's
// folder), and the git directory and common directory git reports for dir.
// For a linked worktree the common directory is the main repository's .git,
// with its hooks, config, refs and objects; binding it explicitly also
// keeps it visible when it lies under /tmp or a hidden home, so `git status`
// and `git log` work in the sandbox. Nothing is returned for a directory
// that is not a git checkout. The error says why git could not be asked;
// dir/.git is returned anyway.
func gitDirs(dir string) ([]string, error) {
	dotGit := filepath.Join(dir, ".git")
	if _, err := os.Lstat(dotGit); err != nil {
		return nil, nil
	}
	out := []string{dotGit}
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return out, fmt.Errorf("find git: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, gitBin, "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir")
	cmd.Dir = dir
	env := os.Environ()
	cmd.Env = slices.DeleteFunc(env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(gitDiscoveryEnv, name)
	})
	res, err := cmd.Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		return out, fmt.Errorf("git rev-parse in %s: %s", dir, clip.Runes(msg, 300))
	}
	for _, line := range strings.Split(strings.TrimSpace(string(res)), "\n") {
		p := filepath.Clean(strings.TrimSpace(line))
		if !filepath.IsAbs(p) {
			continue
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		if info, err := os.Stat(p); err != nil || !info.IsDir() {
			continue
		}
		if !slices.ContainsFunc(out, func(q string) bool { return within(p, q) }) {
			out = append(out, p)
		}
	}
	// A folder inside another one already bound is covered by it.
	return slices.DeleteFunc(slices.Clone(out), func(p string) bool {
		return slices.ContainsFunc(out, func(q string) bool { return q != p && within(p, q) && q != dotGit })
	}), nil
}
