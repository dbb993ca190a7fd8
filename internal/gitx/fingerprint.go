package gitx

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Fingerprint records the parts of a repository that can make code run
// outside a sandbox later, or redirect what git does: the hooks, the
// configuration, a linked worktree's .git link and administrative files,
// and the refs. It is orch's one check that a test suite left git alone:
// the test phase takes one before the suites, compares after each suite
// (hooks, config and links: a change makes that suite a runner error) and
// after the run (refs too: recorded in the report), and accept compares
// the hooks and config again.
type Fingerprint struct {
	// Hooks maps each file below the hooks folder (slash path relative to
	// it) to the sha256 of its content and mode.
	Hooks map[string]string `json:"hooks"`
	// Config is the sha256 of the repository's config files (config, and
	// the main worktree's config.worktree).
	Config string `json:"config"`
	// Links maps the files that tie a linked worktree to its repository
	// (".git", the link in the work tree; "gitdir", "commondir" and its own
	// "config.worktree" in its administrative folder) to their digests;
	// empty for a main worktree.
	Links map[string]string `json:"links,omitempty"`
	// Refs is the sha256 of every ref (but remote-tracking ones) with its
	// value, and of HEAD (and the main worktree's HEAD, from a linked one).
	Refs string `json:"refs"`
	// refs holds the ref list itself, to name what changed.
	refs map[string]string
	// dirs are the git folders the fingerprint was read from.
	dirs gitDirs
}

// gitDirs are a work tree's git folders.
type gitDirs struct {
	common, gitDir string
}

// Scope says what Changes compares besides the hooks and config.
type Scope uint8

const (
	// ScopeLinks compares a linked worktree's .git link and
	// administrative files.
	ScopeLinks Scope = 1 << iota
	// ScopeRefs compares the refs (they may move for good reasons between
	// a test run and accept: the user commits).
	ScopeRefs
)

// Fingerprint reads the repository's fingerprint.
func (r *Repo) Fingerprint(ctx context.Context) (Fingerprint, error) {
	dirs, err := r.revParsePaths(ctx, []string{"--path-format=absolute"}, []string{"--git-common-dir"}, []string{"--git-dir"})
	if err != nil {
		return Fingerprint{}, fmt.Errorf("fingerprint of %s: %w", r.Dir, err)
	}
	return r.fingerprint(ctx, gitDirs{common: dirs[0], gitDir: dirs[1]})
}

// CommonDir is the repository's git folder (holding hooks/ and config)
// the fingerprint was read from; empty for one read back from JSON.
func (f Fingerprint) CommonDir() string {
	return f.dirs.common
}

// Recheck reads the fingerprint again from the git folders the earlier
// one was read from: a .git link redirected since is a change of the
// link, not a reason to look elsewhere. An earlier fingerprint read back
// from JSON (no folders) is read afresh.
func (r *Repo) Recheck(ctx context.Context, earlier Fingerprint) (Fingerprint, error) {
	if earlier.dirs == (gitDirs{}) {
		return r.Fingerprint(ctx)
	}
	return r.fingerprint(ctx, earlier.dirs)
}

