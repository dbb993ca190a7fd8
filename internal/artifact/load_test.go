package artifact

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFile writes a task-relative file, creating parent folders.
func writeFile(t *testing.T, taskDir, rel, content string) string {
	t.Helper()
	p := filepath.Join(taskDir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mkdirAll(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// loaderCase runs one Load function generically.
type loaderCase struct {
	rel   string
	valid string
	load  func(string) (present bool, err error, sum string)
}

func wrap[T any](f func(string) Loaded[T]) func(string) (bool, error, string) {
	return func(dir string) (bool, error, string) {
		l := f(dir)
		return l.Present, l.Err, l.SHA256
	}
}

func loaders() []loaderCase {
	return []loaderCase{
		{PlanFile, validPlan, wrap(LoadPlan)},
		{PlanReviewFile, validPlanReview, wrap(LoadPlanReview)},
		{CodegenFile, validCodegen, wrap(LoadCodegen)},
		{CodeReviewFile, validCodeReview, wrap(LoadCodeReview)},
		{TestReportFile, validTestReport, wrap(LoadTestReport)},
		{DecisionFile, validDecision, wrap(LoadDecision)},
		{RevertRecordFile, validRevertRecord, wrap(LoadRevertRecord)},
		{FilePlanFile, validFilePlan, wrap(func(dir string) Loaded[FilePlan] { return LoadFilePlan(dir, Loaded[Plan]{}) })},
	}
}

func TestLoadEachArtifact(t *testing.T) {
	for _, lc := range loaders() {
		t.Run(lc.rel, func(t *testing.T) {
			wantErr := func(t *testing.T, dir string, is error, msg string) {
				t.Helper()
				present, err, _ := lc.load(dir)
				if !present || err == nil {
					t.Fatalf("present=%v err=%v, want present and invalid", present, err)
				}
				var ae *Error
				if !errors.As(err, &ae) || ae.File != lc.rel {
					t.Fatalf("error %v is not an *Error for %s", err, lc.rel)
				}
				if !errors.Is(err, is) {
					t.Errorf("error %v does not match %v", err, is)
				}
				if !strings.Contains(err.Error(), msg) {
					t.Errorf("error %q does not contain %q", err, msg)
				}
			}
			t.Run("missing task folder", func(t *testing.T) {
				present, err, _ := lc.load(filepath.Join(t.TempDir(), "nope"))
				if present || err != nil {
					t.Errorf("present=%v err=%v", present, err)
				}
			})
			t.Run("missing file", func(t *testing.T) {
				dir := t.TempDir()
				mkdirAll(t, filepath.Join(dir, "planning"))
				present, err, _ := lc.load(dir)
				if present || err != nil {
					t.Errorf("present=%v err=%v", present, err)
				}
			})
			t.Run("valid", func(t *testing.T) {
				dir := t.TempDir()
				writeFile(t, dir, lc.rel, lc.valid)
				present, err, sum := lc.load(dir)
				if !present || err != nil {
					t.Fatalf("present=%v err=%v", present, err)
				}
				if sum != sha(lc.valid) {
					t.Errorf("SHA256 = %s, want %s", sum, sha(lc.valid))
				}
			})
			t.Run("invalid", func(t *testing.T) {
				dir := t.TempDir()
				writeFile(t, dir, lc.rel, "{\"a\": 1,}")
				wantErr(t, dir, ErrInvalidJSON, lc.rel+": $: expected valid JSON")
			})
			t.Run("directory in place of the file", func(t *testing.T) {
				dir := t.TempDir()
				mkdirAll(t, filepath.Join(dir, filepath.FromSlash(lc.rel)))
				wantErr(t, dir, ErrNotRegular, lc.rel+": expected a regular file, got a directory")
			})
			t.Run("named pipe in place of the file", func(t *testing.T) {
				dir := t.TempDir()
				p := filepath.Join(dir, filepath.FromSlash(lc.rel))
				mkdirAll(t, filepath.Dir(p))
				mkfifo(t, p)
				// Must not block waiting for a writer.
				wantErr(t, dir, ErrNotRegular, lc.rel+": expected a regular file, got a named pipe")
			})
			t.Run("parent is a file", func(t *testing.T) {
				dir := t.TempDir()
				writeFile(t, dir, strings.Split(lc.rel, "/")[0], "x")
				wantErr(t, dir, ErrNotRegular, lc.rel+": expected a regular file, got a path through something that is not a directory")
			})
			t.Run("too large", func(t *testing.T) {
				dir := t.TempDir()
				p := writeFile(t, dir, lc.rel, "")
				if err := os.Truncate(p, MaxJSONBytes+1); err != nil {
					t.Fatal(err)
				}
				wantErr(t, dir, ErrTooLarge, lc.rel+": expected at most 16777216 bytes, got 16777217 bytes")
			})
		})
	}
}

// TestLoadHugeSparseFileIsNotRead uses a 1 TiB sparse file: reading it
// would not finish, so passing shows the size is checked before reading.
func TestLoadHugeSparseFileIsNotRead(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, PlanFile, "")
	if err := os.Truncate(p, 1<<40); err != nil {
		t.Skipf("file system refuses a 1 TiB sparse file: %v", err)
	}
	l := LoadPlan(dir)
	if !l.Present || !errors.Is(l.Err, ErrTooLarge) {
		t.Errorf("LoadPlan = %+v", l)
	}
	d := writeFile(t, dir, DiffFile, "")
	if err := os.Truncate(d, 1<<40); err != nil {
		t.Fatal(err)
	}
	ld := LoadDiff(dir)
	if !ld.Present || !errors.Is(ld.Err, ErrTooLarge) || !strings.Contains(ld.Err.Error(), "code/diff.patch: expected at most 536870912 bytes, got 1099511627776 bytes") {
		t.Errorf("LoadDiff = %+v", ld)
	}
}

func TestLoadExactlyAtTheLimit(t *testing.T) {
	dir := t.TempDir()
	head := `{"id":"a","title":"b","brief":"c","pad":"`
	tail := `"}`
	content := head + strings.Repeat("x", MaxJSONBytes-len(head)-len(tail)) + tail
	writeFile(t, dir, PlanFile, content)
	l := LoadPlan(dir)
	if !l.OK() || l.SHA256 != sha(content) {
		t.Errorf("a plan of exactly MaxJSONBytes: present=%v err=%v", l.Present, l.Err)
	}
}

func TestLoadSymlinks(t *testing.T) {
	outside := t.TempDir()
	writeFile(t, outside, "secret.json", validPlan)
	dir := t.TempDir()
	mkdirAll(t, filepath.Join(dir, "planning"))
	if err := os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(dir, filepath.FromSlash(PlanFile))); err != nil {
		t.Fatal(err)
	}
	l := LoadPlan(dir)
	if !l.Present || !errors.Is(l.Err, ErrUnsafePath) {
		t.Errorf("absolute symlink out of the task folder: %+v", l)
	}

	dir2 := t.TempDir()
	writeFile(t, dir2, "planning/real.json", validPlan)
	if err := os.Symlink("real.json", filepath.Join(dir2, filepath.FromSlash(PlanFile))); err != nil {
		t.Fatal(err)
	}
	if l := LoadPlan(dir2); !l.OK() {
		t.Errorf("relative symlink inside the task folder: %+v", l.Err)
	}

	dir3 := t.TempDir()
	mkdirAll(t, filepath.Join(dir3, "planning"))
	if err := os.Symlink("../../"+filepath.Base(outside)+"/secret.json", filepath.Join(dir3, filepath.FromSlash(PlanFile))); err != nil {
		t.Fatal(err)
	}
	if l := LoadPlan(dir3); !l.Present || l.Err == nil {
		t.Errorf("relative symlink out of the task folder: %+v", l)
	}
}

func TestLoadFilePlan(t *testing.T) {
	planDir := t.TempDir()
	writeFile(t, planDir, PlanFile, validPlan)
	plan := LoadPlan(planDir)
	if !plan.OK() {
		t.Fatal(plan.Err)
	}

	t.Run("from plan.files.json", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, FilePlanFile, validFilePlan)
		l := LoadFilePlan(dir, plan)
		if !l.OK() || l.Value.Inferred || len(l.Value.Files) != 3 || l.Value.Files[0].Path != "a.go" || l.SHA256 != sha(validFilePlan) {
			t.Errorf("got %+v", l)
		}
	})
	t.Run("invalid plan.files.json wins over a good plan", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, FilePlanFile, `{"files": [{"path": "../x", "intent": "create"}]}`)
		l := LoadFilePlan(dir, plan)
		if !l.Present || !errors.Is(l.Err, ErrUnsafePath) || !strings.Contains(l.Err.Error(), "planning/plan.files.json: $.files[0].path") {
			t.Errorf("got %+v", l)
		}
	})
	t.Run("inferred from the plan", func(t *testing.T) {
		l := LoadFilePlan(t.TempDir(), plan)
		if !l.OK() || !l.Value.Inferred || len(l.Value.Files) != 3 || l.SHA256 != plan.SHA256 {
			t.Errorf("got %+v", l)
		}
		if l.Value.OnlyDeletes() || l.Value.Paths()["old.go"].Intent != "delete" {
			t.Errorf("Paths = %+v", l.Value.Paths())
		}
	})
	t.Run("plan missing", func(t *testing.T) {
		if l := LoadFilePlan(t.TempDir(), Loaded[Plan]{}); l.Present || l.Err != nil {
			t.Errorf("got %+v", l)
		}
	})
	t.Run("plan invalid", func(t *testing.T) {
		bad := Loaded[Plan]{Present: true, Err: &Error{File: PlanFile, Err: ErrSchema}, Value: plan.Value}
		if l := LoadFilePlan(t.TempDir(), bad); l.Present || l.Err != nil {
			t.Errorf("got %+v", l)
		}
	})
	t.Run("plan without file_plan", func(t *testing.T) {
		p := plan
		p.Value.FilePlan = nil
		if l := LoadFilePlan(t.TempDir(), p); l.Present || l.Err != nil {
			t.Errorf("got %+v", l)
		}
	})
	t.Run("inferred entries are validated again", func(t *testing.T) {
		p := plan
		p.Value.FilePlan = []FileEntry{{Path: "a.go", Intent: "create"}, {Path: "a.go", Intent: "update"}}
		l := LoadFilePlan(t.TempDir(), p)
		if !l.Present || !errors.Is(l.Err, ErrSchema) || !strings.Contains(l.Err.Error(), "planning/planning.ai.json: $.file_plan[1].path: expected unique paths") {
			t.Errorf("duplicate: %+v", l)
		}
		p.Value.FilePlan = []FileEntry{{Path: ".git/config", Intent: "create"}}
		l = LoadFilePlan(t.TempDir(), p)
		if !errors.Is(l.Err, ErrUnsafePath) {
			t.Errorf("unsafe: %+v", l)
		}
		p.Value.FilePlan = []FileEntry{{Path: "x", Intent: "rewrite"}}
		l = LoadFilePlan(t.TempDir(), p)
		if !errors.Is(l.Err, ErrSchema) || !strings.Contains(l.Err.Error(), "$.file_plan[0].intent") {
			t.Errorf("intent: %+v", l)
		}
	})
}
