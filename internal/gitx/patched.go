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
)

// PatchedEntries applies patch to the tree of commit in a temporary index
// (`read-tree COMMIT`, `apply --cached`, `ls-files -s`, with GIT_INDEX_FILE
// pointing into a temporary folder) and returns the entry each of paths
// holds afterwards. A path missing from the result does not exist once the
// patch is applied (the patch deletes it, or neither the commit nor the
// patch has it).
//
// The work tree, the repository's index and HEAD are never touched; like
// any `git apply --cached`, the blobs the patch produces are written to the
// object store (unreachable objects that `git gc` prunes). A patch that does
// not apply gives an *ApplyError (errors.Is ErrApplyConflict); one git
// cannot parse gives ErrInvalidPatch; a commit that does not exist gives
// ErrBadRevision. An empty patch leaves the commit's entries.
func (r *Repo) PatchedEntries(ctx context.Context, commit string, patch []byte, paths []string) (map[string]TreeEntry, error) {
	if err := checkPaths(paths); err != nil {
		return nil, err
	}
	sha, err := r.ResolveCommit(ctx, commit)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "gitx-patched-")
	if err != nil {
		return nil, fmt.Errorf("apply patch to %.12s: %w", sha, err)
	}
	defer os.RemoveAll(tmp)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	git := func(c call) ([]byte, error) {
		c.env = env
		c.config = append(slices.Clone(tempIndexConfig), c.config...)
		return r.run(ctx, c)
	}
	if _, err := git(call{sub: "read-tree", args: []string{sha}}); err != nil {
		return nil, fmt.Errorf("apply patch to %.12s: %w", sha, err)
	}
	if len(bytes.TrimSpace(patch)) > 0 {
		args := append([]string{"--cached"}, applyArgs(false, ApplyOptions{})...)
		if _, err := git(call{sub: "apply", args: args, config: applyConfig, stdin: patch}); err != nil {
			return nil, r.applyFailure(ctx, patch, err, false, nil)
		}
	}
	want := make(map[string]bool, len(paths))
	for _, p := range paths {
		want[p] = true
	}
	res := make(map[string]TreeEntry, len(paths))
	for chunk := range slices.Chunk(paths, pathspecChunk) {
		out, err := git(call{sub: "ls-files", args: append([]string{"-s", "-z", "--"}, chunk...)})
		if err != nil {
			return nil, fmt.Errorf("apply patch to %.12s: %w", sha, err)
		}
		entries, err := parseLsFilesStageZ(out)
		if err != nil {
			return nil, fmt.Errorf("apply patch to %.12s: %w", sha, err)
		}
		for _, e := range entries {
			if want[e.Path] && e.Stage == 0 {
				res[e.Path] = e
			}
		}
	}
	return res, nil
}

// BlobID returns the id git gives a blob of content in a repository whose
// object ids have idLen hex digits: 40 (sha1) or 64 (sha256). Comparing it
// with an entry's SHA tells whether the entry holds exactly these bytes,
// without writing anything to the object store.
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
