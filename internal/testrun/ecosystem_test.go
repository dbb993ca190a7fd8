package testrun

import (
	"context"
	"crypto/md5"
	"fmt"
	"maps"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gittest"
)

// Fixture projects per ecosystem, made in the test, detected and run the
// way orch test runs them: in the bwrap sandbox, with the user's
// dependency folders in a separate working tree (Options.Deps). CI
// (.ci/run) installs the toolchains and sets ORCH_REQUIRE_ECOSYSTEMS=1, so
// a missing one fails there; elsewhere the test skips and says why.

// requireTool skips (or, with ORCH_REQUIRE_ECOSYSTEMS=1 or CI set, fails)
// when a program or file is missing.
func requireTool(t *testing.T, name, why string) {
	t.Helper()
	var err error
	if filepath.IsAbs(name) {
		_, err = os.Stat(name)
	} else {
		_, err = exec.LookPath(name)
	}
	if err != nil {
		if os.Getenv("ORCH_REQUIRE_ECOSYSTEMS") == "1" || os.Getenv("CI") != "" {
			t.Fatalf("ORCH_REQUIRE_ECOSYSTEMS=1 or CI is set, but %s is missing (%s; .ci/run installs it): %v", name, why, err)
		}
		t.Skipf("%s is missing (%s; .ci/run installs it): %v", name, why, err)
	}
}

// runDetected detects the suites of dir and runs them in the sandbox with
// deps as the user's working tree.
func runDetected(t *testing.T, dir, deps string, mutate func(*Options, []Suite)) (artifact.TestReport, RunInfo) {
	t.Helper()
	suites, notes, err := Detect(dir, DetectOptions{Deps: deps})
	if err != nil {
		t.Fatal(err)
	}
	if len(suites) == 0 {
		t.Fatalf("nothing detected: %q", notes)
	}
	opt := options(t, dir)
	opt.Sandbox = SandboxBwrap
	opt.Deps = deps
	opt.BuildCache = filepath.Join(t.TempDir(), "build")
	if mutate != nil {
		mutate(&opt, suites)
	}
	report, info, err := Run(context.Background(), suites, opt)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return report, info
}

func logOf(t *testing.T, report artifact.TestReport, info RunInfo) string {
	var b strings.Builder
	for _, n := range info.Notes {
		b.WriteString("note: " + n + "\n")
	}
	for _, s := range report.Suites {
		for _, c := range s.Cases {
			b.WriteString(s.ID + ": " + c.Name + " " + c.Status + " " + c.Message + "\n")
		}
	}
	return b.String()
}

func TestEcosystemNode(t *testing.T) {
	requireBwrap(t)
	requireTool(t, "node", "Node's test runner")
	requireTool(t, "npm", "npm test")
	t.Parallel()
	dir, deps := t.TempDir(), t.TempDir()
	project := map[string]string{
		"package.json": `{"name":"fx","version":"1.0.0","scripts":{"test":"node --test && typecheck"}}`,
		"test/math.test.mjs": `import { test, describe, it } from 'node:test';
import assert from 'node:assert';
import { add } from 'leftpad-fx';
describe('add', () => {
  it('adds', () => assert.strictEqual(add(1, 2), 3));
  it.skip('later', () => {});
});
test('node_modules takes a tool cache (a layer of the run)', async () => {
  const fs = await import('node:fs');
  fs.mkdirSync('node_modules/.vite-temp', { recursive: true });
  fs.writeFileSync('node_modules/.vite-temp/config.mjs', 'x');
  assert.strictEqual(fs.readFileSync('node_modules/.vite-temp/config.mjs', 'utf8'), 'x');
});
`,
	}
	gittest.WriteFiles(t, dir, project)
	gittest.WriteFiles(t, deps, project)
	// What `npm install` left in the user's working tree: a package and a
	// tool on node_modules/.bin.
	gittest.WriteFiles(t, deps, map[string]string{
		"node_modules/leftpad-fx/package.json": `{"name":"leftpad-fx","version":"1.0.0","type":"module","main":"index.js"}`,
		"node_modules/leftpad-fx/index.js":     "export const add = (a, b) => a + b;\n",
		"node_modules/.bin/typecheck":          "#!/bin/sh\necho typecheck ok\n",
	})
	if err := os.Chmod(filepath.Join(deps, "node_modules/.bin/typecheck"), 0o755); err != nil {
		t.Fatal(err)
	}

	report, info := runDetected(t, dir, deps, nil)
	if report.Status != artifact.TestCompleted || !report.OverallPass || report.Summary != (artifact.Summary{Passed: 2, Skipped: 1}) {
		t.Fatalf("report %s pass %v summary %+v (error %q), want 2 passed 1 skipped\n%s", report.Status, report.OverallPass, report.Summary, report.Error, logOf(t, report, info))
	}
	for _, p := range []string{filepath.Join(deps, "node_modules/.vite-temp"), filepath.Join(dir, "node_modules/.vite-temp")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a suite's write into node_modules reached %s", p)
		}
	}

	// Without the installed tool the script's `typecheck` is missing: a
	// runner error saying what to do, not a failed test.
	if err := os.Remove(filepath.Join(deps, "node_modules/.bin/typecheck")); err != nil {
		t.Fatal(err)
	}
	dir2 := t.TempDir()
	gittest.WriteFiles(t, dir2, project)
	report, info = runDetected(t, dir2, deps, nil)
	if report.Status != artifact.TestError || !strings.Contains(report.Error, "typecheck: not found") {
		t.Fatalf("without the tool: status %s error %q, want a runner error naming typecheck\n%s", report.Status, report.Error, logOf(t, report, info))
	}
}

