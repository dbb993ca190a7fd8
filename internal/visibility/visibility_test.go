package visibility

import (
	"bytes"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/gitx"
)

func TestMain(m *testing.M) { os.Exit(gittest.Main(m)) }

func TestSecretRule(t *testing.T) {
	for _, tc := range []struct {
		path   string
		secret bool
	}{
		{".env", true},
		{"app/.env", true},
		{".env.local", true},
		{".env.example", true}, // allowed only on purpose
		{".envrc", true},
		{"deploy/prod.env", true},
		{"certs/server.pem", true},
		{"certs/SERVER.PEM", true},
		{"tls/server.key", true},
		{"keys/store.p12", true},
		{"id_rsa", true},
		{"home/.ssh/id_ed25519", true},
		{"keys/id_ecdsa_sk", true},
		{"keys/deploy_rsa", true},
		{".ssh/config", true},
		{".ssh/known_hosts", true},
		{".aws/credentials", true},
		{"credentials.json", true},
		{"config/credentials.yml.enc", true},
		{".git-credentials", true},
		{"secrets.yaml", true},
		{"config/secrets.json", true},
		{"secret.txt", true},
		{".npmrc", true},
		{"web/.npmrc", true},
		{".netrc", true},
		{"_netrc", true},
		{".pypirc", true},
		{".pgpass", true},
		{".docker/config.json", true},
		{".kube/config", true},
		{"infra/terraform.tfstate", true},
		{"infra/terraform.tfstate.backup", true},
		{"infra/prod.tfvars", true},
		{".vault-token", true},

		{"README.md", false},
		{"main.go", false},
		{"internal/task/id.go", false},
		{"internal/task/id_test.go", false},
		{"keys/id_rsa.pub", false},
		{"docs/environment.md", false},
		{"src/envelope.js", false},
		{"config/config.json", false},
		{"certs/ca.crt", false},
		{"secretary/notes.md", false},
		{"keyboard.go", false},
		{"monkey.py", false},
		{"docker/config.json", false},
		{"tokenizer.go", false},
	} {
		got := SecretRule(tc.path)
		if (got != "") != tc.secret {
			t.Errorf("SecretRule(%q) = %q, want secret=%v", tc.path, got, tc.secret)
		}
	}
}

func TestCheckAllowPattern(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		ok      bool
	}{
		{".env.example", true},
		{"certs/test-*.pem", true},
		{"config/credentials.go", true},
		{"*.env.sample", true},
		{"fixtures/id_[a-z]sa", true},

		{"", false},
		{"   ", false},
		{"*", false},
		{"*.*", false},
		{"conf/*", false},
		{"conf/[a-z]*", false},
		{"?", false},
		{"/etc/passwd", false},
		{"../x.pem", false},
		{"a/../b.pem", false},
		{"./b.pem", false},
		{"a//b.pem", false},
		{"a/", false},
		{`a\b.pem`, false},
		{".git/config", false},
		{".orch/config.toml", false},
		{".ORCH/x.pem", false},
		{"*/c*****", false},               // "*" also matches .git (found by FuzzAllowPattern)
		{".[gG]*/config", false},          // a class matching .git
		{".?RCH/x.pem", false},            // .orch in another case
		{".[^a-z]it/config", false},       // matches only a mixed-case .Git
		{".[^a-z]rch/config.toml", false}, // matches only a mixed-case .Orch
		{"[^a-z]git/config", false},
		{"*[^/]**/c*****", false}, // "[^/]" keeps ".git" one element for path.Match (found by FuzzAllowPattern)
		{"[^/]git/config", false},
		{"conf[/]x.pem", false},
		{"conf/[^/]x.pem", false},
		{"*/fixtures.pem", false},
		{"ab*/config.pem", true},
		{"a[.pem", false},
		{"a\x00.pem", false},
		{"a\n.pem", false},
		{"\xff.pem", false},
	} {
		err := CheckAllowPattern(tc.pattern)
		if (err == nil) != tc.ok {
			t.Errorf("CheckAllowPattern(%q) = %v, want ok=%v", tc.pattern, err, tc.ok)
		}
	}
	if _, err := NewPolicy([]string{".env.example", "*"}); err == nil || !strings.Contains(err.Error(), "allow_paths[1]") {
		t.Errorf("NewPolicy with a bad second entry: %v, want an error naming allow_paths[1]", err)
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return gittest.Git(t, dir, args...)
}

func write(t *testing.T, dir, name, content string) { t.Helper(); gittest.Write(t, dir, name, content) }

