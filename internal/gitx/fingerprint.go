package gitx

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Fingerprint records the parts of a repository that can make code run
// outside a sandbox later, or redirect history: the hooks, the
// configuration and the refs. orch takes one before the test suites run
// and compares after them and again at accept.
type Fingerprint struct {
	// Hooks maps each file below the hooks folder (slash path relative to
	// it) to the sha256 of its content and mode.
	Hooks map[string]string `json:"hooks"`
	// Config is the sha256 of the repository's config files (config and
	// config.worktree of the common and the work tree's git folder).
	Config string `json:"config"`
	// Refs is the sha256 of every ref (but remote-tracking ones) with its
	// value, and of HEAD.
	Refs string `json:"refs"`
	// refs holds the ref list itself, to name what changed.
	refs map[string]string
}

// Fingerprint reads the repository's fingerprint.
func (r *Repo) Fingerprint(ctx context.Context) (Fingerprint, error) {
	out, err := r.run(ctx, call{sub: "rev-parse", args: []string{"--path-format=absolute", "--git-common-dir", "--git-dir"}})
	if err != nil {
		return Fingerprint{}, fmt.Errorf("fingerprint of %s: %w", r.Dir, err)
	}
	dirs := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(dirs) != 2 {
		return Fingerprint{}, fmt.Errorf("fingerprint of %s: unexpected rev-parse output %q", r.Dir, out)
	}
	common, gitDir := dirs[0], dirs[1]
	fp := Fingerprint{Hooks: map[string]string{}, refs: map[string]string{}}

	hooks := filepath.Join(common, "hooks")
	err = filepath.WalkDir(hooks, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == hooks {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() {
			return nil
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
	// fingerprint.
	for i, p := range []string{filepath.Join(common, "config"), filepath.Join(common, "config.worktree"), filepath.Join(gitDir, "config.worktree")} {
		fmt.Fprintf(h, "%d %s\n", i, fileDigest(p))
	}
	fp.Config = hex.EncodeToString(h.Sum(nil))

	refsOut, err := r.run(ctx, call{sub: "for-each-ref", args: []string{"--format=%(refname)%00%(objectname)%00%(symref)"}})
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
	head, _ := r.run(ctx, call{sub: "symbolic-ref", args: []string{"-q", "HEAD"}})
	headVal, _ := r.run(ctx, call{sub: "rev-parse", args: []string{"-q", "--verify", "HEAD"}})
	fp.refs["HEAD"] = strings.TrimSpace(string(head)) + " " + strings.TrimSpace(string(headVal))
	h = sha256.New()
	names := make([]string, 0, len(fp.refs))
	for n := range fp.refs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(h, "%s %s\n", n, fp.refs[n])
	}
	fp.Refs = hex.EncodeToString(h.Sum(nil))
	return fp, nil
}

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
// ("hook pre-commit added", "config changed", "ref refs/heads/x added").
// With refs false the refs are not compared (they may move between a test
// run and accept for good reasons).
func (a Fingerprint) Changes(b Fingerprint, refs bool) []string {
	out := mapChanges("hook ", a.Hooks, b.Hooks, "changed")
	if a.Config != b.Config {
		out = append(out, "config changed")
	}
	if !refs || a.Refs == b.Refs {
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
