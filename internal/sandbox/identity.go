package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// SuiteUID and SuiteGID are the host user and group ("nobody") a
// sandboxed suite runs as when orch runs as root. Root's files that are
// readable only by their owner (/etc/shadow, /root) stay closed to it,
// and it holds no capability.
const (
	SuiteUID = 65534
	SuiteGID = 65534
)

// host is how bwrap runs on this machine.
type host struct {
	bwrap string // path of bwrap
	// root: orch is root. bwrap then builds the sandbox with root's
	// rights (so it can bind toolchains below /root) and setpriv drops the
	// suite to SuiteUID/SuiteGID with no capability, an empty bounding
	// set and no new privileges before the suite's command runs.
	root    bool
	setpriv string // path of setpriv (root only)
	setuid  bool   // bwrap is installed setuid root
	// features of this bwrap
	size, perms, disableUserns bool
	// nested (root only): the suite runs in a user namespace of its own,
	// made by a second bwrap as SuiteUID, in which no further user
	// namespace can be made. Needs unprivileged user namespaces.
	nested bool
	// weak (tests only) is the configuration orch had before it
	// hardened the sandbox for root: as root, the suite kept root's
	// capabilities. It exists to show that the escape probes work there.
	weak bool
}

// probeBwrap finds bwrap on PATH and what it can do, once per binary
// (keyed by its path: a PATH without bwrap, as in a test of the refusal,
// is looked up again next time rather than remembered).
func probeBwrap() (host, error) {
	if err := bwrapPlatform(); err != nil {
		return host{}, err
	}
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return host{}, &Error{Reason: fmt.Sprintf("bwrap is not installed (%v)", err)}
	}
	if h, ok := probedBwrap.Load(path); ok {
		return h.(host), nil
	}
	h := host{bwrap: path}
	if info, err := os.Stat(path); err == nil && info.Mode()&fs.ModeSetuid != 0 {
		h.setuid = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	help, _ := exec.CommandContext(ctx, path, "--help").CombinedOutput()
	h.size = bytes.Contains(help, []byte("--size"))
	h.perms = bytes.Contains(help, []byte("--perms"))
	h.disableUserns = bytes.Contains(help, []byte("--disable-userns"))
	probedBwrap.Store(path, h)
	return h, nil
}

// probedBwrap holds probeBwrap's findings by bwrap's path.
var probedBwrap sync.Map

// currentHost is the host of this process: bwrap's features and whether
// orch is root (and then where setpriv is).
func currentHost() (host, error) {
	h, err := probeBwrap()
	if err != nil {
		return h, err
	}
	if os.Geteuid() != 0 {
		return h, nil
	}
	h.root = true
	if !h.perms {
		return h, &Error{Reason: fmt.Sprintf("as root, orch drops a suite to uid %d and needs bwrap's --perms option (bubblewrap 0.5 or later); %s lacks it", SuiteUID, h.bwrap)}
	}
	if h.setpriv, err = exec.LookPath("setpriv"); err != nil {
		return h, &Error{Reason: fmt.Sprintf("as root, orch drops a suite to uid %d with setpriv (util-linux), which is not installed (%v)", SuiteUID, err)}
	}
	h.nested = h.disableUserns && nestedWorks(h)
	return h, nil
}

// nestedWorks reports, once, whether the nested user namespace works here
// as root (unprivileged user namespaces may be disabled).
var nestedWorks = func() func(host) bool {
	var once sync.Once
	var ok bool
	return func(h host) bool {
		once.Do(func() {
			h.nested = true
			ok = probe(h) == nil
		})
		return ok
	}
}()

// hardened reports whether the suite is dropped to SuiteUID.
func (h host) hardened() bool { return h.root && !h.weak }

// identityArgs are the bwrap options that decide who the suite is: its
// user namespace and capabilities.
//   - not root: a user namespace of its own (which also makes
//     RLIMIT_NPROC count the suite's processes only), no capability, no
//     further user namespaces when bwrap can forbid them;
//   - root: no user namespace (one would map the suite to root outside,
//     the owner of /etc/shadow), only the capabilities setpriv needs to
//     switch to SuiteUID, which it then drops with the rest.
func (h host) identityArgs() []string {
	switch {
	case h.weak && h.root:
		return nil
	case h.root:
		return []string{"--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"}
	case h.setuid:
		// A setuid bwrap may refuse user namespaces; it drops
		// privileges itself.
		return []string{"--unshare-user-try", "--cap-drop", "ALL"}
	}
	args := []string{"--unshare-user", "--cap-drop", "ALL"}
	if h.disableUserns {
		args = append(args, "--disable-userns")
	}
	return args
}

// dropArgs is the command that runs the suite's argv as SuiteUID inside
// the sandbox (root only): no supplementary groups, no capability in any
// set, no new privileges (setuid binaries and file capabilities give
// nothing).
func (h host) dropArgs() []string {
	if !h.hardened() {
		return nil
	}
	args := []string{h.setpriv,
		"--reuid=" + strconv.Itoa(SuiteUID), "--regid=" + strconv.Itoa(SuiteGID), "--clear-groups",
		"--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"}
	if h.nested {
		// The second bwrap, as SuiteUID, keeps the first one's view
		// (bound recursively) and forbids user namespaces below.
		args = append(args, h.bwrap, "--unshare-user", "--disable-userns", "--cap-drop", "ALL", "--dev-bind", "/", "/", "--")
	}
	return args
}

// tmpfsPerms is the mode of the sandbox's /tmp and hidden homes: the
// suite's user must be able to write them, and as root bwrap makes them
// root's.
func (h host) tmpfsPerms(sticky bool) string {
	if !h.hardened() {
		return ""
	}
	if sticky {
		return "1777"
	}
	return "0755"
}

// handOver makes dir and everything below it owned by uid:gid, skipping
// the paths in skip (and what lies below them). Symlinks are changed
// themselves, never followed.
func handOver(dir string, uid, gid int, skip []string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if slices.Contains(skip, p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if owner(info) == [2]int{uid, gid} {
			return nil
		}
		if err := os.Lchown(p, uid, gid); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	})
}
func owner(info fs.FileInfo) [2]int {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return [2]int{int(st.Uid), int(st.Gid)}
	}
	return [2]int{-1, -1}
}

// describe says who the suite is, for the report.
func (h host) describe() string {
	var s string
	switch {
	case h.weak && h.root:
		return "suite runs as root with root's capabilities (weakened for a test)"
	case h.root:
		s = fmt.Sprintf("suite runs as uid %d:%d (not root), no capabilities, no new privileges", SuiteUID, SuiteGID)
		if h.nested {
			return s + ", in a user namespace of its own where no further one can be made"
		}
		return s + "; further user namespaces NOT forbidden here (unprivileged user namespaces are unavailable)"
	case h.setuid:
		return "suite runs as you, no capabilities (setuid bwrap)"
	}
	s = "suite runs as you in a user namespace of its own, no capabilities"
	if h.disableUserns {
		return s + ", no further user namespaces"
	}
	return s
}