// fixtureRepo has tracked, untracked, ignored, secret-looking, symlinked
// and submodule entries.
func fixtureRepo(t *testing.T) *gitx.Repo {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write(t, dir, "main.go", "package main\n")
	write(t, dir, "docs/guide.md", "# guide\n")
	write(t, dir, ".env.example", "API_KEY=\n")
	write(t, dir, "certs/server.pem", "-----BEGIN PRIVATE KEY-----\n")
	write(t, dir, "certs/test-client.pem", "-----BEGIN CERTIFICATE-----\n")
	write(t, dir, ".orch/config.toml", "\n")
	write(t, dir, ".gitignore", "ignored.log\n")
	if err := os.Symlink(".env", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "-A")
	git(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("1", 40)+",vendor/sub")
	git(t, dir, "commit", "-q", "-m", "init")
	// Untracked and ignored files, written after the commit.
	write(t, dir, ".env", "API_KEY=sk-live-secret\n")
	write(t, dir, "notes.txt", "untracked\n")
	write(t, dir, "ignored.log", "ignored\n")
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &gitx.Repo{Dir: real, Env: gittest.Identity}
}

func TestListAndCheck(t *testing.T) {
	repo := fixtureRepo(t)
	pol, err := NewPolicy([]string{"certs/test-*.pem"})
	if err != nil {
		t.Fatal(err)
	}
	for name, list := range map[string]func() (*Files, error){
		"index": func() (*Files, error) { return List(t.Context(), repo, pol) },
		"HEAD":  func() (*Files, error) { return ListAt(t.Context(), repo, "HEAD", pol) },
	} {
		t.Run(name, func(t *testing.T) {
			files, err := list()
			if err != nil {
				t.Fatal(err)
			}
			want := ".gitignore,certs/test-client.pem,docs/guide.md,main.go"
			if got := strings.Join(files.Paths(), ","); got != want {
				t.Errorf("visible files = %s, want %s", got, want)
			}
			for _, tc := range []struct {
				path string
				want error
			}{
				{"main.go", nil},
				{"certs/test-client.pem", nil},
				{".env", ErrNotTracked},
				{"notes.txt", ErrNotTracked},
				{"ignored.log", ErrNotTracked},
				{"docs", ErrNotTracked},
				{".env.example", ErrSecret},
				{"certs/server.pem", ErrSecret},
				{"link.txt", ErrNotRegular},
				{"vendor/sub", ErrNotRegular},
				{".orch/config.toml", ErrNotTracked},
			} {
				err := files.Check(tc.path)
				if tc.want == nil {
					if err != nil {
						t.Errorf("Check(%q) = %v, want nil", tc.path, err)
					}
					continue
				}
				if !errors.Is(err, tc.want) {
					t.Errorf("Check(%q) = %v, want %v", tc.path, err, tc.want)
				}
				if err != nil && !strings.Contains(err.Error(), tc.path) {
					t.Errorf("Check(%q) message %q does not name the path", tc.path, err)
				}
			}
			if n := len(files.Hidden()); n != 5 {
				t.Errorf("hidden = %+v, want 5 entries", files.Hidden())
			}
		})
	}
}

func TestReadFile(t *testing.T) {
	repo := fixtureRepo(t)
	files, err := List(t.Context(), repo, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	data, cut, err := files.ReadFile("main.go", 1<<20)
	if err != nil || cut || string(data) != "package main\n" {
		t.Fatalf("ReadFile(main.go) = %q, %v, %v", data, cut, err)
	}
	data, cut, err = files.ReadFile("main.go", 4)
	if err != nil || !cut || string(data) != "pack" {
		t.Fatalf("ReadFile(main.go, 4) = %q, %v, %v; want the first 4 bytes, truncated", data, cut, err)
	}
	if _, _, err := files.ReadFile(".env", 1<<20); !errors.Is(err, ErrNotTracked) {
		t.Errorf("ReadFile(.env) = %v, want ErrNotTracked", err)
	}
	// A tracked file replaced in the work tree by a symbolic link to the
	// untracked secret is refused, not followed.
	p := filepath.Join(repo.Dir, "docs", "guide.md")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../.env", p); err != nil {
		t.Fatal(err)
	}
	data, _, err = files.ReadFile("docs/guide.md", 1<<20)
	if !errors.Is(err, ErrNotRegular) || bytes.Contains(data, []byte("sk-live")) {
		t.Errorf("ReadFile through a symlink = %q, %v; want ErrNotRegular and no content", data, err)
	}
}

// globMatch must agree with path.Match on every rule.
func TestGlobMatchAgreesWithPathMatch(t *testing.T) {
	names := []string{"", ".env", ".env.local", "prod.env", "a/b.env", "x.pem", "pem", "id_rsa", "id_rsa.pub",
		"credentials", "credentials.json", "secret", "secrets.yaml", "a.tfstate.backup", "config.json",
		".docker/config.json", "kube/config", ".kube/config", "id_/x", "x/_rsa", "main.go", "*", "a*b"}
	for _, r := range secretRules {
		for _, n := range append(names, r.glob, r.glob+"x", "x"+r.glob) {
			want, _ := path.Match(r.glob, n)
			if got := globMatch(r.glob, n); got != want {
				t.Errorf("globMatch(%q, %q) = %v, path.Match says %v", r.glob, n, got, want)
			}
		}
	}
}
