// Package tools holds what an agent may do inside one phase run: the
// tools of the contract (list_files, read_file, search; for codegen also
// edit_file, write_file, delete_file, run_tests) over a workspace — the
// repository's tracked, visible files at the base commit plus, for
// codegen, the edits made so far, kept inside the file plan.
//
// Every refusal is a tool error the model reads and may correct; only
// failures of orch or git themselves are Go errors.
package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/visibility"
	"github.com/orchdev/orch/internal/work"
)

// Limits of what one tool result carries back to the model.
const (
	MaxListed       = 400  // list_files paths
	MaxMatches      = 100  // search matches
	MaxMatchLine    = 300  // bytes of one matching line
	DefaultReadLine = 2000 // read_file lines without a limit
	// A file longer than LargeFileLines read without offset and limit
	// answers its outline and its first OutlineWindow lines.
	LargeFileLines = 400
	OutlineWindow  = 60
	maxOutlineDefs = 300
	MaxReadBytes   = 100_000 // read_file bytes
	maxLineBytes   = 2000    // bytes of one numbered line
)

// TestRunner runs the suites like `orch test` on the base with patch
// applied and returns the summary the model reads (the suites' summary and
// the failing tests' output tails). An error is a failure of orch itself.
type TestRunner func(ctx context.Context, patch []byte) (string, error)

// Workspace is the repository as one agent run sees it. Read-only unless
// a file plan is given.
type Workspace struct {
	// view is what the tools read: the repository at base. repo is the
	// local repository a writable workspace diffs against (nil for a
	// read-only view given by the engine).
	view   work.Repo
	repo   *gitx.Repo
	base   string
	policy visibility.Policy

	// plan maps each planned path to its intent; nil means read-only.
	plan      map[string]string
	planPaths []string
	// scratch mirrors the edited files (code/files/<path> inside the
	// task's staging folder); nil keeps the edits in memory only.
	scratch *os.Root
	tests   TestRunner
	// MaxTestRuns bounds run_tests per run.
	maxTestRuns int

	mu       sync.Mutex
	visible  *visibility.Files // the base's files a model may see; nil until listed
	files    []string          // their paths, sorted
	edits    map[string]*string
	testRuns int
	// outline gives a file's definitions at the base (the repository
	// map's index); nil when none is known.
	outline func(path string) []OutlineLine
}

// OutlineLine is one definition of a file's outline: its line and its
// signature.
type OutlineLine struct {
	Line int
	Sig  string
}

// SetOutline gives read_file the definitions of the files at the base
// (from the repository map's index): a large file read without a range
// answers its outline and a window instead of its first 2,000 lines.
func (w *Workspace) SetOutline(f func(path string) []OutlineLine) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.outline = f
}

// Options configure a writable (codegen) workspace.
type Options struct {
	// Plan is the reviewed file plan; writes outside it are refused.
	Plan artifact.FilePlan
	// Scratch, when set, receives every edited file's content at
	// <Scratch>/<path> and loses deleted ones.
	Scratch string
	// Tests runs the suites for run_tests; nil leaves run_tests out.
	Tests TestRunner
	// MaxTestRuns bounds run_tests per run (at least 1 when Tests is set).
	MaxTestRuns int
}

// New returns a read-only workspace over repo at commit base, showing the
// files policy lets reach a model.
func New(repo *gitx.Repo, base string, policy visibility.Policy) *Workspace {
	return &Workspace{view: work.LocalRepo(repo, base), repo: repo, base: base, policy: policy}
}

// NewView returns a read-only workspace over view (a run's work.Repo),
// showing the files policy lets reach a model: every read goes through
// view.
func NewView(view work.Repo, policy visibility.Policy) *Workspace {
	return &Workspace{view: view, base: view.Commit(), policy: policy}
}

