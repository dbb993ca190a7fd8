package testrun

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/testreport"
)

// TestChangedPathIn: which collection failures name a file the change
// touches, in the tracebacks pytest and unittest print (recorded from
// pytest 7 and Python 3.11 on grantjenks/python-sortedcontainers and
// small projects).
func TestChangedPathIn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tree")
	// The change updated src/pkg/mod.py, tests/test_a.py and
	// sub/lib/util.py, and deleted pkg/gone.py.
	gittest.WriteFiles(t, dir, map[string]string{"src/pkg/mod.py": "x = 1\n", "tests/test_a.py": "\n", "sub/lib/util.py": "\n"})
	changed := map[string]bool{"src/pkg/mod.py": true, "pkg/gone.py": true, "tests/test_a.py": true, "sub/lib/util.py": true}
	tests := []struct {
		name, suiteDir, output, want string
	}{
		{"pytest: a syntax error, absolute File line", "",
			"src/pkg/__init__.py:48: in <module>\n    from .mod import x\nE     File \"DIR/src/pkg/mod.py\", line 24\nE       def x(:\nE   SyntaxError: invalid syntax", "src/pkg/mod.py"},
		{"pytest: a short frame, relative to the rootdir", "",
			"tests/test_b.py:3: in <module>\n    import pkg.mod\nsrc/pkg/mod.py:2: in <module>\n    y = x + 1\nE   NameError: name 'x' is not defined", "src/pkg/mod.py"},
		{"pytest: a name removed from a changed module", "",
			"tests/test_b.py:1: in <module>\n    from pkg.mod import gone\nE   ImportError: cannot import name 'gone' from 'pkg.mod' (DIR/src/pkg/mod.py)", "src/pkg/mod.py"},
		{"pytest: the changed test module itself", "",
			"ImportError while importing test module 'DIR/tests/test_a.py'.\nHint: make sure your test modules/packages have valid Python names.\nE   ImportError: cannot import name 'nothere' from 'os' (/usr/lib/python3.11/os.py)", "tests/test_a.py"},
		{"a changed file that imports a dependency missing in the sandbox: not the change", "",
			"ImportError while importing test module 'DIR/tests/test_a.py'.\ntests/test_a.py:1: in <module>\n    import yaml\nE   ModuleNotFoundError: No module named 'yaml'", ""},
		{"a deleted module", "",
			"tests/test_c.py:1: in <module>\n    import pkg.gone\nE   ModuleNotFoundError: No module named 'pkg.gone'", "pkg/gone.py"},
		{"unittest's traceback", "",
			"ImportError: Failed to import test module: tests.test_d\nTraceback (most recent call last):\n  File \"/usr/lib/python3.11/unittest/loader.py\", line 407, in _find_test_path\n  File \"DIR/src/pkg/mod.py\", line 5\n    return (\n           ^\nSyntaxError: '(' was never closed", "src/pkg/mod.py"},
		{"a suite in a subfolder: frames relative to it", "sub",
			"tests/test_u.py:1: in <module>\n    from lib.util import f\nlib/util.py:3: in <module>\n    f = g.h\nE   AttributeError: 'int' object has no attribute 'h'", "sub/lib/util.py"},
		{"a changed module still there but not on the path: not the change", "",
			"tests/test_m.py:1: in <module>\n    from pkg.mod import x\nE   ModuleNotFoundError: No module named 'pkg'", ""},
		{"a changed top-level module not on the path: not the change", "src",
			"tests/test_m.py:1: in <module>\n    import mod\nE   ModuleNotFoundError: No module named 'pkg.mod'", ""},
		{"a dependency missing in the sandbox: not the change", "",
			"tests/test_b.py:1: in <module>\n    import cachetools\nE   ModuleNotFoundError: No module named 'cachetools'", ""},
		{"a file of the same name outside the directory", "",
			"  File \"/usr/lib/python3/dist-packages/src/pkg/mod.py\", line 1\nSyntaxError: invalid syntax", ""},
		{"a relative path that climbs out", "",
			"../tree/src/pkg/mod.py:1: in <module>\nE   SyntaxError", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			output := strings.ReplaceAll(tt.output, "DIR/", dir+"/")
			if got := changedPathIn(output, changed, dir, tt.suiteDir); got != tt.want {
				t.Errorf("changedPathIn = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestBlameChange: only collection failures that name a changed file
// change their message (and so stop being the runner's); other cases and
// a run without changed paths are left as they are.
func TestBlameChange(t *testing.T) {
	cases := []artifact.Case{
		{Name: "tests.test_b", Status: testreport.StatusError, Message: collectionFailure, Output: "E     File \"/w/src/pkg/mod.py\", line 2\nE   SyntaxError: invalid syntax"},
		{Name: "tests.test_c", Status: testreport.StatusError, Message: collectionFailure, Output: "E   ModuleNotFoundError: No module named 'cachetools'"},
		{Name: "test_ok", Status: testreport.StatusPass},
	}
	got := blameChange(cases, map[string]bool{"src/pkg/mod.py": true}, "/w", "")
	if want := "the change broke the import: src/pkg/mod.py (the test module does not import): SyntaxError: invalid syntax"; got[0].Message != want {
		t.Errorf("blamed case message %q, want %q", got[0].Message, want)
	}
	if got[1].Message != collectionFailure || got[2] != cases[2] {
		t.Errorf("other cases changed: %+v", got[1:])
	}
	if cases[0].Message != collectionFailure {
		t.Errorf("blameChange changed its input")
	}
	if n, _ := collectionErrors(got); n != 1 || realFailures(got) != 1 {
		t.Errorf("collection errors %d, real failures %d; want 1 and 1", n, realFailures(got))
	}
	if got := blameChange(cases, nil, "/w", ""); got[0].Message != collectionFailure {
		t.Errorf("without changed paths a case was blamed: %q", got[0].Message)
	}
}

// TestCollectionErrorsCountModules: a module pytest collected twice (as a
// doctest module too) has two collection errors; the runner's message
// counts it once.
func TestCollectionErrorsCountModules(t *testing.T) {
	c := artifact.Case{Name: "tests.test_b", Status: testreport.StatusError, Message: collectionFailure, Output: "E   ModuleNotFoundError: No module named 'cachetools'"}
	d := c
	d.Name = "tests.test_c"
	n, first := collectionErrors([]artifact.Case{c, c, d})
	if n != 2 || first != "tests.test_b: ModuleNotFoundError: No module named 'cachetools'" {
		t.Errorf("collectionErrors = %d, %q; want 2 modules, the first described", n, first)
	}
}
