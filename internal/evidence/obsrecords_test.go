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
	"github.com/orchdev/orch/internal/lifecycle"
)

// recordsLog is a transcript whose gates bound the plan and the patch,
// then a regression from review back to codegen that judged the patch.
var recordsLog = strings.Join([]string{
	`{"seq":1,"kind":"created","state":{"phase":"planning","revision":1}}`,
	`{"seq":2,"kind":"transition","from":"planning","to":"plan_review","evidence":{"plan_sha256":"` + SHA256Hex([]byte("p1")) + `"}}`,
	`{"seq":3,"kind":"transition","from":"plan_review","to":"codegen","evidence":{"plan_sha256":"` + SHA256Hex([]byte("p2")) + `","x":""}}`,
	`{"seq":4,"kind":"transition","from":"codegen","to":"review","evidence":{"diff_sha256":"` + SHA256Hex([]byte("d1")) + `"}}`,
	`{"seq":5,"kind":"transition","from":"review","to":"codegen","evidence":{"diff_sha256":"` + SHA256Hex([]byte("d1")) + `"}}`,
	`{"seq":6,"kind":"override","from":"nowhere","to":"codegen"}`,
	``}, "\n")

// newRecordsTask is a task folder with a transcript, the four files the
// evidence hashes whole, and the .orch folder its cache lives in.
func newRecordsTask(t *testing.T) cacheTask {
	t.Helper()
	root := t.TempDir()
	ct := cacheTask{orch: filepath.Join(root, ".orch"), dir: filepath.Join(root, ".orch", "tasks", "t1")}
	write(t, ct.dir, transcriptFile, recordsLog)
	write(t, ct.dir, artifact.PlanFile, `{"id":"t1","title":"T","brief":"b"}`)
	write(t, ct.dir, artifact.DiffFile, negate)
	write(t, ct.dir, artifact.CodeReviewFile, `{"ok":true,"issues":[]}`)
	write(t, ct.dir, artifact.TestReportFile, `{"status":"completed"}`)
	return ct
}

// evidenceOf is what a reader's run in planning finds of the gates'
// records and the files' hashes, with the cache (and its counts) or
// without (nil c).
func (ct cacheTask) evidenceOf(t *testing.T, cached bool) (lifecycle.Evidence, int, int) {
	t.Helper()
	var c *Cache
	if cached {
		c = OpenCache(ct.orch, ct.dir, "t1")
	}
	var s lifecycle.Snapshot
	if err := ObserveCached(t.Context(), c, "", ct.dir, lifecycle.Planning, &s); err != nil {
		t.Fatal(err)
	}
	if c == nil {
		return s.Evidence, 0, 0
	}
	c.Save()
	return s.Evidence, c.Hits, c.Misses
}

func (ct cacheTask) checkEvidence(t *testing.T, what string, wantHits, wantMisses int) {
	t.Helper()
	got, hits, misses := ct.evidenceOf(t, true)
	want, _, _ := ct.evidenceOf(t, false)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: the cached evidence differs from the files:\ngot  %+v\nwant %+v", what, got, want)
	}
	if hits != wantHits || misses != wantMisses {
		t.Fatalf("%s: %d hits and %d misses, want %d and %d", what, hits, misses, wantHits, wantMisses)
	}
}