func TestEcosystemPython(t *testing.T) {
	requireBwrap(t)
	requireTool(t, "/usr/bin/python3", "Debian's python3 with python3-pytest")
	if err := exec.Command("/usr/bin/python3", "-c", "import pytest").Run(); err != nil {
		requireTool(t, "/nonexistent/python3-pytest", "import pytest failed: apt-get install python3-pytest")
	}
	t.Parallel()
	project := map[string]string{
		"pyproject.toml":            "[project]\nname = \"fx\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
		"src/fx/__init__.py":        "def add(a, b):\n    return a + b\n",
		"tests/test_add.py":         "import pytest\nfrom fx import add\n\ndef test_adds():\n    assert add(1, 2) == 3\n\ndef test_wrong():\n    assert add(1, 2) == 4\n\n@pytest.mark.skip(reason='later')\ndef test_later():\n    pass\n",
		"tests/test_more.py":        "from fx import add\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
		"tests/test_venv_marker.py": "import os, sys\n\ndef test_interpreter():\n    assert os.environ.get('FX_EXPECT_VENV') != '1' or '.venv' in sys.prefix\n",
	}
	t.Run("src layout", func(t *testing.T) {
		t.Parallel()
		dir, deps := t.TempDir(), t.TempDir()
		gittest.WriteFiles(t, dir, project)
		gittest.WriteFiles(t, deps, project)
		report, info := runDetected(t, dir, deps, func(o *Options, s []Suite) {
			o.Env = append(os.Environ(), "PATH=/usr/bin:/bin")
		})
		if report.Status != artifact.TestCompleted || report.OverallPass || report.Summary != (artifact.Summary{Passed: 3, Failed: 1, Skipped: 1}) {
			t.Fatalf("report %s summary %+v (error %q), want 3 passed 1 failed 1 skipped\n%s", report.Status, report.Summary, report.Error, logOf(t, report, info))
		}
	})
	t.Run("a virtualenv in the working tree", func(t *testing.T) {
		t.Parallel()
		dir, deps := t.TempDir(), t.TempDir()
		gittest.WriteFiles(t, dir, project)
		gittest.WriteFiles(t, deps, project)
		if out, err := exec.Command("/usr/bin/python3", "-m", "venv", "--without-pip", "--system-site-packages", filepath.Join(deps, ".venv")).CombinedOutput(); err != nil {
			t.Fatalf("python3 -m venv: %v\n%s", err, out)
		}
		report, info := runDetected(t, dir, deps, func(o *Options, s []Suite) {
			s[0].Env["FX_EXPECT_VENV"] = "1"
		})
		if !strings.HasPrefix(report.Suites[0].Command, filepath.Join(deps, ".venv")) {
			t.Errorf("suite command %q does not use the virtualenv", report.Suites[0].Command)
		}
		if report.Status != artifact.TestCompleted || report.Summary != (artifact.Summary{Passed: 3, Failed: 1, Skipped: 1}) {
			t.Fatalf("report %s summary %+v (error %q)\n%s", report.Status, report.Summary, report.Error, logOf(t, report, info))
		}
	})
	t.Run("an import error is a collection error, not a failure", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		gittest.WriteFiles(t, dir, map[string]string{
			"pytest.ini":       "[pytest]\n",
			"tests/test_x.py":  "from missingpkg import x\n\ndef test_x():\n    pass\n",
			"tests/test_ok.py": "def test_ok():\n    pass\n",
		})
		report, info := runDetected(t, dir, "", func(o *Options, s []Suite) {
			o.Env = append(os.Environ(), "PATH=/usr/bin:/bin")
		})
		if report.Status != artifact.TestError || !strings.Contains(report.Error, "No module named 'missingpkg'") || report.Summary.Failed != 0 {
			t.Fatalf("report %s summary %+v error %q, want a collection error\n%s", report.Status, report.Summary, report.Error, logOf(t, report, info))
		}
	})
	// Found with grantjenks/python-sortedcontainers: a change that left a
	// syntax error in the package was "the test runner failed (not a test
	// failure)", and the task stayed in test instead of going back.
	t.Run("a change that breaks the import is a failure of the change", func(t *testing.T) {
		t.Parallel()
		broken := map[string]string{}
		for k, v := range project {
			broken[k] = v
		}
		broken["src/fx/__init__.py"] = "def add(a, b):\n    return a +\n"
		for _, tt := range []struct {
			name    string
			changed []string
			status  string
		}{
			{"the change touches the file", []string{"src/fx/__init__.py"}, artifact.TestCompleted},
			{"the change touches another file", []string{"README.md"}, artifact.TestError},
		} {
			dir := t.TempDir()
			gittest.WriteFiles(t, dir, broken)
			report, info := runDetected(t, dir, "", func(o *Options, s []Suite) {
				o.Env = append(os.Environ(), "PATH=/usr/bin:/bin")
				o.Changed = tt.changed
			})
			if report.Status != tt.status || report.OverallPass {
				t.Fatalf("%s: report %s overall_pass %v (error %q), want %s\n%s", tt.name, report.Status, report.OverallPass, report.Error, tt.status, logOf(t, report, info))
			}
			if tt.status != artifact.TestCompleted {
				if !strings.Contains(report.Error, "could not be collected") {
					t.Errorf("%s: error %q, want the runner's collection error", tt.name, report.Error)
				}
				continue
			}
			// Two test modules import fx: each is an error of the change.
			if report.Summary != (artifact.Summary{Error: 2}) {
				t.Errorf("%s: summary %+v, want 2 errors\n%s", tt.name, report.Summary, logOf(t, report, info))
			}
			for _, c := range report.Suites[0].Cases {
				if !strings.Contains(c.Message, "the change broke the import: src/fx/__init__.py") || !strings.Contains(c.Message, "SyntaxError") {
					t.Errorf("%s: case %s message %q does not name the changed file and the error", tt.name, c.Name, c.Message)
				}
			}
		}
	})
}

