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
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/orchdev/orch/internal/lazyre"
)

// PytestReport is where detected pytest suites write their JUnit report,
// relative to the directory.
const PytestReport = ".orch-test/pytest.xml"

// Reports of the JVM build tools, relative to the directory.
const (
	SurefireReports       = "target/surefire-reports/"
	SurefireModuleReports = "*/target/surefire-reports/*.xml"
	GradleReports         = "build/test-results/test/"
	GradleProjectReports  = "*/build/test-results/test/*.xml"
)

// maxBuildFile bounds the build files Detect reads.
const maxBuildFile = 4 << 20

// DetectOptions tell Detect where the user's installed dependencies are.
type DetectOptions struct {
	// Deps is the user's working tree, whose untracked dependency folders
	// (.venv, venv, node_modules) Run makes visible read-only in the
	// directory; empty means the directory itself.
	Deps string
	// LookPath finds a program; nil means exec.LookPath.
	LookPath func(string) (string, error)
}

// Detect guesses the suites of the project in dir from its build files:
//
//	go.mod          in every Go module (go.work's use directives, else each go.mod outside vendor,
//	                testdata and hidden folders), go test -json ./... (test, go-json: tests only)
//	                and go vet ./... (lint, counted apart): suites go-test, go-test-<folder>...
//	package.json    the test script through the package manager its lockfile names
//	                (pnpm-lock.yaml: pnpm test, yarn.lock: yarn test, else npm test), counted from
//	                TAP (node --test, tape) or the totals of node's spec reporter, Jest, Mocha or
//	                Vitest, else judged by its exit code; npm's placeholder script is no suite.
//	                Without a root test script, each workspace member (package.json workspaces,
//	                pnpm-workspace.yaml) with one is a suite in its folder
//	pytest          pytest.ini, tox.ini [pytest], setup.cfg [tool:pytest], pyproject.toml, setup.py
//	                or conftest.py: pytest with a JUnit report in .orch-test/pytest.xml, run by the
//	                python of a virtualenv (.venv, venv) in Deps when there is one; a src layout
//	                gets PYTHONPATH=src so the tests import the code under test
//	Cargo.toml      cargo test --no-fail-fast (libtest: every test binary, even after a failure),
//	                with --workspace when it has a [workspace] table (every member)
//	pom.xml         mvn -B -o -q -fae test (offline: the sandbox has no network), surefire reports
//	gradlew         ./gradlew test --offline --continue --no-daemon when the wrapper is in the repository
//	                (else gradle on PATH), JUnit reports in build/test-results/test
//	Makefile/justfile with a test target: make test / just test, only when nothing above found
//	                a test suite
//
// The notes say what was chosen and why. Detect sets no timeout: the
// caller's default applies. No build file gives an empty slice and no
// error: the caller reports no_tests, never a pass.
func Detect(dir string, opt DetectOptions) ([]Suite, []string, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("detect suites: %w", err)
	}
	if !info.IsDir() {
		return nil, nil, fmt.Errorf("detect suites: %s is not a directory", dir)
	}
	d := detector{dir: dir, deps: opt.Deps, lookPath: opt.LookPath}
	if d.deps == "" {
		d.deps = dir
	}
	if d.lookPath == nil {
		d.lookPath = exec.LookPath
	}
	for _, step := range []func() error{d.goModule, d.npm, d.pytest, d.cargo, d.maven, d.gradle, d.makefile, d.justfile} {
		if err := step(); err != nil {
			return nil, nil, err
		}
	}
	if len(d.suites) == 0 {
		d.note("no go.mod, package.json test script, pytest configuration, Cargo.toml, pom.xml, Gradle build, or Makefile or justfile test target found: no tests configured")
	}
	return d.suites, d.notes, nil
}

type detector struct {
	dir      string
	deps     string
	lookPath func(string) (string, error)
	suites   []Suite
	notes    []string
}

func (d *detector) note(format string, args ...any) {
	d.notes = append(d.notes, fmt.Sprintf(format, args...))
}

func (d *detector) add(s Suite) {
	d.suites = append(d.suites, s)
}

// exists reports whether name is in dir (any type).
func (d *detector) exists(name string) bool {
	_, err := os.Lstat(filepath.Join(d.dir, name))
	return err == nil
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
	mods, why, err := d.goModules()
	if err != nil || len(mods) == 0 {
		return err
	}
	names := map[string]bool{}
	for _, m := range mods {
		dir := ""
		if m != "." {
			dir = m
		}
		suffix := memberSuffix(m, names)
		d.add(Suite{Name: "go-test" + suffix, Kind: KindTest, Dir: dir, Command: []string{"go", "test", "-json", "./..."}, Format: FormatGoJSON})
		d.add(Suite{Name: "go-vet" + suffix, Kind: KindLint, Dir: dir, Command: []string{"go", "vet", "./..."}})
	}
	if len(mods) == 1 && mods[0] == "." {
		d.note("go.mod found: go test -json ./... (test, results read from the JSON events) and go vet ./... (lint, counted apart from the tests)")
		return nil
	}
	d.note("%d Go modules (%s): %s; in each, go test -json ./... (test, results read from the JSON events) and go vet ./... (lint, counted apart), one suite per module", len(mods), why, strings.Join(mods, ", "))
	return nil
}

