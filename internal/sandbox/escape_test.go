package sandbox

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/gittest"
)

// requireBwrap skips the test when bwrap does not work here, or fails it
// when ORCH_REQUIRE_BWRAP=1 says the sandbox must be tested.
func requireBwrap(t *testing.T) {
	t.Helper()
	if _, err := Available(); err != nil {
		if os.Getenv("ORCH_REQUIRE_BWRAP") == "1" || os.Getenv("CI") != "" {
			t.Fatalf("ORCH_REQUIRE_BWRAP=1 or CI is set, but the bwrap sandbox is unavailable (.ci/run installs bubblewrap): %v", err)
		}
		t.Skipf("bwrap sandbox unavailable (set ORCH_REQUIRE_BWRAP=1 to make this a failure): %v", err)
	}
}

// rootEscapeScript is what a suite tried as root against orch's first
// sandbox: remount the repository's .git and / writable, unmount the
// private /tmp and the hidden home, then plant a hook, change the config,
// write the host's /tmp and root file system, read /etc/shadow and
// /root/.ssh. Each probe records name=yes when its command succeeded,
// name=no otherwise, in results.txt in the directory.
const rootEscapeScript = `r=results.txt
: > $r
probe() { if ( eval "$2" ) >/dev/null 2>&1; then echo "$1=yes" >> $r; else echo "$1=no" >> $r; fi; }
probe git-status 'git status --porcelain && git log -1 --format=%H'
probe dir-write 'echo x > inside.txt'
probe uid0 '[ "$(id -u)" = 0 ]'
probe caps '! grep -q "^CapEff:[[:space:]]*0000000000000000$" /proc/self/status'
probe remount-git 'mount -o remount,bind,rw "$MAIN_GIT"'
probe hook-write 'printf "#!/bin/sh\necho planted\n" > "$MAIN_GIT/hooks/pre-commit"'
probe config-write 'printf "[core]\n\thooksPath = /planted\n" >> "$MAIN_GIT/config"'
probe remount-root 'mount -o remount,bind,rw /'
probe root-write 'echo planted > "$ROOT_FILE"'
probe umount-tmp 'umount -l /tmp'
probe host-tmp-write 'echo planted > "$HOST_TMP_FILE"'
probe shadow-read 'head -c 1 /etc/shadow | grep -q .'
probe root-ssh-read 'umount -l /root 2>/dev/null; grep -q seeded-root-secret "$ROOT_SSH_SEED"'
probe userns 'unshare -U true'
`

// rootProbes are the probes of rootEscapeScript and whether the sandbox
// lets each work (git and the directory are the suite's).
var rootProbes = []struct {
	name  string
	works bool
}{
	{"git-status", true}, {"dir-write", true},
	{"uid0", false}, {"caps", false},
	{"remount-git", false}, {"hook-write", false}, {"config-write", false},
	{"remount-root", false}, {"root-write", false},
	{"umount-tmp", false}, {"host-tmp-write", false},
	{"shadow-read", false}, {"root-ssh-read", false},
	{"userns", false}, // where the sandbox can forbid them (forbidsUserns)
}

// forbidsUserns reports whether the sandbox here keeps suites from making
// user namespaces.
func forbidsUserns(t *testing.T) bool {
	h, err := currentHost()
	if err != nil {
		t.Fatal(err)
	}
	if h.root {
		return h.nested
	}
	return h.disableUserns && !h.setuid
}

// escapeFixture is a main repository below the real home (hidden like a
// real one), a linked worktree of it elsewhere for the suite, files on the
// host the suite must not reach, and a seeded secret in ~/.ssh.
type escapeFixture struct {
	mainGit, worktree   string
	rootFile, hostTmp   string // must not appear
	sshSeed             string // must not be read
	config, link, shSum []byte
}

