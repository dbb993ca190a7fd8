package task

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gofrs/flock"

	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/durable"
	"github.com/orchdev/orch/internal/exit"
)

// Names inside .orch.
const (
	OrchDir     = ".orch"
	tasksName   = "tasks"
	currentName = "current"
	configName  = "config.toml"
	ignoreName  = ".gitignore"
	// projectLockName is the project-wide lock taken while a task folder is
	// created, .orch/current is replaced, or strays are cleaned.
	projectLockName = ".lock"
	// strayPrefix starts the name of a task folder under construction.
	strayPrefix = ".tmp-"
)

// Project is a repository with .orch/ at its top level.
type Project struct {
	Root string // repository top, absolute
	Dir  string // Root/.orch
	fs   fileSystem
}

// Task is one task folder. Hooks are nil in production.
type Task struct {
	ID    string
	Dir   string // absolute path of .orch/tasks/<id>
	Hooks Hooks
	fs    fileSystem // nil: the real file system; tests inject faults here
}

// Hooks are crash points for tests: Commit calls AfterAppend once the event
// is durable in the transcript and AfterMoves once its moves are done, both
// before state.json changes. A hook that panics simulates a crash there.
type Hooks struct {
	AfterAppend func()
	AfterMoves  func()
}

// TasksDir is .orch/tasks.
func (p *Project) TasksDir() string { return filepath.Join(p.Dir, tasksName) }

// FindProject walks up from start looking for a .orch directory, the way git
// finds .git. ErrNoProject when there is none.
func FindProject(start string) (*Project, error) {
	abs, err := filepath.Abs(start)
	if err != nil {
		return nil, fmt.Errorf("find project from %s: %w", start, err)
	}
	inGit := false // a .git folder or file (a worktree's) on the way up
	for dir := abs; ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			inGit = true
		}
		fi, err := os.Lstat(filepath.Join(dir, OrchDir))
		if err == nil && (fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0) {
			// A link named .orch is refused, not followed and not skipped
			// over: a cloned repository could point it anywhere.
			if err := checkLayout(dir); err != nil {
				return nil, err
			}
			return &Project{Root: dir, Dir: filepath.Join(dir, OrchDir)}, nil
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("find project: %w", err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			if !inGit {
				// orch init would refuse here too: say its prerequisite
				// first rather than send the user to a command that fails.
				return nil, fmt.Errorf("%w: %s is not inside a git repository: run `git init` first, then `orch init`", ErrNoProject, abs)
			}
			return nil, fmt.Errorf("%w: no %s folder in %s or any parent; run `orch init` at the top of the git repository", ErrNoProject, OrchDir, abs)
		}
		dir = parent
	}
}

const configTemplate = `# orch project configuration.
#
# Every key is optional: an empty file, or no file at all, means the
# built-in defaults shown below. Uncomment and edit a key to change it;
# unknown keys are reported (exit 4) by the command that reads this file.

# [test]
# sandbox = "auto"            # auto | bwrap: bubblewrap, or refuse | none: opt out (recorded)
# timeout = "10m"             # default per-suite timeout
# env_allow = []              # variables passed to suites besides the allow-list ("NAME" or "PREFIX_*")
# max_log_bytes = 10485760
# max_processes = 4096        # per suite (cgroup, or RLIMIT_NPROC in the sandbox)
# max_memory = "4GiB"         # per suite (cgroup, and RLIMIT_DATA per process)
# setup = []                  # commands run in the sandbox before the suites ("npm ci --offline")
# read_only_paths = []        # shown read-only to suites: "/opt/sdk", "~/.cache/x", "third_party/untracked"
# build_cache = true          # warm test worktree, cargo target, Gradle home, Go build cache kept per repository
#
# [[test.suites]]             # without suites, orch detects them from the repository
# name = "unit"
# kind = "test"               # test | lint
# command = "go test -json ./..."
# format = "go-json"          # go-json | junit | libtest | tap | "" (exit code decides)
# report = ""                 # junit: a file, a folder ("target/surefire-reports/") or a glob

# [providers.default]         # without providers, orch picks one from the environment:
# type = "openai"             # ANTHROPIC_API_KEY, OPENAI_API_KEY (+ OPENAI_BASE_URL), OLLAMA_HOST
# base_url = ""               # any OpenAI-compatible server
# model = ""
# api_key_env = "OPENAI_API_KEY"   # the NAME of the variable holding the key

# [roles]                     # provider (or provider:model) per role
# planner = "default"
# plan_reviewer = "default"
# codegen = "default"
# code_reviewer = "default"
# accept_advisor = "default"

# [review]
# plan_personas = ["product", "architecture", "implementation", "testing", "risk"]
# code_personas = ["correctness", "tests", "security", "maintainability"]

# [context]
# max_context_bytes = 200000
# max_output_tokens = 16000
# allow_paths = []            # tracked files that look secret (.env*, *.pem, ...) a model may see anyway

# [tools]                     # the agents' tool loop, per role and run
# max_turns = 30              # model turns before the run fails
# max_test_runs = 3           # codegen's run_tests calls (0 = no run_tests)

# [budgets]                   # per task, checked before every model call; 0 = no limit
# calls = 300
# tokens_in = 5000000
# tokens_out = 1000000
# cost_usd = 25.0
# wall_time = "2h"            # summed latency of the task's model calls

# [mcp]                       # orch mcp: the human gates an MCP client may take
# allow = []                  # "accept", "revert", "override", "redo"; none by default
`