// maxWalk bounds the entries Detect looks at when it searches the
// checkout for modules.
const maxWalk = 200_000

// goModules lists the Go modules of the checkout as folders relative to
// it ("." for the top): the go.work's use directives when there is a
// go.work at the top, else every go.mod outside vendor, testdata,
// node_modules and hidden folders (go test ./... of a module stops at a
// nested module, so each is a suite of its own).
func (d *detector) goModules() ([]string, string, error) {
	data, ok, err := d.read("go.work")
	if err != nil {
		return nil, "", err
	}
	if ok {
		var mods []string
		for _, u := range goWorkUses(string(data)) {
			clean := filepath.Clean(filepath.FromSlash(u))
			if !filepath.IsLocal(clean) && clean != "." {
				d.note("go.work uses %s, outside the checkout: not tested", u)
				continue
			}
			if _, ok, err := d.read(filepath.Join(clean, "go.mod")); err != nil {
				return nil, "", err
			} else if !ok {
				d.note("go.work uses %s, which has no go.mod: not tested", u)
				continue
			}
			mods = append(mods, filepath.ToSlash(clean))
		}
		mods = slices.Compact(slices.Sorted(slices.Values(mods)))
		all, err := d.walkGoMods()
		if err != nil {
			return nil, "", err
		}
		var left []string
		for _, m := range all {
			if !slices.Contains(mods, m) {
				left = append(left, m)
			}
		}
		if len(left) > 0 {
			d.note("go.mod files that go.work does not use, not tested (the workspace leaves them out): %s", strings.Join(left, ", "))
		}
		return mods, "go.work's use directives", nil
	}
	mods, err := d.walkGoMods()
	return mods, "every go.mod outside vendor, testdata and hidden folders", err
}

