package artifact

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"github.com/orchdev/orch/internal/safepath"
)

// LoadPlan reads planning/planning.ai.json.
func LoadPlan(taskDir string) Loaded[Plan] { return loadJSON(taskDir, PlanFile, DecodePlan) }

// LoadPlanReview reads review/plan-review.json.
func LoadPlanReview(taskDir string) Loaded[PlanReview] {
	return loadJSON(taskDir, PlanReviewFile, DecodePlanReview)
}

// LoadCodegen reads code/codegen.json.
func LoadCodegen(taskDir string) Loaded[Codegen] {
	return loadJSON(taskDir, CodegenFile, DecodeCodegen)
}

// LoadCodeReview reads review/code-review.json.
func LoadCodeReview(taskDir string) Loaded[CodeReview] {
	return loadJSON(taskDir, CodeReviewFile, DecodeCodeReview)
}

// LoadTestReport reads test/report.json.
func LoadTestReport(taskDir string) Loaded[TestReport] {
	return loadJSON(taskDir, TestReportFile, DecodeTestReport)
}

// LoadDecision reads accept/decision.json.
func LoadDecision(taskDir string) Loaded[Decision] {
	return loadJSON(taskDir, DecisionFile, DecodeDecision)
}

// LoadRevertRecord reads revert/record.json.
func LoadRevertRecord(taskDir string) Loaded[RevertRecord] {
	return loadJSON(taskDir, RevertRecordFile, DecodeRevertRecord)
}

// LoadFilePlan reads planning/plan.files.json. When that file is absent the
// file plan is inferred from plan's file_plan (Value.Inferred true, SHA256
// the plan's), which DecodePlan has validated with the same rules. When the
// file is absent and the plan is missing, invalid or has no file_plan
// entries, the result is not Present.
func LoadFilePlan(taskDir string, plan Loaded[Plan]) Loaded[FilePlan] {
	l := loadJSON(taskDir, FilePlanFile, DecodeFilePlan)
	if l.Present {
		return l
	}
	if !plan.OK() || len(plan.Value.FilePlan) == 0 {
		return Loaded[FilePlan]{}
	}
	files := append([]FileEntry(nil), plan.Value.FilePlan...)
	if err := checkEntries(PlanFile, "file_plan", files); err != nil {
		return Loaded[FilePlan]{Present: true, Err: err, SHA256: plan.SHA256}
	}
	return Loaded[FilePlan]{Present: true, Value: FilePlan{Files: files, Inferred: true}, SHA256: plan.SHA256}
}

// checkEntries re-validates entries taken from an already decoded plan (the
// caller may have built or changed the Plan value itself).
func checkEntries(file, field string, files []FileEntry) error {
	seen := make(map[string]int, len(files))
	folded := make(map[string]int, len(files))
	for i, f := range files {
		at := func(sub string) string { return fmt.Sprintf("$.%s[%d].%s", field, i, sub) }
		if err := CheckPath(f.Path); err != nil {
			return &Error{File: file, JSONPath: at("path"), Expected: "a safe repository-relative path", Got: safepath.Reason(err), Err: err}
		}
		if j, dup := seen[f.Path]; dup {
			return &Error{File: file, JSONPath: at("path"), Expected: "unique paths",
				Got: fmt.Sprintf("%q at indexes %d and %d (also $.%s[%d].path)", f.Path, j, i, field, j), Err: ErrSchema}
		}
		if j, dup := folded[safepath.FoldCase(f.Path)]; dup {
			return &Error{File: file, JSONPath: at("path"), Expected: "paths that differ in more than case",
				Got: caseCollision(f.Path, files[j].Path, i, j, fmt.Sprintf("$.%s[%d].path", field, j)), Err: ErrSchema}
		}
		seen[f.Path] = i
		folded[safepath.FoldCase(f.Path)] = i
		switch f.Intent {
		case "create", "update", "delete":
		default:
			return &Error{File: file, JSONPath: at("intent"), Expected: `one of "create", "update", "delete"`,
				Got: strconv.Quote(f.Intent), Err: ErrSchema}
		}
	}
	return nil
}

// caseCollision describes path (entry i) colliding with other (entry j,
// at otherAt) when case is ignored.
func caseCollision(path, other string, i, j int, otherAt string) string {
	return fmt.Sprintf("%s at index %d differs only in case from %s at index %d (%s): a case-insensitive file system holds one file for both",
		safepath.Quote(path), i, safepath.Quote(other), j, otherAt)
}

// loadJSON reads and decodes one JSON artifact of a task folder.
func loadJSON[T any](taskDir, rel string, decode func(string, []byte) (T, error)) Loaded[T] {
	data, present, err := readArtifact(taskDir, rel, MaxJSONBytes)
	if !present {
		return Loaded[T]{}
	}
	if err != nil {
		return Loaded[T]{Present: true, Err: err}
	}
	sum := sha256.Sum256(data)
	l := Loaded[T]{Present: true, SHA256: hex.EncodeToString(sum[:])}
	l.Value, l.Err = decode(rel, data)
	return l
}

// readArtifact reads taskDir/rel through the bounded reader
// (safepath.ReadRegular: a regular file, symbolic links only inside the
// task folder), refusing anything above limit without reading it. present
// is false only when the file does not exist.
func readArtifact(taskDir, rel string, limit int64) (data []byte, present bool, err error) {
	data, err = safepath.ReadRegular(taskDir, rel, limit, safepath.LinksInside)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, fromSafe(err)
	}
	return data, true, nil
}

// openArtifact opens taskDir/rel like readArtifact, checking its size
// against limit, and returns it with its size. f is nil when err is set
// or the file is absent.
func openArtifact(taskDir, rel string, limit int64) (f *os.File, size int64, present bool, err error) {
	f, fi, err := safepath.OpenRegular(taskDir, rel, safepath.LinksInside)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, true, fromSafe(err)
	}
	if fi.Size() > limit {
		f.Close()
		return nil, 0, true, fromSafe(safepath.TooLarge(rel, fi.Size(), limit))
	}
	return f, fi.Size(), true, nil
}

func tooLarge(rel string, limit int64, got string) error {
	return &Error{File: rel, Expected: fmt.Sprintf("at most %d bytes", limit), Got: got, Err: ErrTooLarge}
}

// DescribeMode names the type of a file for messages ("a named pipe",
// "a symbolic link", …): safepath.DescribeMode.
func DescribeMode(m fs.FileMode) string { return safepath.DescribeMode(m) }
