package artifact

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/hostile"
	"github.com/orchdev/orch/internal/safepath"
)

// The shared hostile corpus (internal/hostile) through every reader of
// this package: CheckPath, the file plan in planning.ai.json and
// plan.files.json, code/files on disk, code/diff.patch, and the JSON
// artifacts. Every refused case must be refused with a message naming the
// file, the JSON path or line and the offending path; nothing is written.

// TestHostilePathsCheckPath: every "refuse" path is refused with a
// *PathError naming it; every "allow" path is accepted.
func TestHostilePathsCheckPath(t *testing.T) {
	for _, c := range hostile.PathCases() {
		err := CheckPath(c.Path)
		if c.Verdict == hostile.Allow {
			if err != nil {
				t.Errorf("%s (%s): refused: %v", c, c.Note, err)
			}
			continue
		}
		var pe *PathError
		if !errors.As(err, &pe) || !errors.Is(err, ErrUnsafePath) {
			t.Errorf("%s: CheckPath = %v, want a *PathError", c, err)
			continue
		}
		if !strings.Contains(err.Error(), safepath.Quote(c.Path)) || pe.Reason == "" {
			t.Errorf("%s: message %q does not name the path", c, err)
		}
	}
}

// planWith returns planning.ai.json with the given file_plan paths (raw
// bytes kept, see hostile.JSONString).
func planWith(paths ...string) []byte {
	var entries []string
	for _, p := range paths {
		entries = append(entries, `{"path":`+hostile.JSONString(p)+`,"intent":"create"}`)
	}
	return []byte(`{"id":"t","title":"T","brief":"b","file_plan":[` + strings.Join(entries, ",") + `]}`)
}

func filesWith(paths ...string) []byte {
	var entries []string
	for _, p := range paths {
		entries = append(entries, `{"path":`+hostile.JSONString(p)+`,"intent":"create"}`)
	}
	return []byte(`{"files":[` + strings.Join(entries, ",") + `]}`)
}

// checkRefusal asserts err is an *Error naming file and, for a path that
// is valid UTF-8 (else the document as a whole is refused), the JSON path
// of the field.
func checkRefusal(t *testing.T, c hostile.PathCase, err error, file, jsonPath string) {
	t.Helper()
	var ae *Error
	if !errors.As(err, &ae) {
		t.Errorf("%s in %s: accepted or not an *Error: %v", c, file, err)
		return
	}
	msg := err.Error()
	if ae.File != file || !strings.HasPrefix(msg, file+": ") {
		t.Errorf("%s: message %q does not name %s", c, msg, file)
	}
	if bytes.ContainsAny([]byte(c.Path), "\x00") || !isUTF8(c.Path) {
		return // refused as a document (raw NUL or invalid UTF-8), at a position
	}
	if strings.TrimSpace(c.Path) == "" { // refused as a blank string
		if ae.JSONPath != jsonPath {
			t.Errorf("%s: message %q: want %s", c, msg, jsonPath)
		}
		return
	}
	if ae.JSONPath != jsonPath || !strings.Contains(msg, safepath.Quote(c.Path)) {
		t.Errorf("%s: message %q: want %s and the path", c, msg, jsonPath)
	}
}

func isUTF8(s string) bool { return strings.ToValidUTF8(s, "") == s }

// TestHostilePathsInFilePlans: each path as the first and as the second
// entry of planning.ai.json's file_plan and of plan.files.json, decoded
// from bytes and loaded from a task folder, inferred or not.
func TestHostilePathsInFilePlans(t *testing.T) {
	dir := t.TempDir()
	for _, c := range hostile.PathCases() {
		for i, paths := range [][]string{{c.Path}, {"ok.go", c.Path}} {
			at := "[" + strconv.Itoa(i) + "].path"
			_, perr := DecodePlan(PlanFile, planWith(paths...))
			_, ferr := DecodeFilePlan(FilePlanFile, filesWith(paths...))
			if c.Verdict == hostile.Allow {
				if perr != nil || ferr != nil {
					t.Errorf("%s refused: %v / %v", c, perr, ferr)
				}
				continue
			}
			checkRefusal(t, c, perr, PlanFile, "$.file_plan"+at)
			checkRefusal(t, c, ferr, FilePlanFile, "$.files"+at)
		}
		if c.Verdict == hostile.Allow {
			continue
		}
		// From disk: plan.files.json wins over the plan; without it the
		// plan's file_plan is used and must be refused the same way.
		writeFile(t, dir, PlanFile, string(planWith("ok.go")))
		writeFile(t, dir, FilePlanFile, string(filesWith(c.Path)))
		plan := LoadPlan(dir)
		checkRefusal(t, c, LoadFilePlan(dir, plan).Err, FilePlanFile, "$.files[0].path")
		if err := os.Remove(filepath.Join(dir, FilePlanFile)); err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, PlanFile, string(planWith(c.Path)))
		plan = LoadPlan(dir)
		checkRefusal(t, c, plan.Err, PlanFile, "$.file_plan[0].path")
		if fp := LoadFilePlan(dir, plan); fp.OK() {
			t.Errorf("%s: a file plan was inferred from an invalid plan", c)
		}
		// A Plan value built in code is re-checked when the file plan is
		// inferred from it.
		if isUTF8(c.Path) {
			built := Loaded[Plan]{Present: true, Value: Plan{ID: "t", Title: "T", Brief: "b", FilePlan: []FileEntry{{Path: c.Path, Intent: "create"}}}}
			checkRefusal(t, c, LoadFilePlan(dir, built).Err, PlanFile, "$.file_plan[0].path")
		}
	}
}