// walkGoMods lists the folders of the checkout that hold a go.mod,
// outside vendor, testdata, node_modules and hidden folders, sorted.
func (d *detector) walkGoMods() ([]string, error) {
	var mods []string
	seen := 0
	err := filepath.WalkDir(d.dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if path == d.dir {
				return err
			}
			return nil // an unreadable folder: skipped
		}
		if seen++; seen > maxWalk {
			d.note("more than %d files: the search for Go modules stopped there", maxWalk)
			return fs.SkipAll
		}
		if e.IsDir() {
			name := e.Name()
			if path != d.dir && (strings.HasPrefix(name, ".") || name == "vendor" || name == "testdata" || name == "node_modules") {
				return fs.SkipDir
			}
			return nil
		}
		if e.Name() == "go.mod" && e.Type().IsRegular() {
			rel, err := filepath.Rel(d.dir, filepath.Dir(path))
			if err == nil {
				mods = append(mods, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("detect suites: search for go.mod: %w", err)
	}
	slices.Sort(mods)
	return mods, nil
}

// goWorkUses returns the paths of a go.work's use directives, single
// ("use ./a") and in blocks ("use (\n ./a\n ./b\n)"), quoted or not.
func goWorkUses(work string) []string {
	var uses []string
	inBlock := false
	for line := range strings.Lines(work) {
		if i := strings.Index(line, "//"); i >= 0 && !strings.Contains(line[:i], "\"") {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case inBlock && line == ")":
			inBlock = false
		case inBlock:
			uses = append(uses, goWorkPath(line))
		case line == "use (" || strings.HasPrefix(line, "use") && strings.TrimSpace(strings.TrimPrefix(line, "use")) == "(":
			inBlock = true
		case strings.HasPrefix(line, "use ") || strings.HasPrefix(line, "use\t"):
			if p := goWorkPath(strings.TrimSpace(line[3:])); p != "" {
				uses = append(uses, p)
			}
		}
	}
	return uses
}

// goWorkPath reads a go.work path: quoted (with spaces), or up to the
// first space.
func goWorkPath(s string) string {
	if q, err := strconv.QuotedPrefix(s); err == nil {
		if u, err := strconv.Unquote(q); err == nil {
			return u
		}
	}
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

// memberSuffix turns a module or workspace member's folder into a suffix
// of suite names ("" for the top, "-zapgrpc-internal-test" for
// zapgrpc/internal/test), unique within names and short enough for a
// suite name.
func memberSuffix(member string, names map[string]bool) string {
	if member == "." || member == "" {
		names[""] = true
		return ""
	}
	var b strings.Builder
	for _, r := range member {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	base := "-" + strings.Trim(b.String(), "-.")
	if len(base) > 40 {
		base = base[:40]
	}
	suffix := base
	for i := 2; names[suffix]; i++ {
		suffix = fmt.Sprintf("%s-%d", base, i)
	}
	names[suffix] = true
	return suffix
}

func (d *detector) npm() error {
	data, ok, err := d.read("package.json")
	if err != nil || !ok {
		return err
	}
	pkg, err := parsePackageJSON(data)
	if err != nil {
		return fmt.Errorf("detect suites: parse %s: %w", filepath.Join(d.dir, "package.json"), err)
	}
	manager, why := "npm", "no pnpm or yarn lockfile"
	switch {
	case d.exists("pnpm-lock.yaml"):
		manager, why = "pnpm", "pnpm-lock.yaml found"
	case d.exists("yarn.lock"):
		manager, why = "yarn", "yarn.lock found"
	case d.exists("package-lock.json"):
		why = "package-lock.json found"
	}
	members, err := d.workspaceMembers(pkg.workspaces)
	if err != nil {
		return err
	}
	if script, placeholder := pkg.test(); script != "" && !placeholder {
		d.add(Suite{Name: manager + "-test", Kind: KindTest, Command: []string{manager, "test"}, Format: FormatTAP})
		d.note("package.json scripts.test found (%q): %s test (%s); %s", script, manager, why, nodeCounts(script))
		if len(members) > 0 {
			d.note("%d workspace members (%s): the root's test script is the project's declared runner, so the members are tested only as far as it runs them", len(members), strings.Join(members, ", "))
		}
	} else {
		switch {
		case placeholder:
			d.note("package.json scripts.test is npm's placeholder (%q): no npm suite", script)
		case len(members) == 0:
			d.note("package.json has no scripts.test: no npm suite")
		}
		names := map[string]bool{}
		var tested []string
		for _, m := range members {
			mdata, ok, err := d.read(filepath.Join(m, "package.json"))
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			mpkg, err := parsePackageJSON(mdata)
			if err != nil {
				return fmt.Errorf("detect suites: parse %s: %w", filepath.Join(d.dir, m, "package.json"), err)
			}
			script, placeholder := mpkg.test()
			if script == "" || placeholder {
				continue
			}
			d.add(Suite{Name: manager + "-test" + memberSuffix(m, names), Kind: KindTest, Dir: m, Command: []string{manager, "test"}, Format: FormatTAP})
			tested = append(tested, fmt.Sprintf("%s (%q; %s)", m, script, nodeCounts(script)))
		}
		if len(members) > 0 {
			d.note("no test script at the root; %d of %d workspace members have one, each a suite running %s test in its folder (%s): %s", len(tested), len(members), manager, why, strings.Join(tested, ", "))
		}
		if len(tested) == 0 {
			return nil
		}
	}
	if _, err := os.Stat(filepath.Join(d.deps, "node_modules")); err != nil {
		d.note("no node_modules in %s: if the script needs packages, run %s install there first (the sandbox has no network and sees node_modules read-only)", d.deps, manager)
	}
	return nil
}

// packageJSON is what Detect reads of a package.json.
type packageJSON struct {
	scripts    map[string]any
	workspaces []string
}

func parsePackageJSON(data []byte) (packageJSON, error) {
	var raw struct {
		Scripts    map[string]any  `json:"scripts"`
		Workspaces json.RawMessage `json:"workspaces"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return packageJSON{}, err
	}
	pkg := packageJSON{scripts: raw.Scripts}
	if len(raw.Workspaces) > 0 {
		// An array of globs, or yarn's {"packages": [...]}.
		if err := json.Unmarshal(raw.Workspaces, &pkg.workspaces); err != nil {
			var obj struct {
				Packages []string `json:"packages"`
			}
			if json.Unmarshal(raw.Workspaces, &obj) == nil {
				pkg.workspaces = obj.Packages
			}
		}
	}
	return pkg, nil
}

// test returns the test script and whether it is npm's placeholder.
func (p packageJSON) test() (string, bool) {
	script, _ := p.scripts["test"].(string)
	script = strings.TrimSpace(script)
	return script, strings.Contains(script, "no test specified") && strings.Contains(script, "exit 1")
}

// nodeRunners are the test runners whose counts orch reads from their
// default output, by the word a script calls them with.
var nodeRunners = []struct{ word, how string }{
	{"node --test", "node's test runner: counts read from its TAP output or its spec reporter's totals"},
	{"node --experimental-test", "node's test runner: counts read from its TAP output or its spec reporter's totals"},
	{"vitest", "Vitest: counts read from its summary (Tests  N failed | N passed | N skipped), failures from its FAIL lines"},
	{"mocha", "Mocha: counts read from its summary (N passing, N pending, N failing), failures from its report"},
	{"jest", "Jest: counts read from its summary (Tests: N failed, N passed, N total)"},
	{"tape", "tape: counts read from its TAP output"},
	{"ava", "AVA: counts read from its test lines, checked against its summary"},
}

// nodeCounts says how orch counts the tests of a test script.
func nodeCounts(script string) string {
	var hows []string
	for _, r := range nodeRunners {
		if strings.Contains(script, r.word) && !slices.Contains(hows, r.how) {
			hows = append(hows, r.how)
		}
	}
	if len(hows) == 0 {
		return "read as TAP, or by the totals of node's spec reporter, Jest, Mocha, Vitest or AVA, when it prints them; otherwise judged by its exit code (orch cannot tell its runner from the script)"
	}
	return strings.Join(hows, "; ")
}

// workspaceMembers expands package.json's workspaces (or
// pnpm-workspace.yaml's packages) into the member folders that hold a
// package.json, sorted; negated patterns ("!x") are left out.
func (d *detector) workspaceMembers(patterns []string) ([]string, error) {
	if len(patterns) == 0 {
		lines, err := d.lines("pnpm-workspace.yaml")
		if err != nil {
			return nil, err
		}
		in := false
		for _, l := range lines {
			t := strings.TrimSpace(l)
			switch {
			case strings.HasPrefix(l, "packages:"):
				in = true
			case in && strings.HasPrefix(t, "- "):
				patterns = append(patterns, strings.Trim(strings.TrimSpace(t[2:]), `"'`))
			case in && t != "" && !strings.HasPrefix(t, "#"):
				in = false
			}
		}
	}
	var members []string
	for _, pat := range patterns {
		if strings.HasPrefix(pat, "!") || strings.Contains(pat, "..") {
			continue
		}
		pat = strings.TrimSuffix(strings.ReplaceAll(pat, "**", "*"), "/")
		matches, err := filepath.Glob(filepath.Join(d.dir, filepath.FromSlash(pat)))
		if err != nil {
			continue
		}
		for _, m := range matches {
			rel, err := filepath.Rel(d.dir, m)
			if err != nil || !filepath.IsLocal(rel) || strings.Contains(rel, "node_modules") {
				continue
			}
			if info, err := os.Lstat(filepath.Join(m, "package.json")); err == nil && info.Mode().IsRegular() {
				members = append(members, filepath.ToSlash(rel))
			}
		}
	}
	slices.Sort(members)
	return slices.Compact(members), nil
}

// pytest finds the Python suite of the checkout: the project at the top,
// or, when there is none, each Python project in a folder one or two
// levels down (a repository of several packages), run in its folder.
func (d *detector) pytest() error {
	before := len(d.suites)
	if err := d.pythonProject(); err != nil || len(d.suites) > before {
		return err
	}
	members := d.pythonMembers()
	if len(members) == 0 {
		return nil
	}
	names := map[string]bool{}
	var found []string
	for _, m := range members {
		sub := &detector{dir: filepath.Join(d.dir, m), deps: d.deps, lookPath: d.lookPath}
		if err := sub.pythonProject(); err != nil {
			return err
		}
		if len(sub.suites) == 0 {
			continue
		}
		found = append(found, m)
		suffix := memberSuffix(m, names)
		for _, s := range sub.suites {
			s.Name += suffix
			s.Dir = m
			d.add(s)
		}
		for _, n := range sub.notes {
			d.note("%s: %s", m, n)
		}
	}
	if len(found) > 0 {
		d.note("no Python project at the top; %d Python projects in folders below it (%s), each a suite run in its folder", len(found), strings.Join(found, ", "))
	}
	return nil
}

// pythonMembers lists the folders one or two levels down that hold a
// Python project (pyproject.toml, setup.py, setup.cfg, tox.ini,
// pytest.ini), outside hidden folders, virtualenvs, node_modules,
// vendor, testdata and build output; sorted.
func (d *detector) pythonMembers() []string {
	skip := func(name string) bool {
		switch name {
		case "node_modules", "vendor", "testdata", "venv", "site-packages", "build", "dist", "__pycache__":
			return true
		}
		return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
	}
	isProject := func(dir string) bool {
		for _, f := range []string{"pyproject.toml", "setup.py", "setup.cfg", "tox.ini", "tox.toml", "pytest.ini"} {
			if info, err := os.Lstat(filepath.Join(dir, f)); err == nil && info.Mode().IsRegular() {
				return true
			}
		}
		return false
	}
	var members []string
	top, _ := os.ReadDir(d.dir)
	for i, e := range top {
		if i >= 1000 || !e.IsDir() || skip(e.Name()) {
			continue
		}
		if isProject(filepath.Join(d.dir, e.Name())) {
			members = append(members, e.Name())
			continue
		}
		inner, _ := os.ReadDir(filepath.Join(d.dir, e.Name()))
		for j, f := range inner {
			if j >= 1000 || !f.IsDir() || skip(f.Name()) {
				continue
			}
			if isProject(filepath.Join(d.dir, e.Name(), f.Name())) {
				members = append(members, e.Name()+"/"+f.Name())
			}
		}
	}
	slices.Sort(members)
	return members
}

// pythonProject finds the suite of the Python project in d.dir.
func (d *detector) pythonProject() error {
	declared, err := d.declaredPython()
	if err != nil {
		return err
	}
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
	pyproject := ""
	if why == "" {
		data, ok, err := d.read("pyproject.toml")
		if err != nil {
			return err
		}
		if ok {
			if strings.Contains(string(data), "[tool.pytest.ini_options]") || strings.Contains(string(data), "[tool.pytest]") {
				why = "pyproject.toml [tool.pytest]"
			} else {
				pyproject = "pyproject.toml"
			}
		}
	}
	python, how := d.python()
	if declared.runner == "unittest" {
		d.unittest(declared, python, how)
		if why != "" {
			d.note("%s configures pytest, but %s runs python -m unittest: unittest is used (load_tests and doctests included)", why, declared.source)
		}
		return nil
	}
	switch {
	case declared.runner == "pytest":
		why = declared.source + " runs pytest"
	case why != "":
	case pyproject != "" || d.exists("setup.py") || d.exists("conftest.py"):
		file := pyproject
		if file == "" {
			file = "setup.py"
			if !d.exists(file) {
				file = "conftest.py"
			}
		}
		if file != "conftest.py" {
			if mod := d.loadTestsModule(); mod != "" {
				d.unittest(pythonRunner{runner: "unittest", source: file}, python, how)
				d.note("no test runner is declared (no tox, nox, Makefile, justfile or CI workflow test command, no pytest configuration) and %s defines load_tests, which pytest ignores: assuming python -m unittest", mod)
				return nil
			}
		}
		why = file + " (no test runner declared in tox, nox, a Makefile, justfile or CI workflow, and no pytest configuration: assuming pytest)"
	default:
		return nil
	}
	argv := append(python, "-m", "pytest")
	if len(python) == 0 {
		argv = []string{"python3", "-m", "pytest"}
		if _, err := d.lookPath("pytest"); err == nil {
			argv, how = []string{"pytest"}, "pytest is on PATH"
		}
	}
	argv = append(argv, "--junitxml="+PytestReport)
	s := Suite{Name: "pytest", Kind: KindTest, Command: argv, Format: FormatJUnit, Report: PytestReport}
	if pkg := d.srcPackage(); pkg != "" {
		s.Env = map[string]string{"PYTHONPATH": "src"}
		how += fmt.Sprintf("; src layout (src/%s): PYTHONPATH=src, so the tests import the code under test", pkg)
	}
	d.add(s)
	d.note("%s found: pytest with a JUnit report in %s (%s)", why, PytestReport, how)
	return nil
}

// python returns the argv of the virtualenv's python in Deps (.venv,
// venv) and says so; nil when there is none.
func (d *detector) python() ([]string, string) {
	for _, venv := range []string{".venv", "venv"} {
		py := filepath.Join(d.deps, venv, "bin", "python")
		if info, err := os.Stat(py); err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0 {
			return []string{py}, "the virtualenv " + filepath.Join(d.deps, venv) + "'s python"
		}
	}
	return nil, "no virtualenv and no pytest on PATH, so python3 -m pytest"
}

// unittest adds the suite running python -m unittest with the declared
// arguments.
func (d *detector) unittest(r pythonRunner, python []string, how string) {
	if len(python) == 0 {
		python, how = []string{"python3"}, "python3 from PATH (no virtualenv .venv or venv)"
	}
	argv := append(append(slices.Clip(python), "-m", "unittest"), r.args...)
	s := Suite{Name: "unittest", Kind: KindTest, Command: argv, Format: FormatUnittest}
	if pkg := d.srcPackage(); pkg != "" {
		s.Env = map[string]string{"PYTHONPATH": "src"}
		how += fmt.Sprintf("; src layout (src/%s): PYTHONPATH=src", pkg)
	}
	d.add(s)
	d.note("%s runs python -m unittest: %s (%s; counts read from unittest's summary, doctests loaded by load_tests included)", r.source, displayCommand(argv), how)
}

// pythonRunner is the test runner a project declares.
type pythonRunner struct {
	runner string   // "unittest", "pytest" or "" (none declared)
	source string   // where: "tox.ini [testenv] commands", "Makefile test target"...
	args   []string // unittest's arguments after "-m unittest"
}

// declaredPython finds the Python test runner the project declares, in
// this order: tox.ini's [testenv] commands, tox 4's TOML (tox.toml,
// pyproject.toml [tool.tox]), noxfile.py, the Makefile's or justfile's
// test target, the CI workflows (.github/workflows). The first that runs
// python -m unittest or pytest decides.
func (d *detector) declaredPython() (pythonRunner, error) {
	type source struct {
		name  string
		lines func() ([]string, error)
	}
	sources := []source{
		{"tox.ini [testenv] commands", func() ([]string, error) { return d.iniValue("tox.ini", "[testenv]", "commands") }},
		{"tox.toml [env_run_base] commands", func() ([]string, error) { return d.toxTOML("tox.toml") }},
		{"pyproject.toml [tool.tox] commands", func() ([]string, error) { return d.toxTOML("pyproject.toml") }},
		{"noxfile.py", func() ([]string, error) { return d.lines("noxfile.py") }},
		{"the Makefile's test target", func() ([]string, error) { return d.makeRecipe("test") }},
		{"the justfile's test recipe", func() ([]string, error) { return d.justRecipe("test") }},
		{"a CI workflow (.github/workflows)", d.workflowLines},
	}
	for _, src := range sources {
		lines, err := src.lines()
		if err != nil {
			return pythonRunner{}, err
		}
		for _, l := range lines {
			if r := classifyPython(l); r.runner != "" {
				r.source = src.name
				return r, nil
			}
		}
	}
	return pythonRunner{}, nil
}

var (
	// unittestCall matches a command that runs unittest: "python -m
	// unittest", "coverage run -m unittest", nox's "-m", "unittest".
	unittestCall = lazyre.New(`-m["', ]+unittest\b`)
	pytestCall   = lazyre.New(`(?:^|[\s"'/(])(?:py\.test|pytest)\b`)
	// workflowExpr is a GitHub workflow's expression, ${{ matrix.x }},
	// one word whatever spaces it holds.
	workflowExpr = lazyre.New(`\$\{\{.*?\}\}`)
)

// topFolder holds the substitutions that stand for the project's top
// folder, where orch runs the suite: tox's {toxinidir} and {tox_root},
// cibuildwheel's {project} and {package}, make's $(CURDIR).
var topFolder = strings.NewReplacer("{toxinidir}", ".", "{tox_root}", ".", "{project}", ".", "{package}", ".", "$(CURDIR)", ".", "${CURDIR}", ".")

// unittestValueOptions are python -m unittest's options that take a value.
var unittestValueOptions = []string{"-s", "--start-directory", "-p", "--pattern", "-t", "--top-level-directory", "-k"}

// classifyPython says which runner a command line runs, and unittest's
// arguments: the words after "unittest" up to a shell operator, the
// substitutions for the top folder made ({toxinidir}/tests is tests),
// without the others ({posargs}, ${tests}) and without an option whose
// value was one of those.
func classifyPython(line string) pythonRunner {
	if loc := unittestCall.FindStringIndex(line); loc != nil {
		var args []string
		for _, w := range strings.Fields(workflowExpr.ReplaceAllString(line[loc[1]:], "$${{}}")) {
			if strings.ContainsAny(w, "&;|>") || w == "#" {
				break
			}
			quoted := strings.HasPrefix(w, `"`) || strings.HasPrefix(w, "'")
			w = strings.Trim(w, `"',)`)
			if t := topFolder.Replace(w); t != w {
				w = t
				if opt, value, ok := strings.Cut(w, "="); ok && strings.HasPrefix(opt, "-") {
					w = opt + "=" + filepath.Clean(value)
				} else {
					w = filepath.Clean(w)
				}
			}
			if w == "" {
				continue
			}
			if strings.ContainsAny(w, "{}$()`") || !quoted && strings.Contains(w, "*") {
				if n := len(args); n > 0 && slices.Contains(unittestValueOptions, args[n-1]) {
					args = args[:n-1]
				}
				continue
			}
			args = append(args, w)
		}
		return pythonRunner{runner: "unittest", args: args}
	}
	if pytestCall.MatchString(line) && !strings.Contains(line, "pip install") {
		return pythonRunner{runner: "pytest"}
	}
	return pythonRunner{}
}

// lines returns the lines of a file in dir (none when it is missing).
func (d *detector) lines(name string) ([]string, error) {
	data, ok, err := d.read(name)
	if err != nil || !ok {
		return nil, err
	}
	return strings.Split(string(data), "\n"), nil
}

// iniValue returns the lines of key's value in an INI file's section,
// continuation lines included.
func (d *detector) iniValue(name, section, key string) ([]string, error) {
	lines, err := d.lines(name)
	if err != nil {
		return nil, err
	}
	return iniValueOf(lines, section, key), nil
}

// iniValueOf returns the lines of key's value in the section of an INI
// file's lines.
func iniValueOf(lines []string, section, key string) []string {
	var out []string
	in, inKey := false, false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			in, inKey = t == section, false
			continue
		}
		if !in || t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, ";") {
			continue
		}
		if l[0] == ' ' || l[0] == '\t' {
			if inKey {
				out = append(out, t)
			}
			continue
		}
		k, v, ok := strings.Cut(t, "=")
		inKey = ok && strings.TrimSpace(k) == key
		if inKey && strings.TrimSpace(v) != "" {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}

// toxTOML returns tox 4's commands in a TOML file, one line per command:
// env_run_base's in tox.toml, [tool.tox.env_run_base]'s in
// pyproject.toml (or its legacy_tox_ini's [testenv] commands). A command
// is an array of words; the tables among them ({replace = "posargs"}) are
// substitutions and left out.
func (d *detector) toxTOML(name string) ([]string, error) {
	data, ok, err := d.read(name)
	if err != nil || !ok {
		return nil, err
	}
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		d.note("%s is not valid TOML (%v): its tox configuration is not read", name, err)
		return nil, nil
	}
	if name == "pyproject.toml" {
		tool, _ := doc["tool"].(map[string]any)
		doc, _ = tool["tox"].(map[string]any)
		if legacy, ok := doc["legacy_tox_ini"].(string); ok {
			return iniValueOf(strings.Split(legacy, "\n"), "[testenv]", "commands"), nil
		}
	}
	base, _ := doc["env_run_base"].(map[string]any)
	commands, _ := base["commands"].([]any)
	var out []string
	for _, c := range commands {
		words, _ := c.([]any)
		var line []string
		for _, w := range words {
			if s, ok := w.(string); ok {
				line = append(line, s)
			}
		}
		out = append(out, strings.Join(line, " "))
	}
	return out, nil
}

