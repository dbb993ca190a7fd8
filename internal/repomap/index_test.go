package repomap

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/repomap/synthetic"
)

// entryBytes returns the encoded entry of path in the index file of
// cache.
func entryBytes(t *testing.T, cache, path string) []byte {
	t.Helper()
	s, err := openIndex(filepath.Join(cache, indexName))
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < s.nrows; r++ {
		if string(s.rowPath(r)) == path {
			or, _ := s.row(r)
			return bytes.Clone(s.sec[secEntries][or.entryOff : or.entryOff+or.entryLen])
		}
	}
	t.Fatalf("%s has no row", path)
	return nil
}

func TestIncrementalUpdate(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	_, dir := buildFixture(t, Options{CacheDir: cache})
	build := func() *Index {
		t.Helper()
		ix, err := Build(t.Context(), dir, Options{CacheDir: cache, Fresh: true})
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
	before := entryBytes(t, cache, "client/client.go")

	// A changed file is parsed again, alone; the others' entries are
	// copied into the new file byte for byte (no name is renumbered).
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc Changed() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "main.go")
	ix := build()
	if st := ix.Stats(); st.Parsed != 1 || st.Cached != 10 {
		t.Errorf("after changing one file: %+v, want 1 parsed and 10 cached", st)
	}
	if after := entryBytes(t, cache, "client/client.go"); !bytes.Equal(before, after) {
		t.Errorf("an unchanged file's entry was re-encoded:\n%x\n%x", before, after)
	}
	if DefinitionsAvailable {
		if d := ix.Definitions("Changed"); len(d) != 1 || d[0].Path != "main.go" {
			t.Errorf("Definitions(Changed) = %+v", d)
		}
		if d := ix.Definitions("main"); len(d) != 2 { // main.rs and App.java keep theirs; main.go's is gone
			t.Errorf("Definitions(main) = %+v, want the two of the other files", d)
		}
	}

	// A deleted file is gone from every lookup.
	git(t, dir, "rm", "-q", "retry/retry.go")
	ix = build()
	if st := ix.Stats(); st.Parsed != 0 {
		t.Errorf("after deleting a file: %+v, want nothing parsed", st)
	}
	if d := ix.Definitions("MaxAttempts"); len(d) != 0 {
		t.Errorf("Definitions(MaxAttempts) after the delete = %+v", d)
	}
	if r := ix.References("NewBackoff"); slices.Contains(r, "retry/retry.go") {
		t.Errorf("References(NewBackoff) = %v still names the deleted file", r)
	}
	if _, ok := ix.FileDefinitions("retry/retry.go"); ok {
		t.Error("FileDefinitions of a deleted file")
	}
	m, err := ix.Map(t.Context(), Seeds{Brief: "raise MaxAttempts to 5"}, 2000)
	if err != nil || strings.Contains(m, "retry/retry.go") {
		t.Errorf("the map shows the deleted file (%v):\n%s", err, m)
	}

	// A renamed file is not parsed again: its entry is found by blob.
	git(t, dir, "mv", "client/client.go", "client/http.go")
	ix = build()
	if st := ix.Stats(); st.Parsed != 0 || st.Cached != 10 {
		t.Errorf("after renaming a file: %+v, want nothing parsed, 10 cached", st)
	}
	if DefinitionsAvailable {
		if d := ix.Definitions("Fetch"); len(d) != 1 || d[0].Path != "client/http.go" {
			t.Errorf("Definitions(Fetch) after the rename = %+v", d)
		}
	}
	if after := entryBytes(t, cache, "client/http.go"); !bytes.Equal(before, after) {
		t.Errorf("the renamed file's entry differs:\n%x\n%x", before, after)
	}

	// Back to the first commit: the rows of the files it had are still
	// there (few dead rows are kept), so nothing is parsed.
	git(t, dir, "reset", "-q", "--hard", "HEAD")
	if st := build().Stats(); st.Parsed != 0 || st.Cached != 11 {
		t.Errorf("back to the commit: %+v, want everything cached", st)
	}
}

