package agent

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/repomap"
	"github.com/orchdev/orch/internal/visibility"
	"github.com/orchdev/orch/internal/work"
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
	// Snippets are the lines around the task's identifiers (a role
	// without tools; TaskContext).
	Snippets string
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
	if c.Snippets != "" {
		b.WriteString("\nThe lines around the task's identifiers (numbered; ask in your answer for what you miss):\n")
		b.WriteString(c.Snippets)
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

// GatherContext lists the work tree's tracked, visible files and includes
// the README and the files whose path or content best match the keywords,
// within budget bytes. priority files come first, in order. Codegen builds
// its prompt from its workspace with it; the read-only roles list the
// files of their view (ViewFileList).
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
	files, used := rc.listTree(visible, budget)
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

// ViewFileList lists the visible files of the view's commit (work.Repo,
// the read-only roles' Input.Repo) as GatherContext does, without files'
// contents: the list a role is shown when the map is empty.
func ViewFileList(ctx context.Context, view work.Repo, policy visibility.Policy, budget int) (RepoContext, error) {
	var rc RepoContext
	entries, err := view.Files(ctx)
	if err != nil {
		return rc, err
	}
	rc.listTree(visibility.FromEntries("", entries, policy), budget)
	return rc, nil
}

// listTree puts into rc.Tree the visible files, sorted, within a quarter
// of budget bytes, and returns them all and the bytes used.
func (rc *RepoContext) listTree(visible *visibility.Files, budget int) ([]string, int) {
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
	return files, used
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

// ToolMapTokens is the map's budget for a role with tools: every turn of
// its loop re-sends the map, and the role can search and read what the
// map leaves out, so it starts from the top of the ranking only.
const ToolMapTokens = 1024

// mapRequest asks a view for the map's index of the files the policy
// shows, with the tags cached under .orch/cache/repomap.
func (rt *Runtime) mapRequest() (work.MapRequest, error) {
	policy, err := rt.Policy()
	if err != nil {
		return work.MapRequest{}, err
	}
	return work.MapRequest{
		Policy:   policy,
		CacheDir: filepath.Join(rt.Project.OrchDir(), "cache", "repomap"),
		Progress: rt.MapProgress,
	}, nil
}

// ViewIndex is the repository map's index at the view's commit.
func (rt *Runtime) ViewIndex(ctx context.Context, view work.Repo) (work.Map, error) {
	req, err := rt.mapRequest()
	if err != nil {
		return nil, err
	}
	ix, err := view.Map(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("repository map: %w", err)
	}
	return ix, nil
}

// localIndex is the map's index of the local repository at root, at
// commit ("" = the index): codegen's, over its workspace.
func (rt *Runtime) localIndex(ctx context.Context, root, commit string) (*repomap.Index, error) {
	req, err := rt.mapRequest()
	if err != nil {
		return nil, err
	}
	ix, err := repomap.Build(ctx, root, repomap.Options{CacheDir: req.CacheDir, Commit: commit, Policy: req.Policy, Progress: req.Progress})
	if err != nil {
		return nil, fmt.Errorf("repository map: %w", err)
	}
	return ix, nil
}

// RepoMap renders the ranked repository map of the view's commit for the
// seeds, within MapTokens.
func (rt *Runtime) RepoMap(ctx context.Context, view work.Repo, seeds repomap.Seeds) (string, error) {
	ix, err := rt.ViewIndex(ctx, view)
	if err != nil {
		return "", err
	}
	return ix.Map(ctx, seeds, MapTokens)
}

// WithTaskContext puts into rc the repository map of the view's commit
// and, for a role without tools (snippets true), the lines around the
// task's identifiers instead of whole files (TaskContext), all read
// through the view; without a map the plain file list stays.
func (rt *Runtime) WithTaskContext(ctx context.Context, rc *RepoContext, view work.Repo, seeds repomap.Seeds, snippets bool) {
	ix, err := rt.ViewIndex(ctx, view)
	if err != nil {
		return
	}
	if !snippets {
		if m, err := ix.Map(ctx, seeds, ToolMapTokens); err == nil {
			rc.Map = m
		}
		return
	}
	if tc, err := taskContext(ctx, ix, seeds, SnippetBytes, func(order []string) func(string) ([]byte, bool) {
		return viewReader(ctx, view, order, 4<<20)
	}); err == nil {
		rc.Map, rc.Snippets = tc.Map, tc.Snippets
	}
}

// WithMap puts the repository map of a role with tools (ToolMapTokens)
// of the local repository at root, at commit, into rc (codegen's, over
// its workspace); without one (an empty map, or a repository the index
// cannot read) the plain file list stays.
func (rt *Runtime) WithMap(ctx context.Context, rc *RepoContext, root, commit string, seeds repomap.Seeds) {
	ix, err := rt.localIndex(ctx, root, commit)
	if err != nil {
		return
	}
	if m, err := ix.Map(ctx, seeds, ToolMapTokens); err == nil {
		rc.Map = m
	}
}

// readChunk is how many files one batch of viewReader holds.
const readChunk = 32

// viewReader reads the files of order through the view, readChunk files
// per batch from the first one asked for, at most max bytes each.
func viewReader(ctx context.Context, view work.Repo, order []string, max int64) func(string) ([]byte, bool) {
	at := make(map[string]int, len(order))
	for i, p := range order {
		at[p] = i
	}
	got := map[string][]byte{}
	tried := map[string]bool{}
	return func(p string) ([]byte, bool) {
		if !tried[p] {
			i, ok := at[p]
			chunk := []string{p}
			if ok {
				chunk = order[i:min(i+readChunk, len(order))]
			}
			for _, q := range chunk {
				tried[q] = true
			}
			_ = view.ReadFiles(ctx, chunk, max, func(q string, data []byte, size int64) error {
				got[q] = bytes.Clone(data)
				return nil
			})
		}
		data, ok := got[p]
		return data, ok
	}
}

// SnippetContextLines is how many lines around each occurrence of a task's
// identifier a role without tools is shown.
const SnippetContextLines = 3

// SnippetBytes bounds the lines around identifiers in one role's prompt.
const SnippetBytes = 12 << 10

// TaskContext is what a role without tools is shown of the repository
// (README, "What a model sees"): the ranked map, and the lines around where
// the identifiers the brief and plan name occur, not whole files. Ranked
// lists the visible files, most relevant first.
type TaskContext struct {
	Map      string
	Snippets string
	Ranked   []string
}

// TaskContext builds the map of the local repository at root at commit
// ("" = the index) for the seeds and the lines (SnippetContextLines either
// side, numbered) around the identifiers' occurrences, within
// snippetBytes, read through read (the file at commit; nil reads the
// visible work-tree file). Codegen's, over its workspace; the read-only
// roles' is WithTaskContext, through their view.
func (rt *Runtime) TaskContext(ctx context.Context, root, commit string, seeds repomap.Seeds, snippetBytes int, read func(path string) ([]byte, bool)) (TaskContext, error) {
	ix, err := rt.localIndex(ctx, root, commit)
	if err != nil {
		return TaskContext{}, err
	}
	if read == nil {
		files := ix.Files()
		read = func(p string) ([]byte, bool) {
			data, _, err := files.ReadFile(p, 4<<20)
			return data, err == nil
		}
	}
	return taskContext(ctx, ix, seeds, snippetBytes, func([]string) func(string) ([]byte, bool) { return read })
}

// taskContext renders the map of ix and the snippets, reading the files
// the occurrences name (in order) through reader(order).
func taskContext(ctx context.Context, ix work.Map, seeds repomap.Seeds, snippetBytes int, reader func(order []string) func(string) ([]byte, bool)) (TaskContext, error) {
	var tc TaskContext
	m, occ, ranked, err := ix.Context(ctx, seeds, MapTokens)
	if err != nil {
		return tc, fmt.Errorf("repository map: %w", err)
	}
	tc.Map = m
	for _, r := range ranked {
		tc.Ranked = append(tc.Ranked, r.Path)
	}
	var order []string
	seen := map[string]bool{}
	for _, o := range occ {
		if !seen[o.Path] {
			seen[o.Path] = true
			order = append(order, o.Path)
		}
	}
	tc.Snippets = renderSnippets(occ, snippetBytes, reader(order))
	return tc, nil
}

// renderSnippets shows, per file in the order of occ, the lines around its
// occurrences (windows merged where they overlap), numbered like read_file,
// within budget bytes; a file that cannot be read or is binary is skipped.
func renderSnippets(occ []repomap.Occurrence, budget int, read func(string) ([]byte, bool)) string {
	var order []string
	lines := map[string][]int{}
	idents := map[string][]string{}
	for _, o := range occ {
		if _, ok := lines[o.Path]; !ok {
			order = append(order, o.Path)
		}
		lines[o.Path] = append(lines[o.Path], o.Line)
		if !slices.Contains(idents[o.Path], o.Ident) {
			idents[o.Path] = append(idents[o.Path], o.Ident)
		}
	}
	var b strings.Builder
	for _, p := range order {
		data, ok := read(p)
		if !ok || !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
			continue
		}
		text := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		ls := slices.Clone(lines[p])
		slices.Sort(ls)
		var part strings.Builder
		fmt.Fprintf(&part, "\n--- %s: lines around %s ---\n", p, strings.Join(idents[p], ", "))
		end := 0 // the last line written
		for _, l := range ls {
			lo, hi := max(l-SnippetContextLines, end+1, 1), min(l+SnippetContextLines, len(text))
			if lo > hi {
				continue
			}
			if end > 0 && lo > end+1 {
				part.WriteString("…\n")
			}
			for i := lo; i <= hi; i++ {
				fmt.Fprintf(&part, "%6d\t%s\n", i, clip.Bytes(text[i-1], 400))
			}
			end = hi
		}
		if b.Len()+part.Len() > budget {
			continue
		}
		b.WriteString(part.String())
	}
	return b.String()
}
