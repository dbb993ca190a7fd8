package repomap

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/orchdev/orch/internal/visibility"
)

// fixture is a small project in five languages plus docs and secrets.
var fixture = map[string]string{
	"retry/retry.go": `package retry

// MaxAttempts bounds the attempts.
const MaxAttempts = 3

// Backoff waits between attempts.
type Backoff struct {
	Base int
}

// NewBackoff returns a backoff.
func NewBackoff(base int) *Backoff { return &Backoff{Base: base} }

func (b *Backoff) Next(attempt int) int { return b.Base * attempt }
`,
	"client/client.go": `package client

import "example.com/x/retry"

type Client struct{ b *retry.Backoff }

func New() *Client { return &Client{b: retry.NewBackoff(2)} }

func (c *Client) Fetch(url string) error {
	for i := 0; i < retry.MaxAttempts; i++ {
		_ = c.b.Next(i)
	}
	return nil
}
`,
	"main.go": `package main

import "example.com/x/client"

func main() { client.New().Fetch("http://example.com") }
`,
	"tools/fetch.py": `class Fetcher:
    def fetch_all(self, urls):
        return [u for u in urls]
`,
	"tools/cli.py": `from fetch import Fetcher

def run():
    return Fetcher().fetch_all([])
`,
	"web/api.ts": `export interface ApiClient { get(path: string): Promise<string> }
export function makeClient(base: string): ApiClient { return { get: async (p) => base + p } }
`,
	"web/app.tsx": `import { makeClient } from "./api";
export const App = () => <div>{String(makeClient("/"))}</div>;
`,
	"engine/src/lib.rs": `pub struct Engine { pub speed: u32 }
pub fn run_engine(e: &Engine) -> u32 { e.speed }
`,
	"engine/src/main.rs": `fn main() { let e = engine::Engine { speed: 1 }; engine::run_engine(&e); }
`,
	"jvm/src/Store.java": `public class Store { public void saveRecord(String r) {} }
`,
	"jvm/src/App.java": `public class App { public static void main(String[] a) { new Store().saveRecord("x"); } }
`,
	"docs/retry.md":   "Retries: see MaxAttempts.\n",
	".env.example":    "MaxAttempts=9 # SECRET_EXAMPLE\n",
	"certs/dev.pem":   "MaxAttempts\n",
	"assets/logo.png": "\x89PNG\x00\x00MaxAttempts",
}