// NewWritable returns a codegen workspace: reads see the edits so far,
// writes stay inside opt.Plan.
func NewWritable(repo *gitx.Repo, base string, policy visibility.Policy, opt Options) (*Workspace, error) {
	w := New(repo, base, policy)
	w.plan = map[string]string{}
	for _, f := range opt.Plan.Files {
		w.plan[f.Path] = f.Intent
		w.planPaths = append(w.planPaths, f.Path)
	}
	w.edits = map[string]*string{}
	w.tests = opt.Tests
	w.maxTestRuns = max(opt.MaxTestRuns, 1)
	if opt.Scratch != "" {
		if err := os.MkdirAll(opt.Scratch, 0o755); err != nil {
			return nil, fmt.Errorf("create the scratch folder: %w", err)
		}
		root, err := os.OpenRoot(opt.Scratch)
		if err != nil {
			return nil, fmt.Errorf("open the scratch folder: %w", err)
		}
		w.scratch = root
	}
	return w, nil
}

// Overlay lays a change over the base for reading (code review): files
// show with the given content, deletes as deleted. The workspace stays
// read-only.
func (w *Workspace) Overlay(files map[string][]byte, deletes []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.edits == nil {
		w.edits = map[string]*string{}
	}
	for p, c := range files {
		s := string(c)
		w.edits[p] = &s
	}
	for _, p := range deletes {
		w.edits[p] = nil
	}
}

// Close releases the scratch folder.
func (w *Workspace) Close() error {
	if w.scratch != nil {
		return w.scratch.Close()
	}
	return nil
}

// Writable reports whether the workspace accepts edits.
func (w *Workspace) Writable() bool { return w.plan != nil }

// Base is the commit the workspace shows.
func (w *Workspace) Base() string { return w.base }

// Files returns the visible tracked paths at the base, sorted.
func (w *Workspace) Files(ctx context.Context) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.listLocked(ctx)
}

func (w *Workspace) listLocked(ctx context.Context) ([]string, error) {
	if w.visible != nil {
		return w.files, nil
	}
	entries, err := w.view.Files(ctx)
	if err != nil {
		return nil, err
	}
	dir := ""
	if w.repo != nil {
		dir = w.repo.Dir
	}
	v := visibility.FromEntries(dir, entries, w.policy)
	w.visible, w.files = v, v.Paths()
	return w.files, nil
}

// shown reports whether path at the base may reach a model (listLocked
// must have run).
func (w *Workspace) shownLocked(p string) bool { return w.visible.Check(p) == nil }

// ToolError is a refusal or failure the model reads as the tool's result.
type ToolError struct{ Msg string }

func (e *ToolError) Error() string { return e.Msg }

func toolErr(format string, args ...any) error { return &ToolError{Msg: fmt.Sprintf(format, args...)} }

// IsToolError reports whether err is for the model to read (as opposed to
// a failure of orch or git).
func IsToolError(err error) bool {
	var te *ToolError
	return errors.As(err, &te)
}

// NormalizePath turns the harmless form "./a" of a repository path into
// "a"; anything else is left for artifact.CheckPath to judge.
func NormalizePath(p string) string {
	for strings.HasPrefix(p, "./") && len(p) > 2 {
		p = p[2:]
	}
	return p
}

// content returns path's content as the workspace sees it: edited, or at
// the base. exists is false for a missing or deleted file.
func (w *Workspace) contentLocked(ctx context.Context, p string) (data string, exists bool, err error) {
	if e, ok := w.edits[p]; ok {
		if e == nil {
			return "", false, nil
		}
		return *e, true, nil
	}
	if _, err := w.listLocked(ctx); err != nil {
		return "", false, err
	}
	if !w.shownLocked(p) {
		return "", false, nil
	}
	b, ok, err := w.view.ReadFile(ctx, p)
	if err != nil {
		var gerr *gitx.Error
		if errors.As(err, &gerr) || errors.Is(err, context.Canceled) {
			return "", false, err
		}
		return "", false, toolErr("%s cannot be read: %v", p, err)
	}
	return string(b), ok, nil
}