// TestLocalRankAgreesWithPageRank compares the ranking by local push with
// personalised PageRank over the whole graph by power iteration (the
// ranking before the push), on the fixture and a synthetic repository.
func TestLocalRankAgreesWithPageRank(t *testing.T) {
	if !DefinitionsAvailable {
		t.Skip("built without cgo")
	}
	fix, _ := buildFixture(t, Options{})
	syn := syntheticIndex(t, 400)
	for _, tc := range []struct {
		ix    *Index
		seeds Seeds
	}{
		{fix, Seeds{Brief: "raise MaxAttempts to 5"}},
		{fix, Seeds{Brief: "the client in `web/api.ts` needs a timeout"}},
		{fix, Seeds{Plan: "rename run_engine", Paths: []string{"engine/src/lib.rs"}}},
		{syn, Seeds{Brief: "make ParseHeader120 return x + 2"}},
		{syn, Seeds{Brief: fmt.Sprintf("%s and %s disagree", synthetic.FuncName(13, 1), synthetic.FuncName(301, 5))}},
		{syn, Seeds{Paths: []string{"pkg000/sub01/file000101.go"}}},
	} {
		r, err := tc.ix.rank(t.Context(), tc.seeds)
		if err != nil {
			t.Fatal(err)
		}
		exact, pr := exactRank(tc.ix, r)
		top := min(10, len(exact))
		got := r.order[:top]
		want := exact[:top]
		if got[0] != want[0] {
			t.Errorf("%+v: first %s, PageRank's %s", tc.seeds, tc.ix.all[got[0]].Path, tc.ix.all[want[0]].Path)
		}
		// Each file of the top ten is one PageRank ranks about as high
		// as its own top ten (near ties may swap).
		for i, f := range got {
			if pr[f] < 0.9*pr[want[top-1]] {
				t.Errorf("%+v: #%d %s has PageRank %.5f, below its tenth's %.5f", tc.seeds, i+1, tc.ix.all[f].Path, pr[f], pr[want[top-1]])
			}
		}
	}
}

// exactRank is personalised PageRank by power iteration over every file,
// with r's personalisation and identifier boosts.
func exactRank(ix *Index, r *ranking) ([]int32, []float64) {
	n := len(ix.all)
	pers := make([]float64, n)
	// The personalisation again, from the ranking's seeds.
	p2 := &ranking{terms: r.terms, occur: map[string][]occurrence{}}
	pw, _ := ix.personalise(context.Background(), p2)
	for _, x := range pw {
		pers[x.file] = x.w
	}
	type edge struct {
		defs []int32
		w    float64
	}
	out := make([][]edge, n)
	for f := range out {
		e := ix.entry(int32(f))
		if e == nil || !e.lang.source() {
			continue
		}
		for _, ref := range e.refs {
			defs := ix.definers(ref.name)
			if len(defs) == 0 || len(defs) == 1 && defs[0] == int32(f) {
				continue
			}
			b := 1.0
			if w, ok := p2.mentioned[ref.name]; ok {
				b = w
			}
			out[f] = append(out[f], edge{defs, ix.identWeight(ref.name, len(defs)) * math.Sqrt(float64(ref.count)) * b})
		}
	}
	rank := slices.Clone(pers)
	for iter := 0; iter < 100; iter++ {
		next := make([]float64, n)
		dangling := 0.0
		for f := range rank {
			total := 0.0
			for _, e := range out[f] {
				total += e.w
			}
			if total == 0 {
				dangling += rank[f]
				continue
			}
			for _, e := range out[f] {
				each := damping * rank[f] * e.w / total / float64(len(e.defs))
				for _, d := range e.defs {
					next[d] += each
				}
			}
		}
		for f := range next {
			next[f] += (1-damping)*pers[f] + damping*dangling*pers[f]
		}
		rank = next
	}
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		switch {
		case rank[a] > rank[b]:
			return -1
		case rank[a] < rank[b]:
			return 1
		}
		return 0
	})
	return order, rank
}

