package artifact

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkFuzzError asserts the shape of every decoder error.
func checkFuzzError(t *testing.T, file string, err error) {
	t.Helper()
	var ae *Error
	if !errors.As(err, &ae) {
		t.Fatalf("error %T is not an *Error: %v", err, err)
	}
	if ae.File != file || !strings.HasPrefix(err.Error(), file+": ") {
		t.Fatalf("error does not name %s: %v", file, err)
	}
	if ae.Err == nil {
		t.Fatalf("error without a cause: %v", err)
	}
	if !errors.Is(err, ErrInvalidJSON) && !errors.Is(err, ErrSchema) && !errors.Is(err, ErrUnsafePath) {
		t.Fatalf("error matches no sentinel: %v", err)
	}
	if ae.JSONPath != "" && !strings.HasPrefix(ae.JSONPath, "$") {
		t.Fatalf("bad JSON path %q", ae.JSONPath)
	}
}

func addJSONSeeds(f *testing.F, valid string) {
	f.Add([]byte(valid))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Add([]byte(`[` + valid + `]`))
	f.Add([]byte(valid + `{}`))
	f.Add([]byte(strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70)))
	f.Add([]byte("{\"x\":\"\xff\"}"))
	f.Add([]byte(strings.Replace(valid, "true", "\"true\"", 1)))
}

func checkEntriesValid(t *testing.T, files []FileEntry) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range files {
		if err := CheckPath(e.Path); err != nil {
			t.Fatalf("accepted an unsafe path: %v", err)
		}
		if seen[e.Path] {
			t.Fatalf("accepted a duplicate path %q", e.Path)
		}
		seen[e.Path] = true
		if e.Intent != "create" && e.Intent != "update" && e.Intent != "delete" {
			t.Fatalf("accepted intent %q", e.Intent)
		}
	}
}

func FuzzDecodePlan(f *testing.F) {
	addJSONSeeds(f, validPlan)
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodePlan(PlanFile, data)
		if err != nil {
			checkFuzzError(t, PlanFile, err)
			return
		}
		if isBlank(p.ID) || isBlank(p.Title) || isBlank(p.Brief) || !utf8.ValidString(p.ID) {
			t.Fatalf("accepted blank or invalid required fields: %+v", p)
		}
		checkEntriesValid(t, p.FilePlan)
		for _, q := range p.Questions {
			if isBlank(q.ID) || isBlank(q.Text) {
				t.Fatalf("accepted a blank question: %+v", q)
			}
		}
	})
}

func FuzzDecodeFilePlan(f *testing.F) {
	addJSONSeeds(f, validFilePlan)
	f.Add([]byte(`{"files":[{"path":"a","intent":"create"},{"path":"a","intent":"create"}]}`))
	f.Add([]byte(`{"files":[{"path":".git/x","intent":"create"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fp, err := DecodeFilePlan(FilePlanFile, data)
		if err != nil {
			checkFuzzError(t, FilePlanFile, err)
			return
		}
		if fp.Files == nil {
			t.Fatal("accepted a file plan without files")
		}
		checkEntriesValid(t, fp.Files)
	})
}

func FuzzDecodePlanReview(f *testing.F) {
	addJSONSeeds(f, validPlanReview)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodePlanReview(PlanReviewFile, data)
		if err != nil {
			checkFuzzError(t, PlanReviewFile, err)
			return
		}
		if r.PlanSHA256 != "" && (len(r.PlanSHA256) != 64 || strings.ToLower(r.PlanSHA256) != r.PlanSHA256 || !isHex(r.PlanSHA256)) {
			t.Fatalf("accepted plan_sha256 %q", r.PlanSHA256)
		}
		for _, rv := range r.Reviewers {
			if isBlank(rv.ID) {
				t.Fatal("accepted a blank reviewer id")
			}
			switch rv.Severity {
			case "", "info", "minor", "major", "blocking":
			default:
				t.Fatalf("accepted severity %q", rv.Severity)
			}
		}
	})
}

func FuzzDecodeCodegen(f *testing.F) {
	addJSONSeeds(f, validCodegen)
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := DecodeCodegen(CodegenFile, data)
		if err != nil {
			checkFuzzError(t, CodegenFile, err)
			return
		}
		if (len(g.Base) != 40 && len(g.Base) != 64) || !isHex(g.Base) {
			t.Fatalf("accepted base %q", g.Base)
		}
	})
}

func FuzzDecodeCodeReview(f *testing.F) {
	addJSONSeeds(f, validCodeReview)
	f.Add([]byte(`{"ok":true,"issues":[{"severity":"info","message":"m","line":1.0}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeCodeReview(CodeReviewFile, data)
		if err != nil {
			checkFuzzError(t, CodeReviewFile, err)
			return
		}
		for _, is := range r.Issues {
			if is.Line < 0 || isBlank(is.Message) {
				t.Fatalf("accepted issue %+v", is)
			}
		}
	})
}

func FuzzDecodeTestReport(f *testing.F) {
	addJSONSeeds(f, validTestReport)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeTestReport(TestReportFile, data)
		if err != nil {
			checkFuzzError(t, TestReportFile, err)
			return
		}
		if r.Summary.Passed < 0 || r.Summary.Failed < 0 || r.Summary.Skipped < 0 || r.Summary.Error < 0 {
			t.Fatalf("accepted negative counts %+v", r.Summary)
		}
		for _, s := range r.Suites {
			if s.Kind != "test" && s.Kind != "lint" {
				t.Fatalf("accepted suite kind %q", s.Kind)
			}
		}
	})
}

