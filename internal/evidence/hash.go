package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"maps"
	"os"
	"path"
	"slices"

	"github.com/orchdev/orch/internal/artifact"
)

// SHA256Hex returns the lower-case hex sha256 of data.
func SHA256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// CodeFiles are the files under code/files/ read once: repository path →
// content.
type CodeFiles map[string][]byte

// ReadCodeFiles reads every regular file under the task's code/files/ with
// the artifact package's checks (no symbolic links, no special files, safe
// paths, size limits) and through an os.Root, so a link swapped in after
// the scan is not followed. Missing code/files/ gives an empty set and
// present false. An invalid tree is an *artifact.Error.
func ReadCodeFiles(taskDir string) (files CodeFiles, present bool, err error) {
	scan := artifact.ScanCodeFiles(taskDir)
	if scan.Err != nil {
		return nil, true, scan.Err
	}
	if !scan.Present {
		return CodeFiles{}, false, nil
	}
	root, err := os.OpenRoot(taskDir)
	if err != nil {
		return nil, true, &artifact.Error{File: artifact.CodeFilesDir, Err: fmt.Errorf("open task folder: %w", err)}
	}
	defer root.Close()
	files = make(CodeFiles, len(scan.Value))
	for _, p := range scan.Value {
		rel := path.Join(artifact.CodeFilesDir, p)
		data, err := readRegular(root, rel)
		if err != nil {
			return nil, true, err
		}
		files[p] = data
	}
	return files, true, nil
}

// readRegular reads a regular file below root, refusing anything else and
// anything above the per-file limit.
func readRegular(root *os.Root, rel string) ([]byte, error) {
	fi, err := root.Lstat(rel)
	if err != nil {
		return nil, &artifact.Error{File: rel, Err: fmt.Errorf("stat: %w", err)}
	}
	if !fi.Mode().IsRegular() {
		return nil, &artifact.Error{File: rel, Expected: "a regular file", Got: fi.Mode().Type().String(), Err: artifact.ErrUnsafePath}
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, &artifact.Error{File: rel, Err: fmt.Errorf("open: %w", err)}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, artifact.MaxCodeFileBytes+1))
	if err != nil {
		return nil, &artifact.Error{File: rel, Err: fmt.Errorf("read: %w", err)}
	}
	if len(data) > artifact.MaxCodeFileBytes {
		return nil, &artifact.Error{File: rel, Expected: fmt.Sprintf("at most %d bytes", artifact.MaxCodeFileBytes), Got: "more", Err: artifact.ErrTooLarge}
	}
	return data, nil
}

// Digest is the hash the transcript records for code/files/: the sha256 of
// one line per file in byte order of the paths, each line the path, a NUL,
// the hex sha256 of the content and a newline. It changes when a file is
// added, removed, renamed or edited; an empty set has the digest of no
// bytes.
func (c CodeFiles) Digest() string {
	sums := make(map[string]string, len(c))
	for p, data := range c {
		sums[p] = SHA256Hex(data)
	}
	return digestOf(sums)
}

// digestOf is the Digest of files whose contents have the sha256 sums
// (hex) by path.
func digestOf(sums map[string]string) string {
	return digestSorted(slices.Sorted(maps.Keys(sums)), func(p string) string { return sums[p] })
}

// digestSorted is the Digest of the files at paths (in byte order) whose
// contents have the sha256 sums (hex) sumOf gives.
func digestSorted(paths []string, sumOf func(string) string) string {
	h := sha256.New()
	buf := make([]byte, 0, 8<<10)
	for _, p := range paths {
		buf = append(append(append(append(buf, p...), 0), sumOf(p)...), '\n')
		if len(buf) >= 4<<10 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}

// FilesDigest reads code/files/ and returns its Digest; "" when the folder
// is missing.
func FilesDigest(taskDir string) (string, error) {
	files, present, err := ReadCodeFiles(taskDir)
	if err != nil || !present {
		return "", err
	}
	return files.Digest(), nil
}

// hasher is a running sha256 with a hex result.
type hasher struct{ hash.Hash }

func newHash() hasher { return hasher{sha256.New()} }

func (h hasher) hex() string { return hex.EncodeToString(h.Sum(nil)) }
