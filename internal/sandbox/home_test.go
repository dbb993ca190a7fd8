package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/gittest"
)

func TestToolchainPaths(t *testing.T) {
	home := t.TempDir()
	gittest.WriteFiles(t, home, map[string]string{
		".local/bin/pytest":                       "#!/bin/sh\n",
		".local/lib/python3/site-packages/x.py":   "",
		".local/share/keyrings/login.keyring":     "secret",
		"sdk/go1.26/bin/go":                       "",
		"sdk/go1.26/src/runtime/x.go":             "",
		"notes.sh":                                "",
		".cargo/bin/cargo":                        "",
		".cargo/registry/index/x":                 "",
		".cargo/git/checkouts/x":                  "",
		".cargo/credentials.toml":                 "token",
		".rustup/toolchains/stable/bin/rustc":     "",
		".pyenv/shims/python":                     "",
		".pyenv/versions/3.12/bin/python":         "",
		".ssh/id_ed25519":                         "key",
		".config/bin/tool":                        "",
		".nvm/versions/node/v20/bin/node":         "",
		".nvm/versions/node/v20/lib/node_modules": "",
		"bin/plain":                               "",
	})
	for link, target := range map[string]string{
		".local/bin/go":   filepath.Join(home, "sdk/go1.26/bin/go"),
		"bin/notes":       filepath.Join(home, "notes.sh"),
		"bin/ssh-wrapper": filepath.Join(home, ".ssh/id_ed25519"),
	} {
		if err := os.Symlink(target, filepath.Join(home, link)); err != nil {
			t.Fatal(err)
		}
	}
	path := []string{".local/bin", "bin", ".cargo/bin", ".pyenv/shims", ".config/bin", ".nvm/versions/node/v20/bin", "does-not-exist/bin"}
	var entries []string
	for _, p := range path {
		entries = append(entries, filepath.Join(home, p))
	}
	entries = append(entries, "relative/bin", "/usr/bin", "/bin")
	env := []string{"HOME=" + home, "PATH=" + strings.Join(entries, string(os.PathListSeparator))}
	got := toolchainPaths(env, []string{home}, nil)
	var want []string
	for _, p := range []string{".cargo/bin", ".cargo/git", ".cargo/registry", ".local/bin", ".local/lib", ".nvm/versions/node/v20/bin", ".nvm/versions/node/v20/lib", ".pyenv", ".rustup", "bin", "sdk/go1.26"} {
		want = append(want, filepath.Join(home, p))
	}
	if !slices.Equal(got, want) {
		t.Errorf("toolchainPaths =\n%q\nwant\n%q", got, want)
	}
	if got := toolchainPaths(env, []string{home}, []string{home}); got != nil {
		t.Errorf("paths kept inside a hidden folder: %q", got)
	}
	if got := toolchainPaths(env, []string{filepath.Join(home, "sdk")}, []string{filepath.Join(home, ".cargo")}); slices.Contains(got, filepath.Join(home, "sdk")) || slices.ContainsFunc(got, func(p string) bool { return within(p, filepath.Join(home, ".cargo")) }) {
		t.Errorf("a home itself or a path in a hidden folder kept: %q", got)
	}
}

func TestSecretPath(t *testing.T) {
	homes := []string{"/home/u"}
	tests := []struct {
		path string
		want bool
	}{
		{"/home/u", true},
		{"/home", true},
		{"/home/u/.ssh", true},
		{"/home/u/.ssh/keys", true},
		{"/home/u/.config/go", true},
		{"/home/u/.local", true}, // holds .local/share/keyrings
		{"/home/u/.local/bin", false},
		{"/home/u/.cargo", true}, // holds the credentials
		{"/home/u/.cargo/bin", false},
		{"/home/u/go/pkg/mod", false},
		{"/home/u/.sshx", false},
	}
	for _, tt := range tests {
		if got := secretPath(tt.path, homes); got != tt.want {
			t.Errorf("secretPath(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestHiddenHomes(t *testing.T) {
	realHome, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	fake, err := os.MkdirTemp(realHome, ".orch-testrun-home-")
	if err != nil {
		t.Fatalf("cannot create a fake home in %s: %v", realHome, err)
	}
	t.Cleanup(func() { os.RemoveAll(fake) })
	link := filepath.Join(t.TempDir(), "home-link")
	if err := os.Symlink(fake, link); err != nil {
		t.Fatal(err)
	}
	resolved, err := filepath.EvalSymlinks(fake)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		home   string
		hidden bool
	}{
		{fake, true},
		{link, true}, // resolved
		{"/", false},
		{"/usr", false},
		{"/usr/share/nobody", false},
		{"/nonexistent-home-of-nobody", false},
		{"relative/home", false},
		{t.TempDir(), false}, // under /tmp: already an empty tmpfs
	}
	for _, tt := range tests {
		got := hiddenHomes([]string{"HOME=" + tt.home})
		if slices.Contains(got, resolved) != tt.hidden && (tt.home == fake || tt.home == link) {
			t.Errorf("hiddenHomes(HOME=%s) = %q, want %s hidden", tt.home, got, resolved)
		}
		if !tt.hidden && slices.ContainsFunc(got, func(h string) bool { return h == tt.home || h == "/" }) {
			t.Errorf("hiddenHomes(HOME=%s) = %q hides it", tt.home, got)
		}
	}
}
