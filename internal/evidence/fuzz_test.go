package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/fileid"
	"github.com/orchdev/orch/internal/fuzztest"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/patch"
)

// FuzzReadGates: whatever the transcript holds (it can be edited by hand),
// reading the gates' records never panics, and every record it returns
// came from a forward move.
func FuzzReadGates(f *testing.F) {
	f.Add([]byte(`{"seq":3,"kind":"transition","from":"plan_review","to":"codegen","evidence":{"plan_sha256":"` + SHA256Hex(nil) + `"},"prev":""}` + "\n"))
	f.Add([]byte(`{"seq":4,"kind":"redo","from":"test","to":"review"}` + "\n" + `{"seq":5,"kind":"override","from":"codegen","to":"accept","evidence":{"diff_sha256":"x"}}`))
	f.Add([]byte(`{"kind":"transition","evidence":[1,2]}` + "\n"))
	f.Add([]byte("\"kind\":\"redo\"\n{\n"))
	// One folder for all the inputs of a worker, the transcript rewritten
	// in place (fuzztest; ReadGates only reads): a t.TempDir per input took
	// longer than ReadGates.
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzztest.Write(t, filepath.Join(dir, transcriptFile), data)
		g, err := ReadGates(dir)
		if err != nil {
			return
		}
		for k, b := range g {
			if b.SHA256 == "" || !b.From.Valid() || !b.To.Valid() || (b.To.Index() <= b.From.Index() && b.To != lifecycle.Done) {
				t.Fatalf("record %s %+v: empty, or made by a backward move", k, b)
			}
		}
	})
}

// FuzzParseObservations: whatever an observation cache file holds, reading
// it never panics, and what it accepts is written back to the same
// observations (nothing accepted is lost or invented on the way).
func FuzzParseObservations(f *testing.F) {
	s := stamp{ID: fileid.ID{Size: 3, Mtime: 5, Ctime: 6, Ino: 8, Dev: 9, Mode: 0o644}, Since: 7}
	f.Add(encodeObservations(observations{}))
	f.Add(encodeObservations(observations{
		Diff:   &diffObs{stamp: s, SHA256: SHA256Hex(nil), Diff: patch.Diff{Bytes: 1, Files: []patch.Entry{{Op: patch.OpCreate, NewPath: "a.go"}}}},
		Dirs:   map[string]stamp{"code": s, "code/files": s},
		Files:  map[string]fileObs{"a.go": {stamp: s, SHA256: SHA256Hex(nil)}},
		Agreed: []agreeKey{{Diff: SHA256Hex(nil), Files: SHA256Hex(nil), Base: strings.Repeat("0", 40)}},
		Hashes: map[string]fileObs{"review/code-review.json": {stamp: s, SHA256: SHA256Hex(nil)}},
		Log: &logObs{stamp: s, Events: []lifecycle.GateEvent{{Seq: 2, From: lifecycle.Planning, To: lifecycle.PlanReview, Hashes: map[string]string{"plan_sha256": SHA256Hex(nil)}},
			{Seq: 3, Redo: true, From: lifecycle.Test, To: lifecycle.Review}}},
	}))
	f.Add([]byte("orch observations 1\ndir \"code\" 1 2 3 4 5 6 7\n"))
	f.Add([]byte("orch observations 1\nfile \"../x\" 1 2 3 4 5 6 7 " + SHA256Hex(nil) + "\nsum 00\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// As it is, and with the right sum appended (or the fuzzer would
		// hardly ever get past the sum to the lines).
		parseRoundTrip(t, data)
		sum := sha256.Sum256(data)
		parseRoundTrip(t, append(data, "sum "+hex.EncodeToString(sum[:])+"\n"...))
	})
}

func parseRoundTrip(t *testing.T, data []byte) {
	o, err := parseObservations(data)
	if err != nil {
		return
	}
	{
		again, err := parseObservations(encodeObservations(o))
		if err != nil {
			t.Fatalf("re-encoded observations do not parse: %v", err)
		}
		if !reflect.DeepEqual(again, o) {
			t.Fatalf("round trip changed the observations:\n%+v\n%+v", o, again)
		}
		for p := range o.Files {
			if !localPath(p) {
				t.Fatalf("accepted path %q", p)
			}
		}
	}
}