func buildFixture(t *testing.T, opt Options) (*Index, string) {
	t.Helper()
	dir := newRepo(t, fixture)
	// An untracked secret must never be read.
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("MaxAttempts=sk-live-UNTRACKED\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ix, err := Build(t.Context(), dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	return ix, dir
}

func TestBuildAndLookups(t *testing.T) {
	ix, _ := buildFixture(t, Options{})
	st := ix.Stats()
	if st.Files != 13 {
		t.Errorf("visible files = %d, want 13 (the fixture minus .env.example and certs/dev.pem)", st.Files)
	}
	if st.Indexed != 11 || st.Parsed != 11 || st.Cached != 0 {
		t.Errorf("stats = %+v, want 11 source files parsed", st)
	}
	if err := ix.Files().Check(".env.example"); !errors.Is(err, visibility.ErrSecret) {
		t.Errorf("Check(.env.example) = %v", err)
	}
	if !DefinitionsAvailable {
		t.Skip("built without cgo: no definitions")
	}
	locs := ix.Definitions("NewBackoff")
	if len(locs) != 1 || locs[0].Path != "retry/retry.go" || locs[0].Line != 12 || locs[0].Sig != "func NewBackoff(base int) *Backoff" {
		t.Errorf("Definitions(NewBackoff) = %+v", locs)
	}
	for name, want := range map[string]string{
		"Fetcher":    "tools/fetch.py",
		"makeClient": "web/api.ts",
		"run_engine": "engine/src/lib.rs",
		"saveRecord": "jvm/src/Store.java",
		"ApiClient":  "web/api.ts",
		"App":        "jvm/src/App.java,web/app.tsx",
	} {
		var got []string
		for _, l := range ix.Definitions(name) {
			got = append(got, l.Path)
		}
		if strings.Join(got, ",") != want {
			t.Errorf("Definitions(%s) in %v, want %s", name, got, want)
		}
	}
	if got := strings.Join(ix.References("MaxAttempts"), ","); got != "client/client.go,retry/retry.go" {
		t.Errorf("References(MaxAttempts) = %s", got)
	}
	if got := strings.Join(ix.References("Fetcher"), ","); got != "tools/cli.py,tools/fetch.py" {
		t.Errorf("References(Fetcher) = %s", got)
	}
	defs, ok := ix.FileDefinitions("retry/retry.go")
	if !ok || len(defs) != 5 {
		t.Errorf("FileDefinitions(retry/retry.go) = %+v, %v", defs, ok)
	}
	if _, ok := ix.FileDefinitions("docs/retry.md"); ok {
		t.Error("FileDefinitions of a markdown file")
	}
}

func TestMapRanksWhatTheTaskNames(t *testing.T) {
	ix, _ := buildFixture(t, Options{})
	for _, tc := range []struct {
		name  string
		seeds Seeds
		first string
	}{
		{"identifier in the brief", Seeds{Brief: "raise MaxAttempts to 5"}, "retry/retry.go"},
		{"path in the brief", Seeds{Brief: "the client in `web/api.ts` needs a timeout"}, "web/api.ts"},
		{"file plan", Seeds{Brief: "add logging", Paths: []string{"engine/src/main.rs"}}, "engine/src/main.rs"},
		{"identifier named on purpose", Seeds{Identifiers: []string{"saveRecord"}}, "jvm/src/Store.java"},
		{"snake case in the plan", Seeds{Plan: "rename run_engine"}, "engine/src/lib.rs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !DefinitionsAvailable && tc.name != "path in the brief" && tc.name != "file plan" {
				t.Skip("built without cgo")
			}
			r, err := ix.Rank(t.Context(), tc.seeds)
			if err != nil {
				t.Fatal(err)
			}
			if r[0].Path != tc.first {
				t.Errorf("first = %s, want %s (ranking %v)", r[0].Path, tc.first, r[:4])
			}
		})
	}

	m, err := ix.Map(t.Context(), Seeds{Brief: "raise MaxAttempts to 5"}, 2000)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"MaxAttempts: client/client.go:10; docs/retry.md:1; retry/retry.go:3,4",
		"retry/retry.go",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("map lacks %q:\n%s", want, m)
		}
	}
	if DefinitionsAvailable && !strings.Contains(m, "\nretry/retry.go\n  4: const MaxAttempts = 3\n") {
		t.Errorf("map lacks the definition of MaxAttempts:\n%s", m)
	}
	for _, never := range []string{".env", "sk-live", "SECRET_EXAMPLE", "dev.pem"} {
		if strings.Contains(m, never) {
			t.Errorf("map shows %q:\n%s", never, m)
		}
	}
}

func TestMapStaysWithinBudget(t *testing.T) {
	ix, _ := buildFixture(t, Options{})
	seeds := Seeds{Brief: "raise MaxAttempts and rename makeClient"}
	prev := 0
	for _, budget := range []int{0, 5, 30, 60, 100, 200, 400, 1000, 4000} {
		m, err := ix.Map(t.Context(), seeds, budget)
		if err != nil {
			t.Fatal(err)
		}
		if got := EstimateTokens(m); got > budget {
			t.Errorf("budget %d: map of %d tokens:\n%s", budget, got, m)
		}
		if len(m) < prev {
			t.Errorf("budget %d: map shrank from %d to %d bytes", budget, prev, len(m))
		}
		prev = len(m)
	}
	if m, _ := ix.Map(t.Context(), seeds, 4000); !strings.Contains(m, "Other files by folder") || !strings.Contains(m, "assets/ 1 (.png 1)") {
		t.Errorf("a large budget leaves out the folder summary:\n%s", m)
	}
}