func (r *Repo) fingerprint(ctx context.Context, dirs gitDirs) (Fingerprint, error) {
	common, gitDir := dirs.common, dirs.gitDir
	fp := Fingerprint{Hooks: map[string]string{}, refs: map[string]string{}, dirs: dirs}

	hooks := filepath.Join(common, "hooks")
	err := filepath.WalkDir(hooks, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == hooks {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		if len(fp.Hooks) >= maxHookFiles {
			return fmt.Errorf("more than %d files in %s", maxHookFiles, hooks)
		}
		rel, _ := filepath.Rel(hooks, p)
		fp.Hooks[filepath.ToSlash(rel)] = fileDigest(p)
		return nil
	})
	if err != nil {
		return Fingerprint{}, fmt.Errorf("fingerprint hooks: %w", err)
	}

	h := sha256.New()
	// Named by role, not path: a copied or moved repository keeps its
	// fingerprint. The repository's config and the main worktree's
	// config.worktree (twice: the main worktree's own, as it has always
	// been hashed), the same from the main worktree and a linked one, so
	// accept can compare the test worktree's fingerprint with the main
	// worktree's. A linked worktree's own config.worktree is a link.
	cfg := []string{filepath.Join(common, "config"), filepath.Join(common, "config.worktree"), filepath.Join(common, "config.worktree")}
	for i, p := range cfg {
		fmt.Fprintf(h, "%d %s\n", i, fileDigest(p))
	}
	fp.Config = hex.EncodeToString(h.Sum(nil))

	if filepath.Clean(gitDir) != filepath.Clean(common) {
		fp.Links = map[string]string{
			".git":            fileDigest(filepath.Join(r.Dir, ".git")),
			"gitdir":          fileDigest(filepath.Join(gitDir, "gitdir")),
			"commondir":       fileDigest(filepath.Join(gitDir, "commondir")),
			"config.worktree": fileDigest(filepath.Join(gitDir, "config.worktree")),
		}
	}

	// The refs through the folder found above, whatever the link says now.
	at := []string{"GIT_DIR=" + gitDir}
	refsOut, err := r.run(ctx, call{sub: "for-each-ref", args: []string{"--format=%(refname)%00%(objectname)%00%(symref)"}, env: at})
	if err != nil {
		return Fingerprint{}, fmt.Errorf("fingerprint refs: %w", err)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(refsOut)), "\n") {
		if line == "" {
			continue
		}
		name, val, _ := strings.Cut(line, "\x00")
		if strings.HasPrefix(name, "refs/remotes/") {
			// Remote-tracking refs move with every (background) fetch and
			// never decide what is checked out or committed on.
			continue
		}
		fp.refs[name] = strings.TrimSuffix(strings.ReplaceAll(val, "\x00", " "), " ")
	}
	head, _ := r.run(ctx, call{sub: "symbolic-ref", args: []string{"-q", "HEAD"}, env: at})
	headVal, _ := r.run(ctx, call{sub: "rev-parse", args: []string{"-q", "--verify", "HEAD"}, env: at})
	fp.refs["HEAD"] = strings.TrimSpace(string(head)) + " " + strings.TrimSpace(string(headVal))
	if fp.Links != nil {
		// From a linked worktree: the main worktree's HEAD (the branch the
		// user works on) is not among the refs.
		fp.refs["HEAD of the main worktree"] = fileDigest(filepath.Join(common, "HEAD"))
	}
	h = sha256.New()
	for _, n := range slices.Sorted(maps.Keys(fp.refs)) {
		fmt.Fprintf(h, "%s %s\n", n, fp.refs[n])
	}
	fp.Refs = hex.EncodeToString(h.Sum(nil))
	return fp, nil
}

// maxHookFiles bounds the files fingerprinted below the hooks folder (it
// holds a dozen).
const maxHookFiles = 10000

// fileDigest is the sha256 of a file's mode and content, "absent" when it
// does not exist, or "unreadable: …".
func fileDigest(p string) string {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "absent"
	}
	if err != nil {
		return "unreadable: " + err.Error()
	}
	h := sha256.New()
	fmt.Fprintf(h, "%v\n", fi.Mode())
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(p)
		h.Write([]byte(target))
	} else if fi.Mode().IsRegular() {
		data, err := os.ReadFile(p)
		if err != nil {
			return "unreadable: " + err.Error()
		}
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Changes lists what differs from the earlier fingerprint a to b, in words
// ("hook pre-commit added", "config changed", "link .git changed", "ref
// refs/heads/x added"): always the hooks and config, and what scope adds.
func (a Fingerprint) Changes(b Fingerprint, scope Scope) []string {
	out := mapChanges("hook ", a.Hooks, b.Hooks, "changed")
	if a.Config != b.Config {
		out = append(out, "config changed")
	}
	if scope&ScopeLinks != 0 {
		out = append(out, mapChanges("link ", a.Links, b.Links, "changed")...)
	}
	if scope&ScopeRefs == 0 || a.Refs == b.Refs {
		return out
	}
	if a.refs == nil || b.refs == nil {
		return append(out, "refs changed")
	}
	return append(out, mapChanges("ref ", a.refs, b.refs, "moved")...)
}

// mapChanges lists, sorted by name, the entries added to, removed from or
// changed between two name → value maps: "<prefix><name> added" and so on,
// with changed saying how a changed entry is called ("changed", "moved").
func mapChanges(prefix string, a, b map[string]string, changed string) []string {
	names := make([]string, 0, len(a)+len(b))
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var out []string
	for _, n := range names {
		before, inA := a[n]
		after, inB := b[n]
		switch {
		case !inA:
			out = append(out, prefix+n+" added")
		case !inB:
			out = append(out, prefix+n+" removed")
		case before != after:
			out = append(out, prefix+n+" "+changed)
		}
	}
	return out
}