func TestEcosystemRust(t *testing.T) {
	requireBwrap(t)
	requireTool(t, "cargo", "cargo test")
	t.Parallel()
	dir := t.TempDir()
	gittest.WriteFiles(t, dir, map[string]string{
		"Cargo.toml":  "[package]\nname = \"fx\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
		"src/lib.rs":  "/// ```\n/// assert_eq!(fx::add(1, 1), 2);\n/// ```\npub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(2, 2), 4); }\n    #[test]\n    fn wrong() { assert_eq!(super::add(2, 2), 5); }\n    #[test]\n    #[ignore]\n    fn slow() {}\n}\n",
		"tests/it.rs": "#[test]\nfn integration() { assert_eq!(fx::add(1, 2), 3); }\n",
	})
	cache := filepath.Join(t.TempDir(), "build")
	mutate := func(o *Options, s []Suite) { o.BuildCache = cache }
	report, info := runDetected(t, dir, "", mutate)
	// cargo test --no-fail-fast: the integration test and the doc test run
	// although the unit tests failed.
	want := artifact.Summary{Passed: 3, Failed: 1, Skipped: 1}
	if report.Status != artifact.TestCompleted || report.OverallPass || report.Summary != want {
		t.Fatalf("report %s summary %+v (error %q), want %+v\n%s", report.Status, report.Summary, report.Error, want, logOf(t, report, info))
	}
	if _, err := os.Stat(filepath.Join(dir, "target")); err == nil {
		t.Error("cargo built into the worktree's target/, not orch's build cache")
	}
	// The cargo target folder is a layer of the run: what cargo (and the
	// build scripts and tests it runs) wrote there is gone, so no later
	// run trusts it.
	if matches, _ := filepath.Glob(filepath.Join(cache, "cargo-target-*", "debug")); len(matches) != 0 {
		t.Fatalf("a suite's build reached the build cache %s: %v", cache, matches)
	}
	// The second run in a new worktree counts the same.
	dir2 := t.TempDir()
	if err := os.CopyFS(dir2, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	report, info = runDetected(t, dir2, "", mutate)
	if report.Summary != want {
		t.Fatalf("second run summary %+v\n%s", report.Summary, logOf(t, report, info))
	}
}

func TestEcosystemMaven(t *testing.T) {
	requireBwrap(t)
	requireTool(t, "mvn", "Maven")
	// No Maven Central here: the plugins come from Debian's packages
	// (libsurefire-java, libmaven-compiler-plugin-java,
	// libmaven-resources-plugin-java, junit4) in /usr/share/maven-repo.
	requireTool(t, "/usr/share/maven-repo/org/apache/maven/plugins/maven-surefire-plugin/2.22.3", "Debian's libsurefire-java 2.22.3")
	requireTool(t, "/usr/share/maven-repo/junit/junit/4.x", "Debian's junit4")
	t.Parallel()
	dir := t.TempDir()
	gittest.WriteFiles(t, dir, map[string]string{
		"pom.xml": `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId><artifactId>fx</artifactId><version>1.0</version>
  <properties>
    <maven.compiler.source>17</maven.compiler.source><maven.compiler.target>17</maven.compiler.target>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies><dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.x</version><scope>test</scope></dependency></dependencies>
  <build><plugins>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>3.3.0</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.10.1</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId><version>2.22.3</version></plugin>
  </plugins></build>
</project>
`,
		"src/main/java/com/example/Calc.java":     "package com.example;\npublic class Calc { public static int add(int a, int b) { return a + b; } }\n",
		"src/test/java/com/example/CalcTest.java": "package com.example;\nimport static org.junit.Assert.assertEquals;\nimport org.junit.Ignore;\nimport org.junit.Test;\npublic class CalcTest {\n  @Test public void adds() { assertEquals(4, Calc.add(2, 2)); }\n  @Test public void wrong() { assertEquals(5, Calc.add(2, 2)); }\n  @Ignore(\"later\") @Test public void later() { }\n}\n",
		"src/test/java/com/example/MoreTest.java": "package com.example;\nimport static org.junit.Assert.assertEquals;\nimport org.junit.Test;\npublic class MoreTest {\n  @Test public void zero() { assertEquals(0, Calc.add(0, 0)); }\n}\n",
	})
	report, info := runDetected(t, dir, "", func(o *Options, s []Suite) {
		// The detected command, with Debian's repository as the local one
		// (the user's ~/.m2/repository plays this part elsewhere).
		s[0].Env = map[string]string{"MAVEN_OPTS": "-Dmaven.repo.local=/usr/share/maven-repo"}
	})
	want := artifact.Summary{Passed: 2, Failed: 1, Skipped: 1}
	if report.Status != artifact.TestCompleted || report.OverallPass || report.Summary != want {
		t.Fatalf("report %s summary %+v (error %q), want %+v (two surefire reports)\n%s", report.Status, report.Summary, report.Error, want, logOf(t, report, info))
	}

	// A compile error is the change's failure (back to codegen), not the
	// runner's.
	dir2 := t.TempDir() // a new worktree: the first run's reports are not in it
	if err := os.CopyFS(filepath.Join(dir2, "src"), os.DirFS(filepath.Join(dir, "src"))); err != nil {
		t.Fatal(err)
	}
	pom, err := os.ReadFile(filepath.Join(dir, "pom.xml"))
	if err != nil {
		t.Fatal(err)
	}
	gittest.WriteFiles(t, dir2, map[string]string{"pom.xml": string(pom), "src/main/java/com/example/Calc.java": "package com.example;\npublic class Calc { broken }\n"})
	report, info = runDetected(t, dir2, "", func(o *Options, s []Suite) {
		s[0].Env = map[string]string{"MAVEN_OPTS": "-Dmaven.repo.local=/usr/share/maven-repo"}
	})
	if report.Status != artifact.TestCompleted || report.OverallPass || report.Summary.Error == 0 {
		t.Fatalf("compile error: report %s summary %+v (error %q), want completed with an error case\n%s", report.Status, report.Summary, report.Error, logOf(t, report, info))
	}

	// A parent POM that is not in the local repository (apache/commons-cli
	// here): Maven cannot fetch it offline. A runner error that names it
	// and says how to download it once, not a failed test.
	dir3 := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir3, "src"), os.DirFS(filepath.Join(dir, "src"))); err != nil {
		t.Fatal(err)
	}
	gittest.WriteFiles(t, dir3, map[string]string{"pom.xml": strings.Replace(string(pom), "<modelVersion>4.0.0</modelVersion>",
		"<modelVersion>4.0.0</modelVersion>\n  <parent><groupId>org.apache.commons</groupId><artifactId>commons-parent</artifactId><version>104</version></parent>", 1)})
	report, info = runDetected(t, dir3, "", func(o *Options, s []Suite) {
		s[0].Env = map[string]string{"MAVEN_OPTS": "-Dmaven.repo.local=/usr/share/maven-repo"}
	})
	if report.Status != artifact.TestError || report.Summary.Failed != 0 ||
		!strings.Contains(report.Error, "the parent POM org.apache.commons:commons-parent:pom:104 of com.example:fx is not in ~/.m2/repository") ||
		!strings.Contains(report.Error, "mvn -B dependency:go-offline") {
		t.Fatalf("missing parent POM: report %s summary %+v error %q, want a runner error naming it\n%s", report.Status, report.Summary, report.Error, logOf(t, report, info))
	}
}