// TestHostileCodeFilesOnDisk creates each corpus name under code/files
// where the file system allows it (beside a harmless file) and scans:
// refused names are reported with code/files and the name; allowed names
// are listed exactly. Nothing outside the task folder changes.
func TestHostileCodeFilesOnDisk(t *testing.T) {
	parent := t.TempDir()
	sentinel := filepath.Join(parent, "sentinel")
	writeFile(t, sentinel, "passwd", "root:x:0:0::/root:/bin/sh\n")
	before, err := hostile.Snapshot(parent, "task")
	if err != nil {
		t.Fatal(err)
	}
	created, skipped, deep := 0, 0, 0
	for _, c := range hostile.PathCases() {
		task := filepath.Join(parent, "task")
		if err := os.RemoveAll(task); err != nil {
			t.Fatal(err)
		}
		writeFile(t, task, CodeFilesDir+"/ok.go", "package ok\n")
		// A tree thousands of folders deep is refused once the path
		// passes MaxPathBytes, but scanning it costs seconds (each folder
		// is opened from the top through os.Root): CheckPath's tests
		// cover those paths.
		if strings.Count(c.Path, "/") > 256 {
			deep++
			continue
		}
		if !hostile.Creatable(c.Path) || !createIn(filepath.Join(task, filepath.FromSlash(CodeFilesDir)), c.Path) {
			skipped++
			continue
		}
		created++
		l := ScanCodeFiles(task)
		if c.Verdict == hostile.Allow {
			if l.Err != nil || !slices.Equal(l.Value, sorted("ok.go", c.Path)) {
				t.Errorf("%s: scan = %v, %v", c, l.Value, l.Err)
			}
			continue
		}
		msg := ""
		if l.Err != nil {
			msg = l.Err.Error()
		}
		if !errors.Is(l.Err, ErrUnsafePath) || !strings.HasPrefix(msg, CodeFilesDir) {
			t.Errorf("%s: scan = %v, %v", c, l.Value, l.Err)
			continue
		}
		// The name reported is the path up to the offending element (a
		// refused directory is reported before what it holds).
		if !namesPrefix(msg, c.Path) || !strings.Contains(msg, "expected safe repository-relative file names") {
			t.Errorf("%s: message %q does not name the path", c, msg)
		}
	}
	t.Logf("%d corpus names created under code/files, %d not creatable as written, %d deeper than 256 folders not created", created, skipped, deep)
	if created < 100 {
		t.Errorf("only %d names could be created", created)
	}
	after, err := hostile.Snapshot(parent, "task")
	if err != nil {
		t.Fatal(err)
	}
	if ch := hostile.Changes(before, after); len(ch) > 0 {
		t.Errorf("changed outside the task folder:\n%s", strings.Join(ch, "\n"))
	}
}

// namesPrefix reports whether msg quotes p or one of its leading
// element paths.
func namesPrefix(msg, p string) bool {
	for i := 0; i <= len(p); i++ {
		if (i == len(p) || p[i] == '/') && strings.Contains(msg, safepath.Quote(p[:i])) {
			return true
		}
	}
	return false
}

// createIn creates dir/p (folders as needed) through an os.Root, so that
// nothing can leave dir; it reports whether the file system allowed it.
func createIn(dir, p string) bool {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return false
	}
	defer root.Close()
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		if root.MkdirAll(p[:i], 0o755) != nil {
			return false
		}
	}
	return root.WriteFile(p, []byte("x\n"), 0o644) == nil
}

func sorted(ss ...string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return out
}

