package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/gitx"
)

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
	if _, err := exec.LookPath("git"); err != nil {
		return out, fmt.Errorf("find git: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// gitx drops GIT_DIR and the other variables that would make git look
	// at another repository than dir's own, and reads the paths raw: they
	// may hold a colon or a line break.
	gitDir, commonDir, err := (&gitx.Repo{Dir: dir}).GitDirs(ctx)
	if err != nil {
		msg := err.Error()
		var gerr *gitx.Error
		if errors.As(err, &gerr) && strings.TrimSpace(gerr.Stderr) != "" {
			msg = strings.TrimSpace(gerr.Stderr)
		}
		return out, fmt.Errorf("git rev-parse in %s: %s", dir, clip.Runes(msg, 300))
	}
	for _, p := range []string{gitDir, commonDir} {
		p = filepath.Clean(p)
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

// gitConfigKept are the sections of a repository's config that the
// sandbox shows: what git needs to read the repository (its format and
// extensions). Remotes (whose URLs may hold credentials), credential
// helpers, includes and the rest are left out.
var gitConfigKept = []string{"core", "extensions"}

// gitConfigDropped are keys of the kept sections left out too: programs
// git would run (fsmonitor, sshCommand, askPass).
var gitConfigDropped = []string{"fsmonitor", "sshcommand", "askpass"}

// sanitizeGitConfig returns the lines of a git config file that the
// sandbox shows: the sections of gitConfigKept without gitConfigDropped.
func sanitizeGitConfig(data []byte) []byte {
	var out bytes.Buffer
	keep, continued := false, false
	for _, line := range strings.SplitAfter(string(data), "\n") {
		// A value continued on the next line goes with its key.
		wasContinued := continued
		continued = strings.HasSuffix(strings.TrimRight(line, "\r\n"), "\\")
		if wasContinued {
			continue
		}
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "[") {
			name := strings.TrimLeft(trimmed, "[")
			if i := strings.IndexAny(name, " \t\"]."); i >= 0 {
				name = name[:i]
			}
			// A section header may carry a key on the same line
			// ("[core] bare = false"): only the header is kept. One
			// without "]" is not a header git reads: nothing follows.
			end := strings.Index(trimmed, "]")
			keep = end >= 0 && slices.Contains(gitConfigKept, strings.ToLower(name))
			if keep {
				out.WriteString(trimmed[:end+1] + "\n")
			}
			continue
		}
		if !keep {
			continue
		}
		key := strings.ToLower(strings.TrimSpace(strings.SplitN(trimmed, "=", 2)[0]))
		if slices.Contains(gitConfigDropped, key) || continued {
			continue
		}
		out.WriteString(line)
	}
	return out.Bytes()
}

// gitConfigCopies writes, for each git directory of the sandbox that has a
// config file, a sanitized copy into folder and returns the binds that
// show each copy in place of the original.
func gitConfigCopies(git []string, folder string) ([]Mount, error) {
	var out []Mount
	for i, g := range git {
		cfg := filepath.Join(g, "config")
		info, err := os.Lstat(cfg)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(cfg)
		if err != nil {
			return nil, err
		}
		cp := filepath.Join(folder, "gitconfig-"+strconv.Itoa(i))
		if err := os.WriteFile(cp, sanitizeGitConfig(data), 0o644); err != nil {
			return nil, err
		}
		out = append(out, Mount{Source: cp, Target: cfg})
	}
	return out, nil
}