// readable checks a path given to a read tool: safe, and (unless the run
// created it) one of the base's files a model may see.
func (w *Workspace) readable(ctx context.Context, p string) (string, error) {
	p = NormalizePath(p)
	if err := artifact.CheckPath(p); err != nil {
		return p, toolErr("%v", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.listLocked(ctx); err != nil {
		return p, err
	}
	if _, edited := w.edits[p]; edited {
		return p, nil
	}
	if err := w.visible.Check(p); err != nil {
		return p, toolErr("%v", err)
	}
	return p, nil
}

// Edits returns the files written (path → content) and the deleted paths,
// sorted, as the run leaves them.
func (w *Workspace) Edits() (files map[string][]byte, deletes []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	files = map[string][]byte{}
	for p, c := range w.edits {
		if c == nil {
			deletes = append(deletes, p)
		} else {
			files[p] = []byte(*c)
		}
	}
	sort.Strings(deletes)
	return files, deletes
}

// Touched lists the paths edited, written or deleted so far, sorted.
func (w *Workspace) Touched() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.edits))
	for p := range w.edits {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Patch is the unified diff of the edits so far against the base,
// computed by git; empty when nothing changed.
func (w *Workspace) Patch(ctx context.Context) ([]byte, error) {
	files, deletes := w.Edits()
	if len(files) == 0 && len(deletes) == 0 {
		return nil, nil
	}
	if w.repo == nil {
		return nil, fmt.Errorf("a patch needs the local repository: this workspace reads a view of %s", w.base)
	}
	return w.repo.DiffFiles(ctx, w.base, files, deletes)
}

// writable checks a path given to a write tool: safe, inside the file
// plan, and with an intent that allows what is asked.
func (w *Workspace) writable(p string, deleting bool) (string, error) {
	if w.plan == nil {
		return p, toolErr("this role cannot change files")
	}
	p = NormalizePath(p)
	if err := artifact.CheckPath(p); err != nil {
		return p, toolErr("%v", err)
	}
	intent, ok := w.plan[p]
	if !ok {
		return p, toolErr("%s is outside the reviewed file plan; you may change only: %s. If the change needs another file, finish with status plan_unclear and say why", p, w.planList())
	}
	switch {
	case deleting && intent != "delete":
		return p, toolErr("%s is planned with intent %s, not delete: it may not be deleted", p, intent)
	case !deleting && intent == "delete":
		return p, toolErr("%s is planned for deletion: use delete_file", p)
	}
	return p, nil
}

func (w *Workspace) planList() string {
	parts := make([]string, len(w.planPaths))
	for i, p := range w.planPaths {
		parts[i] = fmt.Sprintf("%s (%s)", p, w.plan[p])
	}
	return strings.Join(parts, ", ")
}

// checkContent refuses content that cannot be a text file of code/files.
func checkContent(p, c string) error {
	switch {
	case len(c) > artifact.MaxCodeFileBytes:
		return toolErr("%s: %d bytes, at most %d are accepted", p, len(c), artifact.MaxCodeFileBytes)
	case strings.IndexByte(c, 0) >= 0:
		return toolErr("%s: the content contains a NUL byte: binary content is not accepted, write text files only", p)
	case !utf8.ValidString(c):
		return toolErr("%s: the content is not valid UTF-8", p)
	}
	return nil
}

// setLocked records path's new content (nil: deleted) and mirrors it into
// the scratch folder.
func (w *Workspace) setLocked(p string, c *string) error {
	w.edits[p] = c
	if w.scratch == nil {
		return nil
	}
	if c == nil {
		if err := w.scratch.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("scratch copy of %s: %w", p, err)
		}
		return nil
	}
	if err := w.scratch.MkdirAll(path.Dir(p), 0o755); err != nil {
		return fmt.Errorf("scratch copy of %s: %w", p, err)
	}
	if err := w.scratch.WriteFile(p, []byte(*c), 0o644); err != nil {
		return fmt.Errorf("scratch copy of %s: %w", p, err)
	}
	return nil
}
