package testrun

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/lazyre"
	"github.com/orchdev/orch/internal/testreport"
)

// What a Python traceback of a test module that failed to import names:
// the files of its frames (`File "/w/src/pkg/mod.py", line 24` and pytest's
// short `src/pkg/mod.py:24: in <module>`), the file of a name it could
// not import (`cannot import name 'x' from 'pkg.mod' (/w/src/pkg/mod.py)`),
// pytest's test module (`importing test module '/w/tests/test_a.py'`) and
// a module it could not find (`No module named 'pkg.gone'`).
var (
	tracebackFile = lazyre.New(`File "([^"\n]+)", line \d+`)
	pytestFrame   = lazyre.New(`(?m)^\s*([^\s:"'()]+\.py):\d+: in `)
	importedFrom  = lazyre.New(`\(([^()\s]+\.py)\)`)
	testModule    = lazyre.New(`test module '([^'\n]+)'`)
	noModule      = lazyre.New(`No module named '([A-Za-z_][A-Za-z0-9_.]*)'`)
)

// changeCollectionFailure is the message of a collection failure that the
// change under test caused: it stands as a failed test (an error case that
// sends the task back to codegen), not as the runner's failure.
const changeCollectionFailure = "the change broke the import: "

// blameChange turns the collection failures (test modules pytest or
// unittest could not import) whose traceback names a file the change
// touches into errors of the change: the code as changed does not import
// (a syntax error, a removed name, a new import of a missing package),
// which is the change's failure as a compile error is. Collection failures
// that name no changed file stay the runner's (a dependency missing in the
// sandbox). changed holds the change's repository paths; dir is the
// directory the suites run in and suiteDir the suite's folder in it.
func blameChange(cases []artifact.Case, changed map[string]bool, dir, suiteDir string) []artifact.Case {
	if len(changed) == 0 {
		return cases
	}
	var out []artifact.Case
	for i, c := range cases {
		if c.Status != testreport.StatusError || c.Message != collectionFailure {
			continue
		}
		p := changedPathIn(c.Output, changed, dir, suiteDir)
		if p == "" {
			continue
		}
		if out == nil {
			out = append([]artifact.Case(nil), cases...)
		}
		msg := changeCollectionFailure + p + " (the test module does not import)"
		if e := lastLine(c.Output, func(l string) bool { return strings.HasPrefix(l, "E ") || strings.Contains(l, "Error: ") }); e != "" {
			msg += ": " + strings.TrimSpace(strings.TrimPrefix(e, "E "))
		}
		out[i].Message = clip.Runes(msg, testreport.MaxMessage)
	}
	if out == nil {
		return cases
	}
	return out
}

// changedPathIn returns the first changed path the traceback names, or "".
func changedPathIn(output string, changed map[string]bool, dir, suiteDir string) string {
	// A path as the traceback gives it: absolute (in the directory) or
	// relative to the suite's folder (pytest's rootdir), else to the top.
	rel := func(p string) string {
		if filepath.IsAbs(p) {
			r, err := filepath.Rel(dir, p)
			if err != nil || r == ".." || strings.HasPrefix(r, "../") {
				return ""
			}
			if r = filepath.ToSlash(r); changed[r] {
				return r
			}
			return ""
		}
		p = path.Clean(filepath.ToSlash(p))
		if j := path.Join(suiteDir, p); changed[j] {
			return j
		}
		if changed[p] {
			return p
		}
		return ""
	}
	// A module that is not found is the environment's (a dependency not
	// installed in the sandbox, at the base too), also when a changed file
	// imports it, unless the change removed that module.
	if strings.Contains(output, "ModuleNotFoundError: ") {
		return removedModule(output, changed, dir, suiteDir)
	}
	for _, re := range []*lazyre.Regexp{tracebackFile, pytestFrame, importedFrom, testModule} {
		for _, m := range re.FindAllStringSubmatch(output, -1) {
			if p := rel(m[1]); p != "" {
				return p
			}
		}
	}
	return ""
}

// removedModule returns the changed path of a module the traceback could
// not find and the change removed: pkg.gone is pkg/gone.py or
// pkg/gone/__init__.py, at the suite's folder or under its src/, and no
// longer in the directory (a changed module that is still there but not
// found is not on the path, at the base too).
func removedModule(output string, changed map[string]bool, dir, suiteDir string) string {
	for _, m := range noModule.FindAllStringSubmatch(output, -1) {
		mod := strings.ReplaceAll(m[1], ".", "/")
		for _, root := range []string{suiteDir, path.Join(suiteDir, "src")} {
			for _, f := range []string{mod + ".py", mod + "/__init__.py"} {
				p := path.Join(root, f)
				if !changed[p] {
					continue
				}
				if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p))); errors.Is(err, fs.ErrNotExist) {
					return p
				}
			}
		}
	}
	return ""
}
