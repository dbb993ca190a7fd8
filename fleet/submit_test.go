package fleet

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/phasetest"
)

// TestSubmitPushFails injects faults into Submit's push, after its
// ls-remote found no ref on the remote: a push that fails for its own
// reason is reported as such (exit 1, git's words, nothing on the remote,
// no local copy of the ref), never as "already submitted"; only a ref that
// another submission pushed in between is the refusal (exit 3). No case
// reaches the Temporal service (the client is nil: starting a workflow
// would panic).
func TestSubmitPushFails(t *testing.T) {
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		// hook is the bare remote's pre-receive hook ("" for none);
		// onPush runs in the clone (sh) just before git push, with
		// $GIT the real git and $REMOTE the bare remote.
		hook, onPush string
		want         exit.Code
		says         []string // in the error's message
	}{
		{name: "a pre-receive hook declines",
			hook: "#!/bin/sh\necho 'pushes to refs/orch are closed today' >&2\nexit 1\n",
			want: exit.Internal,
			says: []string{"task t was not submitted: pushing its folder to origin as refs/orch/tasks/t failed", "no workflow was started", "pushes to refs/orch are closed today", "pre-receive hook declined"}},
		{name: "the remote is gone",
			onPush: `rm -rf "$REMOTE"`,
			want:   exit.Internal,
			says:   []string{"task t was not submitted: pushing its folder to origin as refs/orch/tasks/t failed", "does not appear to be a git repository"}},
		{name: "another submission pushed the ref in between",
			onPush: `"$GIT" push --quiet origin HEAD:refs/orch/tasks/t`,
			want:   exit.Refused,
			says:   []string{"task t is already in the fleet: its ref refs/orch/tasks/t was pushed to origin by another submission while this one ran"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := phasetest.New(t, lifecycle.Codegen)
			remote := filepath.Join(t.TempDir(), "shared.git")
			gittest.Git(t, "", "init", "--quiet", "--bare", remote)
			gittest.Git(t, f.Dir, "remote", "add", "origin", remote)
			if c.hook != "" {
				if err := os.WriteFile(filepath.Join(remote, "hooks", "pre-receive"), []byte(c.hook), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			// git on PATH runs onPush before a push and is git otherwise.
			bin := t.TempDir()
			wrapper := "#!/bin/sh\nif [ \"$1\" = push ]; then\n" + c.onPush + "\n:\nfi\nexec \"$GIT\" \"$@\"\n"
			if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("GIT", realGit)
			t.Setenv("REMOTE", remote)
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

			_, err := Submit(context.Background(), nil, f.Dir, "origin", "t", Params{})
			if err == nil {
				t.Fatal("Submit succeeded")
			}
			if exit.Of(err) != c.want {
				t.Fatalf("exit %d, want %d: %v", exit.Of(err), c.want, err)
			}
			for _, s := range c.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if c.want != exit.Refused && strings.Contains(err.Error(), "already") {
				t.Errorf("a failed push reported as a submitted task: %v", err)
			}
			// The clone's copy of the ref is made only after a push that
			// succeeded; a refused push leaves the remote's ref to the
			// submission that made it.
			if out, err := exec.Command(realGit, "-C", f.Dir, "for-each-ref", LocalRef("t")).Output(); err != nil || len(out) != 0 {
				t.Errorf("local ref %s after a failed submit: %q (%v)", LocalRef("t"), out, err)
			}
			if _, statErr := os.Stat(remote); statErr == nil {
				refs, err := exec.Command(realGit, "-C", remote, "for-each-ref", "--format=%(refname)", "refs/orch/").Output()
				if err != nil {
					t.Fatal(err)
				}
				want := ""
				if c.want == exit.Refused {
					want = TaskRef("t") + "\n"
				}
				if string(refs) != want {
					t.Errorf("refs on the remote: %q, want %q", refs, want)
				}
			}
		})
	}
}