// gradleWrapperHash is the folder the Gradle wrapper unpacks the
// distribution of url into: the MD5 of the URL in base 36
// (org.gradle.wrapper.PathAssembler).
func gradleWrapperHash(url string) string {
	sum := md5.Sum([]byte(url))
	return new(big.Int).SetBytes(sum[:]).Text(36)
}

// A Gradle project with its wrapper in the repository, made by Debian's
// Gradle (`gradle wrapper`): ./gradlew runs offline in the sandbox with the
// distribution the user's wrapper unpacked in ~/.gradle/wrapper/dists
// (Debian's Gradle stands in for it), read-only; the counts come from
// Gradle's JUnit reports.
func TestEcosystemGradle(t *testing.T) {
	requireBwrap(t)
	requireTool(t, "/usr/share/gradle/lib", "Debian's gradle package")
	requireTool(t, "/usr/share/maven-repo/junit/junit/4.x", "Debian's junit4")
	t.Parallel()
	dir := t.TempDir()
	gittest.WriteFiles(t, dir, map[string]string{
		"build.gradle":                            "apply plugin: 'java'\nrepositories { maven { url 'file:///usr/share/maven-repo' } }\ndependencies { testCompile 'junit:junit:4.x' }\n",
		"src/main/java/com/example/Calc.java":     "package com.example;\npublic class Calc { public static int add(int a, int b) { return a + b; } }\n",
		"src/test/java/com/example/CalcTest.java": "package com.example;\nimport static org.junit.Assert.assertEquals;\nimport org.junit.Ignore;\nimport org.junit.Test;\npublic class CalcTest {\n  @Test public void adds() { assertEquals(4, Calc.add(2, 2)); }\n  @Test public void wrong() { assertEquals(5, Calc.add(2, 2)); }\n  @Ignore(\"later\") @Test public void later() { }\n}\n",
		"src/test/java/com/example/MoreTest.java": "package com.example;\nimport static org.junit.Assert.assertEquals;\nimport org.junit.Test;\npublic class MoreTest {\n  @Test public void zero() { assertEquals(0, Calc.add(0, 0)); }\n}\n",
	})
	home := t.TempDir()
	// The wrapper as a project tracks it: gradlew and gradle/wrapper/.
	gen := exec.Command("/usr/share/gradle/bin/gradle", "wrapper", "--offline", "--no-daemon", "-q")
	gen.Dir = dir
	gen.Env = append(os.Environ(), "GRADLE_USER_HOME="+filepath.Join(t.TempDir(), "gen-home"))
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("gradle wrapper: %v\n%s", err, out)
	}
	props, err := os.ReadFile(filepath.Join(dir, "gradle", "wrapper", "gradle-wrapper.properties"))
	if err != nil {
		t.Fatal(err)
	}
	var url string
	for l := range strings.Lines(string(props)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "distributionUrl="); ok {
			url = strings.ReplaceAll(v, `\:`, ":")
		}
	}
	zip := url[strings.LastIndex(url, "/")+1:]
	name := strings.TrimSuffix(zip, ".zip")
	version := strings.TrimSuffix(strings.TrimPrefix(name, "gradle-"), "-bin")
	// What ./gradlew left in the user's ~/.gradle once it had downloaded
	// and unpacked the distribution.
	dists := filepath.Join(home, ".gradle", "wrapper", "dists", name, gradleWrapperHash(url))
	if err := os.MkdirAll(dists, 0o755); err != nil {
		t.Fatal(err)
	}
	// A distribution unpacked from its zip holds its jars; Debian's links
	// them from /usr/share/java, so copy them, links followed.
	if out, err := exec.Command("cp", "-rL", "/usr/share/gradle", filepath.Join(dists, "gradle-"+version)).CombinedOutput(); err != nil {
		t.Fatalf("copy Debian's Gradle: %v\n%s", err, out)
	}
	gittest.WriteFiles(t, dists, map[string]string{zip + ".ok": ""})

	env := append(os.Environ(), "HOME="+home)
	var logs string
	report, info := runDetected(t, dir, "", func(o *Options, s []Suite) { o.Env = env; logs = o.LogDir })
	if data, err := os.ReadFile(filepath.Join(logs, "gradle-test.log")); err == nil && report.Status != artifact.TestCompleted {
		t.Logf("log:\n%s", data)
	}
	want := artifact.Summary{Passed: 2, Failed: 1, Skipped: 1}
	if report.Status != artifact.TestCompleted || report.OverallPass || report.Summary != want || report.Suites[0].Command != "./gradlew test --offline --continue --no-daemon" {
		t.Fatalf("report %s summary %+v (error %q), want %+v from ./gradlew\n%s", report.Status, report.Summary, report.Error, want, logOf(t, report, info))
	}
	if !containsNote(info.Notes, "Gradle distributions unpacked by your wrapper shown read-only to gradlew") {
		t.Errorf("notes do not say the distribution was shown: %q", info.Notes)
	}

	// Without the distribution, gradlew would have to download it: a
	// runner error that says so, not a failed test.
	if err := os.RemoveAll(filepath.Join(home, ".gradle")); err != nil {
		t.Fatal(err)
	}
	dir2 := t.TempDir()
	if err := os.CopyFS(dir2, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir2, "build")); err != nil {
		t.Fatal(err)
	}
	report, info = runDetected(t, dir2, "", func(o *Options, s []Suite) { o.Env = env })
	if report.Status != artifact.TestError || report.Summary.Failed != 0 || !strings.Contains(report.Error, "gradlew wanted to download "+zip) {
		t.Fatalf("without the distribution: report %s summary %+v error %q, want a runner error naming %s\n%s", report.Status, report.Summary, report.Error, zip, logOf(t, report, info))
	}
}

