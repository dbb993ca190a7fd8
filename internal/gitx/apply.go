package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
)

// ApplyOptions selects how Apply applies a patch.
type ApplyOptions struct {
	// Index applies to the index as well as the work tree (git apply
	// --index): every touched file must match the index beforehand.
	Index bool
	// ThreeWay falls back to a three-way merge, using the blobs named in the
	// patch's index lines, for files whose hunks do not apply (git apply
	// --3way, which implies Index). See Apply for what a conflict leaves.
	ThreeWay bool
}

// applyConfig pins settings that change what git apply accepts.
var applyConfig = []string{"apply.ignoreWhitespace=no"}

func applyArgs(check bool, opts ApplyOptions) []string {
	args := []string{"--whitespace=nowarn"}
	if check {
		args = append(args, "--check")
	}
	if opts.Index {
		args = append(args, "--index")
	}
	if opts.ThreeWay {
		args = append(args, "--3way")
	}
	return append(args, "-")
}

// ApplyCheck reports whether patch applies to the work tree (git apply
// --check) or, with threeWay, whether a three-way apply would succeed
// without conflicts (git apply --check --3way, which also requires the
// touched files to match the index). Nothing is changed. A patch that does
// not apply gives an *ApplyError (errors.Is ErrApplyConflict); one git
// cannot parse gives ErrInvalidPatch. An empty patch applies.
func (r *Repo) ApplyCheck(ctx context.Context, patch []byte, threeWay bool) error {
	if len(bytes.TrimSpace(patch)) == 0 {
		return nil
	}
	opts := ApplyOptions{ThreeWay: threeWay}
	c := call{sub: "apply", args: applyArgs(true, opts), config: applyConfig, stdin: patch}
	_, stderr, err := r.runFull(ctx, c)
	if err != nil {
		return r.applyFailure(ctx, patch, err, threeWay, nil)
	}
	if !threeWay {
		return nil
	}
	// `git apply --check --3way` exits 0 even when the merge would leave
	// conflicts; it says so only on stderr ("Applied patch to 'x' with
	// conflicts.").
	conflicts := conflictLines(string(stderr))
	if len(conflicts) == 0 {
		return nil
	}
	return &ApplyError{Files: conflicts, ThreeWay: true, Err: &Error{
		Subcommand: "apply", Args: c.args, ExitCode: 0, Stderr: string(stderr),
	}}
}

// conflictLines returns the paths of "Applied patch to 'PATH' with
// conflicts." lines.
func conflictLines(stderr string) []string {
	var paths []string
	for line := range strings.SplitSeq(stderr, "\n") {
		rest, ok := strings.CutPrefix(line, "Applied patch to '")
		if !ok {
			continue
		}
		if p, ok := strings.CutSuffix(rest, "' with conflicts."); ok && p != "" {
			paths = append(paths, p)
		}
	}
	return paths
}

// Apply applies patch to the work tree (and the index with Index or
// ThreeWay). Without ThreeWay git apply is atomic: on failure nothing has
// changed, and the error is an *ApplyError naming the files whose hunks
// failed (errors.Is ErrApplyConflict), or ErrInvalidPatch.
//
// A three-way apply that conflicts would leave conflict markers in the work
// tree, unmerged stages 1-3 in the index for the conflicting files, and the
// other files of the patch applied and staged. Apply does not leave that
// behind: it snapshots the index entries and work-tree files of exactly the
// paths the patch touches before applying, and after a failure puts back
// only those that changed (index entries via `git update-index
// --index-info`, file bytes, modes and links directly). Other paths, staged
// or not, are never touched. The *ApplyError lists the files that had
// conflicts. An empty patch is a no-op.
func (r *Repo) Apply(ctx context.Context, patch []byte, opts ApplyOptions) error {
	if len(bytes.TrimSpace(patch)) == 0 {
		return nil
	}
	c := call{sub: "apply", args: applyArgs(false, opts), config: applyConfig, stdin: patch}
	if !opts.ThreeWay {
		if _, err := r.run(ctx, c); err != nil {
			return r.applyFailure(ctx, patch, err, false, nil)
		}
		return nil
	}

	touched, err := r.patchPaths(ctx, patch)
	if err != nil {
		return err
	}
	snap, err := r.takeSnapshot(ctx, touched)
	if err != nil {
		return fmt.Errorf("apply patch in %s: %w", r.Dir, err)
	}
	_, applyErr := r.run(ctx, c)
	if applyErr == nil {
		return nil
	}
	// The context may be what stopped git; clean up regardless.
	cleanupCtx := context.WithoutCancel(ctx)
	unmerged, err := r.unmergedAmong(cleanupCtx, touched)
	if err != nil {
		return errors.Join(r.applyFailure(cleanupCtx, patch, applyErr, true, touched),
			fmt.Errorf("list conflicts after failed three-way apply: %w", err))
	}
	failure := r.applyFailure(cleanupCtx, patch, applyErr, true, touched)
	var ae *ApplyError
	if len(unmerged) > 0 && errors.As(failure, &ae) {
		ae.Files = unmerged
	}
	if err := r.restoreSnapshot(cleanupCtx, snap); err != nil {
		return errors.Join(failure, fmt.Errorf("restore %s after failed three-way apply: %w", strings.Join(touched, ", "), err))
	}
	return failure
}

// patchPaths lists the paths a patch touches (`git apply --numstat -z`),
// failing with ErrInvalidPatch when git cannot parse it.
func (r *Repo) patchPaths(ctx context.Context, patch []byte) ([]string, error) {
	out, err := r.run(ctx, call{sub: "apply", args: []string{"--numstat", "-z", "-"}, config: applyConfig, stdin: patch})
	if err != nil {
		if exitCode(err) > 0 {
			return nil, fmt.Errorf("%w: %w", ErrInvalidPatch, err)
		}
		return nil, fmt.Errorf("read patch: %w", err)
	}
	paths, err := parseNumstatZ(out)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPatch, err)
	}
	return paths, nil
}

// applyFailure turns a failed git apply into an *ApplyError when git named
// files that did not apply, ErrInvalidPatch when the patch does not parse,
// or else the wrapped error.
func (r *Repo) applyFailure(ctx context.Context, patch []byte, err error, threeWay bool, touched []string) error {
	var gerr *Error
	if !errors.As(err, &gerr) || gerr.ExitCode < 0 {
		return fmt.Errorf("apply patch in %s: %w", r.Dir, err)
	}
	if touched == nil {
		var perr error
		touched, perr = r.patchPaths(ctx, patch)
		if perr != nil {
			return perr
		}
	}
	if files := applyFailures(gerr.Stderr, touched); len(files) > 0 {
		return &ApplyError{Files: files, ThreeWay: threeWay, Err: gerr}
	}
	return fmt.Errorf("apply patch in %s: %w", r.Dir, err)
}

// unmergedAmong lists which of paths have unmerged index entries.
func (r *Repo) unmergedAmong(ctx context.Context, paths []string) ([]string, error) {
	idx, err := r.indexEntries(ctx, paths)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range paths {
		for _, e := range idx[p] {
			if e.Stage != 0 {
				out = append(out, p)
				break
			}
		}
	}
	return out, nil
}
