package gitx

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// NotRegularError says a path a patch is applied to is not a regular file
// in the commit (a symbolic link, a submodule or a folder).
type NotRegularError struct {
	Path string
	Mode string // the tree entry's mode, e.g. "120000"
}

func (e *NotRegularError) Error() string {
	what := map[string]string{"120000": "a symbolic link", "160000": "a submodule", "040000": "a folder"}[e.Mode]
	if what == "" {
		what = "of mode " + e.Mode
	}
	return fmt.Sprintf("%s is %s in the commit, not a regular file", e.Path, what)
}

// PatchedBlobs applies patch to the entries paths have in commit and
// returns the entry each of them holds afterwards; a path missing from the
// result does not exist once the patch is applied (the patch deletes it, or
// neither the commit nor the patch has it). Compare an entry's SHA with
// BlobID of some content to know whether it holds exactly those bytes.
//
// The patch is applied with `git apply --cached` to a temporary index that
// holds only those paths (`ls-tree`, `update-index --index-info`), with a
// temporary object directory that has the repository's as an alternate.
// Nothing is written to the repository: not its work tree, its index, HEAD
// or its object store; the cost does not grow with the size of the tree.
// A path that is a symbolic link, a submodule or a folder in the commit is
// a *NotRegularError; a patch that does not apply gives an *ApplyError
// (errors.Is ErrApplyConflict); one git cannot parse gives ErrInvalidPatch;
// a commit that does not exist gives ErrBadRevision. An empty commit stands
// for the empty tree (a repository without commits yet); an empty patch
// returns the commit's entries.
func (r *Repo) PatchedBlobs(ctx context.Context, commit string, patch []byte, paths []string) (map[string]TreeEntry, error) {
	if err := checkPaths(paths); err != nil {
		return nil, err
	}
	sha := ""
	if commit != "" {
		var err error
		if sha, err = r.ResolveCommit(ctx, commit); err != nil {
			return nil, err
		}
	}
	fail := func(err error) error { return fmt.Errorf("apply the patch to %.12s: %w", sha, err) }
	want := make(map[string]bool, len(paths))
	for _, p := range paths {
		want[p] = true
	}
	var info bytes.Buffer
	for chunk := range slices.Chunk(paths, pathspecChunk) {
		if sha == "" {
			break
		}
		out, err := r.run(ctx, call{sub: "ls-tree", args: append([]string{"-z", "--full-tree", sha, "--"}, chunk...)})
		if err != nil {
			return nil, fail(err)
		}
		entries, err := parseLsTreeZ(out)
		if err != nil {
			return nil, fail(err)
		}
		for _, e := range entries {
			if !want[e.Path] {
				continue
			}
			if e.Mode != "100644" && e.Mode != "100755" {
				return nil, &NotRegularError{Path: e.Path, Mode: e.Mode}
			}
			fmt.Fprintf(&info, "%s %s\t%s\x00", e.Mode, e.SHA, e.Path)
		}
	}

	objects, err := r.objectDir(ctx)
	if err != nil {
		return nil, fail(err)
	}
	tmp, err := os.MkdirTemp("", "gitx-patched-")
	if err != nil {
		return nil, fail(err)
	}
	defer os.RemoveAll(tmp)
	tmpObjects := filepath.Join(tmp, "objects")
	if err := os.Mkdir(tmpObjects, 0o700); err != nil {
		return nil, fail(err)
	}
	env := []string{
		"GIT_INDEX_FILE=" + filepath.Join(tmp, "index"),
		"GIT_OBJECT_DIRECTORY=" + tmpObjects,
		"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + alternateEntry(objects),
	}
	git := func(c call) ([]byte, error) {
		c.env = env
		c.config = append(slices.Clone(tempIndexConfig), c.config...)
		return r.run(ctx, c)
	}
	if _, err := git(call{sub: "read-tree", args: []string{"--empty"}}); err != nil {
		return nil, fail(err)
	}
	if info.Len() > 0 {
		if _, err := git(call{sub: "update-index", args: []string{"-z", "--index-info"}, stdin: info.Bytes()}); err != nil {
			return nil, fail(err)
		}
	}
	if len(bytes.TrimSpace(patch)) > 0 {
		args := append([]string{"--cached"}, applyArgs(false, ApplyOptions{})...)
		if _, err := git(call{sub: "apply", args: args, config: applyConfig, stdin: patch}); err != nil {
			return nil, r.applyFailure(ctx, patch, err, false, nil)
		}
	}
	res := make(map[string]TreeEntry, len(paths))
	out, err := git(call{sub: "ls-files", args: []string{"-s", "-z"}})
	if err != nil {
		return nil, fail(err)
	}
	entries, err := parseLsFilesStageZ(out)
	if err != nil {
		return nil, fail(err)
	}
	for _, e := range entries {
		if want[e.Path] && e.Stage == 0 {
			res[e.Path] = e
		}
	}
	return res, nil
}

// objectDir returns the absolute path of the repository's object store.
func (r *Repo) objectDir(ctx context.Context) (string, error) {
	out, err := r.revParsePaths(ctx, nil, []string{"--git-path", "objects"})
	if err != nil {
		return "", err
	}
	dir := out[0]
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(r.Dir, dir)
	}
	return dir, nil
}

// alternateEntry is dir as one entry of GIT_ALTERNATE_OBJECT_DIRECTORIES,
// whose entries are separated by colons: a path holding a colon, a line
// break, a double quote, a backslash or another control byte is
// written as a C-style quoted string, which git unquotes (git(1),
// GIT_ALTERNATE_OBJECT_DIRECTORIES). Other paths are passed as they are.
func alternateEntry(dir string) string {
	if !strings.ContainsFunc(dir, func(r rune) bool { return r == ':' || r == '"' || r == '\\' || r < 0x20 || r == 0x7f }) {
		return dir
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(dir); i++ {
		switch c := dir[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 || c == 0x7f {
				fmt.Fprintf(&b, "\\%03o", c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// BlobID returns the id git gives a blob of content in a repository whose
// object ids have idLen hex digits: 40 (sha1) or 64 (sha256). Comparing it
// with an entry's SHA tells whether the entry holds exactly these bytes,
// without writing anything.
func BlobID(content []byte, idLen int) (string, error) {
	var h hash.Hash
	switch idLen {
	case 40:
		h = sha1.New()
	case 64:
		h = sha256.New()
	default:
		return "", fmt.Errorf("blob id: object ids of %d hex digits are neither sha1 (40) nor sha256 (64)", idLen)
	}
	h.Write([]byte("blob " + strconv.Itoa(len(content)) + "\x00"))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ObjectIDLen returns how many hex digits the repository's object ids have:
// 40 (sha1) or 64 (sha256).
func (r *Repo) ObjectIDLen(ctx context.Context) (int, error) {
	out, err := r.run(ctx, call{sub: "rev-parse", args: []string{"--show-object-format"}})
	if err != nil {
		return 0, fmt.Errorf("object format of %s: %w", r.Dir, err)
	}
	switch f := strings.TrimSpace(string(out)); f {
	case "sha1":
		return 40, nil
	case "sha256":
		return 64, nil
	default:
		return 0, fmt.Errorf("object format of %s: unknown %q", r.Dir, f)
	}
}