// yarn and pnpm lockfiles: the detected suite runs the test script through
// that package manager (the real one, installed by .ci/run from the npm
// registry), in the sandbox, and node's test runner is counted through it.
func TestEcosystemNodeManagers(t *testing.T) {
	requireBwrap(t)
	requireTool(t, "node", "Node's test runner")
	for _, tc := range []struct{ manager, lockfile, content string }{
		{"yarn", "yarn.lock", "# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.\n# yarn lockfile v1\n\n\n"},
		{"pnpm", "pnpm-lock.yaml", "lockfileVersion: '9.0'\n\nsettings:\n  autoInstallPeers: true\n  excludeLinksFromLockfile: false\n\nimporters:\n\n  .: {}\n"},
	} {
		t.Run(tc.manager, func(t *testing.T) {
			requireTool(t, tc.manager, tc.manager+" from the npm registry")
			t.Parallel()
			dir := t.TempDir()
			gittest.WriteFiles(t, dir, map[string]string{
				"package.json": `{"name":"fx","version":"1.0.0","type":"module","scripts":{"test":"node --test"}}`,
				tc.lockfile:    tc.content,
				"fx.js":        "export const add = (a, b) => a + b;\n",
				"test/fx.test.js": "import { test } from 'node:test';\nimport assert from 'node:assert';\nimport { add } from '../fx.js';\n" +
					"test('adds', () => assert.strictEqual(add(1, 2), 3));\ntest('wrong', () => assert.strictEqual(add(1, 2), 4));\ntest('zero', () => assert.strictEqual(add(0, 0), 0));\ntest.skip('later', () => {});\n",
			})
			report, info := runDetected(t, dir, "", nil)
			want := artifact.Summary{Passed: 2, Failed: 1, Skipped: 1}
			if report.Status != artifact.TestCompleted || report.OverallPass || report.Summary != want || report.Suites[0].Command != tc.manager+" test" {
				t.Fatalf("report %s summary %+v (error %q), want %+v from %s test\n%s", report.Status, report.Summary, report.Error, want, tc.manager, logOf(t, report, info))
			}
		})
	}
}

// pnpm -r test stops at its first failing member: the real pnpm, in the
// sandbox, on a workspace whose first member fails; the report's notes
// say the run stopped there and how to run every member (which of the
// others started depends on pnpm's timing, so the test asks for the
// note, not for their names).
func TestEcosystemPnpmRecursiveBail(t *testing.T) {
	requireBwrap(t)
	requireTool(t, "node", "Node's test runner")
	requireTool(t, "pnpm", "pnpm from the npm registry")
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"package.json":        `{"name":"root","private":true,"scripts":{"test":"pnpm -r --workspace-concurrency=1 test"}}`,
		"pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n",
		"pnpm-lock.yaml":      "lockfileVersion: '9.0'\n\nsettings:\n  autoInstallPeers: true\n  excludeLinksFromLockfile: false\n\nimporters:\n\n  .: {}\n\n  packages/a: {}\n\n  packages/b: {}\n\n  packages/c: {}\n",
	}
	for _, m := range []string{"a", "b", "c"} {
		want := "1"
		if m == "a" {
			want = "2"
		}
		files["packages/"+m+"/package.json"] = `{"name":"@w/` + m + `","version":"1.0.0","scripts":{"test":"node --test"}}`
		files["packages/"+m+"/test/x.test.mjs"] = "import test from 'node:test';\nimport assert from 'node:assert';\ntest('" + m + "', () => assert.strictEqual(1, " + want + "));\n"
	}
	gittest.WriteFiles(t, dir, files)
	report, info := runDetected(t, dir, "", nil)
	notes := strings.Join(info.Notes, "\n")
	if report.Status != artifact.TestCompleted || report.OverallPass || report.Summary.Failed == 0 ||
		!strings.Contains(notes, "pnpm's recursive run stopped at its first failing member (@w/a@1.0.0, script test)") || !strings.Contains(notes, "pnpm -r --no-bail test") {
		t.Fatalf("report %s summary %+v (error %q), want a failure and the note of pnpm's stop at @w/a\n%s", report.Status, report.Summary, report.Error, logOf(t, report, info))
	}
}