const ignoreTemplate = `# Written by orch init. Locks and temporary files are never committed.
/.lock
/tasks/*/.lock
/tasks/.tmp-*
/tasks/*/*.tmp-*
/current.tmp-*
/cache/
/repl_history
/git-pending/
/tasks/*/.staging/
`

// InitProject creates repoTop/.orch, .orch/tasks, .orch/config.toml and
// .orch/.gitignore, each only if absent. created reports whether .orch
// itself was new. Calling it again changes nothing.
func InitProject(repoTop string) (p *Project, created bool, err error) {
	return initProject(nil, repoTop)
}

// initProject is InitProject on a given file system (nil: the real one).
func initProject(fsys fileSystem, repoTop string) (p *Project, created bool, err error) {
	root, err := filepath.Abs(repoTop)
	if err != nil {
		return nil, false, fmt.Errorf("init project in %s: %w", repoTop, err)
	}
	p = &Project{Root: root, Dir: filepath.Join(root, OrchDir), fs: fsys}
	// Nothing is written through a symbolic link: check before the first
	// write (a link .orch makes Mkdir fail with "exists" below).
	if err := checkLayout(root); err != nil {
		return nil, false, err
	}
	switch err := p.fsys().Mkdir(p.Dir, 0o755); {
	case err == nil:
		created = true
		if err := syncDir(p.fsys(), root); err != nil {
			return nil, false, err
		}
	case errors.Is(err, fs.ErrExist):
		// Checked again: it may have appeared since.
		if err := checkLayout(root); err != nil {
			return nil, false, err
		}
	default:
		return nil, false, fmt.Errorf("init project: %w", err)
	}
	if err := mkdirAllSync(p.fsys(), p.Dir, tasksName); err != nil {
		return nil, false, fmt.Errorf("init project: %w", err)
	}
	for _, f := range []struct{ name, body string }{{configName, configTemplate}, {ignoreName, ignoreTemplate}} {
		err := writeFileSync(p.fsys(), filepath.Join(p.Dir, f.name), []byte(f.body), 0o644)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, false, fmt.Errorf("init project: %w", err)
		}
	}
	if err := syncDir(p.fsys(), p.Dir); err != nil {
		return nil, false, err
	}
	return p, created, nil
}

// layoutPaths are the entries of .orch that orch writes through, relative
// to the repository top: none may be a symbolic link, and the folders must
// be folders. Files inside a task folder are checked by their readers.
var layoutPaths = []struct {
	rel string
	dir bool
}{
	{OrchDir, true},
	{filepath.Join(OrchDir, tasksName), true},
	{filepath.Join(OrchDir, "cache"), true},
	{filepath.Join(OrchDir, "git-pending"), true},
	{filepath.Join(OrchDir, currentName), false},
	{filepath.Join(OrchDir, configName), false},
	{filepath.Join(OrchDir, ignoreName), false},
	{filepath.Join(OrchDir, projectLockName), false},
	{filepath.Join(OrchDir, "repl_history"), false},
}

