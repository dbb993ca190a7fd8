package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/clip"
)

// warmLimit bounds one warm-up of the go build cache.
const warmLimit = 10 * time.Minute

// Warmup is a command run before the suites to fill the go build cache
// (GoWarmup), in Dir (a folder of the directory; empty: the directory).
type Warmup struct {
	Dir  string
	Argv []string
}

// GoWarmup returns the command that fills the go build cache for a
// suite's argv, or nil when the suite is not `go test`: the same command
// with -exec=/bin/true -count=1 after "test", so go compiles and vets
// every package and test binary the suite will and runs none of them.
func GoWarmup(argv []string) []string {
	if len(argv) < 2 || filepath.Base(argv[0]) != "go" {
		return nil
	}
	i := 1
	for i < len(argv) && strings.HasPrefix(argv[i], "-") {
		if argv[i] == "-C" {
			i++
		}
		i++
	}
	if i >= len(argv) || argv[i] != "test" {
		return nil
	}
	out := slices.Clone(argv[:i+1])
	out = append(out, "-exec=/bin/true", "-count=1")
	return append(out, argv[i+1:]...)
}

// warmGoCache runs each warm-up command (GoWarmup) in the directory
// before any suite of the run starts, in the sandbox of the run but with
// the go build cache writable and the directory read-only: the cache's
// lower layer, which the suites only read, is written by the go toolchain
// alone. Building runs no code of the repository (go's build is made to
// be safe on code one does not trust: no build scripts, cgo flags
// checked), and -exec=/bin/true runs no test binary; no suite process is
// alive meanwhile. What fails is a note: the suites then compile what is
// missing in their own layer.
func (s *Sandbox) warmGoCache(env []string, warm []Warmup) []string {
	var notes []string
	for _, w := range warm {
		argv := w.Argv
		if len(argv) == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), warmLimit)
		start := time.Now()
		args := s.warmArgs(argv, w.Dir)
		cmd := exec.CommandContext(ctx, s.host.bwrap, args...)
		cmd.Dir = "/"
		cmd.Env = MergeEnv(s.Env(env, nil), map[string]string{"GOTOOLCHAIN": "local", "GOFLAGS": goFlagsWithoutToolexec(env)})
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		cancel()
		if err != nil {
			text := warmText(out.String())
			if goNoPackages(text) {
				continue // a module without packages: nothing to warm, and its suites say so
			}
			notes = append(notes, fmt.Sprintf("warming the go build cache with %q failed (%v): the suites compile what is missing themselves; %s", strings.Join(argv, " "), err, clip.Runes(text, 300)))
			continue
		}
		notes = append(notes, fmt.Sprintf("go build cache warmed by the go toolchain alone (%s, %.1f s): the suites read it and write only to their own layer", strings.Join(argv, " "), time.Since(start).Seconds()))
	}
	return notes
}

// warmText is what a warm-up printed, as a person reads it: go test
// -json's events give their Output text (a compile error, "no packages to
// test"), the events without text are left out, other lines stay as they
// are. It was quoted raw before, {"ImportPath":...} and all.
func warmText(out string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(out, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
			var ev struct {
				Output *string
			}
			if json.Unmarshal([]byte(t), &ev) == nil {
				if ev.Output != nil {
					b.WriteString(*ev.Output)
				}
				continue
			}
		}
		b.WriteString(line)
	}
	return strings.ToValidUTF8(strings.TrimSpace(b.String()), "\uFFFD")
}

// goNoPackages reports whether go said the module has no packages (only a
// go.mod, or files all excluded by build constraints) and nothing else
// went wrong.
func goNoPackages(text string) bool {
	if !strings.Contains(text, "matched no packages") {
		return false
	}
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.Contains(l, "matched no packages") && l != "no packages to test" && l != "no packages to vet" {
			return false
		}
	}
	return true
}

// goFlagsWithoutToolexec is GOFLAGS of env without -toolexec (a program
// run for every compile).
func goFlagsWithoutToolexec(env []string) string {
	flags, _ := LookupEnv(env, "GOFLAGS")
	var keep []string
	for _, f := range strings.Fields(flags) {
		if !strings.HasPrefix(f, "-toolexec") && !strings.HasPrefix(f, "--toolexec") {
			keep = append(keep, f)
		}
	}
	return strings.Join(keep, " ")
}

// warmArgs are bwrap's arguments for a warm-up: the run's view without
// its layers (a private /tmp and homes), the directory and everything
// else read-only, the go build cache writable.
func (s *Sandbox) warmArgs(argv []string, dir string) []string {
	chdir := s.dir
	if dir != "" && dir != "." && filepath.IsLocal(dir) {
		chdir = filepath.Join(s.dir, dir)
	}
	h := s.host
	args := isolationArgs(h, s.tmpfsSize, "")
	for _, home := range s.homes {
		args = append(args, tmpfsArgs(home, s.tmpfsSize, h.tmpfsPerms(true))...)
	}
	if h.hardened() {
		for _, d := range s.parentsInTmpfs() {
			args = append(args, "--perms", "0755", "--dir", d)
		}
	}
	for _, k := range s.keep {
		args = append(args, "--ro-bind", k, k)
	}
	args = append(args, "--ro-bind", s.dir, s.dir, "--bind", s.goCacheDir, s.goCacheDir)
	for _, r := range s.readOnly {
		args = append(args, "--ro-bind", r, r)
	}
	for _, m := range s.mounts {
		args = append(args, "--ro-bind", m.Source, m.Target)
	}
	for _, g := range s.gitDirs {
		args = append(args, "--ro-bind", g, g)
	}
	for _, c := range s.gitConfigs {
		args = append(args, "--ro-bind", c.Source, c.Target)
	}
	args = append(args, "--remount-ro", "/", "--chdir", chdir, "--")
	args = append(args, h.dropArgs()...)
	return append(args, argv...)
}
