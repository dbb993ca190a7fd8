package orchestrator

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/evidence"
	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/lifecycle"
)

// TestNextDoesNotTrustTheObservationCache: `orch status` takes the
// comparison of code/files/ with the patch from the readers' cache
// (docs/artifacts.md, "The observation cache"); `orch next` makes it
// again. A cache forged to say that files which disagree with the patch
// agree misleads the status, never the transition.
func TestNextDoesNotTrustTheObservationCache(t *testing.T) {
	e := newHostileEnv(t)
	e.toCodegen()
	cacheFile := filepath.Join(e.o.Project.Dir, filepath.FromSlash(evidence.ObservedDir), "t")
	if _, err := os.Stat(cacheFile); err != nil {
		t.Fatalf("status kept no observations: %v", err)
	}
	write(t, e.tk.Dir, "code/files/a.go", "package a // not what the patch gives\n")
	if v, err := e.o.Status("t"); err != nil || len(v.Invalid) == 0 {
		t.Fatalf("status of disagreeing files: %+v, %v", v, err)
	}
	// Forge: the current patch and files "agreed" on the base.
	diff, err := os.ReadFile(filepath.Join(e.tk.Dir, artifact.DiffFile))
	if err != nil {
		t.Fatal(err)
	}
	digest, err := evidence.FilesDigest(e.tk.Dir)
	if err != nil {
		t.Fatal(err)
	}
	head := gittest.Git(t, e.o.Project.Root, "rev-parse", "HEAD")
	old, err := os.ReadFile(cacheFile)
	if err != nil {
		t.Fatal(err)
	}
	body := old[:bytes.LastIndex(old[:len(old)-1], []byte("\n"))+1]
	body = append(body, "agreed "+evidence.SHA256Hex(diff)+" "+digest+" "+head+"\n"...)
	sum := sha256.Sum256(body)
	if err := os.WriteFile(cacheFile, append(body, "sum "+hex.EncodeToString(sum[:])+"\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := e.o.Status("t"); err != nil || v.Suggested == nil || *v.Suggested != lifecycle.Review {
		t.Fatalf("status did not read the (forged) cache: %+v, %v", v, err)
	}
	_, err = e.o.Next(context.Background(), "t", NextRequest{})
	if err == nil {
		t.Fatal("next took the transition on the cache's word")
	}
	if st := state(t, e.tk); st.Phase != lifecycle.Codegen {
		t.Fatalf("phase %s after a refused next", st.Phase)
	}
}
