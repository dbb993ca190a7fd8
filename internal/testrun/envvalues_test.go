package testrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/gittest"
)

// TestEnvValuesWithCredentials: an allowed variable whose value is a URL
// with credentials (a GOPROXY with user:password@) does not reach the
// suites, with or without the sandbox, and the run's notes name it
// without its value.
func TestEnvValuesWithCredentials(t *testing.T) {
	for _, mode := range []string{SandboxNone, SandboxBwrap} {
		t.Run(mode, func(t *testing.T) {
			if mode == SandboxBwrap {
				requireBwrap(t)
			}
			dir := t.TempDir()
			opt := options(t, dir)
			opt.Sandbox = mode
			opt.Env = append(os.Environ(),
				"GOPROXY=https://alice:hunter2@goproxy.corp.example,direct",
				"PYTHON_INDEX=https://pypi.corp.example/simple",
				"NODE_REGISTRY=https://bob:hunter2@npm.corp.example/")
			report, info, err := Run(context.Background(), []Suite{sh("env", "env > env.txt")}, opt)
			if err != nil || !report.OverallPass {
				t.Fatalf("Run: %+v, %v", report, err)
			}
			env := gittest.ReadFile(t, filepath.Join(dir, "env.txt"))
			if strings.Contains(env, "hunter2") {
				t.Errorf("a URL with credentials reached the suite:\n%s", env)
			}
			if !strings.Contains(env, "PYTHON_INDEX=https://pypi.corp.example/simple\n") {
				t.Errorf("a URL without credentials was dropped:\n%s", env)
			}
			notes := strings.Join(info.Notes, "\n")
			if !strings.Contains(notes, "URL with credentials (user:password@): GOPROXY, NODE_REGISTRY;") {
				t.Errorf("the notes do not name the dropped variables:\n%s", notes)
			}
			if strings.Contains(notes, "hunter2") || strings.Contains(strings.Join(info.Env, " "), "NODE_REGISTRY") {
				t.Errorf("the notes or names show a dropped value or name: %q\n%s", info.Env, notes)
			}
		})
	}
}
