package evidence

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/lifecycle"
)

// Now returns the sha256 of each artifact a gate can bind, as it is now, by
// key (lifecycle.HashPlan, …); a missing or unreadable artifact has no key.
// Hashes the snapshot already holds are reused; code/files/ gets its
// Digest. files is code/files/ as read (empty when it is missing, nil when it is
// invalid).
func Now(taskDir string, s *lifecycle.Snapshot) (now map[string]string, files CodeFiles) {
	now = fileHashes(nil, taskDir, s)
	if fs, present, err := ReadCodeFiles(taskDir); err == nil {
		files = fs // empty when code/files/ is missing: a patch that only deletes agrees with it
		if present {
			now[lifecycle.HashFiles] = fs.Digest()
		}
	}
	return now, files
}

// fileHashes returns the sha256 of the plan, patch, code review and test
// report by key, reusing the hashes the snapshot already holds, and those
// the observation cache c holds of unchanged files (nil: none); a missing
// or unreadable artifact has no key.
func fileHashes(c *Cache, taskDir string, s *lifecycle.Snapshot) map[string]string {
	now := map[string]string{}
	put := func(key, file, have string) {
		switch {
		case have != "":
		case c != nil:
			have = c.hashFile(file)
		default:
			have = hashFile(taskDir, file)
		}
		if have != "" {
			now[key] = have
		}
	}
	put(lifecycle.HashPlan, artifact.PlanFile, s.Plan.SHA256)
	put(lifecycle.HashDiff, artifact.DiffFile, s.Diff.SHA256)
	put(lifecycle.HashReview, artifact.CodeReviewFile, s.CodeReview.SHA256)
	put(lifecycle.HashReport, artifact.TestReportFile, s.TestReport.SHA256)
	return now
}

// hashFile returns the sha256 of a task file's bytes, or "" when it is
// missing, not a regular file, or cannot be read.
func hashFile(taskDir, rel string) string {
	p := filepath.Join(taskDir, filepath.FromSlash(rel))
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := newHash()
	if _, err := io.Copy(h, io.LimitReader(f, artifact.MaxDiffBytes+1)); err != nil {
		return ""
	}
	return h.hex()
}

// Observe fills s.Evidence for a decision in phase p: the hashes the
// current attempt's gates bound (from the transcript), the hashes of the
// artifacts now, and, where a condition needs it, the comparison of
// code/files/ with code/diff.patch applied to the base — in codegen (the
// codegen → review gate), and in review when the patch or the files are no
// longer the ones that gate bound (a re-reviewed change must agree again).
// repoDir is the repository the patch applies to; it is opened only when a
// comparison is made.
func Observe(ctx context.Context, repoDir, taskDir string, p lifecycle.Phase, s *lifecycle.Snapshot) error {
	return ObserveCached(ctx, nil, repoDir, taskDir, p, s)
}

// ObserveCached is Observe for the task's readers (`orch status`, the
// board): what c, the task's observation cache, holds of code/files/ and
// of the comparison is taken from it when the files did not change, and
// what is observed again is kept in it. A nil c is Observe.
func ObserveCached(ctx context.Context, c *Cache, repoDir, taskDir string, p lifecycle.Phase, s *lifecycle.Snapshot) error {
	var gates, sentBack lifecycle.Gates
	var err error
	if c == nil {
		gates, sentBack, err = ReadRecords(taskDir)
	} else {
		gates, sentBack, err = c.records()
	}
	if err != nil {
		return err
	}
	var now map[string]string
	var files func() (CodeFiles, error)
	if c == nil {
		var fs CodeFiles
		now, fs = Now(taskDir, s)
		files = func() (CodeFiles, error) { return fs, nil }
		if fs == nil {
			files = nil
		}
	} else {
		now = nowCached(c, taskDir, s)
		if _, ok := c.filesDigest(); ok || !c.scan.Present {
			files = c.codeFiles
		}
	}
	s.Evidence = lifecycle.Evidence{Gates: gates, SentBack: sentBack, Now: now}
	if s.PlanReview.OK() {
		s.Evidence.ReviewedPlan = s.PlanReview.Value.PlanSHA256
	}
	switch p {
	case lifecycle.Accept:
		// accept → done needs orch's commit of the judged change. A
		// reader looks for it (git) only when the decision says accepted:
		// it is required by that edge alone, once its condition holds.
		if c == nil || (s.Decision.OK() && s.Decision.Value.Verdict == artifact.VerdictAccepted) {
			s.Evidence.Landed = FindLanded(ctx, repoDir, filepath.Base(taskDir))
		}
		return nil
	case lifecycle.Codegen:
	case lifecycle.Review:
		if now[lifecycle.HashDiff] == gates[lifecycle.HashDiff].SHA256 && now[lifecycle.HashFiles] == gates[lifecycle.HashFiles].SHA256 {
			return nil
		}
	default:
		return nil
	}
	if files == nil || now[lifecycle.HashDiff] == "" {
		return nil // the conditions say what is missing or invalid
	}
	s.Evidence.Agreement = compare(ctx, c, repoDir, taskDir, now, files)
	return nil
}