// makeRecipe returns the recipe lines of a makefile's target.
func (d *detector) makeRecipe(target string) ([]string, error) {
	return d.recipe([]string{"GNUmakefile", "makefile", "Makefile"},
		func(l string) bool { return strings.HasPrefix(l, "\t") },
		func(l string) bool { return hasMakeTarget(l+"\n", target) })
}

// justRecipe returns the lines of a justfile's recipe (blank lines inside
// it do not end it).
func (d *detector) justRecipe(recipe string) ([]string, error) {
	return d.recipe([]string{"justfile", "Justfile", ".justfile"},
		func(l string) bool { return l == "" || l[0] == ' ' || l[0] == '\t' },
		func(l string) bool { return hasJustRecipe(l+"\n", recipe) })
}

// recipe returns the body of a recipe in the first of files that has
// one: the lines indented says belong to a recipe, after a line that
// starts says opens the one wanted, trimmed.
func (d *detector) recipe(files []string, indented, starts func(string) bool) ([]string, error) {
	for _, name := range files {
		lines, err := d.lines(name)
		if err != nil {
			return nil, err
		}
		var out []string
		in := false
		for _, l := range lines {
			if indented(l) {
				if in {
					out = append(out, strings.TrimSpace(l))
				}
				continue
			}
			in = starts(l)
		}
		if out != nil {
			return out, nil
		}
	}
	return nil, nil
}