// TestHostileLinksUnderCodeFiles: links anywhere under code/files, and
// code or code/files themselves as links, are refused without following.
func TestHostileLinksUnderCodeFiles(t *testing.T) {
	outside := t.TempDir()
	writeFile(t, outside, "secret.go", "package secret\n")
	cases := []struct {
		name  string
		setup func(t *testing.T, task string)
		want  string
	}{
		{"file link to /etc/passwd", func(t *testing.T, task string) { link(t, "/etc/passwd", task, CodeFilesDir+"/passwd") }, "code/files/passwd"},
		{"file link outside", func(t *testing.T, task string) {
			link(t, filepath.Join(outside, "secret.go"), task, CodeFilesDir+"/s.go")
		}, "code/files/s.go"},
		{"relative link up", func(t *testing.T, task string) { link(t, "../../../../secret.go", task, CodeFilesDir+"/up.go") }, "code/files/up.go"},
		{"dir link outside", func(t *testing.T, task string) { link(t, outside, task, CodeFilesDir+"/vendor") }, "code/files/vendor"},
		{"dir link inside", func(t *testing.T, task string) { link(t, ".", task, CodeFilesDir+"/self") }, "code/files/self"},
		{"nested link", func(t *testing.T, task string) { link(t, "/", task, CodeFilesDir+"/a/b/root") }, "code/files/a/b/root"},
		{"dangling link", func(t *testing.T, task string) { link(t, "/nonexistent/x", task, CodeFilesDir+"/gone.go") }, "code/files/gone.go"},
		{"code/files is a link", func(t *testing.T, task string) {
			if err := os.RemoveAll(filepath.Join(task, "code", "files")); err != nil {
				t.Fatal(err)
			}
			link(t, outside, task, CodeFilesDir)
		}, "code/files"},
		{"code is a link", func(t *testing.T, task string) {
			if err := os.RemoveAll(filepath.Join(task, "code")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, outside, "files/x.go", "package x\n")
			link(t, outside, task, "code")
		}, "code"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			task := t.TempDir()
			writeFile(t, task, CodeFilesDir+"/ok.go", "package ok\n")
			tc.setup(t, task)
			l := ScanCodeFiles(task)
			if !errors.Is(l.Err, ErrUnsafePath) || !strings.HasPrefix(l.Err.Error(), tc.want+": ") || !strings.Contains(l.Err.Error(), "symbolic link") {
				t.Errorf("scan = %v, %v; want a refusal of %s as a symbolic link", l.Value, l.Err, tc.want)
			}
		})
	}
}

func link(t *testing.T, target, dir, rel string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// TestHostilePatchesLoaded: LoadDiff refuses every hostile patch with
// code/diff.patch named (the parser's reasons are tested in internal/patch).
func TestHostilePatchesLoaded(t *testing.T) {
	task := t.TempDir()
	for _, name := range hostile.Names(hostile.Patches()) {
		writeFile(t, task, DiffFile, string(hostile.Patches()[name]))
		l := LoadDiff(task)
		if l.Err == nil || !strings.HasPrefix(l.Err.Error(), DiffFile+": ") || !errors.Is(l.Err, ErrInvalidDiff) {
			t.Errorf("%s: LoadDiff = %v", name, l.Err)
		}
	}
}

// TestHostileJSONDocuments: the documents of groups "any", "plan" and
// "files" through the decoders they target, from bytes and from disk.
func TestHostileJSONDocuments(t *testing.T) {
	decoders := map[string]func(string, []byte) error{
		PlanFile:         func(f string, b []byte) error { _, err := DecodePlan(f, b); return err },
		FilePlanFile:     func(f string, b []byte) error { _, err := DecodeFilePlan(f, b); return err },
		PlanReviewFile:   func(f string, b []byte) error { _, err := DecodePlanReview(f, b); return err },
		CodegenFile:      func(f string, b []byte) error { _, err := DecodeCodegen(f, b); return err },
		CodeReviewFile:   func(f string, b []byte) error { _, err := DecodeCodeReview(f, b); return err },
		TestReportFile:   func(f string, b []byte) error { _, err := DecodeTestReport(f, b); return err },
		DecisionFile:     func(f string, b []byte) error { _, err := DecodeDecision(f, b); return err },
		RevertRecordFile: func(f string, b []byte) error { _, err := DecodeRevertRecord(f, b); return err },
	}
	check := func(name, file string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s as %s: accepted", name, file)
			return
		}
		var ae *Error
		if !errors.As(err, &ae) || ae.File != file || !strings.HasPrefix(err.Error(), file+": ") {
			t.Errorf("%s as %s: %v does not name the file", name, file, err)
		}
		if !hostile.Matches(name, err.Error()) {
			t.Errorf("%s as %s: %q\nwant one of %q", name, file, err, hostile.Expect(name))
		}
	}
	for _, name := range hostile.Names(hostile.JSONGroup("any")) {
		data := hostile.JSONDocs()[name]
		for file, decode := range decoders {
			check(name, file, decode(file, data))
		}
	}
	task := t.TempDir()
	writeFile(t, task, PlanFile, `{"id":"t","title":"T","brief":"b","file_plan":[{"path":"a.go","intent":"update"}]}`)
	for _, name := range hostile.Names(hostile.JSONGroup("plan")) {
		data := hostile.JSONDocs()[name]
		check(name, PlanFile, decoders[PlanFile](PlanFile, data))
		writeFile(t, task, PlanFile, string(data))
		check(name, PlanFile, LoadPlan(task).Err)
	}
	writeFile(t, task, PlanFile, `{"id":"t","title":"T","brief":"b","file_plan":[{"path":"a.go","intent":"update"}]}`)
	for _, name := range hostile.Names(hostile.JSONGroup("files")) {
		data := hostile.JSONDocs()[name]
		check(name, FilePlanFile, decoders[FilePlanFile](FilePlanFile, data))
		writeFile(t, task, FilePlanFile, string(data))
		check(name, FilePlanFile, LoadFilePlan(task, LoadPlan(task)).Err)
	}
}

