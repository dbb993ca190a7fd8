package testrun

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// PytestReport is where detected pytest suites write their JUnit report,
// relative to the directory.
const PytestReport = ".orch-test/pytest.xml"

// maxBuildFile bounds the build files Detect reads.
const maxBuildFile = 4 << 20

// Detect guesses the suites of the project in dir from its build files:
//
//	go.mod                         go test -json ./... (test, go-json) and go vet ./... (lint)
//	package.json with scripts.test npm test (npm's "no test specified" placeholder does not count)
//	pyproject.toml, pytest.ini, tox.ini [pytest] or setup.cfg [tool:pytest]
//	                               pytest --junitxml=.orch-test/pytest.xml (junit)
//	Cargo.toml                     cargo test
//	Makefile with a test target    make test, only when nothing above found a test suite
//
// The notes say what was chosen and why. No build file gives an empty slice
// and no error: the caller reports "no tests configured", never a pass.
func Detect(dir string) ([]Suite, []string, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("detect suites: %w", err)
	}
	if !info.IsDir() {
		return nil, nil, fmt.Errorf("detect suites: %s is not a directory", dir)
	}
	d := detector{dir: dir}
	for _, step := range []func() error{d.goModule, d.npm, d.pytest, d.cargo, d.makefile} {
		if err := step(); err != nil {
			return nil, nil, err
		}
	}
	if len(d.suites) == 0 {
		d.note("no go.mod, package.json test script, pytest configuration, Cargo.toml or Makefile test target found: no tests configured")
	}
	return d.suites, d.notes, nil
}

type detector struct {
	dir    string
	suites []Suite
	notes  []string
}

func (d *detector) note(format string, args ...any) {
	d.notes = append(d.notes, fmt.Sprintf(format, args...))
}

func (d *detector) add(s Suite) {
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	d.suites = append(d.suites, s)
}

// read returns the content of a regular file in dir, or ok false when it
// does not exist.
func (d *detector) read(name string) (data []byte, ok bool, err error) {
	path := filepath.Join(d.dir, name)
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("detect suites: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, false, nil
	}
	if info.Size() > maxBuildFile {
		return nil, false, fmt.Errorf("detect suites: %s is larger than %d bytes", path, maxBuildFile)
	}
	data, err = os.ReadFile(path)
	if err != nil {
		return nil, false, fmt.Errorf("detect suites: %w", err)
	}
	return data, true, nil
}

func (d *detector) goModule() error {
	_, ok, err := d.read("go.mod")
	if err != nil || !ok {
		return err
	}
	d.add(Suite{Name: "go-test", Kind: KindTest, Command: []string{"go", "test", "-json", "./..."}, Format: FormatGoJSON})
	d.add(Suite{Name: "go-vet", Kind: KindLint, Command: []string{"go", "vet", "./..."}})
	d.note("go.mod found: go test -json ./... (test, results read from the JSON events) and go vet ./... (lint)")
	return nil
}

func (d *detector) npm() error {
	data, ok, err := d.read("package.json")
	if err != nil || !ok {
		return err
	}
	var pkg struct {
		Scripts map[string]any `json:"scripts"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return fmt.Errorf("detect suites: parse %s: %w", filepath.Join(d.dir, "package.json"), err)
	}
	script, _ := pkg.Scripts["test"].(string)
	switch {
	case strings.TrimSpace(script) == "":
		d.note("package.json has no scripts.test: no npm suite")
	case strings.Contains(script, "no test specified") && strings.Contains(script, "exit 1"):
		d.note("package.json scripts.test is npm's placeholder (%q): no npm suite", script)
	default:
		d.add(Suite{Name: "npm-test", Kind: KindTest, Command: []string{"npm", "test"}})
		d.note("package.json scripts.test found (%q): npm test, judged by its exit code", script)
	}
	return nil
}

func (d *detector) pytest() error {
	var why string
	if _, ok, err := d.read("pytest.ini"); err != nil {
		return err
	} else if ok {
		why = "pytest.ini"
	}
	if why == "" {
		found, err := d.hasSection("tox.ini", "[pytest]")
		if err != nil {
			return err
		}
		if found {
			why = "tox.ini [pytest]"
		}
	}
	if why == "" {
		found, err := d.hasSection("setup.cfg", "[tool:pytest]")
		if err != nil {
			return err
		}
		if found {
			why = "setup.cfg [tool:pytest]"
		}
	}
	if why == "" {
		data, ok, err := d.read("pyproject.toml")
		if err != nil {
			return err
		}
		if ok {
			why = "pyproject.toml"
			if !strings.Contains(string(data), "[tool.pytest.ini_options]") {
				why += " (no [tool.pytest.ini_options] section; assuming pytest)"
			}
		}
	}
	if why == "" {
		return nil
	}
	argv := []string{"pytest"}
	how := "pytest is on PATH"
	if _, err := exec.LookPath("pytest"); err != nil {
		argv = []string{"python3", "-m", "pytest"}
		how = "no pytest on PATH, so python3 -m pytest"
	}
	argv = append(argv, "--junitxml="+PytestReport)
	d.add(Suite{Name: "pytest", Kind: KindTest, Command: argv, Format: FormatJUnit, Report: PytestReport})
	d.note("%s found: pytest with a JUnit report in %s (%s)", why, PytestReport, how)
	return nil
}

// hasSection reports whether an INI-style file has a line equal to header.
func (d *detector) hasSection(name, header string) (bool, error) {
	data, ok, err := d.read(name)
	if err != nil || !ok {
		return false, err
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(nil, maxBuildFile)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == header {
			return true, nil
		}
	}
	return false, nil
}

func (d *detector) cargo() error {
	_, ok, err := d.read("Cargo.toml")
	if err != nil || !ok {
		return err
	}
	d.add(Suite{Name: "cargo-test", Kind: KindTest, Command: []string{"cargo", "test"}})
	d.note("Cargo.toml found: cargo test, judged by its exit code")
	return nil
}

func (d *detector) makefile() error {
	for _, name := range []string{"GNUmakefile", "makefile", "Makefile"} {
		data, ok, err := d.read(name)
		if err != nil {
			return err
		}
		if !ok || !hasMakeTarget(string(data), "test") {
			continue
		}
		for _, s := range d.suites {
			if s.Kind == KindTest {
				d.note("%s has a test target, not used: %s already runs the tests", name, displayCommand(s.Command))
				return nil
			}
		}
		d.add(Suite{Name: "make-test", Kind: KindTest, Command: []string{"make", "test"}})
		d.note("%s has a test target: make test, judged by its exit code", name)
		return nil
	}
	return nil
}

// hasMakeTarget reports whether a makefile defines target in a rule line
// ("test:", "test::", "lint test: deps"), not in a variable assignment.
func hasMakeTarget(makefile, target string) bool {
	for line := range strings.Lines(makefile) {
		if strings.HasPrefix(line, "\t") || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		targets, rest, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(strings.TrimLeft(rest, ":"), "=") || strings.ContainsAny(targets, "=$") {
			continue
		}
		for _, t := range strings.Fields(targets) {
			if t == target {
				return true
			}
		}
	}
	return false
}
