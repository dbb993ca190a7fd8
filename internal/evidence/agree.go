package evidence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/patch"
)

// ErrDisagree is matched (through *artifact.Error) by a code/files/ that is
// not what code/diff.patch gives when applied to the base commit.
var ErrDisagree = errors.New("code/files and code/diff.patch disagree")

// CompareFiles checks that applying patch to base (a commit, or "" for the
// empty tree of a repository without commits) yields exactly files:
// for every path the patch touches (both sides of a rename) and every path
// under code/files/, the file exists after the patch if and only if
// code/files/ has it, with the same bytes. A path of code/files/ that the
// patch does not touch must therefore equal base's file. Nothing is written
// to the repository at all (see gitx.PatchedBlobs).
//
// It returns nil when they agree. A disagreement is an *artifact.Error
// naming the first path in byte order (errors.Is ErrDisagree); a patch that
// does not apply to base is an *artifact.Error about code/diff.patch (also
// ErrDisagree); a base that is not a commit of the repository is an
// *artifact.Error about code/codegen.json's $.base. Any other error (git
// could not run) is returned as is: the check did not happen.
func CompareFiles(ctx context.Context, repo *gitx.Repo, base string, diff []byte, files CodeFiles) error {
	d, err := patch.Parse(bytes.NewReader(diff))
	if err != nil {
		return &artifact.Error{File: artifact.DiffFile, Err: err}
	}
	touched := map[string]bool{}
	for _, f := range d.Files {
		for _, p := range []string{f.OldPath, f.NewPath} {
			if p != "" {
				touched[p] = true
			}
		}
	}
	paths := make([]string, 0, len(touched)+len(files))
	for p := range touched {
		paths = append(paths, p)
	}
	for p := range files {
		if !touched[p] {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	if base == "" {
		return compareAll(ctx, repo, "", diff, paths, files, touched)
	}
	sha, err := repo.ResolveCommit(ctx, base)
	switch {
	case errors.Is(err, gitx.ErrBadRevision):
		return &artifact.Error{File: artifact.CodegenFile, JSONPath: "$.base", Expected: "a commit of this repository",
			Got: fmt.Sprintf("%q, which it does not have", base), Err: err}
	case err != nil:
		return fmt.Errorf("compare %s with %s: %w", artifact.CodeFilesDir, artifact.DiffFile, err)
	}
	return compareAll(ctx, repo, sha, diff, paths, files, touched)
}

// compareAll applies the patch to base ("" for the empty tree) and compares
// every path.
func compareAll(ctx context.Context, repo *gitx.Repo, base string, patch []byte, paths []string, files CodeFiles, touched map[string]bool) error {
	after, err := repo.PatchedBlobs(ctx, base, patch, paths)
	var nr *gitx.NotRegularError
	switch {
	case errors.As(err, &nr):
		return &artifact.Error{File: path.Join(artifact.CodeFilesDir, nr.Path), Expected: "a path that is a regular file at the base " + short(base),
			Got: err.Error(), Err: ErrDisagree}
	case errors.Is(err, gitx.ErrApplyConflict), errors.Is(err, gitx.ErrInvalidPatch):
		return &artifact.Error{File: artifact.DiffFile, Expected: "a patch that applies to the base " + short(base),
			Got: err.Error(), Err: fmt.Errorf("%w: %w", ErrDisagree, err)}
	case err != nil:
		return fmt.Errorf("compare %s with %s: %w", artifact.CodeFilesDir, artifact.DiffFile, err)
	}
	idLen := len(base)
	if idLen == 0 {
		if idLen, err = repo.ObjectIDLen(ctx); err != nil {
			return fmt.Errorf("compare %s with %s: %w", artifact.CodeFilesDir, artifact.DiffFile, err)
		}
	}
	for _, p := range paths {
		if err := comparePath(p, base, idLen, after, files, touched[p]); err != nil {
			return err
		}
	}
	return nil
}

// comparePath compares one path of base+patch with code/files/.
func comparePath(p, base string, idLen int, after map[string]gitx.TreeEntry, files CodeFiles, touched bool) error {
	rel := path.Join(artifact.CodeFilesDir, p)
	e, exists := after[p]
	content, inFiles := files[p]
	fail := func(expected, got string) error {
		return &artifact.Error{File: rel, Expected: expected, Got: got, Err: ErrDisagree}
	}
	what := "code/diff.patch applied to the base " + short(base)
	var id string
	if inFiles {
		var err error
		if id, err = gitx.BlobID(content, idLen); err != nil {
			return fmt.Errorf("compare %s: %w", rel, err)
		}
	}
	switch {
	case !exists && !inFiles:
		return nil // deleted by the patch, and absent here: they agree
	case !exists && touched:
		return fail(fmt.Sprintf("no file: %s deletes %s", what, p),
			fmt.Sprintf("a file (blob %s); re-run codegen, or delete it here to match the patch", short(id)))
	case !exists:
		return fail(fmt.Sprintf("no file: %s has no %s and the patch does not create it", what, p),
			fmt.Sprintf("a file (blob %s); re-run codegen so that code/diff.patch is computed from code/files/", short(id)))
	case !inFiles:
		return fail(fmt.Sprintf("the file %s gives (blob %s)", what, short(e.SHA)),
			"no file; re-run codegen so that code/files/ and code/diff.patch are made together")
	case id == e.SHA:
		return nil
	}
	how := "the patch changes it"
	if !touched {
		how = "the patch does not touch it, so it must equal the base's file"
	}
	return fail(fmt.Sprintf("the content %s gives (blob %s; %s)", what, short(e.SHA), how),
		fmt.Sprintf("different content (blob %s); re-run codegen, or make code/files/ and code/diff.patch agree", short(id)))
}

// short abbreviates an object id or hash for messages.
func short(id string) string {
	if id == "" {
		return "(no commit yet)"
	}
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
