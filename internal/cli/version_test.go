package cli

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuildInfoString(t *testing.T) {
	for _, tc := range []struct {
		b    BuildInfo
		want string
	}{
		{BuildInfo{Version: "(devel)", GoVersion: "go1.26.8", Platform: "linux/amd64"}, "orch (devel) (no commit recorded: built by go run or outside a git clone, go1.26.8 linux/amd64)"},
		{BuildInfo{Version: "v0.3.0", Revision: "9cd328a4fcb0fdd299f7224ac943940c35637c7d", Time: "2026-11-26T06:40:13Z", GoVersion: "go1.26.8", Platform: "linux/amd64"},
			"orch v0.3.0 (rev 9cd328a4fcb0, 2026-11-26T06:40:13Z, go1.26.8 linux/amd64)"},
		{BuildInfo{Version: "(devel)", Revision: "abc", Modified: true, GoVersion: "go1.26.8"}, "orch (devel) (rev abc, modified, go1.26.8)"},
	} {
		if got := tc.b.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

// Built from a clone, orch --version names the commit (Go records
// vcs.revision and vcs.modified); the test binary itself records none.
// The build is in a fresh clone of this checkout's HEAD: Go finds no
// repository in a linked git worktree (its .git is a file), and
// -buildvcs=true overrides a GOFLAGS=-buildvcs=false of the machine.
func TestVersionFromClone(t *testing.T) {
	if testing.Short() {
		t.Skip("clones the repository and builds orch")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not in a git checkout: nothing to record")
	}
	clone := filepath.Join(t.TempDir(), "orch")
	if out, err := exec.Command("git", "clone", "-q", "--no-hardlinks", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	bin := filepath.Join(t.TempDir(), "orch")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/orch")
	build.Dir = clone
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("orch --version: %v", err)
	}
	if want := "(rev " + string(head[:12]) + ", "; !strings.Contains(string(out), want) || strings.Contains(string(out), "modified") {
		t.Errorf("orch --version = %q, want it to contain %q and not modified", out, want)
	}
}