// nowCached is Now with code/files/'s digest from c.
func nowCached(c *Cache, taskDir string, s *lifecycle.Snapshot) map[string]string {
	now := fileHashes(c, taskDir, s)
	if d, ok := c.filesDigest(); ok {
		now[lifecycle.HashFiles] = d
	}
	return now
}

// compare runs CompareFiles on the task's patch and files against the base
// code/codegen.json names (HEAD when it names none). With a cache, an
// agreement found before for the same patch, files and base (by content)
// is taken from it, and a new one is kept.
func compare(ctx context.Context, c *Cache, repoDir, taskDir string, now map[string]string, readFiles func() (CodeFiles, error)) *lifecycle.Agreement {
	base := ""
	if cg := artifact.LoadCodegen(taskDir); cg.OK() {
		base = cg.Value.Base
	} else if cg.Err != nil {
		return &lifecycle.Agreement{Err: cg.Err}
	}
	key := agreeKey{Diff: now[lifecycle.HashDiff], Files: now[lifecycle.HashFiles], Base: base}
	if c != nil && cacheable(base) && key.Files != "" && c.agreed(key) {
		return &lifecycle.Agreement{}
	}
	files, err := readFiles()
	if err != nil {
		return &lifecycle.Agreement{Err: err}
	}
	repo, err := gitx.Open(ctx, repoDir)
	if err != nil {
		return &lifecycle.Agreement{Err: fmt.Errorf("open the repository to apply the patch in: %w", err)}
	}
	patch, present, err := artifact.ReadDiff(taskDir)
	if err == nil && !present {
		err = &artifact.Error{File: artifact.DiffFile, Expected: "a patch", Got: "no file"}
	}
	if err != nil {
		return &lifecycle.Agreement{Err: err}
	}
	if base == "" {
		head, err := repo.Head(ctx)
		switch {
		case errors.Is(err, gitx.ErrNoCommits):
			// No commit yet: the patch applies to the empty tree.
		case err != nil:
			return &lifecycle.Agreement{Err: fmt.Errorf("no base commit: %s names none and HEAD cannot be read: %w", artifact.CodegenFile, err)}
		default:
			base = head
		}
	}
	a := &lifecycle.Agreement{Err: CompareFiles(ctx, repo, base, patch, files)}
	// Keep it only when the bytes compared are the ones the key names.
	if c != nil && a.Err == nil && cacheable(key.Base) && key.Files != "" && SHA256Hex(patch) == key.Diff && files.Digest() == key.Files {
		c.recordAgreed(key)
	}
	return a
}

// CheckCommit is the check `orch accept` makes right before it commits:
// patch — the very bytes it is about to apply — must be the change every
// gate of the task's current attempt recorded, and the plan, code/files/,
// the code review and the test report must still be the ones they judged
// (lifecycle.CheckCommit). It reads the transcript and the artifacts of
// taskDir and changes nothing. The error names the file, both hashes and
// what to do; its exit code is 4 (invalid).
func CheckCommit(taskDir string, patch []byte) error {
	gates, err := ReadGates(taskDir)
	if err != nil {
		return err
	}
	s := lifecycle.Snapshot{CodeReview: artifact.LoadCodeReview(taskDir), TestReport: artifact.LoadTestReport(taskDir)}
	now, _ := Now(taskDir, &s)
	s.Evidence = lifecycle.Evidence{Gates: gates, Now: now}
	return lifecycle.CheckCommit(s, SHA256Hex(patch))
}
