package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/orchdev/orch/internal/clip"
)

// DefaultMaxWrite bounds what the suites of one run write (the
// directory, caches, dependency folders, /tmp and the home together)
// when the configuration does not say ([test] max_write).
const DefaultMaxWrite int64 = 2 << 30

// A run's writes go to layers (docs/sandbox.md, "What a run writes"):
// every folder a suite may write — the directory, the caches, the
// dependency folders — is an overlay whose lower layer is the folder as
// orch prepared it (read-only to the suite) and whose upper layer lies in
// one tmpfs of MaxWrite bytes made for the run, as are the suites' /tmp
// and home. Nothing a suite writes reaches a folder another run reads,
// the total is bounded, and going over is ENOSPC inside the sandbox. The
// mounts live in a mount namespace of the run's own, held by a holder
// process (holderScript) for as long as the run lasts; each suite's bwrap
// enters it with nsenter. As a normal user the namespace belongs to a user
// namespace of its own (unprivileged overlay mounts need Linux 5.11).

// layer is one folder seen through a writable layer of the run.
type layer struct {
	target string // where the suites see it
	lower  string // what it shows: target itself, or another folder (a dependency folder)
	mkdir  bool   // target is made first (inside an earlier layer)
}

// holderScript mounts the run's tmpfs ($1, $2 bytes), makes the shared
// folders in it ($4 of them, mode 1777: /tmp and the homes), then mounts
// each layer (target, lower, mkdir) as an overlay whose upper layer is in
// the tmpfs, owned by $3 when set ("uid:gid", the suite's user as root).
// Each lower folder is bound into the tmpfs first, so its path never goes
// through overlayfs's option parser (commas and colons in it). It says
// "ready" and waits until orch closes its stdin.
const holderScript = `set -e
scratch=$1; size=$2; owner=$3; n=$4; shift 4
mount -t tmpfs -o "size=$size,mode=0755" orch-run-writes "$scratch"
while [ "$n" -gt 0 ]; do
	mkdir -m 1777 "$scratch/$1"
	shift; n=$((n-1))
done
i=0
while [ $# -gt 0 ]; do
	target=$1; lower=$2; mk=$3; shift 3
	i=$((i+1))
	mkdir -m 0700 "$scratch/l$i" "$scratch/w$i"
	mkdir -m 0755 "$scratch/u$i"
	if [ -n "$owner" ]; then chown "$owner" "$scratch/u$i"; fi
	mount --bind "$lower" "$scratch/l$i"
	if [ "$mk" = 1 ]; then mkdir -p "$target"; fi
	mount -t overlay orch-run-layer -o "lowerdir=$scratch/l$i,upperdir=$scratch/u$i,workdir=$scratch/w$i" "$target"
done
echo ready
read -r _ || true
`

// holder is the process that keeps the run's mount namespace.
type holder struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	scratch string // the tmpfs (a folder in the host, empty there)
	limit   int64
	userns  bool // the namespace belongs to a user namespace of its own
	nsenter string
}

// layerTools are the programs the layers need (util-linux), found on
// orch's PATH.
type layerTools struct{ unshare, nsenter, sh string }

func findLayerTools() (layerTools, error) {
	var t layerTools
	var err error
	for _, p := range []struct {
		name string
		dst  *string
	}{{"unshare", &t.unshare}, {"nsenter", &t.nsenter}, {"sh", &t.sh}} {
		if *p.dst, err = exec.LookPath(p.name); err != nil {
			return t, &Error{Reason: fmt.Sprintf("the sandbox's write layers need %s (util-linux), which is not installed (%v)", p.name, err)}
		}
	}
	if _, err := exec.LookPath("mount"); err != nil {
		return t, &Error{Reason: fmt.Sprintf("the sandbox's write layers need mount (util-linux), which is not installed (%v)", err)}
	}
	return t, nil
}

