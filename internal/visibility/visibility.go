// Package visibility decides which files of the user's repository may reach
// a model: in a prompt, through a tool (list_files, read_file, search), or
// in a repository map.
//
// The rule (README, "What a model sees"): a file may reach a model only
// when
//
//   - it is tracked by git (listed by `git ls-files`, or in the tree of the
//     commit the agent works from): untracked and ignored files such as
//     .env never are;
//   - it is a regular file (mode 100644 or 100755): symbolic links, whose
//     target may be an untracked file or lie outside the repository, and
//     submodules are not;
//   - it is not under .orch/ (orch's own folder) or .git/;
//   - its name does not look like a secret (SecretRule: .env*, *.pem, *.key,
//     id_rsa and other SSH keys, credentials*, secrets.*, .npmrc, .netrc,
//     key stores, Terraform state, ...), unless the configuration names it
//     on purpose in [context] allow_paths.
//
// Agents build a *Files once per phase run (List or ListAt) and call
// (*Files).Check for every path they put in a prompt or let a tool read;
// (*Files).ReadFile does the check and reads the working tree safely.
// allow_paths only re-admits secret-looking tracked files: it never makes
// an untracked file, a symbolic link or .orch/ visible.
package visibility

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/safepath"
)

// Sentinel errors matched with errors.Is on the *Error Check returns.
var (
	ErrNotTracked = errors.New("not a tracked file")
	ErrSecret     = errors.New("looks like a secret")
	ErrNotRegular = errors.New("not a regular file")
)

// Error says why a path may not reach a model. Its message is written for
// the model (a tool error) and for people.
type Error struct {
	Path   string
	Reason string
	Err    error // ErrNotTracked, ErrSecret or ErrNotRegular
}

func (e *Error) Error() string {
	switch e.Err {
	case ErrSecret:
		return fmt.Sprintf("%q looks like a secret (%s): orch never shows it to a model; a person may allow it with [context] allow_paths in .orch/config.toml", e.Path, e.Reason)
	case ErrNotRegular:
		return fmt.Sprintf("%q is %s: only regular tracked files can be read", e.Path, e.Reason)
	}
	if e.Reason != "" {
		return fmt.Sprintf("%q is not a tracked file of the repository (%s)", e.Path, e.Reason)
	}
	return fmt.Sprintf("%q is not a tracked file of the repository (list_files shows the tracked files)", e.Path)
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// Policy holds the configured exceptions ([context] allow_paths).
type Policy struct {
	allow []string
}

// NewPolicy checks the allow patterns (see CheckAllowPattern).
func NewPolicy(allowPaths []string) (Policy, error) {
	for i, p := range allowPaths {
		if err := CheckAllowPattern(p); err != nil {
			return Policy{}, fmt.Errorf("allow_paths[%d]: %w", i, err)
		}
	}
	return Policy{allow: append([]string(nil), allowPaths...)}, nil
}

// CheckAllowPattern validates one [context] allow_paths entry: a
// repository-relative path with '/' separators, or a path.Match pattern
// over the whole path ("config/*.pem" matches config/a.pem, not
// config/x/a.pem). It must not be absolute, contain "." or ".." or empty
// elements, a backslash or a control character, name .git/ or .orch/, and
// its last element must contain a letter or digit outside brackets: a
// pattern such as "*" or "conf/*" would allow every secret at once, which
// is not naming a file on purpose.
func CheckAllowPattern(p string) error {
	switch {
	case strings.TrimSpace(p) == "":
		return errors.New("expected a path or pattern, got an empty string")
	case !utf8.ValidString(p):
		return fmt.Errorf("expected UTF-8 text, got %q", p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("expected a path relative to the repository's top, got the absolute %q", p)
	case strings.ContainsRune(p, '\\'):
		return fmt.Errorf("expected '/' separators and no backslash, got %q", p)
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return fmt.Errorf("expected no control characters, got %q", p)
		}
	}
	if slashInClass(p) {
		// path.Match reads "[^/]" as a class and splits elements only at
		// the other slashes: splitting here at every "/" would check
		// elements other than the ones it matches ("*[^/]**/c*****"
		// matches .git/config; found by FuzzAllowPattern).
		return fmt.Errorf("%q: expected '/' only between elements, not inside a [...] class", p)
	}
	elems := strings.Split(p, "/")
	for _, e := range elems {
		if e == "" || e == "." || e == ".." {
			return fmt.Errorf("expected a clean path without empty, \".\" or \"..\" elements, got %q", p)
		}
	}
	if first := strings.ToLower(elems[0]); first == ".git" || first == ".orch" {
		return fmt.Errorf("%q names %s/, which never reaches a model", p, first)
	}
	if _, err := path.Match(p, ""); err != nil {
		return fmt.Errorf("%q is not a valid pattern (path.Match syntax: *, ?, [a-z]): %v", p, err)
	}
	if !hasLiteral(elems[len(elems)-1]) {
		return fmt.Errorf("%q would allow every file of its folder: name the files on purpose, e.g. \".env.example\" or \"certs/test-*.pem\"", p)
	}
	// A first element such as "*" or ".[gG]*" would also match .git or
	// .orch: a pattern reaching into them is refused like their names.
	for _, dir := range []string{".git", ".orch"} {
		if matchFold(elems[0], dir) {
			return fmt.Errorf("%q: its first element %q also matches %s/, which never reaches a model; name the folder, e.g. \"config/*.pem\"", p, elems[0], dir)
		}
	}
	return nil
}

// slashInClass reports whether a '/' stands inside a bracket expression
// of the pattern ("[^/]", "[a/b]"); an unclosed "[" is left to path.Match
// to refuse.
func slashInClass(p string) bool {
	inClass := false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case !inClass && c == '[':
			inClass = true
		case inClass && c == ']':
			inClass = false
		case inClass && c == '/':
			return true
		}
	}
	return false
}

