package testrun

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestDetect(t *testing.T) {
	pytestCmd := "pytest --junitxml=" + PytestReport
	if _, err := exec.LookPath("pytest"); err != nil {
		pytestCmd = "python3 -m pytest --junitxml=" + PytestReport
	}
	tests := []struct {
		name  string
		files map[string]string
		want  []string // "name kind format: command"
		note  string   // a substring of some note
	}{
		{name: "empty", files: nil, want: nil, note: "no tests configured"},
		{
			name:  "go module",
			files: map[string]string{"go.mod": "module x\n"},
			want:  []string{"go-test test go-json: go test -json ./...", "go-vet lint : go vet ./..."},
			note:  "go.mod found",
		},
		{
			name:  "npm with a test script",
			files: map[string]string{"package.json": `{"scripts":{"test":"jest"}}`},
			want:  []string{"npm-test test : npm test"},
			note:  `scripts.test found ("jest")`,
		},
		{
			name:  "npm placeholder is no test",
			files: map[string]string{"package.json": `{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}`},
			note:  "placeholder",
		},
		{
			name:  "package.json without scripts",
			files: map[string]string{"package.json": `{"name":"x"}`},
			note:  "no scripts.test",
		},
		{
			name:  "pytest.ini",
			files: map[string]string{"pytest.ini": "[pytest]\n"},
			want:  []string{"pytest test junit: " + pytestCmd},
			note:  "pytest.ini found",
		},
		{
			name:  "setup.cfg with tool:pytest",
			files: map[string]string{"setup.cfg": "[metadata]\nname = x\n\n[tool:pytest]\naddopts = -q\n"},
			want:  []string{"pytest test junit: " + pytestCmd},
			note:  "setup.cfg [tool:pytest]",
		},
		{
			name:  "setup.cfg without tool:pytest",
			files: map[string]string{"setup.cfg": "[metadata]\nname = x\n"},
			note:  "no tests configured",
		},
		{
			name:  "tox.ini with pytest",
			files: map[string]string{"tox.ini": "[tox]\n[pytest]\n"},
			want:  []string{"pytest test junit: " + pytestCmd},
		},
		{
			name:  "pyproject.toml with pytest options",
			files: map[string]string{"pyproject.toml": "[tool.pytest.ini_options]\naddopts = \"-q\"\n"},
			want:  []string{"pytest test junit: " + pytestCmd},
			note:  "pyproject.toml found",
		},
		{
			name:  "pyproject.toml without pytest section",
			files: map[string]string{"pyproject.toml": "[project]\nname = \"x\"\n"},
			want:  []string{"pytest test junit: " + pytestCmd},
			note:  "assuming pytest",
		},
		{
			name:  "cargo",
			files: map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n"},
			want:  []string{"cargo-test test : cargo test"},
		},
		{
			name:  "makefile with test target",
			files: map[string]string{"Makefile": ".PHONY: test\nall: build\n\ntest: build\n\tgo test ./...\n"},
			want:  []string{"make-test test : make test"},
			note:  "Makefile has a test target",
		},
		{
			name:  "makefile without test target",
			files: map[string]string{"Makefile": ".PHONY: test\ntest_dir := x\nbuild:\n\techo test: done\n"},
			note:  "no tests configured",
		},
		{
			name:  "makefile not used when a language suite exists",
			files: map[string]string{"go.mod": "module x\n", "Makefile": "test:\n\tgo test ./...\n"},
			want:  []string{"go-test test go-json: go test -json ./...", "go-vet lint : go vet ./..."},
			note:  "not used",
		},
		{
			name:  "polyglot repository gets every suite",
			files: map[string]string{"go.mod": "module x\n", "package.json": `{"scripts":{"test":"vitest run"}}`},
			want:  []string{"go-test test go-json: go test -json ./...", "go-vet lint : go vet ./...", "npm-test test : npm test"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			suites, notes, err := Detect(dir)
			if err != nil {
				t.Fatalf("Detect: %v", err)
			}
			var got []string
			for _, s := range suites {
				got = append(got, s.Name+" "+s.Kind+" "+s.Format+": "+strings.Join(s.Command, " "))
				if err := validateSuite(s); err != nil {
					t.Errorf("detected suite %s is invalid: %v", s.Name, err)
				}
				if s.Timeout != DefaultTimeout {
					t.Errorf("suite %s timeout %s, want %s", s.Name, s.Timeout, DefaultTimeout)
				}
				if s.Format == FormatJUnit && s.Report != PytestReport {
					t.Errorf("suite %s report %q, want %q", s.Name, s.Report, PytestReport)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("suites = %q, want %q", got, tt.want)
			}
			if tt.note != "" && !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, tt.note) }) {
				t.Errorf("notes %q lack %q", notes, tt.note)
			}
		})
	}
}

func TestDetectErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"package.json": "{not json"})
	if _, _, err := Detect(dir); err == nil || !strings.Contains(err.Error(), "package.json") {
		t.Errorf("Detect with a broken package.json: err = %v, want one naming package.json", err)
	}
	if _, _, err := Detect(filepath.Join(dir, "missing")); err == nil {
		t.Error("Detect of a missing directory: no error")
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Detect(file); err == nil {
		t.Error("Detect of a file: no error")
	}
}

func TestHasMakeTarget(t *testing.T) {
	tests := []struct {
		makefile string
		want     bool
	}{
		{"test:\n", true},
		{"test::\n", true},
		{"lint test: deps\n", true},
		{"test: ## run the tests\n", true},
		{".PHONY: test\n", false},
		{"test := 1\n", false},
		{"test ::= 1\n", false},
		{"tests:\n", false},
		{"\ttest: inside a recipe\n", false},
		{"# test:\n", false},
		{"$(TARGETS) test: x\n", false},
	}
	for _, tt := range tests {
		if got := hasMakeTarget(tt.makefile, "test"); got != tt.want {
			t.Errorf("hasMakeTarget(%q) = %v, want %v", tt.makefile, got, tt.want)
		}
	}
}