// startHolder mounts the run's tmpfs at scratch (an empty folder), with
// the shared folders dirs (names in it) and the layers, and returns once
// they are in place.
func startHolder(h host, scratch string, limit int64, dirs []string, layers []layer) (*holder, error) {
	tools, err := findLayerTools()
	if err != nil {
		return nil, err
	}
	if strings.ContainsAny(scratch, ",:\\\n") {
		return nil, fmt.Errorf("sandbox: the folder of the run's writes %q holds a comma, colon, backslash or newline: set TMPDIR to a plain folder", scratch)
	}
	owner := ""
	if h.hardened() {
		owner = strconv.Itoa(SuiteUID) + ":" + strconv.Itoa(SuiteGID)
	}
	args := []string{"--mount", "--propagation", "private"}
	userns := os.Geteuid() != 0
	if userns {
		args = append([]string{"--user", "--map-root-user"}, args...)
	}
	args = append(args, "--", tools.sh, "-c", holderScript, "orch-run-holder", scratch, strconv.FormatInt(limit, 10), owner, strconv.Itoa(len(dirs)))
	args = append(args, dirs...)
	for _, l := range layers {
		mk := "0"
		if l.mkdir {
			mk = "1"
		}
		args = append(args, l.target, l.lower, mk)
	}
	cmd := exec.Command(tools.unshare, args...)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C"}
	// It ends when orch closes its stdin (or dies: the pipe closes).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("sandbox: start the holder of the run's writes: %w", err)
	}
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil && line != "ready\n" {
			err = fmt.Errorf("said %q", line)
		}
		ready <- err
		_, _ = io.Copy(io.Discard, stdout)
	}()
	hd := &holder{cmd: cmd, stdin: stdin, scratch: scratch, limit: limit, userns: userns, nsenter: tools.nsenter}
	select {
	case err = <-ready:
	case <-time.After(30 * time.Second):
		err = errors.New("no answer in 30 s")
	}
	if err != nil {
		hd.stop()
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = "no message"
		}
		hint := ""
		if userns {
			hint = " (as a normal user this needs user namespaces and overlayfs in them: Linux 5.11 or later)"
		}
		return nil, &Error{Reason: fmt.Sprintf("could not make the run's write layers with %s: %v: %s%s", tools.unshare, err, clip.Runes(msg, 500), hint)}
	}
	return hd, nil
}

// pid is the holder's process id ("/proc/<pid>/root" is the run's view).
func (hd *holder) pid() int { return hd.cmd.Process.Pid }

// enter is the command prefix that runs a program in the run's mount
// namespace (and user namespace, as a normal user).
func (hd *holder) enter() []string {
	args := []string{hd.nsenter, "--target", strconv.Itoa(hd.pid()), "--mount"}
	if hd.userns {
		// The user namespace maps orch's user to root: keep the
		// credentials (setgroups is denied there).
		args = append(args, "--user", "--preserve-credentials")
	}
	return append(args, "--")
}

// view is where orch sees path as the suites left it.
func (hd *holder) view(path string) string {
	return filepath.Join("/proc", strconv.Itoa(hd.pid()), "root", path)
}

// stop ends the holder: the namespace and its tmpfs go with it.
func (hd *holder) stop() {
	_ = hd.stdin.Close()
	done := make(chan struct{})
	go func() { _ = hd.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = hd.cmd.Process.Kill()
		<-done
	}
}

// usage is what the run wrote so far and its bound, in bytes.
func (hd *holder) usage() (used, limit int64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(hd.view(hd.scratch), &st); err != nil {
		return 0, hd.limit, err
	}
	return int64(st.Blocks-st.Bfree) * int64(st.Bsize), hd.limit, nil
}

// runFolderPrefixes are the temporary folders a run makes (its tmpfs's
// mount point, the copies of the git config), named with orch's pid.
var runFolderPrefixes = []string{"orch-run-writes-", "orch-gitconfig-"}

// runFolderPrefix is prefix with this process's id, for os.MkdirTemp.
func runFolderPrefix(prefix string) string {
	return prefix + strconv.Itoa(os.Getpid()) + "-"
}

// maxStaleScan bounds the entries of the temporary folder looked at.
const maxStaleScan = 10000

// removeStaleRunFolders removes the run folders in dir whose orch process
// is gone (killed before Close): an empty mount point, a config copy.
func removeStaleRunFolders(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for i, e := range entries {
		if i >= maxStaleScan {
			return
		}
		for _, prefix := range runFolderPrefixes {
			rest, ok := strings.CutPrefix(e.Name(), prefix)
			if !ok || !e.IsDir() {
				continue
			}
			pidText, _, _ := strings.Cut(rest, "-")
			pid, err := strconv.Atoi(pidText)
			if err != nil || pid <= 0 || processAlive(pid) {
				continue
			}
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// processAlive reports whether a process pid exists (another user's
// counts).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