func newEscapeFixture(t *testing.T, home string) escapeFixture {
	t.Helper()
	tok := make([]byte, 6)
	_, _ = rand.Read(tok)
	token := hex.EncodeToString(tok)
	base, err := os.MkdirTemp(home, ".orch-sandbox-escape-")
	if err != nil {
		t.Fatalf("cannot create a folder in the home %s: %v", home, err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	main := filepath.Join(base, "main")
	gittest.WriteFiles(t, main, map[string]string{"a.txt": "a\n"})
	gittest.Git(t, main, "init", "-q")
	gittest.CommitAll(t, main, "base")
	wt := gittest.AddWorktree(t, main)
	f := escapeFixture{
		mainGit:  filepath.Join(main, ".git"),
		worktree: wt,
		rootFile: "/var/tmp/orch-escape-" + token,
		hostTmp:  "/tmp/orch-escape-" + token,
	}
	t.Cleanup(func() { os.Remove(f.rootFile); os.Remove(f.hostTmp) })
	// The seeded secret lies in the real ~/.ssh of the user running the
	// test (root's /root/.ssh in CI).
	sshDir := filepath.Join(home, ".ssh")
	if _, err := os.Stat(sshDir); errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(sshDir, 0o700); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(sshDir) })
	}
	f.sshSeed = filepath.Join(sshDir, "orch-escape-seed-"+token)
	if err := os.WriteFile(f.sshSeed, []byte("seeded-root-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(f.sshSeed) })
	f.config = []byte(gittest.ReadFile(t, filepath.Join(f.mainGit, "config")))
	f.link = []byte(gittest.ReadFile(t, filepath.Join(wt, ".git")))
	return f
}

// effects says, per probe, whether it worked: from what reached the host
// for writes, from the suite's own record for the rest.
func (f escapeFixture) effects(results map[string]string, worktree string) map[string]bool {
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	config, _ := os.ReadFile(filepath.Join(f.mainGit, "config"))
	got := map[string]bool{}
	for k, v := range results {
		got[k] = v == "yes"
	}
	got["dir-write"] = exists(filepath.Join(worktree, "inside.txt"))
	got["hook-write"] = exists(filepath.Join(f.mainGit, "hooks", "pre-commit"))
	got["config-write"] = !bytes.Equal(config, f.config)
	got["root-write"] = exists(f.rootFile)
	got["host-tmp-write"] = exists(f.hostTmp)
	return got
}

// runEscape runs rootEscapeScript in a sandbox of the fixture (weakened to
// orch's first configuration with weak) and returns what worked.
func runEscape(t *testing.T, f escapeFixture, weak bool) map[string]bool {
	t.Helper()
	env := MergeEnv(os.Environ(), map[string]string{
		"MAIN_GIT": f.mainGit, "ROOT_FILE": f.rootFile, "HOST_TMP_FILE": f.hostTmp, "ROOT_SSH_SEED": f.sshSeed,
	})
	sb, _, err := New(Config{Dir: f.worktree, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if weak {
		// New handed the directory to the suite's user; the weak
		// configuration runs the suite as root.
		sb.host.weak = true
		sb.gitConfigs = nil
		if err := handOver(sb.View(f.worktree), os.Geteuid(), os.Getegid(), nil); err != nil {
			t.Fatal(err)
		}
		sb.handedOver = false
	}
	out := filepath.Join(t.TempDir(), "out.log")
	code, err := runIn(sb, f.worktree, env, rootEscapeScript, out)
	if err != nil || code != 0 {
		_ = sb.Close()
		t.Fatalf("escape script: exit %d, %v\n%s", code, err, gittest.ReadFile(t, out))
	}
	// The suite's writes are in the run's layers until Close, which
	// writes what it left in the directory to disk.
	inLayer := gittest.ReadFile(t, filepath.Join(sb.View(f.worktree), "results.txt"))
	if cerr := sb.Close(); cerr != nil {
		t.Errorf("Close: %v", cerr)
	}
	if onDisk := gittest.ReadFile(t, filepath.Join(f.worktree, "results.txt")); onDisk != inLayer {
		t.Errorf("results.txt on disk after the run:\n%s\nin the run's layer:\n%s", onDisk, inLayer)
	}
	results := map[string]string{}
	for _, line := range strings.Fields(inLayer) {
		k, v, _ := strings.Cut(line, "=")
		results[k] = v
	}
	return f.effects(results, f.worktree)
}

// runIn runs script with sh in the sandbox and waits for it to end.
func runIn(sb *Sandbox, dir string, env []string, script, logPath string) (int, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return 0, err
	}
	defer log.Close()
	p, _, err := Start(Launch{
		Argv: []string{"/bin/sh", "-c", script}, Dir: dir, Env: sb.Env(env, nil),
		Stdout: log, Stderr: log, Sandbox: sb, Name: "escape", MaxProcesses: 512, MaxMemory: 1 << 30,
	})
	if err != nil {
		return 0, err
	}
	select {
	case <-p.Exited():
		p.WaitGone(5*time.Second, true)
	case <-time.After(2 * time.Minute):
		p.Stop(time.Second)
	}
	o := p.Finish()
	if o.NeverStarted {
		return o.ExitCode, fmt.Errorf("the sandbox was not set up")
	}
	return o.ExitCode, nil
}

// TestEscapesAsRoot runs the attempts that got out of orch's first sandbox
// as root: first in that configuration (weak), where each must work — or
// the probe is broken and proves nothing — then in the sandbox, where
// each must fail.
func TestEscapesAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the root escape attempts need root (CI runs as root); TestEscapesAsUser covers a normal user")
	}
	requireBwrap(t)
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("control: orch's first sandbox", func(t *testing.T) {
		got := runEscape(t, newEscapeFixture(t, home), true)
		for _, p := range rootProbes {
			if !got[p.name] {
				t.Errorf("in the weak sandbox, probe %s did not work: the probe is broken", p.name)
			}
		}
	})
	t.Run("sandbox", func(t *testing.T) {
		f := newEscapeFixture(t, home)
		got := runEscape(t, f, false)
		for _, p := range rootProbes {
			if p.name == "userns" && !forbidsUserns(t) {
				t.Logf("nested user namespaces are not forbidden here (unprivileged user namespaces unavailable): made one: %v", got[p.name])
				continue
			}
			if got[p.name] != p.works {
				t.Errorf("as root, probe %s worked=%v, want %v", p.name, got[p.name], p.works)
			}
		}
		// The directory was given back to root.
		info, err := os.Stat(filepath.Join(f.worktree, "a.txt"))
		if err != nil || owner(info) != [2]int{0, 0} {
			t.Errorf("a.txt after the run: %v, owner %v; want root's", err, owner(info))
		}
	})
}