// A justfile's test recipe, when nothing else runs the tests: just test
// (the real just, from the npm registry's rust-just), judged by its exit
// code; a recipe whose tool is missing is a runner error.
func TestEcosystemJust(t *testing.T) {
	requireBwrap(t)
	requireTool(t, "just", "just (npm's rust-just)")
	t.Parallel()
	for _, tc := range []struct {
		name, recipe string
		status       string
		summary      artifact.Summary
		msg          string
	}{
		{"passing", "test:\n    sh -c 'test \"$(cat VERSION)\" = 1'\n", artifact.TestCompleted, artifact.Summary{Passed: 1}, ""},
		{"failing", "test:\n    sh -c 'test \"$(cat VERSION)\" = 2'\n", artifact.TestCompleted, artifact.Summary{Failed: 1}, ""},
		{"a missing tool", "test:\n    no-such-test-tool-xyz --all\n", artifact.TestError, artifact.Summary{Error: 1}, "not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			gittest.WriteFiles(t, dir, map[string]string{"justfile": "# the project's tasks\nversion := \"1\"\n\n" + tc.recipe, "VERSION": "1\n"})
			report, info := runDetected(t, dir, "", nil)
			if report.Status != tc.status || report.Summary != tc.summary || report.Suites[0].Command != "just test" || !strings.Contains(report.Error, tc.msg) {
				t.Fatalf("report %s summary %+v (error %q), want %s %+v from just test\n%s", report.Status, report.Summary, report.Error, tc.status, tc.summary, logOf(t, report, info))
			}
			if tc.status == artifact.TestCompleted && report.Suites[0].JudgedBy != artifact.JudgedByExitCode {
				t.Errorf("just test not judged by its exit code: %+v", report.Suites[0])
			}
		})
	}
}

// A project whose declared runner is unittest (tox.ini, like
// more-itertools) and whose load_tests adds doctests: orch runs unittest,
// counts the doctests, fails the run when only a doctest breaks, and
// calls a test module that does not import a runner error. (On
// more-itertools itself: 901 tests, 165 of them doctests, by hand and by
// orch; one broken doctest: 900 passed, 1 failed.)
func TestEcosystemUnittest(t *testing.T) {
	requireBwrap(t)
	requireTool(t, "/usr/bin/python3", "Debian's python3")
	t.Parallel()
	project := map[string]string{
		"pyproject.toml":     "[project]\nname = \"calc\"\n",
		"tox.ini":            "[tox]\nenvlist = py311\n\n[testenv]\ncommands = {envpython} -m unittest -v {posargs}\n",
		"calc.py":            "def add(a, b):\n    \"\"\"\n    >>> add(1, 2)\n    3\n    \"\"\"\n    return a + b\n\n\ndef mul(a, b):\n    \"\"\"\n    >>> mul(2, 3)\n    6\n    \"\"\"\n    return a * b\n",
		"tests/__init__.py":  "",
		"tests/test_calc.py": "import doctest\nimport unittest\n\nimport calc\n\n\ndef load_tests(loader, tests, ignore):\n    tests.addTests(doctest.DocTestSuite(calc))\n    return tests\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(1, 1), 2)\n\n    @unittest.skip('later')\n    def test_later(self):\n        pass\n",
	}
	run := func(t *testing.T, change map[string]string) (artifact.TestReport, RunInfo) {
		dir := t.TempDir()
		gittest.WriteFiles(t, dir, project)
		gittest.WriteFiles(t, dir, change)
		return runDetected(t, dir, "", func(o *Options, s []Suite) {
			o.Env = append(os.Environ(), "PATH=/usr/bin:/bin")
			if len(s) != 1 || s[0].Format != FormatUnittest {
				t.Fatalf("detected %+v, want one unittest suite", s)
			}
		})
	}
	t.Run("doctests counted", func(t *testing.T) {
		t.Parallel()
		report, info := run(t, nil)
		if report.Status != artifact.TestCompleted || !report.OverallPass || report.Summary != (artifact.Summary{Passed: 3, Skipped: 1}) {
			t.Fatalf("report %s pass %v summary %+v (error %q), want 3 passed (two doctests) 1 skipped\n%s", report.Status, report.OverallPass, report.Summary, report.Error, logOf(t, report, info))
		}
	})
	t.Run("a broken doctest fails the run", func(t *testing.T) {
		t.Parallel()
		report, info := run(t, map[string]string{"calc.py": strings.Replace(project["calc.py"], "return a * b", "return a * b + 1", 1)})
		if report.Status != artifact.TestCompleted || report.OverallPass || report.Summary != (artifact.Summary{Passed: 2, Failed: 1, Skipped: 1}) {
			t.Fatalf("report %s pass %v summary %+v (error %q), want 2 passed 1 failed 1 skipped\n%s", report.Status, report.OverallPass, report.Summary, report.Error, logOf(t, report, info))
		}
		if c := report.Suites[0].Cases; len(c) != 1 || c[0].Name != "mul (calc)" || !strings.Contains(c[0].Output, "Expected:\n    6\nGot:\n    7") {
			t.Errorf("cases %+v, want the failing doctest mul with its report", c)
		}
	})
	t.Run("a test that raises counts once", func(t *testing.T) {
		// Python-Markdown without its package installed: unittest said
		// errors=362 and orch counted 724, the summary's and the cases'.
		t.Parallel()
		report, info := run(t, map[string]string{"tests/test_boom.py": "import unittest\n\n\nclass B(unittest.TestCase):\n    def test_boom(self):\n        {}['k']\n"})
		if report.Status != artifact.TestCompleted || report.OverallPass || report.Summary != (artifact.Summary{Passed: 3, Skipped: 1, Error: 1}) {
			t.Fatalf("report %s pass %v summary %+v (error %q), want 3 passed 1 skipped 1 error\n%s", report.Status, report.OverallPass, report.Summary, report.Error, logOf(t, report, info))
		}
	})
	t.Run("a test module that does not import is a runner error", func(t *testing.T) {
		t.Parallel()
		report, info := run(t, map[string]string{"tests/test_more.py": "import missingpkg\n"})
		if report.Status != artifact.TestError || !strings.Contains(report.Error, "tests.test_more: ModuleNotFoundError: No module named 'missingpkg'") {
			t.Fatalf("report %s error %q, want a collection error naming the module\n%s", report.Status, report.Error, logOf(t, report, info))
		}
	})
	t.Run("unittest that cannot start is a runner error", func(t *testing.T) {
		t.Parallel()
		report, info := run(t, map[string]string{"tox.ini": "[testenv]\ncommands = python -m unittest discover -s nosuchdir\n"})
		if report.Status != artifact.TestError || !strings.Contains(report.Error, "python -m unittest exited with status 1 before running any test") || report.Summary.Failed != 0 {
			t.Fatalf("report %s summary %+v error %q, want a runner error\n%s", report.Status, report.Summary, report.Error, logOf(t, report, info))
		}
		if !strings.Contains(report.Error, "python3 -m unittest discover -s nosuchdir") {
			t.Errorf("error %q does not say the command to reproduce", report.Error)
		}
	})
}