// checkLayout refuses a .orch that is not a real folder inside the
// repository at root, or that holds a symbolic link where orch writes
// (README, "On-disk guarantees"): a cloned repository could otherwise
// point .orch, or .orch/tasks, anywhere the user can write. Absent entries
// are fine; orch creates them.
func checkLayout(root string) error {
	for _, e := range layoutPaths {
		path := filepath.Join(root, e.rel)
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			if e.rel == OrchDir {
				return nil
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("check %s: %w", path, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return linkedError(root, e.rel, path)
		}
		if e.dir && !fi.IsDir() {
			return fmt.Errorf("%w: %s is not a folder (%s); orch keeps its state in the folder %s at the top of the repository: move it away and run `orch init`", ErrLinkedOrch, e.rel, fi.Mode().Type(), OrchDir)
		}
	}
	return nil
}

// linkedError names the link, where it points and what to do.
func linkedError(root, rel, path string) error {
	target, err := os.Readlink(path)
	if err != nil {
		target = "?"
	}
	return fmt.Errorf("%w: %s is a symbolic link (to %q); orch writes its state only into real folders inside the repository %s: replace the link with a folder (move its contents in) and run the command again", ErrLinkedOrch, rel, target, root)
}

// lockProject takes the project-wide lock, blocking: its holders are short.
func (p *Project) lockProject() (*flock.Flock, error) {
	fl := flock.New(filepath.Join(p.Dir, projectLockName))
	if err := fl.Lock(); err != nil {
		return nil, fmt.Errorf("lock project %s: %w", p.Dir, err)
	}
	return fl, nil
}

// Current returns the id in .orch/current. ErrNoCurrent when the file is
// absent or empty.
func (p *Project) Current() (string, error) {
	data, err := os.ReadFile(filepath.Join(p.Dir, currentName))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: %s is absent; create a task with `orch new` or pass --task", ErrNoCurrent, filepath.Join(p.Dir, currentName))
	}
	if err != nil {
		return "", fmt.Errorf("read current task: %w", err)
	}
	id := strings.TrimSpace(string(data))
	if id == "" {
		return "", fmt.Errorf("%w: %s is empty; create a task with `orch new` or pass --task", ErrNoCurrent, filepath.Join(p.Dir, currentName))
	}
	if err := ValidID(id); err != nil {
		return "", fmt.Errorf("read %s: %w", filepath.Join(p.Dir, currentName), err)
	}
	return id, nil
}

// SetCurrent makes id the current task (atomic, durable replacement of
// .orch/current). It does not check that the task exists.
func (p *Project) SetCurrent(id string) error {
	if err := ValidID(id); err != nil {
		return err
	}
	fl, err := p.lockProject()
	if err != nil {
		return err
	}
	defer fl.Unlock()
	return p.setCurrentLocked(id)
}

// setCurrentLocked writes .orch/current; the caller holds the project lock.
func (p *Project) setCurrentLocked(id string) error {
	if err := writeFileAtomic(p.fsys(), p.Dir, currentName, []byte(id+"\n"), 0o644); err != nil {
		return fmt.Errorf("set current task: %w", err)
	}
	return nil
}

// Open returns the task with that id. ErrBadID for an invalid id, ErrNoTask
// when .orch/tasks/<id> is not a folder.
func (p *Project) Open(id string) (*Task, error) {
	if err := ValidID(id); err != nil {
		return nil, err
	}
	dir := filepath.Join(p.TasksDir(), id)
	fi, err := os.Lstat(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("open task %s: %w", id, err)
	}
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, linkedError(p.Root, filepath.Join(OrchDir, tasksName, id), dir)
	}
	if err != nil || !fi.IsDir() {
		// The front ends add how to list the tasks, in their own syntax.
		if near := nearestID(id, p.taskIDs()); near != "" {
			return nil, exit.New(ErrNoTask, "no such task: %s (did you mean %q?)", id, near)
		}
		return nil, exit.New(ErrNoTask, "no such task: %s (no folder %s)", id, dir)
	}
	return &Task{ID: id, Dir: dir, fs: p.fs}, nil
}

// nearestID is the task id a mistyped id most likely meant: the nearest
// within two edits, else the only id it is a prefix of ("" when none).
func nearestID(id string, ids []string) string {
	if near := clip.Nearest(id, ids); near != "" {
		return near
	}
	prefixed := ""
	for _, n := range ids {
		if strings.HasPrefix(n, id) {
			if prefixed != "" {
				return ""
			}
			prefixed = n
		}
	}
	return prefixed
}

// taskIDs are the ids of the task folders (nil when they cannot be read).
func (p *Project) taskIDs() []string {
	entries, err := os.ReadDir(p.TasksDir())
	if err != nil {
		return nil
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && ValidID(e.Name()) == nil && !strings.HasPrefix(e.Name(), strayPrefix) {
			ids = append(ids, e.Name())
		}
	}
	return ids
}

// CleanStrays removes task folders left half-built by a CreateTask that
// crashed (.orch/tasks/.tmp-*) and temporary files of .orch/current. It
// holds the project lock, so it never touches a folder being built.
func (p *Project) CleanStrays() error {
	fl, err := p.lockProject()
	if err != nil {
		return err
	}
	defer fl.Unlock()
	for _, c := range []struct{ dir, prefix string }{
		{p.TasksDir(), strayPrefix},
		{p.Dir, currentName + durable.TempInfix},
	} {
		entries, err := os.ReadDir(c.dir)
		if err != nil {
			return fmt.Errorf("clean strays: %w", err)
		}
		removed := false
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), c.prefix) {
				continue
			}
			if err := p.fsys().RemoveAll(filepath.Join(c.dir, e.Name())); err != nil {
				return fmt.Errorf("clean strays: %w", err)
			}
			removed = true
		}
		if removed {
			if err := syncDir(p.fsys(), c.dir); err != nil {
				return err
			}
		}
	}
	return nil
}
