package tools

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/gitx"
)

// ListFiles lists the workspace's paths under dir (a folder; "" for all)
// whose path or name matches the glob pattern ("" for all), capped at
// MaxListed with a count of the rest.
func (w *Workspace) ListFiles(ctx context.Context, dir, pattern string) (string, error) {
	dir = strings.TrimSuffix(NormalizePath(dir), "/")
	if dir == "." {
		dir = ""
	}
	if pattern != "" {
		if _, err := path.Match(pattern, ""); err != nil {
			return "", toolErr("pattern %q is not a valid glob: %v", pattern, err)
		}
	}
	w.mu.Lock()
	files, err := w.listLocked(ctx)
	if err != nil {
		w.mu.Unlock()
		return "", err
	}
	var all []string
	if w.edits == nil {
		all = files
	} else {
		set := map[string]bool{}
		for _, f := range files {
			set[f] = true
		}
		for p, c := range w.edits {
			set[p] = c != nil
		}
		for p, ok := range set {
			if ok {
				all = append(all, p)
			}
		}
		sort.Strings(all)
	}
	w.mu.Unlock()
	var out []string
	for _, f := range all {
		if dir != "" && !strings.HasPrefix(f, dir+"/") && f != dir {
			continue
		}
		if pattern != "" && !globMatch(pattern, f) {
			continue
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return "no tracked file matches", nil
	}
	var b strings.Builder
	writeCapped(&b, out, MaxListed, "more (narrow with path or pattern)", func(f string) string { return f })
	return b.String(), nil
}

// writeCapped writes items to b, one a line as line renders it, at most
// limit of them, then "… and N <rest>" for the N left out.
func writeCapped[T any](b *strings.Builder, items []T, limit int, rest string, line func(T) string) {
	for i, it := range items {
		if i == limit {
			fmt.Fprintf(b, "… and %d %s\n", len(items)-limit, rest)
			return
		}
		b.WriteString(line(it))
		b.WriteByte('\n')
	}
}

// globMatch matches pattern against the whole path, or, for a pattern
// without '/', against the file's name.
func globMatch(pattern, p string) bool {
	if ok, _ := path.Match(pattern, p); ok {
		return true
	}
	if !strings.Contains(pattern, "/") {
		ok, _ := path.Match(pattern, path.Base(p))
		return ok
	}
	return false
}

// ReadFile returns lines offset.. (1-based; 0 means 1) of path, at most
// limit lines (0 means DefaultReadLine), numbered, as the workspace sees
// the file.
func (w *Workspace) ReadFile(ctx context.Context, p string, offset, limit int) (string, error) {
	p, err := w.readable(ctx, p)
	if err != nil {
		return "", err
	}
	w.mu.Lock()
	data, ok, err := w.contentLocked(ctx, p)
	_, edited := w.edits[p]
	outline := w.outline
	w.mu.Unlock()
	if err != nil {
		return "", err
	}
	if !ok {
		if edited {
			return "", toolErr("%s was deleted by your edits", p)
		}
		return "", toolErr("%s is not a tracked file of the repository (list_files shows them)", p)
	}
	if strings.IndexByte(data, 0) >= 0 || !utf8Valid(data) {
		return "", toolErr("%s is a binary file (%d bytes): not shown", p, len(data))
	}
	if offset < 0 || limit < 0 {
		return "", toolErr("offset and limit must not be negative")
	}
	whole := offset == 0 && limit == 0
	if offset == 0 {
		offset = 1
	}
	if limit == 0 {
		limit = DefaultReadLine
	}
	lines := strings.SplitAfter(data, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	total := len(lines)
	if total == 0 {
		return fmt.Sprintf("%s is empty", p), nil
	}
	if offset > total {
		return "", toolErr("%s has %d lines: offset %d is past the end", p, total, offset)
	}
	var b strings.Builder
	if whole && total > LargeFileLines {
		// A large file read whole: its outline and a window, not
		// thousands of lines the model has to carry every turn.
		fmt.Fprintf(&b, "%s has %d lines (%d bytes): too large to read whole, so here are its outline and its first %d lines. Ask read_file for the lines you need with offset and limit (offset=785 limit=40 reads lines 785-824), or search for a name.\n", p, total, len(data), OutlineWindow)
		if outline != nil && !edited {
			if defs := outline(p); len(defs) > 0 {
				b.WriteString("Outline (line: definition):\n")
				for i, d := range defs {
					if i == maxOutlineDefs {
						fmt.Fprintf(&b, "  … and %d more definitions\n", len(defs)-i)
						break
					}
					fmt.Fprintf(&b, "%6d: %s\n", d.Line, clip.Bytes(d.Sig, 200))
				}
			}
		}
		limit = OutlineWindow
	}
	last := offset - 1
	for i := offset - 1; i < total && i < offset-1+limit; i++ {
		line := strings.TrimRight(lines[i], "\n")
		if len(line) > maxLineBytes {
			line = clip.Head(line, maxLineBytes) + " …(line cut)"
		}
		if b.Len()+len(line) > MaxReadBytes {
			break
		}
		fmt.Fprintf(&b, "%6d\t%s\n", i+1, line)
		last = i + 1
	}
	if last < total {
		fmt.Fprintf(&b, "(lines %d-%d of %d; read on with offset=%d)\n", offset, last, total, last+1)
	}
	return b.String(), nil
}

// Search finds lines matching the regular expression pattern in the
// workspace's files (the edits included), under dir ("" for all) and whose
// path or name matches glob ("" for all): "path:line:text", capped.
func (w *Workspace) Search(ctx context.Context, pattern, dir, glob string) (string, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return "", toolErr("pattern is not a valid regular expression: %v", err)
	}
	if glob != "" {
		if _, err := path.Match(glob, ""); err != nil {
			return "", toolErr("glob %q is not valid: %v", glob, err)
		}
	}
	dir = strings.TrimSuffix(NormalizePath(dir), "/")
	if dir == "." {
		dir = ""
	}
	keep := func(p string) bool {
		if dir != "" && !strings.HasPrefix(p, dir+"/") && p != dir {
			return false
		}
		return glob == "" || globMatch(glob, p)
	}
	w.mu.Lock()
	if _, err := w.listLocked(ctx); err != nil {
		w.mu.Unlock()
		return "", err
	}
	edited := map[string]*string{}
	for p, c := range w.edits {
		edited[p] = c
	}
	visible := w.visible
	w.mu.Unlock()

	var matches []gitx.GrepMatch
	res, err := w.view.Grep(ctx, pattern, gitx.GrepOptions{MaxPerFile: 20})
	if err != nil {
		if ctx.Err() != nil {
			return "", err
		}
		// git's dialect refused what Go's accepted: search in Go.
		res, err = w.grepInGo(ctx, re, keep)
		if err != nil {
			return "", err
		}
	}
	for _, m := range res.Matches {
		if _, ok := edited[m.Path]; ok || visible.Check(m.Path) != nil || !keep(m.Path) {
			continue
		}
		matches = append(matches, m)
	}
	for p, c := range edited {
		if c == nil || !keep(p) {
			continue
		}
		n := 0
		for i, line := range strings.Split(*c, "\n") {
			if re.MatchString(line) && n < 20 {
				matches = append(matches, gitx.GrepMatch{Path: p, Line: i + 1, Text: line})
				n++
			}
		}
	}
	sort.SliceStable(matches, func(i, j int) bool {
		if matches[i].Path != matches[j].Path {
			return matches[i].Path < matches[j].Path
		}
		return matches[i].Line < matches[j].Line
	})
	if len(matches) == 0 {
		return "no match", nil
	}
	var b strings.Builder
	writeCapped(&b, matches, MaxMatches, "more matches (narrow with path or glob)", func(m gitx.GrepMatch) string {
		text := m.Text
		if len(text) > MaxMatchLine {
			text = clip.Head(text, MaxMatchLine) + "…"
		}
		return fmt.Sprintf("%s:%d:%s", m.Path, m.Line, text)
	})
	if res.Truncated {
		b.WriteString("(the search stopped early: too much output; narrow the pattern)\n")
	}
	return b.String(), nil
}

// grepInGo searches the base's visible files one by one (used only when
// git cannot compile the pattern).
func (w *Workspace) grepInGo(ctx context.Context, re *regexp.Regexp, keep func(string) bool) (gitx.GrepResult, error) {
	files, err := w.Files(ctx)
	if err != nil {
		return gitx.GrepResult{}, err
	}
	var res gitx.GrepResult
	for _, f := range files {
		if !keep(f) {
			continue
		}
		data, ok, err := w.view.ReadFile(ctx, f)
		if err != nil || !ok || strings.IndexByte(string(data), 0) >= 0 {
			continue
		}
		for i, line := range strings.Split(string(data), "\n") {
			if re.MatchString(line) {
				res.Matches = append(res.Matches, gitx.GrepMatch{Path: f, Line: i + 1, Text: line})
				if len(res.Matches) > 4*MaxMatches {
					res.Truncated = true
					return res, nil
				}
			}
		}
	}
	return res, nil
}

// EditFile replaces old with new in path (every occurrence with all, else
// exactly one must exist).
func (w *Workspace) EditFile(ctx context.Context, p, old, new string, all bool) (string, error) {
	p, err := w.writable(p, false)
	if err != nil {
		return "", err
	}
	if old == "" {
		return "", toolErr("old_string is empty: to create or replace a whole file use write_file")
	}
	if old == new {
		return "", toolErr("old_string and new_string are the same: nothing would change")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	data, ok, err := w.contentLocked(ctx, p)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", toolErr("%s does not exist (yet): create it with write_file", p)
	}
	n := strings.Count(data, old)
	switch {
	case n == 0:
		return "", toolErr("old_string was not found in %s: it must match the file exactly, whitespace and indentation included (read_file shows the current text)", p)
	case n > 1 && !all:
		return "", toolErr("old_string occurs %d times in %s: add surrounding lines to make it unique, or set replace_all", n, p)
	}
	var updated string
	if all {
		updated = strings.ReplaceAll(data, old, new)
	} else {
		updated = strings.Replace(data, old, new, 1)
	}
	if err := checkContent(p, updated); err != nil {
		return "", err
	}
	if err := w.setLocked(p, &updated); err != nil {
		return "", err
	}
	if n == 1 {
		return fmt.Sprintf("ok: %s edited (1 replacement)", p), nil
	}
	return fmt.Sprintf("ok: %s edited (%d replacements)", p, n), nil
}

// WriteFile creates path or replaces its whole content.
func (w *Workspace) WriteFile(ctx context.Context, p, content string) (string, error) {
	p, err := w.writable(p, false)
	if err != nil {
		return "", err
	}
	if err := checkContent(p, content); err != nil {
		return "", err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.setLocked(p, &content); err != nil {
		return "", err
	}
	return fmt.Sprintf("ok: %s written (%d bytes)", p, len(content)), nil
}

// DeleteFile deletes path (planned with intent delete).
func (w *Workspace) DeleteFile(ctx context.Context, p string) (string, error) {
	p, err := w.writable(p, true)
	if err != nil {
		return "", err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok, err := w.contentLocked(ctx, p)
	if err != nil {
		return "", err
	}
	if !ok {
		if _, edited := w.edits[p]; edited {
			return "", toolErr("%q is already deleted", p)
		}
		return "", toolErr("%q does not exist at the base commit: nothing to delete", p)
	}
	if err := w.setLocked(p, nil); err != nil {
		return "", err
	}
	return fmt.Sprintf("ok: %s deleted", p), nil
}

// RunTests runs the suites on the edits so far.
func (w *Workspace) RunTests(ctx context.Context) (string, error) {
	if w.tests == nil {
		return "", toolErr("run_tests is not available in this run")
	}
	w.mu.Lock()
	if w.testRuns >= w.maxTestRuns {
		w.mu.Unlock()
		return "", toolErr("run_tests was already used %d times, the limit per run ([tools] max_test_runs): finish now", w.maxTestRuns)
	}
	w.testRuns++
	w.mu.Unlock()
	patch, err := w.Patch(ctx)
	if err != nil {
		var gerr *gitx.Error
		if ctx.Err() != nil || asGit(err, &gerr) {
			return "", err
		}
		return "", toolErr("your edits cannot be applied to the base: %v", err)
	}
	return w.tests(ctx, patch)
}

// TestRuns reports how many times run_tests ran.
func (w *Workspace) TestRuns() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.testRuns
}