// An npm workspace without a root test script whose members run Mocha and
// Vitest (installed from the npm registry into testdata/jsrunners by
// .ci/run's npm ci, the user's node_modules here): each member is a suite
// in its folder, counted exactly from the runner's summary, with its
// failing tests named. (Tried on jshttp/mime-types, Mocha: 47 passing by
// hand and by orch, 46 and 1 failing with one assertion broken; on
// unjs/defu, Vitest 4 after lint and tsgo in one pnpm script: 23, then 22
// passed and 1 failed.)
func TestEcosystemMochaVitestWorkspace(t *testing.T) {
	requireBwrap(t)
	requireTool(t, "npm", "npm test")
	deps, err := filepath.Abs(filepath.Join("testdata", "jsrunners"))
	if err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{"mocha", "vitest"} {
		requireTool(t, filepath.Join(deps, "node_modules", ".bin", bin), "npm ci in internal/testrun/testdata/jsrunners")
	}
	t.Parallel()
	dir := t.TempDir()
	gittest.WriteFiles(t, dir, map[string]string{
		"package.json":               `{"name":"ws","private":true,"workspaces":["packages/*"]}`,
		"packages/m/package.json":    `{"name":"m","version":"1.0.0","scripts":{"test":"mocha"}}`,
		"packages/m/test/a.test.js":  "const assert = require('assert');\ndescribe('math', () => {\n  it('adds', () => assert.strictEqual(1 + 1, 2));\n  it('fails', () => assert.strictEqual(1 + 1, 3));\n  it.skip('later', () => {});\n  describe('nested', () => { it('deep', () => {}); });\n});\n",
		"packages/v/package.json":    `{"name":"v","version":"1.0.0","type":"module","scripts":{"test":"vitest run"}}`,
		"packages/v/a.test.js":       "import { describe, it, expect } from 'vitest';\ndescribe('v', () => {\n  it('adds', () => expect(1 + 1).toBe(2));\n  it('breaks', () => expect(1 + 1).toBe(3));\n  it.skip('later', () => {});\n  it.todo('some day');\n});\n",
		"packages/v/b.test.js":       "import { test } from 'vitest';\ntest('second file', () => {});\n",
		"packages/docs/package.json": `{"name":"docs","version":"1.0.0"}`,
	})
	report, info := runDetected(t, dir, deps, nil)
	if report.Status != artifact.TestCompleted || report.OverallPass || report.Summary != (artifact.Summary{Passed: 4, Failed: 2, Skipped: 3}) {
		t.Fatalf("report %s pass %v summary %+v (error %q), want 4 passed 2 failed 3 skipped\n%s", report.Status, report.OverallPass, report.Summary, report.Error, logOf(t, report, info))
	}
	want := map[string]struct {
		sum     artifact.Summary
		command string
		failing string
	}{
		"npm-test-packages-m": {artifact.Summary{Passed: 2, Failed: 1, Skipped: 1}, "cd packages/m && npm test", "math > fails"},
		"npm-test-packages-v": {artifact.Summary{Passed: 2, Failed: 1, Skipped: 2}, "cd packages/v && npm test", "a.test.js > v > breaks"},
	}
	if len(report.Suites) != len(want) {
		t.Fatalf("%d suites, want %d\n%s", len(report.Suites), len(want), logOf(t, report, info))
	}
	for _, s := range report.Suites {
		w, ok := want[s.ID]
		if !ok || s.Summary != w.sum || s.Command != w.command || s.JudgedBy != "" {
			t.Errorf("suite %s: %+v %q judged %q, want %+v", s.ID, s.Summary, s.Command, s.JudgedBy, w)
			continue
		}
		if !slices.ContainsFunc(s.Cases, func(c artifact.Case) bool { return c.Name == w.failing && c.Status == "fail" }) {
			t.Errorf("suite %s cases %+v lack the failing %q", s.ID, s.Cases, w.failing)
		}
	}
}

