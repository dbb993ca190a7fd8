package evidence

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/fileid"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/patch"
)

// cacheTask makes a task folder with a patch and code/files/, and the
// .orch folder its cache lives in.
type cacheTask struct {
	orch, dir string
}

func newCacheTask(t *testing.T) cacheTask {
	t.Helper()
	root := t.TempDir()
	ct := cacheTask{orch: filepath.Join(root, ".orch"), dir: filepath.Join(root, ".orch", "tasks", "t1")}
	write(t, ct.dir, artifact.DiffFile, negate+createNew)
	write(t, ct.dir, "code/files/util.go", strings.Replace(utilBase, "a - b", "a + b", 1))
	write(t, ct.dir, "code/files/new.go", "package util\n")
	if err := os.MkdirAll(filepath.Join(ct.dir, "code/files/empty/deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	return ct
}

// observed is what one reader's run sees, and how much came from the
// cache.
type observed struct {
	diff         artifact.Loaded[patch.Diff]
	scan         artifact.Loaded[[]string]
	digest       string
	hits, misses int
}

func (ct cacheTask) observe(t *testing.T) observed {
	t.Helper()
	c := OpenCache(ct.orch, ct.dir, "t1")
	o := observed{diff: c.LoadDiff(ct.dir), scan: c.ScanCodeFiles(ct.dir)}
	o.digest, _ = c.filesDigest()
	c.Save()
	o.hits, o.misses = c.Hits, c.Misses
	return o
}

// truth is what the same run sees without a cache.
func (ct cacheTask) truth(t *testing.T) observed {
	t.Helper()
	o := observed{diff: artifact.LoadDiff(ct.dir), scan: artifact.ScanCodeFiles(ct.dir)}
	if fs, present, err := ReadCodeFiles(ct.dir); err == nil && present {
		o.digest = fs.Digest()
	}
	return o
}

func (ct cacheTask) check(t *testing.T, what string, wantHits, wantMisses int) {
	t.Helper()
	got, want := ct.observe(t), ct.truth(t)
	if !reflect.DeepEqual(got.diff, want.diff) || !reflect.DeepEqual(got.scan, want.scan) || got.digest != want.digest {
		t.Fatalf("%s: the cached observation differs from the files:\ngot  %+v\nwant %+v", what, got, want)
	}
	if got.hits != wantHits || got.misses != wantMisses {
		t.Fatalf("%s: %d hits and %d misses, want %d and %d", what, got.hits, got.misses, wantHits, wantMisses)
	}
}

// checkSome is check for a run whose racy observations depend on where
// the clock ticked: of its two observations, between minMisses and
// maxMisses are made again, the others come from the cache, and what is
// read equals the files.
func (ct cacheTask) checkSome(t *testing.T, what string, minMisses, maxMisses int) {
	t.Helper()
	got, want := ct.observe(t), ct.truth(t)
	if !reflect.DeepEqual(got.diff, want.diff) || !reflect.DeepEqual(got.scan, want.scan) || got.digest != want.digest {
		t.Fatalf("%s: the cached observation differs from the files:\ngot  %+v\nwant %+v", what, got, want)
	}
	if got.hits+got.misses != 2 || got.misses < minMisses || got.misses > maxMisses {
		t.Fatalf("%s: %d hits and %d misses, want %d to %d misses of 2", what, got.hits, got.misses, minMisses, maxMisses)
	}
}

// settle returns once the file system's clock, read as the mtime of a new
// file, is past the ctime of every file of the task (a change sets it): observations
// made from then on are not racy. It spins on the clock (a tick is a few
// milliseconds at most) rather than sleeping a guessed time.
func (ct cacheTask) settle(t *testing.T) {
	t.Helper()
	var newest int64
	_ = filepath.Walk(ct.dir, func(path string, _ os.FileInfo, err error) error {
		if err == nil {
			if id, ok := pathID(path); ok {
				newest = max(newest, id.Ctime)
			}
		}
		return nil
	})
	probe := filepath.Join(t.TempDir(), "probe")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if err := os.WriteFile(probe, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if id, _ := pathID(probe); id.Mtime > newest {
			return
		}
	}
	t.Fatal("the file system's clock did not move in 10 s")
}

// pathID is path's identity as the cache takes it (lstatAt in its folder).
func pathID(path string) (fileid.ID, bool) {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return fileid.ID{}, false
	}
	defer d.Close()
	id, err := fileid.LstatAt(d, filepath.Base(path))
	return id, err == nil
}

func TestCacheReusesUnchangedObservations(t *testing.T) {
	ct := newCacheTask(t)
	ct.settle(t)
	ct.check(t, "first run", 0, 2)
	ct.check(t, "nothing changed", 2, 0)
	ct.check(t, "nothing changed, again", 2, 0)
}

// TestCacheRacyEntries: observations of files changed in the clock tick in
// which they were observed are made again, until one begins after the
// change.
func TestCacheRacyEntries(t *testing.T) {
	ct := newCacheTask(t)
	// No settle: the files were written in this tick, most likely.
	first := ct.observe(t)
	if first.misses != 2 {
		t.Fatalf("first run: %d misses", first.misses)
	}
	// Same size, same second: edit and set mtime back to what it was.
	p := filepath.Join(ct.dir, "code/files/new.go")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("package util"+"\t"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	// The edited files' observation is made again (a miss); the patch's
	// was kept unless it too was racy.
	ct.checkSome(t, "same-size edit with the old mtime", 1, 2)
	ct.settle(t)
	// If the edit and the observation that saw it fell in one clock tick,
	// that observation was racy and is made again now (1 hit, 1 miss);
	// under load the observation may have begun a tick later and been
	// kept (2 hits). Either way what is read equals the files (check
	// compares with the truth); which stamps are trusted is decided
	// exactly by TestStampTrusted's table.
	ct.checkSome(t, "after the clock moved", 0, 1)
	ct.check(t, "then", 2, 0)
}

func TestCacheSeesEveryChange(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string)
		hits   int
	}{
		{"same-size edit, mtime set back", func(t *testing.T, dir string) {
			sameSize(t, filepath.Join(dir, "code/files/util.go"), func(b []byte) []byte { return bytes.Replace(b, []byte("a + b"), []byte("a * b"), 1) })
		}, 1},
		{"same-size patch edit, mtime set back", func(t *testing.T, dir string) {
			sameSize(t, filepath.Join(dir, artifact.DiffFile), func(b []byte) []byte { return bytes.Replace(b, []byte("+package util"), []byte("+package utix"), 1) })
		}, 1},
		{"replaced by a rename, same size and mtime", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "code/files/new.go")
			fi, _ := os.Stat(p)
			tmp := filepath.Join(dir, "code/new.tmp")
			if err := os.WriteFile(tmp, []byte("package utix\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, p); err != nil {
				t.Fatal(err)
			}
		}, 1},
		{"a file added to an empty folder", func(t *testing.T, dir string) {
			write(t, dir, "code/files/empty/deeper/x.go", "package x\n")
		}, 1},
		{"a file removed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "code/files/new.go")); err != nil {
				t.Fatal(err)
			}
		}, 1},
		{"a file replaced by a symbolic link", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "code/files/new.go")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/etc/passwd", p); err != nil {
				t.Fatal(err)
			}
		}, 1},
		{"the patch removed (code/ changes with it)", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, artifact.DiffFile)); err != nil {
				t.Fatal(err)
			}
		}, 0},
		{"code/files removed", func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, artifact.CodeFilesDir)); err != nil {
				t.Fatal(err)
			}
		}, 1},
		{"a file's mtime in the future (clock skew)", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "code/files/new.go")
			future := time.Now().Add(time.Hour)
			if err := os.Chtimes(p, future, future); err != nil {
				t.Fatal(err)
			}
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct := newCacheTask(t)
			ct.settle(t)
			ct.check(t, "first run", 0, 2)
			ct.check(t, "unchanged", 2, 0)
			tc.change(t, ct.dir)
			ct.check(t, "after the change", tc.hits, 2-tc.hits)
		})
	}
}