// workflowLines returns the lines of the GitHub workflows that run
// something (run: steps), workflow files in name order.
func (d *detector) workflowLines() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(d.dir, ".github", "workflows"))
	if err != nil {
		return nil, nil
	}
	var out []string
	for i, e := range entries {
		if i >= 100 || !(strings.HasSuffix(e.Name(), ".yml") || strings.HasSuffix(e.Name(), ".yaml")) {
			continue
		}
		lines, err := d.lines(filepath.Join(".github", "workflows", e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, lines...)
	}
	return out, nil
}

// loadTestsModule returns a test module that defines load_tests (among
// test*.py at the top, in tests/ and test/), or "".
func (d *detector) loadTestsModule() string {
	for _, pattern := range []string{"test*.py", "tests/test*.py", "test/test*.py", "tests/*/test*.py", "tests/__init__.py"} {
		matches, _ := filepath.Glob(filepath.Join(d.dir, pattern))
		for i, m := range matches {
			if i >= 200 {
				break
			}
			rel, _ := filepath.Rel(d.dir, m)
			data, ok, err := d.read(rel)
			if err == nil && ok && strings.Contains(string(data), "def load_tests(") {
				return rel
			}
		}
	}
	return ""
}

// srcPackage returns the name of a Python package or module in src/, if
// any.
func (d *detector) srcPackage() string {
	entries, err := os.ReadDir(filepath.Join(d.dir, "src"))
	if err != nil {
		return ""
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(d.dir, "src", name, "__init__.py")); err == nil {
				return name
			}
		} else if strings.HasSuffix(name, ".py") {
			return name
		}
	}
	return ""
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
	data, ok, err := d.read("Cargo.toml")
	if err != nil || !ok {
		return err
	}
	if hasTOMLTable(string(data), "workspace") {
		// Without --workspace, cargo test at a root that is also a
		// package tests that package alone (or the default-members).
		d.add(Suite{Name: "cargo-test", Kind: KindTest, Command: []string{"cargo", "test", "--workspace", "--no-fail-fast"}, Format: FormatLibtest})
		d.note("Cargo.toml with [workspace] found: cargo test --workspace --no-fail-fast (every member's unit, integration and doc tests, each binary named with its crate or test target; every binary runs even after a failure; counts read from libtest's output)")
		return nil
	}
	d.add(Suite{Name: "cargo-test", Kind: KindTest, Command: []string{"cargo", "test", "--no-fail-fast"}, Format: FormatLibtest})
	d.note("Cargo.toml found: cargo test --no-fail-fast (every test binary runs even after a failure; counts read from libtest's output)")
	return nil
}