func FuzzDecodeDecision(f *testing.F) {
	addJSONSeeds(f, validDecision)
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := DecodeDecision(DecisionFile, data)
		if err != nil {
			checkFuzzError(t, DecisionFile, err)
			return
		}
		if d.Verdict == VerdictChangesRequested && d.Target == "" {
			t.Fatal("accepted changes_requested without a target")
		}
		if !anyNonBlank(d.Reasons) {
			t.Fatal("accepted a decision without a reason")
		}
	})
}

func FuzzDecodeRevertRecord(f *testing.F) {
	addJSONSeeds(f, validRevertRecord)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeRevertRecord(RevertRecordFile, data)
		if err != nil {
			checkFuzzError(t, RevertRecordFile, err)
			return
		}
		if isBlank(r.Reason) {
			t.Fatal("accepted a blank reason")
		}
	})
}

func FuzzParseDiff(f *testing.F) {
	for _, s := range []string{
		"",
		"diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n",
		"--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+a\n",
		"diff --git \"a/x y\" b/z\nsimilarity index 100%\nrename from \"x y\"\nrename to z\n",
		"diff --git a/l b/l\nnew file mode 120000\n",
		"diff --git a/x b/x\nold mode 100644\nnew mode 100755\n",
		"--- a/x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n",
		"diff --git a/.git/config b/.git/config\ndeleted file mode 100644\n",
		"diff --git a/b b/b\nGIT binary patch\n",
		"@@ -1 +1 @@\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDiff(bytes.NewReader(data))
		if err != nil {
			var de *DiffError
			if !errors.As(err, &de) || !errors.Is(err, ErrInvalidDiff) {
				t.Fatalf("error %v is not a *DiffError", err)
			}
			return
		}
		if d.Bytes != int64(len(data)) {
			t.Fatalf("Bytes = %d, want %d", d.Bytes, len(data))
		}
		seen := map[string]bool{}
		for _, e := range d.Files {
			switch e.Op {
			case OpCreate:
				if e.OldPath != "" || e.NewPath == "" {
					t.Fatalf("bad create %+v", e)
				}
			case OpDelete:
				if e.OldPath == "" || e.NewPath != "" {
					t.Fatalf("bad delete %+v", e)
				}
			case OpUpdate:
				if e.OldPath == "" || e.OldPath != e.NewPath {
					t.Fatalf("bad update %+v", e)
				}
			case OpRename:
				if e.OldPath == "" || e.NewPath == "" || e.OldPath == e.NewPath && !strings.Contains(string(data), "rename from") {
					t.Fatalf("bad rename %+v", e)
				}
			default:
				t.Fatalf("bad op %+v", e)
			}
			for _, p := range []string{e.OldPath, e.NewPath} {
				if p == "" {
					continue
				}
				if err := CheckPath(p); err != nil {
					t.Fatalf("accepted an unsafe path: %v", err)
				}
				if seen[p] && !(e.Op == OpUpdate && p == e.NewPath) {
					t.Fatalf("accepted %q twice", p)
				}
				seen[p] = true
			}
		}
		if len(d.Files) == 0 && len(bytes.TrimSpace(data)) > 0 && utf8.Valid(data) && !bytes.Contains(data, []byte("\n")) {
			t.Fatalf("accepted one line of text as an empty patch: %q", data)
		}
	})
}

func FuzzCheckPath(f *testing.F) {
	for _, s := range []string{"a/b.go", "../x", ".git/config", ".GIT./x", "git~1", ".orch/x", "a//b", "/abs", `a\b`, "C:x", "\xff", "a/./b", ".g\u200cit"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := CheckPath(p)
		if err != nil {
			if !errors.Is(err, ErrUnsafePath) {
				t.Fatalf("error does not match ErrUnsafePath: %v", err)
			}
			return
		}
		if p == "" || len(p) > MaxPathBytes || !utf8.ValidString(p) || strings.ContainsAny(p, "\\\x00\n\r\t") || strings.HasPrefix(p, "/") {
			t.Fatalf("accepted %q", p)
		}
		if len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0]) {
			t.Fatalf("accepted a drive path %q", p)
		}
		for i, e := range strings.Split(p, "/") {
			n := strings.TrimRight(e, ". ")
			switch {
			case e == "", e == ".", e == "..", len(e) > MaxPathElementBytes,
				strings.EqualFold(n, ".git"), strings.EqualFold(n, "git~1"),
				i == 0 && strings.EqualFold(n, ".orch"):
				t.Fatalf("accepted %q (element %q)", p, e)
			}
		}
	})
}
