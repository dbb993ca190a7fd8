package testrun

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/gittest"
)

func TestDetect(t *testing.T) {
	pytestCmd := "pytest --junitxml=" + PytestReport
	deps := t.TempDir() // the user's working tree, with a virtualenv
	gittest.WriteFiles(t, deps, map[string]string{".venv/bin/python": "#!/bin/sh\n", "node_modules/.keep": ""})
	if err := os.Chmod(filepath.Join(deps, ".venv/bin/python"), 0o755); err != nil {
		t.Fatal(err)
	}
	venvCmd := filepath.Join(deps, ".venv/bin/python") + " -m pytest --junitxml=" + PytestReport
	tests := []struct {
		name  string
		files map[string]string
		deps  string   // DetectOptions.Deps
		noPy  bool     // no pytest on PATH
		want  []string // "name kind format: command"
		note  string   // a substring of some note
		env   string   // "NAME=value" every suite sets
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
			want:  []string{"npm-test test tap: npm test"},
			note:  `scripts.test found ("jest"): npm test (no pnpm or yarn lockfile); Jest: counts read from its summary`,
		},
		{
			name:  "node's test runner",
			files: map[string]string{"package.json": `{"scripts":{"test":"node --test && tsd"}}`, "package-lock.json": "{}"},
			want:  []string{"npm-test test tap: npm test"},
			note:  "package-lock.json found); node's test runner: counts read from its TAP output",
		},
		{
			name:  "pnpm lockfile",
			files: map[string]string{"package.json": `{"scripts":{"test":"vitest run"}}`, "pnpm-lock.yaml": ""},
			want:  []string{"pnpm-test test tap: pnpm test"},
			note:  "pnpm-lock.yaml found",
		},
		{
			name:  "yarn lockfile, no node_modules installed",
			files: map[string]string{"package.json": `{"scripts":{"test":"mocha"}}`, "yarn.lock": ""},
			want:  []string{"yarn-test test tap: yarn test"},
			note:  "run yarn install there first",
		},
		{
			name:  "an unknown runner is named as such",
			files: map[string]string{"package.json": `{"scripts":{"test":"./run-tests.sh"}}`},
			want:  []string{"npm-test test tap: npm test"},
			note:  "orch cannot tell its runner from the script",
		},
		{
			name: "npm workspaces without a root test script: a suite per member",
			files: map[string]string{
				"package.json":                `{"private":true,"workspaces":["packages/*","tools/cli","!packages/skipped"]}`,
				"package-lock.json":           "{}",
				"packages/core/package.json":  `{"scripts":{"test":"mocha"}}`,
				"packages/web/package.json":   `{"scripts":{"test":"vitest run"}}`,
				"packages/docs/package.json":  `{"scripts":{"build":"x"}}`,
				"packages/empty/.keep":        "",
				"tools/cli/package.json":      `{"scripts":{"test":"node --test"}}`,
				"node_modules/x/package.json": `{"scripts":{"test":"never"}}`,
			},
			want: []string{"npm-test-packages-core test tap: npm test", "npm-test-packages-web test tap: npm test", "npm-test-tools-cli test tap: npm test"},
			note: "3 of 4 workspace members have one",
		},
		{
			name: "pnpm workspace with a root test script: the root runs",
			files: map[string]string{
				"package.json":            `{"scripts":{"test":"pnpm -r test"}}`,
				"pnpm-lock.yaml":          "",
				"pnpm-workspace.yaml":     "packages:\n  - 'packages/*'\n  - \"apps/*\"\n",
				"packages/a/package.json": `{"scripts":{"test":"vitest run"}}`,
				"apps/b/package.json":     `{"scripts":{"test":"jest"}}`,
			},
			want: []string{"pnpm-test test tap: pnpm test"},
			note: "2 workspace members (apps/b, packages/a): the root's test script is the project's declared runner",
		},
		{
			name:  "yarn workspaces object",
			files: map[string]string{"package.json": `{"workspaces":{"packages":["pkgs/*"]}}`, "yarn.lock": "", "pkgs/one/package.json": `{"scripts":{"test":"ava"}}`},
			want:  []string{"yarn-test-pkgs-one test tap: yarn test"},
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
			note:  "pyproject.toml [tool.pytest] found",
		},
		{
			name:  "pyproject.toml without pytest section",
			files: map[string]string{"pyproject.toml": "[project]\nname = \"x\"\n"},
			want:  []string{"pytest test junit: " + pytestCmd},
			note:  "assuming pytest",
		},
		{
			// more-itertools: tox and the Makefile run unittest, whose
			// load_tests adds 165 doctests pytest would never run.
			name: "tox.ini declares unittest",
			files: map[string]string{
				"pyproject.toml": "[project]\nname = \"x\"\n",
				"tox.ini":        "[tox]\nenvlist = py311\n\n[testenv]\ndeps = coverage\ncommands =\n    {envpython} -m coverage run -m unittest -v {posargs}\n    {envpython} -m coverage report\n",
				"Makefile":       "test:\n\tpython -m unittest -v ${tests}\n",
			},
			want: []string{"unittest test unittest: python3 -m unittest -v"},
			note: "tox.ini [testenv] commands runs python -m unittest",
		},
		{
			name:  "Makefile declares unittest discover",
			files: map[string]string{"setup.py": "", "Makefile": "all:\n\ttrue\ncheck test: all\n\tpython3 -m unittest discover -s tests -t . && flake8\n"},
			want:  []string{"unittest test unittest: python3 -m unittest discover -s tests -t ."},
			note:  "the Makefile's test target runs python -m unittest",
		},
		{
			name:  "CI workflow declares unittest over a pytest configuration",
			files: map[string]string{"setup.cfg": "[tool:pytest]\n", ".github/workflows/ci.yml": "jobs:\n  t:\n    steps:\n      - run: pip install -e .\n      - run: python -m unittest discover tests\n"},
			want:  []string{"unittest test unittest: python3 -m unittest discover tests"},
			note:  "setup.cfg [tool:pytest] configures pytest, but a CI workflow (.github/workflows) runs python -m unittest",
		},
		{
			// hukkin/tomli: tox 4's configuration in pyproject.toml runs
			// unittest ({replace = "posargs"} is a table, left out); the CI
			// workflow's cibuildwheel line was taken before, with
			// --start-directory left without its value once {project}
			// was dropped: unittest's usage error, no test run.
			name: "pyproject.toml [tool.tox] declares unittest",
			files: map[string]string{
				"pyproject.toml":               "[project]\nname = \"tomli\"\n\n[tool.tox]\nenv_list = [\"3.11\"]\n\n[tool.tox.env_run_base]\ncommands = [\n    [\"python\", \"-m\", \"unittest\", { replace = \"posargs\", extend = true }],\n]\n",
				".github/workflows/tests.yaml": "env:\n  CIBW_TEST_COMMAND: python -m unittest discover --start-directory {project}\njobs:\n  t:\n    steps:\n      - run: python -m unittest\n",
				"src/tomli/__init__.py":        "",
			},
			want: []string{"unittest test unittest: python3 -m unittest"},
			note: "pyproject.toml [tool.tox] commands runs python -m unittest",
			env:  "PYTHONPATH=src",
		},
		{
			name:  "tox.toml declares unittest with the top folder",
			files: map[string]string{"setup.py": "", "tox.toml": "[env_run_base]\ncommands = [[\"coverage\", \"run\", \"-m\", \"unittest\", \"discover\", \"-s\", \"{tox_root}/tests\"]]\n"},
			want:  []string{"unittest test unittest: python3 -m unittest discover -s tests"},
			note:  "tox.toml [env_run_base] commands runs python -m unittest",
		},
		{
			name:  "pyproject.toml legacy_tox_ini declares unittest",
			files: map[string]string{"pyproject.toml": "[tool.tox]\nlegacy_tox_ini = \"\"\"\n[testenv]\ncommands = python -m unittest discover -s {toxinidir}/tests -p '*_test.py' {posargs}\n\"\"\"\n"},
			want:  []string{"unittest test unittest: python3 -m unittest discover -s tests -p *_test.py"},
			note:  "pyproject.toml [tool.tox] commands runs python -m unittest",
		},
		{
			// A pyproject.toml that is not TOML: its tox part is not
			// read, the note says why, and the next source decides.
			name:  "pyproject.toml that is not TOML",
			files: map[string]string{"pyproject.toml": "[tool.tox\n", "Makefile": "test:\n\tpython -m unittest\n"},
			want:  []string{"unittest test unittest: python3 -m unittest"},
			note:  "pyproject.toml is not valid TOML",
		},
		{
			// cibuildwheel's {project} is the top folder; a value that
			// cannot be made is dropped with its option.
			name:  "CI workflow's unittest start folder is a substitution",
			files: map[string]string{"setup.py": "", ".github/workflows/ci.yml": "env:\n  CIBW_TEST_COMMAND: python -m unittest discover --start-directory {project} -k ${{ matrix.k }} -v\n"},
			want:  []string{"unittest test unittest: python3 -m unittest discover --start-directory . -v"},
			note:  "a CI workflow (.github/workflows) runs python -m unittest",
		},
		{
			name:  "noxfile declares pytest",
			files: map[string]string{"setup.py": "", "noxfile.py": "@nox.session\ndef tests(session):\n    session.install('.')\n    session.run('pytest', '-q')\n", "tests/test_a.py": "def load_tests(loader, tests, pattern):\n    return tests\n"},
			want:  []string{"pytest test junit: " + pytestCmd},
			note:  "noxfile.py runs pytest found",
		},
		{
			name:  "justfile declares unittest",
			files: map[string]string{"setup.py": "", "justfile": "lint:\n    ruff check\n\ntest *args:\n    echo start\n\n    python -m unittest -k fast {{args}}\n"},
			want:  []string{"unittest test unittest: python3 -m unittest -k fast"},
			note:  "the justfile's test recipe runs python -m unittest",
		},
		{
			name:  "nothing declared, load_tests: unittest assumed",
			files: map[string]string{"pyproject.toml": "[project]\n", "tests/test_doc.py": "import doctest\n\ndef load_tests(loader, tests, ignore):\n    return tests\n"},
			want:  []string{"unittest test unittest: python3 -m unittest"},
			note:  "tests/test_doc.py defines load_tests, which pytest ignores: assuming python -m unittest",
		},
		{
			name:  "unittest in a virtualenv, src layout",
			files: map[string]string{"tox.ini": "[testenv]\ncommands = python -m unittest\n", "src/pkg/__init__.py": ""},
			deps:  deps,
			want:  []string{"unittest test unittest: " + filepath.Join(deps, ".venv/bin/python") + " -m unittest"},
			env:   "PYTHONPATH=src",
		},
		{
			name: "several Python packages below the top",
			files: map[string]string{
				"README.md":                     "",
				"packages/core/pyproject.toml":  "[tool.pytest.ini_options]\n",
				"packages/plugin/setup.py":      "",
				"packages/plugin/tox.ini":       "[testenv]\ncommands = python -m unittest discover -s tests\n",
				"tools/pyproject.toml":          "[project]\n",
				"docs/conf.py":                  "",
				".venv/lib/pyproject.toml":      "",
				"node_modules/x/pyproject.toml": "",
			},
			want: []string{
				"pytest-packages-core test junit: " + pytestCmd,
				"unittest-packages-plugin test unittest: python3 -m unittest discover -s tests",
				"pytest-tools test junit: " + pytestCmd,
			},
			note: "no Python project at the top; 3 Python projects in folders below it (packages/core, packages/plugin, tools)",
		},
		{
			name:  "cargo",
			files: map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n"},
			want:  []string{"cargo-test test libtest: cargo test --no-fail-fast"},
			note:  "every test binary runs even after a failure",
		},
		{
			name:  "cargo workspace",
			files: map[string]string{"Cargo.toml": "[package]\nname = \"root\"\n\n[workspace] # all crates\nmembers = [\"crates/*\"]\n\n[workspace.dependencies]\n"},
			want:  []string{"cargo-test test libtest: cargo test --workspace --no-fail-fast"},
			note:  "Cargo.toml with [workspace] found",
		},
		{
			name:  "cargo workspace.package is no workspace table",
			files: map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n[workspace.package]\n"},
			want:  []string{"cargo-test test libtest: cargo test --no-fail-fast"},
		},
		{
			name:  "python src layout in a virtualenv",
			files: map[string]string{"pyproject.toml": "[project]\n", "src/cachetools/__init__.py": "", "tests/test_x.py": ""},
			deps:  deps,
			want:  []string{"pytest test junit: " + venvCmd},
			note:  "src layout (src/cachetools): PYTHONPATH=src",
			env:   "PYTHONPATH=src",
		},
		{
			name:  "setup.py without pytest on PATH",
			files: map[string]string{"setup.py": "", "src/mod.py": ""},
			noPy:  true,
			want:  []string{"pytest test junit: python3 -m pytest --junitxml=" + PytestReport},
			note:  "setup.py (no test runner declared in tox, nox, a Makefile, justfile or CI workflow, and no pytest configuration: assuming pytest)",
			env:   "PYTHONPATH=src",
		},
		{
			name:  "maven",
			files: map[string]string{"pom.xml": "<project></project>", "mvnw": ""},
			want:  []string{"maven-test test junit: mvn -B -o -q -fae test"},
			note:  "mvnw is not used",
		},
		{
			name:  "maven modules",
			files: map[string]string{"pom.xml": "<project><modules><module>a</module></modules></project>"},
			want:  []string{"maven-test test junit: mvn -B -o -q -fae test"},
			note:  "each module's target/surefire-reports",
		},
		{
			name:  "gradle wrapper",
			files: map[string]string{"build.gradle.kts": "", "gradlew": "#!/bin/sh\n"},
			want:  []string{"gradle-test test junit: ./gradlew test --offline --continue --no-daemon"},
			note:  "the wrapper gradlew is in the repository",
		},
		{
			name:  "gradle without wrapper, multi-project",
			files: map[string]string{"settings.gradle": "include 'app'\n"},
			want:  []string{"gradle-test test junit: gradle test --offline --continue --no-daemon"},
			note:  "each project's build/test-results/test",
		},
		{
			name:  "justfile",
			files: map[string]string{"justfile": "set shell := [\"bash\", \"-c\"]\n\n# run tests\ntest *args:\n    cargo nextest run {{args}}\n"},
			want:  []string{"just-test test : just test"},
			note:  "justfile has a test recipe",
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
			want:  []string{"go-test test go-json: go test -json ./...", "go-vet lint : go vet ./...", "npm-test test tap: npm test"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			gittest.WriteFiles(t, dir, tt.files)
			look := func(string) (string, error) { return "/usr/bin/pytest", nil }
			if tt.noPy {
				look = func(f string) (string, error) { return "", exec.ErrNotFound }
			}
			suites, notes, err := Detect(dir, DetectOptions{Deps: tt.deps, LookPath: look})
			if err != nil {
				t.Fatalf("Detect: %v", err)
			}
			var got []string
			for _, s := range suites {
				got = append(got, s.Name+" "+s.Kind+" "+s.Format+": "+strings.Join(s.Command, " "))
				if err := validateSuite(s); err != nil {
					t.Errorf("detected suite %s is invalid: %v", s.Name, err)
				}
				// The configured default applies (issue 9: detection
				// used to fill in its own 15 minutes first).
				if s.Timeout != 0 {
					t.Errorf("suite %s timeout %s, want none set", s.Name, s.Timeout)
				}
				if tt.env != "" {
					name, value, _ := strings.Cut(tt.env, "=")
					if s.Env[name] != value {
						t.Errorf("suite %s env %v, want %s", s.Name, s.Env, tt.env)
					}
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
	gittest.WriteFiles(t, dir, map[string]string{"package.json": "{not json"})
	if _, _, err := Detect(dir, DetectOptions{}); err == nil || !strings.Contains(err.Error(), "package.json") {
		t.Errorf("Detect with a broken package.json: err = %v, want one naming package.json", err)
	}
	if _, _, err := Detect(filepath.Join(dir, "missing"), DetectOptions{}); err == nil {
		t.Error("Detect of a missing directory: no error")
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Detect(file, DetectOptions{}); err == nil {
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

func TestHasJustRecipe(t *testing.T) {
	tests := []struct {
		justfile string
		want     bool
	}{
		{"test:\n", true},
		{"test *args:\n", true},
		{"@test:\n  echo\n", true},
		{"test := 'x'\n", false},
		{"tests:\n", false},
		{"    test:\n", false},
		{"# test:\n", false},
		{"build: test\n", false},
	}
	for _, tt := range tests {
		if got := hasJustRecipe(tt.justfile, "test"); got != tt.want {
			t.Errorf("hasJustRecipe(%q) = %v, want %v", tt.justfile, got, tt.want)
		}
	}
}