// matchFold reports whether the pattern element matches name in any
// letter case (.git and .orch are refused in every case, for file systems
// that ignore it). Every spelling is tried: a bracket expression such as
// ".[^a-z]it" matches ".Git" but neither ".git", ".GIT" nor, lower-cased,
// ".git".
func matchFold(elem, name string) bool {
	for _, n := range caseVariants(name) {
		if ok, _ := path.Match(elem, n); ok {
			return true
		}
	}
	return false
}

// caseVariants returns every spelling of the ASCII name in upper and lower
// case letters (2^letters of them: 8 for .git, 16 for .orch).
func caseVariants(name string) []string {
	out := []string{""}
	for i := 0; i < len(name); i++ {
		c := name[i]
		lo, up := strings.ToLower(string(c)), strings.ToUpper(string(c))
		next := make([]string, 0, 2*len(out))
		for _, s := range out {
			next = append(next, s+lo)
			if up != lo {
				next = append(next, s+up)
			}
		}
		out = next
	}
	return out
}

// hasLiteral reports whether a pattern element has a letter or digit
// outside a bracket expression.
func hasLiteral(elem string) bool {
	inClass := false
	for _, r := range elem {
		switch {
		case inClass:
			if r == ']' {
				inClass = false
			}
		case r == '[':
			inClass = true
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			return true
		}
	}
	return false
}

// Allowed reports whether the configuration names p on purpose.
func (p Policy) Allowed(repoPath string) bool {
	for _, a := range p.allow {
		if ok, _ := path.Match(a, repoPath); ok {
			return true
		}
	}
	return false
}

// hiddenReason says why a tracked entry may not reach a model, or "".
func (p Policy) hiddenReason(e gitx.TreeEntry) (string, error) {
	switch {
	case e.Mode == "120000":
		return "a symbolic link", ErrNotRegular
	case e.Mode == "160000":
		return "a submodule", ErrNotRegular
	case e.Mode != "100644" && e.Mode != "100755":
		return "not a regular file (mode " + e.Mode + ")", ErrNotRegular
	}
	if first, _, _ := strings.Cut(e.Path, "/"); strings.EqualFold(first, ".orch") || strings.EqualFold(first, ".git") {
		return "inside " + first + "/, orch's own or git's folder", ErrNotTracked
	}
	if why := SecretRule(e.Path); why != "" && !p.Allowed(e.Path) {
		return why, ErrSecret
	}
	return "", nil
}

// File is one visible file.
type File struct {
	Path string
	Blob string // the git object name of its content in the listing
	Mode string // 100644 or 100755
}

// Hidden is a tracked entry that may not reach a model.
type Hidden struct {
	Path   string
	Reason string
	Err    error
}

// Files is the set of files of one listing that may reach a model. It is
// read-only after List and safe for concurrent use.
type Files struct {
	dir    string // the work tree's top
	files  []File // sorted by path
	index  map[string]int
	hidden map[string]Hidden
}