// TestCacheRecordsAndHashes: the gates' records of the transcript and the
// hashes of the plan, patch, code review and test report are taken from
// the observation cache while their files are unchanged, and read again
// after any change: an append, a same-size edit with the mtime set back,
// a rename over the file, a removal, a clock in the future.
func TestCacheRecordsAndHashes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string)
		hits   int
	}{
		{"an event appended to the transcript", func(t *testing.T, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, transcriptFile), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString(`{"seq":7,"kind":"transition","from":"codegen","to":"review","evidence":{"diff_sha256":"` + SHA256Hex([]byte("d2")) + `"}}` + "\n"); err != nil {
				t.Fatal(err)
			}
		}, 4},
		{"a same-size edit of a bound hash, mtime set back", func(t *testing.T, dir string) {
			sameSize(t, filepath.Join(dir, transcriptFile), func(b []byte) []byte {
				return bytes.Replace(b, []byte(SHA256Hex([]byte("p2"))), []byte(SHA256Hex([]byte("p3"))), 1)
			})
		}, 4},
		{"a same-size edit of the gate's phase, mtime set back", func(t *testing.T, dir string) {
			sameSize(t, filepath.Join(dir, transcriptFile), func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"from":"nowhere","to":"codegen"`), []byte(`"from":"codegen","to":"codegen"`), 1)
			})
		}, 4},
		{"a same-size edit of the code review, mtime set back", func(t *testing.T, dir string) {
			sameSize(t, filepath.Join(dir, artifact.CodeReviewFile), func(b []byte) []byte { return bytes.Replace(b, []byte("true"), []byte("TRUE"), 1) })
		}, 4},
		{"the test report replaced by a rename, same size and mtime", func(t *testing.T, dir string) {
			p := filepath.Join(dir, artifact.TestReportFile)
			fi, _ := os.Stat(p)
			tmp := filepath.Join(dir, "report.tmp")
			if err := os.WriteFile(tmp, []byte(`{"status":"COMPLETED"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, p); err != nil {
				t.Fatal(err)
			}
		}, 4},
		{"the patch removed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, artifact.DiffFile)); err != nil {
				t.Fatal(err)
			}
		}, 4},
		{"the transcript removed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, transcriptFile)); err != nil {
				t.Fatal(err)
			}
		}, 4},
		{"the plan replaced by a symbolic link", func(t *testing.T, dir string) {
			p := filepath.Join(dir, artifact.PlanFile)
			if err := os.Rename(p, p+".old"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Base(p)+".old", p); err != nil {
				t.Fatal(err)
			}
		}, 4},
		{"the transcript's mtime in the future (clock skew)", func(t *testing.T, dir string) {
			future := time.Now().Add(time.Hour)
			if err := os.Chtimes(filepath.Join(dir, transcriptFile), future, future); err != nil {
				t.Fatal(err)
			}
		}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct := newRecordsTask(t)
			ct.settle(t)
			// code/files/ is missing: its scan is made on every run.
			ct.checkEvidence(t, "first run", 0, 6)
			ct.checkEvidence(t, "unchanged", 5, 1)
			tc.change(t, ct.dir)
			ct.settle(t)
			got, _, _ := ct.evidenceOf(t, true)
			want, _, _ := ct.evidenceOf(t, false)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("after the change: the cached evidence differs from the files:\ngot  %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestCacheRecordsRacy: records and hashes stamped in the clock tick of
// their file's last change (on a coarse clock a same-size edit in that
// tick leaves the identity as it was) are read again, and stale content
// under a matching identity is never served.
func TestCacheRecordsRacy(t *testing.T) {
	ct := newRecordsTask(t)
	ct.settle(t)
	ct.checkEvidence(t, "first run", 0, 6)
	// The cache as a reader in the tick of the change would have left it:
	// the files' identities now, stamped at their mtime, with stale
	// records and hashes.
	c := OpenCache(ct.orch, ct.dir, "t1")
	o := c.old
	logID, _ := pathID(filepath.Join(ct.dir, transcriptFile))
	o.Log.stamp = stamp{ID: logID, Since: logID.Mtime}
	o.Log.Events = o.Log.Events[:1]
	for rel, h := range o.Hashes {
		id, _ := pathID(filepath.Join(ct.dir, rel))
		h.stamp, h.SHA256 = stamp{ID: id, Since: max(id.Mtime, id.Ctime)}, SHA256Hex([]byte("stale"))
		o.Hashes[rel] = h
	}
	if err := os.WriteFile(filepath.Join(ct.orch, ObservedDir, "t1"), encodeObservations(o), 0o644); err != nil {
		t.Fatal(err)
	}
	ct.checkEvidence(t, "racy entries", 0, 6)
	ct.checkEvidence(t, "read again", 5, 1)
}

// TestCacheRemovesStray: a save removes the temporary cache files of the
// task that a killed reader left behind an hour ago or more, and keeps a
// live reader's.
func TestCacheRemovesStray(t *testing.T) {
	ct := newRecordsTask(t)
	dir := filepath.Join(ct.orch, ObservedDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old, fresh := filepath.Join(dir, ".t1.tmp-0123456789ab"), filepath.Join(dir, ".t1.tmp-ba9876543210")
	for _, p := range []string{old, fresh} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	then := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(old, then, then); err != nil {
		t.Fatal(err)
	}
	ct.evidenceOf(t, true)
	if _, err := os.Lstat(old); !os.IsNotExist(err) {
		t.Fatalf("the stray of a killed reader is still there: %v", err)
	}
	if _, err := os.Lstat(fresh); err != nil {
		t.Fatalf("a live reader's file was removed: %v", err)
	}
}