// syntheticIndex indexes a synthetic repository of n files (no cache).
func syntheticIndex(t *testing.T, n int) *Index {
	t.Helper()
	dir := t.TempDir()
	if err := synthetic.Write(dir, n); err != nil {
		t.Fatal(err)
	}
	ix, err := Build(t.Context(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// The helper process: the test binary run again with REPOMAP_HELPER set
// builds maps like an orch command (see helperMain).
func helperCommand(t *testing.T, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "REPOMAP_HELPER="+strings.Join(args, "\n"))
	return cmd
}

// helperMain runs one helper: "builds DIR CACHE COMMIT WANT N" builds the
// map of COMMIT N times, checking each time that the identifier WANT is
// defined; "crash DIR CACHE" builds and stops dead (SIGKILL from the
// parent) once the new index file is written and not yet renamed;
// "index DIR CACHE NAME..." builds once and prints helperIndexed.
func helperMain(spec string) int {
	args := strings.Split(spec, "\n")
	ctx := context.Background()
	switch args[0] {
	case "builds":
		dir, cache, commit, want := args[1], args[2], args[3], args[4]
		var n int
		fmt.Sscan(args[5], &n)
		for i := 0; i < n; i++ {
			ix, err := Build(ctx, dir, Options{CacheDir: cache, Commit: commit, Fresh: true, Workers: 1})
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			if DefinitionsAvailable && len(ix.Definitions(want)) != 1 {
				fmt.Fprintf(os.Stderr, "build %d at %s: Definitions(%s) = %+v\n", i, commit, want, ix.Definitions(want))
				return 1
			}
			if st := ix.Stats(); st.Damaged > 0 {
				fmt.Fprintf(os.Stderr, "build %d: a damaged index file: %+v\n", i, st)
				return 1
			}
		}
		return 0
	case "crash":
		testHookWritten = func(tmp string) {
			fmt.Println("written", tmp)
			os.Stdout.Sync()
			select {} // the parent kills the process here
		}
		if _, err := Build(ctx, args[1], Options{CacheDir: args[2], Fresh: true}); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		return 1
	case "index":
		// "index DIR CACHE NAME...": one build; prints whether this build
		// has tree-sitter, the stats, and how many definitions each NAME
		// has (a test builds this binary without cgo and runs it).
		ix, err := Build(ctx, args[1], Options{CacheDir: args[2], Fresh: true, Workers: 1})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defs := map[string]int{}
		for _, name := range args[3:] {
			defs[name] = len(ix.Definitions(name))
		}
		out, _ := json.Marshal(helperIndexed{Definitions: DefinitionsAvailable, Stats: ix.Stats(), Defs: defs})
		fmt.Println(string(out))
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown helper", args[0])
	return 2
}

// helperIndexed is what the "index" helper prints.
type helperIndexed struct {
	Definitions bool           // DefinitionsAvailable in the helper's build
	Stats       Stats          // of the build
	Defs        map[string]int // definitions found per name
}

// TestTwoProcessesShareTheIndex runs two processes building the maps of
// two commits (whose files differ) into one cache folder at once: each
// reads the file the other writes; neither may see a torn or foreign
// file, and the last file is whole.
func TestTwoProcessesShareTheIndex(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	_, dir := buildFixture(t, Options{})
	first := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc Second() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "commit", "-q", "-am", "second")
	second := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
	var wg sync.WaitGroup
	for _, c := range [][2]string{{first, "MaxAttempts"}, {second, "Second"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := helperCommand(t, "builds", dir, cache, c[0], c[1], "12")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("helper at %s: %v\n%s", c[0][:7], err, out)
			}
		}()
	}
	wg.Wait()
	if _, err := openIndex(filepath.Join(cache, indexName)); err != nil {
		t.Errorf("the index file after both: %v", err)
	}
	ents, _ := os.ReadDir(cache)
	if len(ents) != 1 {
		t.Errorf("cache folder holds %d entries, want the index file alone", len(ents))
	}
}

// TestCrashWhileWriting kills a build after it wrote its new index file
// and before the rename: the old file stays whole and in use, the next
// build finishes the work, and the stray temporary file goes once it is
// an hour old.
func TestCrashWhileWriting(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	_, dir := buildFixture(t, Options{CacheDir: cache})
	good, err := os.ReadFile(filepath.Join(cache, indexName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc Crashed() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "main.go")

	cmd := helperCommand(t, "crash", dir, cache)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "written ") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper said %q (%v)", line, err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	tmp := strings.TrimSpace(strings.TrimPrefix(line, "written "))

	if now, err := os.ReadFile(filepath.Join(cache, indexName)); err != nil || !bytes.Equal(now, good) {
		t.Fatalf("the index file changed under a crashed writer (%v)", err)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("the crashed writer's temporary file: %v", err)
	}
	ix, err := Build(t.Context(), dir, Options{CacheDir: cache, Fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Damaged != 0 || st.Parsed != 1 || st.Cached != 10 {
		t.Errorf("after the crash: %+v, want the old file used and one file parsed", st)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Errorf("a fresh temporary file was removed (a concurrent writer may own it): %v", err)
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(tmp, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(t.Context(), dir, Options{CacheDir: cache, Fresh: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("a stale temporary file was left: %v", err)
	}
}

// TestHostileIndexFile gives Build files whose checksum is right but
// whose shape is not: each is ignored and rebuilt.
func TestHostileIndexFile(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	_, dir := buildFixture(t, Options{CacheDir: cache})
	p := filepath.Join(cache, indexName)
	good, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	withCRC := func(b []byte) []byte {
		binary.LittleEndian.PutUint32(b[len(b)-16:], crc32.Checksum(b[:len(b)-16], crcTable()))
		return b
	}
	trailer := len(good) - trailerBytes
	for name, damage := range map[string]func([]byte) []byte{
		"a section past the end": func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[trailer+16*secNames+8:], 1<<40)
			return withCRC(b)
		},
		"more rows than bytes": func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[trailer+numSections*16:], 1<<30)
			return withCRC(b)
		},
		"an odd section offset": func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[trailer+16*secHash:], 3)
			return withCRC(b)
		},
		"version 1": func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[8:], 1)
			return withCRC(b)
		},
		"cut by one byte": func(b []byte) []byte { return b[:len(b)-1] },
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(p, damage(bytes.Clone(good)), 0o644); err != nil {
				t.Fatal(err)
			}
			ix, err := Build(t.Context(), dir, Options{CacheDir: cache, Fresh: true})
			if err != nil {
				t.Fatal(err)
			}
			if st := ix.Stats(); st.Damaged != 1 || st.Parsed != 11 {
				t.Errorf("hostile file: %+v, want it ignored and everything parsed", st)
			}
		})
	}
}

