package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/repomap"
	"github.com/orchdev/orch/internal/visibility"
)

// RepoContext is what a model is told about the repository, bounded by a
// byte budget.
type RepoContext struct {
	// Map is the ranked repository map (internal/repomap); when set it
	// replaces the plain file list.
	Map     string
	Tree    []string // tracked files the visibility policy shows
	Omitted int      // files left out of Tree for the budget
	Files   []FileContent
}

// FileContent is one file's text given to a model.
type FileContent struct {
	Path      string
	Content   string
	Truncated bool
}

// Render writes the context as prompt text.
func (c RepoContext) Render() string {
	var b strings.Builder
	if c.Map != "" {
		b.WriteString(c.Map)
		if !strings.HasSuffix(c.Map, "\n") {
			b.WriteString("\n")
		}
	} else {
		b.WriteString("Repository files:\n")
		for _, p := range c.Tree {
			b.WriteString("  ")
			b.WriteString(p)
			b.WriteString("\n")
		}
		if c.Omitted > 0 {
			fmt.Fprintf(&b, "  … and %d more files\n", c.Omitted)
		}
	}
	for _, f := range c.Files {
		fmt.Fprintf(&b, "\n--- %s", f.Path)
		if f.Truncated {
			b.WriteString(" (truncated)")
		}
		b.WriteString(" ---\n")
		b.WriteString(f.Content)
		if !strings.HasSuffix(f.Content, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// GatherContext lists the repository's tracked, visible files and includes
// the README and the files whose path or content best match the keywords,
// within budget bytes. priority files come first, in order.
func GatherContext(ctx context.Context, root string, policy visibility.Policy, keywords []string, priority []string, budget int) (RepoContext, error) {
	var rc RepoContext
	repo, err := gitx.Open(ctx, root)
	if err != nil {
		return rc, err
	}
	// Tracked files only, never one that looks like it holds secrets: an
	// untracked or ignored file (.env) never reaches a model.
	visible, err := visibility.List(ctx, repo, policy)
	if err != nil {
		return rc, err
	}
	files := visible.Paths()
	sort.Strings(files)
	treeBudget := budget / 4
	used := 0
	for i, f := range files {
		if used+len(f)+3 > treeBudget {
			rc.Omitted = len(files) - i
			break
		}
		rc.Tree = append(rc.Tree, f)
		used += len(f) + 3
	}
	left := budget - used
	seen := map[string]bool{}
	add := func(p string) {
		if seen[p] || left <= 200 || visible.Check(p) != nil {
			return
		}
		seen[p] = true
		fc, ok := readVisible(visible, p, left-len(p)-32)
		if !ok {
			return
		}
		fc.Path = p
		rc.Files = append(rc.Files, fc)
		left -= len(fc.Content) + len(p) + 32
	}
	for _, p := range priority {
		add(p)
	}
	for _, f := range files {
		if strings.EqualFold(filepath.Base(f), "README.md") && !strings.Contains(f, "/") {
			add(f)
		}
	}
	for _, f := range rankFiles(visible, files, keywords) {
		add(f)
	}
	return rc, nil
}

// readVisible reads up to max bytes of a visible file; binary files are
// skipped.
func readVisible(v *visibility.Files, p string, max int) (FileContent, bool) {
	if max <= 0 {
		return FileContent{}, false
	}
	buf, truncated, err := v.ReadFile(p, int64(max))
	if err != nil {
		return FileContent{}, false
	}
	if !utf8.Valid(buf) && !truncated || strings.ContainsRune(string(buf), 0) {
		return FileContent{}, false
	}
	return FileContent{Content: strings.ToValidUTF8(string(buf), ""), Truncated: truncated}, true
}

// rankFiles orders files by how many keywords their path mentions, then
// (for the top candidates) their content; files matching nothing are left
// out.
func rankFiles(visible *visibility.Files, files, keywords []string) []string {
	type scored struct {
		path  string
		score int
	}
	var kws []string
	for _, k := range keywords {
		k = strings.ToLower(k)
		if len(k) >= 3 {
			kws = append(kws, k)
		}
	}
	if len(kws) == 0 {
		return nil
	}
	var out []scored
	for _, f := range files {
		lf := strings.ToLower(f)
		s := 0
		for _, k := range kws {
			if strings.Contains(lf, k) {
				s += 3
			}
		}
		if s == 0 && len(files) <= 2000 {
			if fc, ok := readVisible(visible, f, 64<<10); ok {
				lc := strings.ToLower(fc.Content)
				for _, k := range kws {
					if strings.Contains(lc, k) {
						s++
					}
				}
			}
		}
		if s > 0 {
			out = append(out, scored{f, s})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	paths := make([]string, len(out))
	for i, s := range out {
		paths[i] = s.path
	}
	return paths
}

// Keywords splits text into lower-case words worth matching.
func Keywords(text string) []string {
	stop := map[string]bool{"the": true, "and": true, "for": true, "with": true, "that": true, "this": true, "from": true, "into": true, "add": true, "make": true, "should": true, "when": true, "use": true}
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' }) {
		if len(w) >= 3 && !stop[w] && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// MapTokens is the token budget of the repository map in a role's first
// message (Aider's default map is about 1k tokens).
const MapTokens = 2048

// RepoMap renders the ranked repository map of commit ("" = the index)
// for the seeds, within MapTokens, with the tags cached under
// .orch/cache/repomap.
func (rt *Runtime) RepoMap(ctx context.Context, root, commit string, seeds repomap.Seeds) (string, error) {
	policy, err := rt.Policy()
	if err != nil {
		return "", err
	}
	ix, err := repomap.Build(ctx, root, repomap.Options{
		CacheDir: filepath.Join(rt.Project.Dir, "cache", "repomap"),
		Commit:   commit,
		Policy:   policy,
	})
	if err != nil {
		return "", fmt.Errorf("repository map: %w", err)
	}
	return ix.Map(ctx, seeds, MapTokens)
}

// WithMap puts the repository map into rc; without one (an empty map,
// or a repository the index cannot read) the plain file list stays.
func (rt *Runtime) WithMap(ctx context.Context, rc *RepoContext, root, commit string, seeds repomap.Seeds) {
	if m, err := rt.RepoMap(ctx, root, commit, seeds); err == nil {
		rc.Map = m
	}
}
