package testrun

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/testreport"
)

// Bounds of the JUnit reports of one suite.
const (
	maxReportFiles      = 5000
	maxReportTotalBytes = 256 << 20
	// mtimeSlack allows for file systems whose modification times are
	// coarser than the clock.
	mtimeSlack = 2 * time.Second
)

// reportIsSet reports whether a Report names a set of files (a folder,
// marked by a trailing slash, or a glob) rather than one file.
func reportIsSet(report string) bool {
	return strings.HasSuffix(report, "/") || strings.ContainsAny(report, "*?[")
}

// readReports reads the suite's JUnit reports inside its folder dir: the
// file Report names, or every *.xml of the folder it names, or the files
// its glob matches. From a folder or glob only files written since the
// suite started are read (others are stale: from the checkout or an
// earlier run in a kept cache).
func readReports(dir, report string, since time.Time) ([]artifact.Case, string) {
	errCase := func(msg string) ([]artifact.Case, string) {
		return []artifact.Case{{Name: caseReport, Status: testreport.StatusError, Message: clip.Runes(msg, testreport.MaxMessage)}}, msg
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return errCase(fmt.Sprintf("open %s: %v", dir, err))
	}
	defer root.Close()
	pattern := strings.TrimSuffix(filepath.ToSlash(report), "/")
	set := reportIsSet(report)
	if !set {
		if info, err := root.Stat(pattern); err == nil && info.IsDir() {
			set = true
		}
	}
	if !set {
		return readReportFile(root, pattern)
	}
	if !strings.ContainsAny(pattern, "*?[") {
		pattern = path.Join(pattern, "*.xml")
	}
	matches, err := fs.Glob(root.FS(), pattern)
	if err != nil {
		return errCase(fmt.Sprintf("JUnit reports %s: %v", report, err))
	}
	var fresh []string
	stale := 0
	for _, m := range matches {
		info, err := root.Lstat(m)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if info.ModTime().Before(since.Add(-mtimeSlack)) {
			stale++
			continue
		}
		fresh = append(fresh, m)
	}
	if len(fresh) == 0 {
		msg := fmt.Sprintf("the suite wrote no JUnit report matching %s", pattern)
		if stale > 0 {
			msg += fmt.Sprintf(" (%d older files ignored)", stale)
		}
		return errCase(msg)
	}
	if len(fresh) > maxReportFiles {
		return errCase(fmt.Sprintf("JUnit reports %s: %d files, more than %d", pattern, len(fresh), maxReportFiles))
	}
	var cases []artifact.Case
	var problems []string
	var total int64
	for _, m := range fresh {
		if info, err := root.Stat(m); err == nil {
			total += info.Size()
		}
		if total > maxReportTotalBytes {
			c, p := errCase(fmt.Sprintf("JUnit reports %s: more than %d bytes in all; the rest were not read", pattern, maxReportTotalBytes))
			return append(cases, c...), strings.Join(append(problems, p), "; ")
		}
		c, p := readReportFile(root, m)
		cases = append(cases, c...)
		if p != "" {
			problems = append(problems, p)
		}
	}
	return cases, strings.Join(problems, "; ")
}

// readReportFile parses one JUnit report inside root.
func readReportFile(root *os.Root, report string) ([]artifact.Case, string) {
	errCase := func(msg string) ([]artifact.Case, string) {
		return []artifact.Case{{Name: caseReport, Status: testreport.StatusError, Message: clip.Runes(msg, testreport.MaxMessage)}}, msg
	}
	f, err := root.Open(report)
	if errors.Is(err, fs.ErrNotExist) {
		return errCase(fmt.Sprintf("the suite wrote no JUnit report at %s", report))
	}
	if err != nil {
		return errCase(fmt.Sprintf("open JUnit report %s: %v", report, err))
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return errCase(fmt.Sprintf("stat JUnit report %s: %v", report, err))
	}
	if !info.Mode().IsRegular() {
		return errCase(fmt.Sprintf("JUnit report %s is not a regular file", report))
	}
	if info.Size() > maxReportBytes {
		return errCase(fmt.Sprintf("JUnit report %s is larger than %d bytes", report, maxReportBytes))
	}
	cases, _, err := testreport.ParseJUnit(io.LimitReader(f, maxReportBytes))
	if err != nil {
		msg := fmt.Sprintf("JUnit report %s: %v", report, err)
		return append(cases, artifact.Case{Name: caseReport, Status: testreport.StatusError, Message: clip.Runes(msg, testreport.MaxMessage)}), msg
	}
	return cases, ""
}
