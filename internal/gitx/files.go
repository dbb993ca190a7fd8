package gitx

import (
	"context"
	"fmt"
	"strings"
)

// TreeEntry is one record of `git ls-tree -z` or `git ls-files -s -z`.
type TreeEntry struct {
	Mode  string // "100644", "100755", "120000", "040000", "160000"
	Type  string // "blob", "tree", "commit" (ls-tree only)
	SHA   string
	Stage int // ls-files -s only
	Path  string
}

// parseLsTreeZ parses `git ls-tree -z` output: "MODE SP TYPE SP SHA TAB PATH\0".
func parseLsTreeZ(b []byte) ([]TreeEntry, error) {
	var out []TreeEntry
	for _, rec := range splitNUL(b) {
		meta, p, ok := strings.Cut(rec, "\t")
		parts := strings.Split(meta, " ")
		if !ok || p == "" || len(parts) != 3 || !isMode(parts[0]) || !isHex(parts[2]) || parts[1] == "" {
			return nil, fmt.Errorf("ls-tree record %q: want \"mode type sha\\tpath\"", rec)
		}
		out = append(out, TreeEntry{Mode: parts[0], Type: parts[1], SHA: parts[2], Path: p})
	}
	return out, nil
}

// parseLsFilesStageZ parses `git ls-files -s -z`: "MODE SP SHA SP STAGE TAB PATH\0".
func parseLsFilesStageZ(b []byte) ([]TreeEntry, error) {
	var out []TreeEntry
	for _, rec := range splitNUL(b) {
		meta, p, ok := strings.Cut(rec, "\t")
		parts := strings.Split(meta, " ")
		if !ok || p == "" || len(parts) != 3 || !isMode(parts[0]) || !isHex(parts[1]) ||
			len(parts[2]) != 1 || parts[2][0] < '0' || parts[2][0] > '3' {
			return nil, fmt.Errorf("ls-files record %q: want \"mode sha stage\\tpath\"", rec)
		}
		out = append(out, TreeEntry{Mode: parts[0], SHA: parts[1], Stage: int(parts[2][0] - '0'), Path: p})
	}
	return out, nil
}

func isMode(s string) bool {
	if len(s) != 6 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return true
}

func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ShowFile returns the content of path at commit, and false when the commit
// has no such path. A path that is a directory or a submodule at commit is
// an error. A symbolic link's content is its target.
func (r *Repo) ShowFile(ctx context.Context, commit, path string) ([]byte, bool, error) {
	if err := checkPath(path); err != nil {
		return nil, false, err
	}
	sha, err := r.ResolveCommit(ctx, commit)
	if err != nil {
		return nil, false, err
	}
	out, err := r.run(ctx, call{sub: "ls-tree", args: []string{"-z", "--full-tree", sha, "--", path}})
	if err != nil {
		return nil, false, fmt.Errorf("show %s at %s: %w", path, commit, err)
	}
	entries, err := parseLsTreeZ(out)
	if err != nil {
		return nil, false, fmt.Errorf("show %s at %s: %w", path, commit, err)
	}
	for _, e := range entries {
		if e.Path != path {
			continue
		}
		if e.Type != "blob" {
			return nil, false, fmt.Errorf("show %s at %s: is a %s, not a file", path, commit, e.Type)
		}
		data, err := r.run(ctx, call{sub: "cat-file", args: []string{"blob", e.SHA}})
		if err != nil {
			return nil, false, fmt.Errorf("show %s at %s: %w", path, commit, err)
		}
		return data, true, nil
	}
	return nil, false, nil
}

// LsFiles lists the files tracked in the index, each once, sorted.
func (r *Repo) LsFiles(ctx context.Context) ([]string, error) {
	out, err := r.run(ctx, call{sub: "ls-files", args: []string{"-z", "--cached", "--deduplicate"}})
	if err != nil {
		return nil, fmt.Errorf("tracked files of %s: %w", r.Dir, err)
	}
	return splitNUL(out), nil
}

// ListFiles lists tracked files plus untracked files that are not ignored
// (standard exclude rules), each once.
func (r *Repo) ListFiles(ctx context.Context) ([]string, error) {
	out, err := r.run(ctx, call{sub: "ls-files", args: []string{
		"-z", "--cached", "--others", "--exclude-standard", "--deduplicate",
	}})
	if err != nil {
		return nil, fmt.Errorf("files of %s: %w", r.Dir, err)
	}
	return splitNUL(out), nil
}