// List lists the index of repo (the tracked files) under the policy.
func List(ctx context.Context, repo *gitx.Repo, p Policy) (*Files, error) {
	entries, err := repo.IndexFiles(ctx)
	if err != nil {
		return nil, err
	}
	return p.build(repo.Dir, entries), nil
}

// ListAt lists the tree of commit under the policy: what an agent working
// from that commit may see.
func ListAt(ctx context.Context, repo *gitx.Repo, commit string, p Policy) (*Files, error) {
	entries, err := repo.TreeFiles(ctx, commit)
	if err != nil {
		return nil, err
	}
	return p.build(repo.Dir, entries), nil
}

// FromEntries builds the set from a listing made elsewhere (tests, or a
// listing the caller already holds). dir is the work tree's top.
func FromEntries(dir string, entries []gitx.TreeEntry, p Policy) *Files {
	return p.build(dir, entries)
}

func (p Policy) build(dir string, entries []gitx.TreeEntry) *Files {
	f := &Files{dir: dir, index: make(map[string]int, len(entries)), hidden: map[string]Hidden{}}
	for _, e := range entries {
		if _, dup := f.index[e.Path]; dup {
			continue
		}
		if why, err := p.hiddenReason(e); err != nil {
			f.hidden[e.Path] = Hidden{Path: e.Path, Reason: why, Err: err}
			continue
		}
		f.index[e.Path] = len(f.files)
		f.files = append(f.files, File{Path: e.Path, Blob: e.SHA, Mode: e.Mode})
	}
	if !sort.SliceIsSorted(f.files, func(i, j int) bool { return f.files[i].Path < f.files[j].Path }) {
		sort.Slice(f.files, func(i, j int) bool { return f.files[i].Path < f.files[j].Path })
		for i, x := range f.files {
			f.index[x.Path] = i
		}
	}
	return f
}

// Check returns nil when path may reach a model, else an *Error saying why
// (untracked, secret-looking, a symbolic link, ...). Call it for every
// repository path an agent sends or lets a tool read.
func (f *Files) Check(repoPath string) error {
	if _, ok := f.index[repoPath]; ok {
		return nil
	}
	if h, ok := f.hidden[repoPath]; ok {
		return &Error{Path: repoPath, Reason: h.Reason, Err: h.Err}
	}
	return &Error{Path: repoPath, Err: ErrNotTracked}
}

// Lookup returns the visible file at path.
func (f *Files) Lookup(repoPath string) (File, bool) {
	i, ok := f.index[repoPath]
	if !ok {
		return File{}, false
	}
	return f.files[i], true
}

// All returns the visible files sorted by path. The slice is shared: do
// not modify it.
func (f *Files) All() []File { return f.files }

// Paths returns the visible paths, sorted.
func (f *Files) Paths() []string {
	out := make([]string, len(f.files))
	for i, x := range f.files {
		out[i] = x.Path
	}
	return out
}

// Len is the number of visible files.
func (f *Files) Len() int { return len(f.files) }

// Hidden returns the tracked entries kept from models, sorted by path.
func (f *Files) Hidden() []Hidden {
	out := make([]Hidden, 0, len(f.hidden))
	for _, h := range f.hidden {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Dir is the work tree's top.
func (f *Files) Dir() string { return f.dir }

// ReadFile checks path and reads at most maxBytes of it from the work tree.
// It refuses a path that is, in the work tree, anything but a regular file
// inside the repository (a symbolic link put in place of a tracked file is
// refused, not followed). truncated is true when the file is longer.
func (f *Files) ReadFile(repoPath string, maxBytes int64) (data []byte, truncated bool, err error) {
	if err := f.Check(repoPath); err != nil {
		return nil, false, err
	}
	// The bounded reader: a regular file inside the work tree, never a
	// symbolic link, never blocking on a named pipe.
	data, size, err := safepath.ReadPart(f.dir, repoPath, max(maxBytes, 0), safepath.Head)
	var fe *safepath.FileError
	switch {
	case errors.Is(err, safepath.ErrNotRegular) && errors.As(err, &fe):
		return nil, false, &Error{Path: repoPath, Reason: "not a regular file in the work tree (" + fe.Got + ")", Err: ErrNotRegular}
	case err != nil:
		return nil, false, err
	}
	return data, size > max(maxBytes, 0), nil
}