// escapeUser is the uid and gid TestEscapesAsUser runs the probes as (no
// account needed: the kernel knows only numbers).
const escapeUser = 54321

// TestEscapesAsUser runs the same attempts as a normal user: when the test
// runs as root it runs itself again as uid 54321; as a normal user it runs
// them directly. Each must fail, the nested user namespace included when
// bwrap can forbid it.
func TestEscapesAsUser(t *testing.T) {
	requireBwrap(t)
	if os.Geteuid() != 0 {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		f := newEscapeFixture(t, home)
		got := runEscape(t, f, false)
		for _, p := range rootProbes {
			if p.name == "userns" && !forbidsUserns(t) {
				continue
			}
			if got[p.name] != p.works {
				t.Errorf("as uid %d, probe %s worked=%v, want %v", os.Geteuid(), p.name, got[p.name], p.works)
			}
		}
		return
	}
	// As root: run this test as escapeUser, from a copy of the test binary
	// it can read, with a home of its own.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "orch-escape-user-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	home := filepath.Join(dir, "home")
	bin := filepath.Join(dir, "sandbox.test")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	data := []byte(gittest.ReadFile(t, exe))
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, home} {
		if err := os.Chown(p, escapeUser, escapeUser); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestEscapesAsUser$", "-test.v", "-test.count=1")
	cmd.Dir = home
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "ORCH_REQUIRE_BWRAP=1", "LANG=C"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: escapeUser, Gid: escapeUser, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestEscapesAsUser")) {
		t.Fatalf("as uid %d: %v\n%s", escapeUser, err, out)
	}
	t.Logf("as uid %d: %s", escapeUser, strconv.Quote(string(lastLines(out, 3))))
}

// lastLines returns the last n lines of b.
func lastLines(b []byte, n int) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return bytes.Join(lines[max(0, len(lines)-n):], []byte("\n"))
}
