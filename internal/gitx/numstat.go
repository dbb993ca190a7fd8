package gitx

import (
	"fmt"
	"strings"
)

// parseNumstatZ returns the paths named by `git apply --numstat -z` output,
// in order, each once. Records are "ADDED\tDELETED\tPATH\0", or for a rename
// or copy "ADDED\tDELETED\t\0OLD\0NEW\0"; binary files count "-".
func parseNumstatZ(b []byte) ([]string, error) {
	fields := strings.Split(string(b), "\x00")
	if len(fields) > 0 && fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1]
	}
	var paths []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	for i := 0; i < len(fields); i++ {
		parts := strings.SplitN(fields[i], "\t", 3)
		if len(parts) != 3 || !isCount(parts[0]) || !isCount(parts[1]) {
			return nil, fmt.Errorf("numstat record %q: want \"added\\tdeleted\\tpath\"", fields[i])
		}
		if parts[2] != "" {
			add(parts[2])
			continue
		}
		if i+2 >= len(fields) || fields[i+1] == "" || fields[i+2] == "" {
			return nil, fmt.Errorf("numstat record %q: rename without both paths", fields[i])
		}
		add(fields[i+1])
		add(fields[i+2])
		i += 2
	}
	return paths, nil
}

func isCount(s string) bool {
	if s == "-" {
		return true
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// applyFailures returns the paths among touched that git apply's stderr
// names as failing, in the order of touched. Matching known paths avoids
// guessing where a path that contains ": " ends.
func applyFailures(stderr string, touched []string) []string {
	lines := strings.Split(stderr, "\n")
	var failed []string
	for _, p := range touched {
		for _, line := range lines {
			if failureLine(line, p) {
				failed = append(failed, p)
				break
			}
		}
	}
	return failed
}

func failureLine(line, p string) bool {
	if rest, ok := strings.CutPrefix(line, "error: patch failed: "+p+":"); ok {
		return isCount(rest) && rest != "-"
	}
	if rest, ok := strings.CutPrefix(line, "error: "+p+": "); ok {
		return rest != ""
	}
	return line == "Applied patch to '"+p+"' with conflicts." || line == "U "+p
}
