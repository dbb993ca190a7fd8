package testphase

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/sandbox"
)

// The attacks of docs/sandbox.md ("What a run sees", "What a run
// writes") through orch test's own path (RunPatch), as root and as a
// normal user, with repositories inside and outside $HOME.
const (
	// isolationUser is the uid TestIsolation runs itself again as.
	isolationUser = 54321
	// isolationChildEnv marks the run as that user.
	isolationChildEnv = "ORCH_ISOLATION_CHILD"
	// otherHomeEnv names a secret file in another user's home (made by
	// the root run).
	otherHomeEnv = "ORCH_ISOLATION_OTHER_HOME"
	// otherHomeSecret is its content.
	otherHomeSecret = "orch-isolation-secret-of-another-user"
)

func TestIsolation(t *testing.T) {
	if _, err := sandbox.Available(); err != nil {
		if os.Getenv("ORCH_REQUIRE_BWRAP") == "1" || os.Getenv("CI") != "" {
			t.Fatalf("ORCH_REQUIRE_BWRAP=1 or CI is set, but bwrap is unavailable (.ci/run installs bubblewrap): %v", err)
		}
		t.Skipf("bwrap sandbox unavailable: %v", err)
	}
	if os.Getenv(isolationChildEnv) != "" || os.Geteuid() != 0 {
		isolationCases(t)
		return
	}
	// As root: a file in another user's home, readable by everyone, that
	// no suite may see.
	other, err := os.MkdirTemp("/home", "orch-isolation-other-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(other) })
	if err := os.Chmod(other, 0o755); err != nil {
		t.Fatal(err)
	}
	otherFile := filepath.Join(other, ".env")
	if err := os.WriteFile(otherFile, []byte(otherHomeSecret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(otherHomeEnv, otherFile)
	t.Run("as root", isolationCases)
	t.Run("as a normal user", func(t *testing.T) { runAsIsolationUser(t, otherFile) })
}

// runAsIsolationUser runs TestIsolation again as isolationUser, from a
// copy of the test binary, with a home of its own outside /tmp.
func runAsIsolationUser(t *testing.T, otherFile string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/var/tmp", "orch-isolation-user-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	home := filepath.Join(dir, "home")
	bin := filepath.Join(dir, "testphase.test")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, home} {
		if err := os.Chown(p, isolationUser, isolationUser); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^TestIsolation$", "-test.v", "-test.count=1")
	cmd.Dir = home
	cmd.Env = append(slices.Clone(gittest.Identity), "ORCH_SLOW_TESTS="+os.Getenv("ORCH_SLOW_TESTS"), "CI="+os.Getenv("CI"), "PATH="+os.Getenv("PATH"), "HOME="+home, "LANG=C", "ORCH_REQUIRE_BWRAP=1",
		isolationChildEnv+"=1", otherHomeEnv+"="+otherFile, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(home, "gitconfig"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: isolationUser, Gid: isolationUser, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestIsolation")) {
		t.Fatalf("as uid %d: %v\n%s", isolationUser, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "--- ") {
			t.Logf("as uid %d: %s", isolationUser, strings.TrimSpace(line))
		}
	}
}

// isolationCases are the attacks, as whoever runs the test.
func isolationCases(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	// orch's caches (the warm worktree, the shared go build cache) go to
	// a folder of this test, inside the home.
	cacheHome := isolationDir(t, home, ".orch-isolation-cache-")
	t.Setenv("XDG_CACHE_HOME", cacheHome)
	inside := isolationDir(t, home, ".orch-isolation-")
	outside := isolationDir(t, "/var/tmp", "orch-isolation-")
	t.Run("secrets, repository inside $HOME", func(t *testing.T) { secretsCase(t, inside) })
	t.Run("secrets, repository outside $HOME", func(t *testing.T) { secretsCase(t, outside) })
	t.Run("go cache poisoning, repository A inside $HOME, B outside", func(t *testing.T) { poisonCase(t, inside, outside) })
	t.Run("writes are bounded", func(t *testing.T) { writeLimitCase(t, outside) })
}

// isolationDir makes a folder in parent, removed after the test.
func isolationDir(t *testing.T, parent, pattern string) string {
	t.Helper()
	d, err := os.MkdirTemp(parent, pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if d, err = filepath.EvalSymlinks(d); err != nil {
		t.Fatal(err)
	}
	return d
}

// isolationRepo makes a repository at dir with files, committed.
func isolationRepo(t *testing.T, dir string, files map[string]string) (*gitx.Repo, string) {
	t.Helper()
	gittest.WriteFiles(t, dir, files)
	gittest.Git(t, dir, "init", "-q")
	head := gittest.CommitAll(t, dir, "base")
	repo, err := gitx.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo, head
}

// isolationRun runs suites as orch test does, in the sandbox mode given,
// and returns the report and the text of its logs.
func isolationRun(t *testing.T, repo *gitx.Repo, base, mode string, suites ...config.Suite) (Report, string) {
	t.Helper()
	cfg := config.Default()
	cfg.Test.Suites = suites
	logDir := t.TempDir()
	rep, err := RunPatch(context.Background(), repo, cfg, "iso", base, nil, logDir, Options{Sandbox: mode})
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	_ = filepath.WalkDir(logDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			logs.Write(data)
		}
		return nil
	})
	return rep, logs.String()
}

func suite(name string, argv ...string) config.Suite {
	return config.Suite{Name: name, Kind: "test", Command: argv, Timeout: config.Duration(5 * time.Minute)}
}

// secretsCase: a suite tries to read the user's untracked .env, the
// repository's .orch/config.toml, another task's artifacts, a remote's
// token in .git/config, another repository's .env and a file in another
// user's home. Without the
// sandbox (the control) it reads each; in it, none.
func secretsCase(t *testing.T, base string) {
	tok := make([]byte, 6)
	_, _ = rand.Read(tok)
	token := hex.EncodeToString(tok)
	dir := filepath.Join(base, "repo-"+token)
	repo, head := isolationRepo(t, dir, map[string]string{"README": "a repository\n", ".gitignore": ".env\n.orch/\n"})
	secrets := map[string]string{
		filepath.Join(dir, ".env"):                                          token + "-untracked-env",
		filepath.Join(dir, ".orch", "config.toml"):                          "# " + token + "-orch-config",
		filepath.Join(dir, ".orch", "tasks", "other", "code", "diff.patch"): token + "-other-task",
		filepath.Join(base, "other-repo-"+token, ".env"):                    token + "-other-repo",
	}
	for p, content := range secrets {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A remote whose URL holds a token, in the repository's .git/config
	// (git needs the repository's .git, shown read-only).
	gittest.Git(t, dir, "remote", "add", "origin", "https://alice:"+token+"-git-remote@git.example.com/r.git")
	secrets[filepath.Join(dir, ".git", "config")] = token + "-git-remote"
	if other := os.Getenv(otherHomeEnv); other != "" {
		secrets[other] = otherHomeSecret
	}
	var script strings.Builder
	for p := range secrets {
		script.WriteString("cat '" + p + "' 2>&1; ")
	}
	script.WriteString("ls -la / /home 2>&1; exit 0")
	peek := suite("peek", "sh", "-c", script.String())

	_, logs := isolationRun(t, repo, head, "none", peek)
	for p, secret := range secrets {
		if !strings.Contains(logs, secret) && !strings.HasPrefix(p, "/home/") {
			t.Fatalf("control: without the sandbox the suite could not read %s: the probe proves nothing\n%s", p, logs)
		}
	}
	rep, logs := isolationRun(t, repo, head, "bwrap", peek)
	if rep.Status != artifact.TestCompleted || rep.Sandbox != "bwrap" {
		t.Fatalf("report %s sandbox %q: %s\n%s", rep.Status, rep.Sandbox, rep.Error, logs)
	}
	for p, secret := range secrets {
		if strings.Contains(logs, secret) {
			t.Errorf("the suite read %s in the sandbox", p)
		}
	}
	if t.Failed() {
		t.Logf("log:\n%s", logs)
	}
}

// poisonScript rewrites the go build cache's entry of package testing to
// point at a build of it in which no test can fail, as a suite of
// repository A once did to orch's shared GOCACHE. It says how many
// entries it rewrote and fails when it found none (then it proves
// nothing).
const poisonScript = `set -e
goroot=$(go env GOROOT)
work=$(mktemp -d)
sed 's/c.failed = true/c.failed = false/' "$goroot/src/testing/testing.go" > "$work/testing.go"
printf '{"Replace":{"%s":"%s"}}' "$goroot/src/testing/testing.go" "$work/testing.go" > "$work/overlay.json"
real=$(go list -export -f '{{.Export}}' testing)
evil=$(go list -overlay="$work/overlay.json" -export -f '{{.Export}}' testing)
realid=$(basename "$real" | sed 's/-d$//'); evilid=$(basename "$evil" | sed 's/-d$//')
size=$(stat -c %s "$evil")
n=0
for f in $(grep -rl "$realid" "$GOCACHE" --include='*-a'); do
	read -r v action out osize t < "$f"
	printf 'v1 %s %s %20d %20d\n' "$action" "$evilid" "$size" "$t" > "$f"
	n=$((n+1))
done
echo "poisoned $n cache entries of package testing"
test "$n" -gt 0
`

// poisonCase: repository A's suite poisons the go build cache it is
// given; repository B's always-failing test must still fail.
func poisonCase(t *testing.T, baseA, baseB string) {
	if os.Getenv("ORCH_SLOW_TESTS") != "1" && os.Getenv("CI") == "" {
		t.Skip("compiles package testing three times (about a minute): set ORCH_SLOW_TESTS=1 (CI does)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("go is not on PATH: %v", err)
	}
	repoA, headA := isolationRepo(t, filepath.Join(baseA, "repo-a"), map[string]string{
		"go.mod":    "module a\n\ngo 1.21\n",
		"poison.sh": poisonScript,
		"a_test.go": "package a\n\nimport (\n\t\"os/exec\"\n\t\"testing\"\n)\n\nfunc TestPoison(t *testing.T) {\n\tout, err := exec.Command(\"sh\", \"poison.sh\").CombinedOutput()\n\tt.Logf(\"%s\", out)\n\tif err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n",
	})
	repA, logsA := isolationRun(t, repoA, headA, "bwrap", suite("go", "go", "test", "-count=1", "-v", "./..."))
	if !repA.OverallPass || !strings.Contains(logsA, "poisoned ") {
		t.Fatalf("repository A's suite did not poison its cache (report %s, %s): the attack proves nothing\n%s", repA.Status, repA.Error, logsA)
	}
	repoB, headB := isolationRepo(t, filepath.Join(baseB, "repo-b"), map[string]string{
		"go.mod":    "module b\n\ngo 1.21\n",
		"b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestAlwaysFails(t *testing.T) { t.Fatal(\"always fails\") }\n",
	})
	repB, logsB := isolationRun(t, repoB, headB, "bwrap", suite("go", "go", "test", "-count=1", "./..."))
	if repB.Status != artifact.TestCompleted || repB.OverallPass || repB.Summary.Failed == 0 {
		t.Fatalf("repository B's always-failing test after A poisoned the cache: report %s pass %v summary %+v (%s)\n%s", repB.Status, repB.OverallPass, repB.Summary, repB.Error, logsB)
	}
}

// writeLimitCase: a suite that writes 3 GiB (the default bound is 2 GiB),
// in the worktree, /tmp, /dev/shm or /run, ends the run with status error naming
// [test] max_write, not with failed tests; nothing of it reaches the disk.
func writeLimitCase(t *testing.T, base string) {
	repo, head := isolationRepo(t, filepath.Join(base, "repo-w"), map[string]string{"README": "w\n"})
	rep, logs := isolationRun(t, repo, head, "bwrap",
		suite("fill-worktree", "fallocate", "-l", "3G", "big"),
		suite("fill-tmp", "fallocate", "-l", "3G", "/tmp/big"),
		suite("fill-shm", "fallocate", "-l", "3G", "/dev/shm/big"),
		suite("fill-run", "fallocate", "-l", "3G", "/run/big"))
	if rep.Status != artifact.TestError || rep.OverallPass {
		t.Fatalf("report %s pass %v, want error\n%s", rep.Status, rep.OverallPass, logs)
	}
	for _, s := range rep.Suites {
		if len(s.Cases) != 1 || s.Cases[0].Name != "[write limit]" || !strings.Contains(s.Cases[0].Message, "max_write = 2 GiB") {
			t.Errorf("suite %s: cases %+v, want the write limit named", s.ID, s.Cases)
		}
	}
	if !strings.Contains(rep.Error, "[test] max_write = 2 GiB in .orch/config.toml") {
		t.Errorf("report error %q does not name the setting", rep.Error)
	}
}