// hasTOMLTable reports whether a TOML document has the table [name] (a
// header line, comments and spaces allowed).
func hasTOMLTable(doc, name string) bool {
	for line := range strings.Lines(doc) {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, "#"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if strings.HasPrefix(line, "[") && !strings.HasPrefix(line, "[[") && strings.TrimSpace(strings.Trim(line, "[]")) == name {
			return true
		}
	}
	return false
}

func (d *detector) maven() error {
	data, ok, err := d.read("pom.xml")
	if err != nil || !ok {
		return err
	}
	report, where := SurefireReports, "target/surefire-reports"
	if strings.Contains(string(data), "<modules>") {
		report, where = SurefireModuleReports, "each module's target/surefire-reports"
	}
	d.add(Suite{Name: "maven-test", Kind: KindTest, Command: []string{"mvn", "-B", "-o", "-q", "-fae", "test"}, Format: FormatJUnit, Report: report})
	msg := "pom.xml found: mvn -B -o -q -fae test (offline, since the sandbox has no network: plugins and dependencies come from ~/.m2/repository, read-only; -fae runs every module), JUnit reports from " + where
	if d.exists("mvnw") {
		msg += "; mvnw is not used (it downloads Maven into ~/.m2/wrapper)"
	}
	d.note("%s", msg)
	return nil
}

