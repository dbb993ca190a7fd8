package gitx

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// trailerFormat prints a commit's trailers one per line as "Key: value",
// continuation lines unfolded, so a line break always ends a trailer.
const trailerFormat = "%(trailers:only,unfold,separator=%x0A,key_value_separator=%x3A%x20)"

// parseTrailerLines parses the output of trailerFormat. Keys keep the case
// git printed; a key may repeat. Lines that are not "Key: value" with a
// key free of blanks are skipped.
func parseTrailerLines(s string) map[string][]string {
	out := map[string][]string{}
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			continue
		}
		out[key] = append(out[key], strings.TrimSpace(value))
	}
	return out
}

// CommitTrailers returns the trailers of a commit's message (as git parses
// them: the last paragraph, "Key: value" lines), keyed as written, values
// trimmed and in order. A commit without trailers gives an empty map.
func (r *Repo) CommitTrailers(ctx context.Context, sha string) (map[string][]string, error) {
	full, err := r.ResolveCommit(ctx, sha)
	if err != nil {
		return nil, err
	}
	out, err := r.run(ctx, call{sub: "show", args: []string{"-s", "--no-color", "--format=" + trailerFormat, full}})
	if err != nil {
		return nil, fmt.Errorf("trailers of %s: %w", sha, err)
	}
	return parseTrailerLines(string(out)), nil
}

// defaultTrailerSearch is the number of commits searched when limit <= 0.
const defaultTrailerSearch = 1000

// FindCommitWithTrailer searches the last limit commits reachable from HEAD
// (newest first; limit <= 0 means 1000) for one whose message has the
// trailer key (compared case-insensitively, as git does) with exactly value
// (after trimming space). It returns the newest such commit's sha, or ""
// and no error when there is none or HEAD is unborn.
func (r *Repo) FindCommitWithTrailer(ctx context.Context, key, value string, limit int) (string, error) {
	found, err := r.FindCommitsWithTrailer(ctx, key, value, limit)
	if err != nil || len(found) == 0 {
		return "", err
	}
	return found[0].SHA, nil
}

// TrailerCommit is a commit found by its trailers.
type TrailerCommit struct {
	SHA      string
	Trailers map[string][]string // as CommitTrailers returns them
}

// Trailer returns the first value of key (compared case-insensitively), or "".
func (c TrailerCommit) Trailer(key string) string {
	for k, vs := range c.Trailers {
		if strings.EqualFold(k, key) && len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}

// FindCommitsWithTrailer is FindCommitWithTrailer returning every match,
// newest first, with all of each commit's trailers.
func (r *Repo) FindCommitsWithTrailer(ctx context.Context, key, value string, limit int) ([]TrailerCommit, error) {
	key = strings.TrimSpace(key)
	value = strings.TrimSpace(value)
	if key == "" || strings.ContainsAny(key, ": \t\n") {
		return nil, fmt.Errorf("find trailer: invalid key %q", key)
	}
	if limit <= 0 {
		limit = defaultTrailerSearch
	}
	head, err := r.Head(ctx)
	if err != nil {
		if isNoCommits(err) {
			return nil, nil
		}
		return nil, err
	}
	out, err := r.run(ctx, call{sub: "log", args: []string{
		"-z", "--no-color", fmt.Sprintf("--max-count=%d", limit), "--format=%H%n" + trailerFormat, head, "--",
	}})
	if err != nil {
		return nil, fmt.Errorf("find trailer %s: %w", key, err)
	}
	records, err := parseLogTrailers(out)
	if err != nil {
		return nil, fmt.Errorf("find trailer %s: %w", key, err)
	}
	var found []TrailerCommit
	for _, rec := range records {
		match := false
		for k, vs := range rec.trailers {
			if strings.EqualFold(k, key) && slices.Contains(vs, value) {
				match = true
			}
		}
		if match {
			found = append(found, TrailerCommit{SHA: rec.sha, Trailers: rec.trailers})
		}
	}
	return found, nil
}

type commitTrailers struct {
	sha      string
	trailers map[string][]string
}

// parseLogTrailers parses `git log -z --format=%H%n<trailerFormat>`: one
// NUL-terminated record per commit, the sha on its first line.
func parseLogTrailers(b []byte) ([]commitTrailers, error) {
	var out []commitTrailers
	for _, rec := range splitNUL(b) {
		sha, rest, _ := strings.Cut(rec, "\n")
		if !isHex(sha) {
			return nil, fmt.Errorf("log record %q: want a commit id first", rec)
		}
		out = append(out, commitTrailers{sha: sha, trailers: parseTrailerLines(rest)})
	}
	return out, nil
}