// TestFirstIndexResumes stops a first index between two batches: the
// next build parses only what the last written file lacks.
func TestFirstIndexResumes(t *testing.T) {
	defer func(n int) { parseBatch = n }(parseBatch)
	parseBatch = 4
	cache := filepath.Join(t.TempDir(), "cache")
	dir := newRepo(t, fixture)
	writes := 0
	testHookWritten = func(string) { writes++ }
	defer func() { testHookWritten = nil }()
	ix, err := Build(t.Context(), dir, Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if writes < 3 {
		t.Errorf("%d index files written for %d files in batches of 4", writes, ix.Stats().Indexed)
	}
	testHookWritten = nil
	ix2, err := Build(t.Context(), dir, Options{CacheDir: cache, Fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if st := ix2.Stats(); st.Parsed != 0 || st.Cached != 11 {
		t.Errorf("after a batched first index: %+v", st)
	}
	for _, seeds := range []Seeds{{Brief: "raise MaxAttempts to 5"}, {Plan: "rename run_engine"}} {
		a, _ := ix.Map(t.Context(), seeds, 1500)
		b, _ := ix2.Map(t.Context(), seeds, 1500)
		if a != b {
			t.Errorf("the maps of a batched build and its reload differ:\n%s\n---\n%s", a, b)
		}
	}
}

func TestProgress(t *testing.T) {
	var clock time.Time
	now := func() time.Time { return clock }
	var b strings.Builder
	p := newProgressAt(&b, 100, now)
	p.add(10)
	clock = clock.Add(900 * time.Millisecond)
	p.add(10)
	if b.Len() != 0 {
		t.Errorf("progress before a second: %q", b.String())
	}
	clock = clock.Add(200 * time.Millisecond)
	p.add(10)
	clock = clock.Add(50 * time.Millisecond)
	p.add(10) // too soon after the last line
	clock = clock.Add(100 * time.Millisecond)
	p.add(60)
	p.done()
	want := "\rIndexing the repository map:  30% (30/100 files)" +
		"\rIndexing the repository map: 100% (100/100 files)" +
		"\rIndexing the repository map: 100% (100/100 files), done.\n"
	if b.String() != want {
		t.Errorf("progress:\n%q\nwant\n%q", b.String(), want)
	}

	// A fast build shows nothing; no writer shows nothing.
	b.Reset()
	p = newProgressAt(&b, 5, now)
	p.add(5)
	p.done()
	if b.Len() != 0 {
		t.Errorf("a fast build showed %q", b.String())
	}
	newProgressAt(nil, 5, now).add(5)
}