// TestCacheClockSkewNeverTrusted: a file whose mtime is ahead of the file
// system's clock is observed again on every run.
func TestCacheClockSkewNeverTrusted(t *testing.T) {
	ct := newCacheTask(t)
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(ct.dir, artifact.DiffFile), future, future); err != nil {
		t.Fatal(err)
	}
	ct.settle(t)
	ct.check(t, "first run", 0, 2)
	ct.check(t, "second run", 1, 1)
	ct.check(t, "third run", 1, 1)
}

// sameSize rewrites a file with edit (which must keep its size) and sets
// its mtime back: only ctime tells.
func sameSize(t *testing.T, p string, edit func([]byte) []byte) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	nb := edit(b)
	if len(nb) != len(b) || bytes.Equal(nb, b) {
		t.Fatal("the edit must change the bytes and keep the size")
	}
	if err := os.WriteFile(p, nb, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// TestCacheCorrupt: a cache file that is damaged in any way is ignored and
// rebuilt, never trusted.
func TestCacheCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func([]byte) []byte
	}{
		{"a flipped byte", func(b []byte) []byte { b[len(b)/2] ^= 1; return b }},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"empty", func([]byte) []byte { return nil }},
		{"other version", func(b []byte) []byte { return bytes.Replace(b, []byte("observations 1"), []byte("observations 9"), 1) }},
		{"garbage appended", func(b []byte) []byte { return append(b, "file x\n"...) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct := newCacheTask(t)
			ct.settle(t)
			ct.check(t, "first run", 0, 2)
			path := filepath.Join(ct.orch, ObservedDir, "t1")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tc.corrupt(b), 0o644); err != nil {
				t.Fatal(err)
			}
			ct.check(t, "corrupt cache", 0, 2)
			ct.check(t, "rebuilt", 2, 0)
			if _, err := parseObservations(mustRead(t, path)); err != nil {
				t.Fatalf("the rebuilt cache does not parse: %v", err)
			}
		})
	}
}

