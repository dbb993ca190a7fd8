package evidence

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/fileid"
)

const cachedPlan = `{"id": "0007", "title": "Add retry", "brief": "Retry failed requests",
  "file_plan": [
    {"path": "internal/client/retry.go", "intent": "create", "summary": "new \"file\""},
    {"path": "old.go", "intent": "delete"}
  ],
  "questions": [
    {"id": "q1", "text": "How many retries?", "blocking": true, "answer": "3"},
    {"id": "q2", "text": "Backoff?", "blocking": false, "answer": null},
    {"id": "q3", "text": "Jitter?", "blocking": true, "answer": "-"}
  ]
}`

// planRun is one reader's run over the plan: what it loaded and how much
// came from the cache.
func planRun(t *testing.T, ct cacheTask) (artifact.Loaded[artifact.Plan], artifact.Loaded[artifact.FilePlan], int, int) {
	t.Helper()
	c := OpenCache(ct.orch, ct.dir, "t1")
	p := c.LoadPlan(ct.dir)
	fp := c.LoadFilePlan(ct.dir, p)
	c.Save()
	return p, fp, c.Hits, c.Misses
}

// checkPlan compares a run with the plan as artifact reads it, in what
// the decisions read: presence, sha256, questions and the file plan; and
// the cache's counts unless wantHits is negative.
func checkPlan(t *testing.T, ct cacheTask, what string, wantHits, wantMisses int) {
	t.Helper()
	p, fp, hits, misses := planRun(t, ct)
	want := artifact.LoadPlan(ct.dir)
	wantFP := artifact.LoadFilePlan(ct.dir, want)
	if !want.OK() || !p.OK() || p.SHA256 != want.SHA256 || p.Value.Title != want.Value.Title || !reflect.DeepEqual(p.Value.Questions, want.Value.Questions) ||
		!reflect.DeepEqual(p.Value.FilePlan, want.Value.FilePlan) || !reflect.DeepEqual(fp, wantFP) {
		t.Fatalf("%s: the cached plan differs from the file:\ngot  %+v %+v\nwant %+v %+v", what, p, fp, want, wantFP)
	}
	if wantHits >= 0 && (hits != wantHits || misses != wantMisses) {
		t.Fatalf("%s: %d hits and %d misses, want %d and %d", what, hits, misses, wantHits, wantMisses)
	}
}

func newPlanTask(t *testing.T) cacheTask {
	ct := newCacheTask(t)
	write(t, ct.dir, artifact.PlanFile, cachedPlan)
	return ct
}

// TestCachePlan: the plan is taken from the cache while its file is
// unchanged, and a same-size edit made in the tick it was observed in (its
// mtime set back) is seen, as git treats racily clean entries.
func TestCachePlan(t *testing.T) {
	ct := newPlanTask(t)
	ct.settle(t)
	checkPlan(t, ct, "first run", 0, 1)
	checkPlan(t, ct, "unchanged", 1, 0)

	racy := newPlanTask(t) // no settle: observed in the tick it was written
	checkPlan(t, racy, "first run", 0, 1)
	p := filepath.Join(racy.dir, artifact.PlanFile)
	sameSize(t, p, func(b []byte) []byte { return bytes.Replace(b, []byte(`"answer": "3"`), []byte(`"answer": "4"`), 1) })
	checkPlan(t, racy, "same-size edit with the old mtime", 0, 1)
	if got, _, _, _ := planRun(t, racy); *got.Value.Questions[0].Answer != "4" {
		t.Fatalf("the edit is not seen: answer %q", *got.Value.Questions[0].Answer)
	}
	racy.settle(t)
	// Observed again or not, depending on whether the file system's clock
	// moved between the edit and the last run; then taken from the cache.
	checkPlan(t, racy, "after the clock moved", -1, -1)
	checkPlan(t, racy, "then", 1, 0)

	// An invalid plan is never cached: it is read, and refused, each time.
	write(t, ct.dir, artifact.PlanFile, `{"id": "x"}`)
	ct.settle(t)
	for range 2 {
		c := OpenCache(ct.orch, ct.dir, "t1")
		if l := c.LoadPlan(ct.dir); l.Err == nil || c.Misses != 1 {
			t.Fatalf("invalid plan: err %v, %d misses", l.Err, c.Misses)
		}
		c.Save()
	}
}

// resum replaces the cache file's sum line by the sum of what precedes it.
func resum(b []byte) []byte {
	i := bytes.LastIndex(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	sum := sha256.Sum256(b[:i+1])
	return append(b[:i+1:i+1], "sum "+hex.EncodeToString(sum[:])+"\n"...)
}

// TestCachePlanCorrupt: a damaged plan entry, even one with a correct sum,
// makes the cache file ignored and rebuilt.
func TestCachePlanCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func([]byte) []byte
	}{
		{"a flipped byte", func(b []byte) []byte { return bytes.Replace(b, []byte("retries"), []byte("retriex"), 1) }},
		{"an unsafe planned path", func(b []byte) []byte {
			return resum(bytes.Replace(b, []byte(`"old.go"`), []byte(`"../old.go"`), 1))
		}},
		{"an unknown intent", func(b []byte) []byte { return resum(bytes.Replace(b, []byte(" delete "), []byte(" remove "), 1)) }},
		{"a duplicate planned path", func(b []byte) []byte {
			return resum(bytes.Replace(b, []byte(`"old.go"`), []byte(`"internal/client/retry.go"`), 1))
		}},
		{"a question missing", func(b []byte) []byte {
			return resum(bytes.Replace(b, []byte("question \"q2\""), []byte("planned \"q2\""), 1))
		}},
		{"a bad blocking", func(b []byte) []byte { return resum(bytes.Replace(b, []byte(" true "), []byte(" yes "), 1)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct := newPlanTask(t)
			ct.settle(t)
			checkPlan(t, ct, "first run", 0, 1)
			path := filepath.Join(ct.orch, ObservedDir, "t1")
			b := mustRead(t, path)
			nb := tc.corrupt(bytes.Clone(b))
			if bytes.Equal(nb, b) {
				t.Fatal("the corruption changed nothing")
			}
			if err := os.WriteFile(path, nb, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := parseObservations(nb); err == nil {
				t.Fatal("the corrupt cache parses")
			}
			checkPlan(t, ct, "corrupt cache", 0, 1)
			checkPlan(t, ct, "rebuilt", 1, 0)
		})
	}
}

func TestObservationsRoundTripPlan(t *testing.T) {
	ct := newPlanTask(t)
	l := artifact.LoadPlan(ct.dir)
	if !l.OK() {
		t.Fatal(l.Err)
	}
	s := stamp{ID: fileid.ID{Size: 3, Mtime: 5, Ctime: 6, Ino: 1, Dev: 9, Mode: 0o644}, Since: 7}
	for _, p := range []*planObs{
		{stamp: s, SHA256: l.SHA256, Title: l.Value.Title, Questions: l.Value.Questions, FilePlan: l.Value.FilePlan},
		{stamp: s, SHA256: l.SHA256, Title: "x"},
	} {
		o := observations{Plan: p}
		got, err := parseObservations(encodeObservations(o))
		if err != nil || !reflect.DeepEqual(got, o) {
			t.Fatalf("round trip: %v\ngot  %+v\nwant %+v", err, got.Plan, p)
		}
	}
}