// A cargo workspace whose root is also a package: cargo test without
// --workspace tests the root alone and says "ok" while a member's test
// fails; orch runs every member (unit, integration and doc tests) and
// names each binary with its crate.
func TestEcosystemRustWorkspace(t *testing.T) {
	requireBwrap(t)
	requireTool(t, "cargo", "cargo test")
	t.Parallel()
	dir := t.TempDir()
	gittest.WriteFiles(t, dir, map[string]string{
		"Cargo.toml":              "[package]\nname = \"root\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\nmembers = [\"crates/*\"]\n\n[dependencies]\nalpha = { path = \"crates/alpha\" }\n",
		"src/lib.rs":              "/// ```\n/// assert_eq!(root::twice(2), 4);\n/// ```\npub fn twice(x: i32) -> i32 { alpha::add(x, x) }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() { assert_eq!(super::twice(1), 2); }\n}\n",
		"crates/alpha/Cargo.toml": "[package]\nname = \"alpha\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"crates/alpha/src/lib.rs": "/// ```\n/// assert_eq!(alpha::add(1, 2), 3);\n/// ```\npub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(1, 1), 2); }\n    #[test]\n    #[ignore]\n    fn slow() {}\n}\n",
		"crates/beta/Cargo.toml":  "[package]\nname = \"beta\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"crates/beta/src/lib.rs":  "pub fn neg(a: i32) -> i32 { -a }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() { assert_eq!(super::neg(1), -1); }\n}\n",
		"crates/beta/tests/it.rs": "#[test]\nfn broken() { assert_eq!(beta::neg(1), 1, \"beta is broken\"); }\n",
	})
	report, info := runDetected(t, dir, "", nil)
	// root: 1 unit + 1 doc; alpha: 1 unit (+1 ignored) + 1 doc; beta: 1
	// unit, and the failing integration test.
	want := artifact.Summary{Passed: 5, Failed: 1, Skipped: 1}
	if report.Status != artifact.TestCompleted || report.OverallPass || report.Summary != want {
		t.Fatalf("report %s summary %+v (error %q), want %+v\n%s", report.Status, report.Summary, report.Error, want, logOf(t, report, info))
	}
	var pkgs []string
	for _, c := range report.Suites[0].Cases {
		if !slices.Contains(pkgs, c.Package) {
			pkgs = append(pkgs, c.Package)
		}
	}
	for _, p := range []string{"unittests src/lib.rs (alpha)", "unittests src/lib.rs (beta)", "tests/it.rs (it)", "unittests src/lib.rs (root)", "Doc-tests alpha", "Doc-tests root"} {
		if !slices.Contains(pkgs, p) {
			t.Errorf("binaries %q lack %q", pkgs, p)
		}
	}
}

// A repository of several Python packages and none at the top: each is a
// suite in its folder, with its own declared runner, and a test broken in
// one fails the run.
func TestEcosystemPythonPackages(t *testing.T) {
	requireBwrap(t)
	requireTool(t, "/usr/bin/python3", "Debian's python3")
	t.Parallel()
	dir := t.TempDir()
	gittest.WriteFiles(t, dir, map[string]string{
		"README.md":                "two packages\n",
		"pkgs/a/tox.ini":           "[testenv]\ncommands = python -m unittest discover -s tests\n",
		"pkgs/a/a.py":              "def one():\n    return 1\n",
		"pkgs/a/tests/test_a.py":   "import unittest\n\nimport a\n\n\nclass T(unittest.TestCase):\n    def test_one(self):\n        self.assertEqual(a.one(), 1)\n\n    def test_two(self):\n        self.assertEqual(a.one() + 1, 2)\n",
		"pkgs/b/pyproject.toml":    "[project]\nname = \"b\"\n",
		"pkgs/b/src/b/__init__.py": "def neg(x):\n    \"\"\"\n    >>> neg(1)\n    -1\n    \"\"\"\n    return -x\n",
		"pkgs/b/tests/__init__.py": "",
		"pkgs/b/tests/test_b.py":   "import doctest\nimport unittest\n\nimport b\n\n\ndef load_tests(loader, tests, ignore):\n    tests.addTests(doctest.DocTestSuite(b))\n    return tests\n\n\nclass T(unittest.TestCase):\n    def test_neg(self):\n        self.assertEqual(b.neg(2), 3)\n",
	})
	report, info := runDetected(t, dir, "", func(o *Options, s []Suite) {
		o.Env = append(os.Environ(), "PATH=/usr/bin:/bin")
	})
	if report.Status != artifact.TestCompleted || report.OverallPass || report.Summary != (artifact.Summary{Passed: 3, Failed: 1}) {
		t.Fatalf("report %s pass %v summary %+v (error %q), want 3 passed 1 failed\n%s", report.Status, report.OverallPass, report.Summary, report.Error, logOf(t, report, info))
	}
	got := map[string]string{}
	for _, s := range report.Suites {
		got[s.ID] = fmt.Sprintf("%s: %d passed %d failed", s.Command, s.Summary.Passed, s.Summary.Failed)
	}
	want := map[string]string{
		"unittest-pkgs-a": "cd pkgs/a && python3 -m unittest discover -s tests: 2 passed 0 failed",
		"unittest-pkgs-b": "cd pkgs/b && python3 -m unittest: 1 passed 1 failed",
	}
	if !maps.Equal(got, want) {
		t.Errorf("suites %q, want %q", got, want)
	}
}