func TestBuildFromCommit(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.go": "package a\n\nfunc Old() {}\n"})
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nfunc New() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "a.go")
	atHead, err := Build(t.Context(), dir, Options{Commit: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	staged, err := Build(t.Context(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !DefinitionsAvailable {
		t.Skip("built without cgo")
	}
	if len(atHead.Definitions("Old")) != 1 || len(atHead.Definitions("New")) != 0 {
		t.Errorf("at HEAD: Old %v, New %v", atHead.Definitions("Old"), atHead.Definitions("New"))
	}
	if len(staged.Definitions("New")) != 1 || len(staged.Definitions("Old")) != 0 {
		t.Errorf("in the index: Old %v, New %v", staged.Definitions("Old"), staged.Definitions("New"))
	}
	if _, err := Build(t.Context(), dir, Options{Commit: "no-such-rev"}); err == nil {
		t.Error("Build at an unknown commit succeeded")
	}
}

func TestCache(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	first, dir := buildFixture(t, Options{CacheDir: cache})
	seeds := Seeds{Brief: "raise MaxAttempts to 5"}
	want, err := first.Map(t.Context(), seeds, 1500)
	if err != nil {
		t.Fatal(err)
	}
	build := func() *Index {
		t.Helper()
		ix, err := Build(t.Context(), dir, Options{CacheDir: cache, Fresh: true})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ix.Map(t.Context(), seeds, 1500); err != nil || got != want {
			t.Errorf("map after a cached build differs (%v):\n%s\nwant:\n%s", err, got, want)
		}
		return ix
	}
	if st := build().Stats(); st.Parsed != 0 || st.Cached != 11 || st.Damaged != 0 {
		t.Errorf("warm build: %+v, want everything from the cache", st)
	}

	// A changed file is parsed again, alone.
	p := filepath.Join(dir, "main.go")
	if err := os.WriteFile(p, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "main.go")
	ix, err := Build(t.Context(), dir, Options{CacheDir: cache, Fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Parsed != 1 || st.Cached != 10 {
		t.Errorf("after changing one file: %+v, want 1 parsed and 10 cached", st)
	}
	git(t, dir, "checkout", "-q", "HEAD", "--", "main.go")
	if st := build().Stats(); st.Parsed != 0 || st.Cached != 11 {
		t.Errorf("back to the first version: %+v, want it still cached", st)
	}

	snap := filepath.Join(cache, indexName)
	good, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	for name, damage := range map[string]func([]byte) []byte{
		"a flipped byte": func(b []byte) []byte { b = append([]byte(nil), b...); b[len(b)/2] ^= 0x55; return b },
		"cut in half":    func(b []byte) []byte { return b[:len(b)/2] },
		"garbage":        func([]byte) []byte { return []byte("not a cache at all") },
		"empty":          func([]byte) []byte { return nil },
		"a huge length": func(b []byte) []byte {
			b = append([]byte(nil), b...)
			copy(b[16:], []byte{0xff, 0xff, 0xff, 0x7f})
			return b
		},
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(snap, damage(good), 0o644); err != nil {
				t.Fatal(err)
			}
			st := build().Stats()
			if st.Damaged == 0 || st.Parsed == 0 || st.Parsed+st.Cached != 11 {
				t.Errorf("damaged cache: %+v, want the damage noticed and the rest reparsed", st)
			}
			// The build repaired the cache.
			if st := build().Stats(); st.Parsed != 0 || st.Damaged != 0 {
				t.Errorf("after the repair: %+v", st)
			}
		})
	}

	t.Run("cache folder unusable", func(t *testing.T) {
		blocked := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(blocked, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		ix, err := Build(t.Context(), dir, Options{CacheDir: filepath.Join(blocked, "cache"), Fresh: true})
		if err != nil {
			t.Fatal(err)
		}
		if st := ix.Stats(); len(st.Warnings) == 0 || st.Parsed != 11 {
			t.Errorf("unusable cache folder: %+v, want a warning and a full parse", st)
		}
	})
}

func TestConcurrentBuildsShareTheCache(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	_, dir := buildFixture(t, Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ix, err := Build(context.Background(), dir, Options{CacheDir: cache, Workers: 2, Fresh: true})
			if err == nil && ix.Stats().Parsed+ix.Stats().Cached != 11 {
				err = errors.New("incomplete build")
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	ix, err := Build(t.Context(), dir, Options{CacheDir: cache, Fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Parsed != 0 || st.Damaged != 0 {
		t.Errorf("after concurrent builds: %+v, want a whole cache", st)
	}
	ents, _ := os.ReadDir(cache)
	if len(ents) != 1 {
		t.Errorf("cache folder holds %d entries, want the snapshot alone", len(ents))
	}
}

func TestBuildCancelled(t *testing.T) {
	dir := newRepo(t, fixture)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Build(ctx, dir, Options{}); err == nil {
		t.Error("Build with a cancelled context succeeded")
	}
}

func TestBuildReusesAnIndexOfTheSameFiles(t *testing.T) {
	a, dir := buildFixture(t, Options{})
	b, err := Build(t.Context(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("a second Build of the same files made a new index")
	}
	if c, err := Build(t.Context(), dir, Options{Fresh: true}); err != nil || c == a {
		t.Errorf("Build with Fresh reused the index (%v)", err)
	}
	if c, err := Build(t.Context(), dir, Options{Commit: "HEAD"}); err != nil || c == a {
		t.Errorf("Build of a commit reused the index's (%v)", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc Other() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "main.go")
	d, err := Build(t.Context(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d == a || (DefinitionsAvailable && len(d.Definitions("Other")) != 1) {
		t.Error("Build after a change reused the old index")
	}
}