// TestCacheAgreement: the comparison of code/files/ with the patch is
// taken from the cache for the same contents and base, and made again
// (finding the disagreement) after a change.
func TestCacheAgreement(t *testing.T) {
	repo, base := seed(t, map[string]string{"util.go": utilBase}, "sha1")
	root := t.TempDir()
	orch, dir := filepath.Join(root, ".orch"), filepath.Join(root, ".orch", "tasks", "t1")
	write(t, dir, artifact.DiffFile, negate)
	write(t, dir, "code/files/util.go", strings.Replace(utilBase, "a - b", "a + b", 1))
	write(t, dir, artifact.CodegenFile, `{"status":"completed","base":"`+base+`"}`)
	ctx := t.Context()
	run := func() (*lifecycle.Agreement, *Cache) {
		c := OpenCache(orch, dir, "t1")
		s := lifecycle.Snapshot{Diff: c.LoadDiff(dir), CodeFiles: c.ScanCodeFiles(dir)}
		if err := ObserveCached(ctx, c, repo.Dir, dir, lifecycle.Codegen, &s); err != nil {
			t.Fatal(err)
		}
		c.Save()
		return s.Evidence.Agreement, c
	}
	(cacheTask{orch: orch, dir: dir}).settle(t)
	if a, c := run(); a == nil || a.Err != nil || c.Misses != 3 {
		t.Fatalf("first run: agreement %+v, %d misses", a, c.Misses)
	}
	if a, c := run(); a == nil || a.Err != nil || c.Hits != 3 || c.Misses != 0 {
		t.Fatalf("second run: agreement %+v, %d hits %d misses", a, c.Hits, c.Misses)
	}
	write(t, dir, "code/files/util.go", strings.Replace(utilBase, "a - b", "a * b", 1))
	if a, _ := run(); a == nil || a.Err == nil || !strings.Contains(a.Err.Error(), "util.go") {
		t.Fatalf("after an edit: agreement %+v, want a disagreement naming util.go", a)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestObservationsRoundTrip: what is written is read back the same.
func TestObservationsRoundTrip(t *testing.T) {
	s := stamp{ID: fileid.ID{Size: 3, Mtime: 5, Ctime: 6, Ino: 1 << 40, Dev: 9, Mode: uint32(os.ModeDir | 0o755)}, Since: 7}
	o := observations{
		Diff: &diffObs{stamp: s, SHA256: SHA256Hex(nil), Diff: patch.Diff{Bytes: 10, Added: 1, Removed: 2, Files: []patch.Entry{
			{Op: patch.OpCreate, NewPath: "a b/\"q\".go"}, {Op: patch.OpDelete, OldPath: "d.go"},
			{Op: patch.OpUpdate, OldPath: "é.go", NewPath: "é.go"}, {Op: patch.OpRename, OldPath: "x", NewPath: "y/z"},
		}}},
		Dirs:   map[string]stamp{"code": s, "code/files": s, "code/files/a b": s},
		Files:  map[string]fileObs{"a b/\"q\".go": {stamp: s, SHA256: SHA256Hex([]byte("x"))}, "tab\there": {stamp: s, SHA256: SHA256Hex(nil)}},
		Agreed: []agreeKey{{Diff: SHA256Hex(nil), Files: SHA256Hex(nil), Base: strings.Repeat("ab", 20)}},
		Hashes: map[string]fileObs{artifact.CodeReviewFile: {stamp: s, SHA256: SHA256Hex([]byte("r"))}},
		Log: &logObs{stamp: s, Events: []lifecycle.GateEvent{
			{Seq: 2, From: lifecycle.Planning, To: lifecycle.PlanReview, Hashes: map[string]string{"plan_sha256": SHA256Hex(nil), "": "not hex \"q\""}},
			{Seq: 3, Override: true, From: lifecycle.Review, To: lifecycle.Accept},
			{Seq: 4, Redo: true, From: lifecycle.Accept, To: lifecycle.Codegen, Hashes: map[string]string{"k": "v"}},
		}},
	}
	got, err := parseObservations(encodeObservations(o))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, o) {
		t.Fatalf("round trip:\ngot  %+v\nwant %+v", got, o)
	}
	empty := observations{Dirs: map[string]stamp{"code": s, "code/files": s}, Files: map[string]fileObs{}}
	if got, err := parseObservations(encodeObservations(empty)); err != nil || !reflect.DeepEqual(got, empty) {
		t.Fatalf("empty code/files: %+v, %v", got, err)
	}
}
