package evidence

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/orchdev/orch/internal/lifecycle"
)

// FuzzReadGates: whatever the transcript holds (it can be edited by hand),
// reading the gates' records never panics, and every record it returns
// came from a forward move.
func FuzzReadGates(f *testing.F) {
	f.Add([]byte(`{"seq":3,"kind":"transition","from":"plan_review","to":"codegen","evidence":{"plan_sha256":"` + SHA256Hex(nil) + `"},"prev":""}` + "\n"))
	f.Add([]byte(`{"seq":4,"kind":"redo","from":"test","to":"review"}` + "\n" + `{"seq":5,"kind":"override","from":"codegen","to":"accept","evidence":{"diff_sha256":"x"}}`))
	f.Add([]byte(`{"kind":"transition","evidence":[1,2]}` + "\n"))
	f.Add([]byte("\"kind\":\"redo\"\n{\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, transcriptFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
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
