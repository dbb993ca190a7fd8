package artifact

import (
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