func TestCaseCollisionMessage(t *testing.T) {
	_, err := DecodeFilePlan(FilePlanFile, []byte(`{"files":[{"path":"README.md","intent":"update"},{"path":"b","intent":"create"},{"path":"readme.MD","intent":"create"}]}`))
	want := `planning/plan.files.json: $.files[2].path: expected paths that differ in more than case, got "readme.MD" at index 2 differs only in case from "README.md" at index 0 ($.files[0].path): a case-insensitive file system holds one file for both`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	built := Loaded[Plan]{Present: true, Value: Plan{FilePlan: []FileEntry{{Path: "a.go", Intent: "update"}, {Path: "A.go", Intent: "create"}}}}
	if fp := LoadFilePlan(t.TempDir(), built); fp.Err == nil || !strings.Contains(fp.Err.Error(), "$.file_plan[1].path: expected paths that differ in more than case") {
		t.Errorf("inferred: %v", fp.Err)
	}
}

// TestCaseCollisionFolds: paths are compared as a case-insensitive file
// system compares them (Unicode simple case folding), not lower-cased,
// in plan.files.json and in an inferred file plan alike.
func TestCaseCollisionFolds(t *testing.T) {
	tests := []struct {
		a, b    string
		collide bool
	}{
		{"README.md", "readme.MD", true},
		{"ſrc/main.go", "src/main.go", true}, // long s
		{"Src/main.go", "ſrc/main.go", true}, // long s, capital S
		{"\u212aey.go", "key.go", true},      // Kelvin sign
		{"docs/ς.md", "docs/Σ.md", true},     // final sigma
		{"ǅ.txt", "ǆ.txt", true},             // title case
		{"İ.txt", "i.txt", false},            // lower-cases to i, folds to itself
		{"straße.md", "strasse.md", false},   // full folding only: two names
		{"a.go", "b.go", false},
	}
	for _, tt := range tests {
		doc := `{"files":[{"path":"` + tt.a + `","intent":"update"},{"path":"` + tt.b + `","intent":"create"}]}`
		_, err := DecodeFilePlan(FilePlanFile, []byte(doc))
		if got := err != nil && strings.Contains(err.Error(), "differ in more than case"); got != tt.collide || (err != nil && !tt.collide) {
			t.Errorf("plan.files.json with %q and %q: err %v, want a collision %v", tt.a, tt.b, err, tt.collide)
		}
		a, b := tt.a, tt.b
		built := Loaded[Plan]{Present: true, Value: Plan{FilePlan: []FileEntry{{Path: a, Intent: "update"}, {Path: b, Intent: "create"}}}}
		fp := LoadFilePlan(t.TempDir(), built)
		if got := fp.Err != nil && strings.Contains(fp.Err.Error(), "differ in more than case"); got != tt.collide || (fp.Err != nil && !tt.collide) {
			t.Errorf("inferred file plan with %q and %q: err %v, want a collision %v", a, b, fp.Err, tt.collide)
		}
	}
}

// TestLoneSurrogateRefused: a document holding a lone surrogate escape is
// refused with its JSON path; a surrogate pair is not.
func TestLoneSurrogateRefused(t *testing.T) {
	_, err := DecodePlan(PlanFile, []byte(`{"id":"t","title":"smile \ud83d\ude00","brief":"b"}`))
	if err != nil {
		t.Errorf("a surrogate pair was refused: %v", err)
	}
	_, err = DecodePlan(PlanFile, []byte(`{"id":"t","title":"T","brief":"b","questions":[{"id":"q","text":"a\udc00","blocking":true}]}`))
	if err == nil || err.Error() != `planning/planning.ai.json: $.questions[0].text: expected valid Unicode text, got the lone UTF-16 surrogate escape \udc00 (it would decode to U+FFFD)` {
		t.Errorf("lone surrogate: %v", err)
	}
}
