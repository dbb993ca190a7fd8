package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
)

// LookPath finds file the way execvp would with the given PATH, relative
// entries and names taken relative to dir.
func LookPath(file, pathEnv, dir string) (string, error) {
	if filepath.Base(file) != file || file == "." || file == ".." {
		p := file
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", fmt.Errorf("%w: %s: %v", ErrCommandNotFound, file, err)
		}
		return p, nil
	}
	for _, entry := range filepath.SplitList(pathEnv) {
		if entry == "" {
			entry = "."
		}
		if !filepath.IsAbs(entry) {
			entry = filepath.Join(dir, entry)
		}
		p := filepath.Join(entry, file)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %s is not in PATH (%s)", ErrCommandNotFound, file, pathEnv)
}

func executable(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if info.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", path)
	}
	return nil
}