func (d *detector) gradle() error {
	build := ""
	for _, f := range []string{"build.gradle.kts", "build.gradle", "settings.gradle.kts", "settings.gradle"} {
		if d.exists(f) {
			build = f
			break
		}
	}
	if build == "" {
		return nil
	}
	report, where := GradleReports, "build/test-results/test"
	for _, f := range []string{"settings.gradle.kts", "settings.gradle"} {
		data, ok, err := d.read(f)
		if err != nil {
			return err
		}
		if ok && strings.Contains(string(data), "include") {
			report, where = GradleProjectReports, "each project's build/test-results/test"
		}
	}
	argv, how := []string{"./gradlew", "test", "--offline", "--continue", "--no-daemon"}, "the wrapper gradlew is in the repository"
	if info, err := os.Stat(filepath.Join(d.dir, "gradlew")); err != nil || !info.Mode().IsRegular() {
		argv, how = []string{"gradle", "test", "--offline", "--continue", "--no-daemon"}, "no gradlew in the repository, so gradle from PATH"
	}
	d.add(Suite{Name: "gradle-test", Kind: KindTest, Command: argv, Format: FormatJUnit, Report: report})
	d.note("%s found: %s (%s; offline, since the sandbox has no network; --continue runs every project; --no-daemon: a daemon would be stopped with the suite anyway), JUnit reports from %s", build, strings.Join(argv, " "), how, where)
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

func (d *detector) justfile() error {
	for _, name := range []string{"justfile", "Justfile", ".justfile"} {
		data, ok, err := d.read(name)
		if err != nil {
			return err
		}
		if !ok || !hasJustRecipe(string(data), "test") {
			continue
		}
		for _, s := range d.suites {
			if s.Kind == KindTest {
				d.note("%s has a test recipe, not used: %s already runs the tests", name, displayCommand(s.Command))
				return nil
			}
		}
		d.add(Suite{Name: "just-test", Kind: KindTest, Command: []string{"just", "test"}})
		d.note("%s has a test recipe: just test, judged by its exit code", name)
		return nil
	}
	return nil
}

// hasJustRecipe reports whether a justfile defines recipe at the start of
// a line ("test:", "test *args:", "@test:"), not a variable ("test := x").
func hasJustRecipe(justfile, recipe string) bool {
	for line := range strings.Lines(justfile) {
		if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' {
			continue
		}
		line = strings.TrimPrefix(line, "@")
		head, rest, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(rest, "=") {
			continue
		}
		if f := strings.Fields(head); len(f) > 0 && f[0] == recipe {
			return true
		}
	}
	return false
}
