package evidence

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/durable"
	"github.com/orchdev/orch/internal/fileid"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/patch"
)

// The observation cache (docs/artifacts.md, "The observation cache"):
// what the readers of a task — `orch status`, the board, the MCP server —
// observed about its big artifacts, kept like git keeps its index, so that
// a refresh re-does no work on files that did not change:
//
//   - planning/planning.ai.json, when valid: its sha256, questions and
//     file_plan (what the decisions read of it);
//   - code/diff.patch: its sha256 and what patch.Parse read of it;
//   - code/files/: the folders and files the scan found valid, and the
//     sha256 of each file;
//   - that code/files/ and code/diff.patch applied to the base agree
//     (keyed by the patch's sha256, code/files/'s digest and the base's
//     object id, so by content);
//   - the sha256 of the plan, the patch, the code review and the test
//     report, as the evidence's "now" hashes them (fileHashes);
//   - the gates' records of transcript.jsonl: its transition, override
//     and redo events as ReadRecords decodes them.
//
// A file's observation is keyed by its identity (size, mtime, ctime,
// inode, device, mode, all from an lstat) and stamped with the time, on the
// file system's own clock, at which the observation began. It is trusted
// only when the identity is unchanged and both mtime and ctime are older
// than that stamp: a file changed in the same clock tick as it was observed
// (a same-size edit within the same second, on a coarse clock) is observed
// again, as git treats "racily clean" entries. `orch next` and
// `orch accept` never read the cache: they observe everything again.

// ObservedDir is the folder of the cache files below .orch: one file per
// task, named by the task id.
const ObservedDir = "cache/observed"

// maxCacheBytes bounds the cache file read: a larger file is ignored.
const maxCacheBytes = 64 << 20

// stamp is a file's identity when it was observed and the file system's
// time at which the observation began; its Trusted is the rule above.
type stamp = fileid.Stamp

// diffObs is what was observed of code/diff.patch.
type diffObs struct {
	stamp
	SHA256 string
	Diff   patch.Diff
}

// fileObs is what was observed of one file of code/files/.
type fileObs struct {
	stamp
	SHA256 string
}

// agreeKey names one comparison of code/files/ with code/diff.patch
// applied to the base, by content.
type agreeKey struct{ Diff, Files, Base string }

// planObs is what was observed of a valid planning/planning.ai.json: what
// the decisions read of it (its questions and file_plan) and the title the
// board's card shows, not the rest.
type planObs struct {
	stamp
	SHA256    string
	Title     string
	Questions []artifact.Question
	FilePlan  []artifact.FileEntry
}

// logObs is what was read of transcript.jsonl: its transition, override
// and redo events with valid phases (the only ones the gates' folds
// read), oldest first, each with its non-empty hashes.
type logObs struct {
	stamp
	Events []lifecycle.GateEvent
}

// observations is the content of a cache file.
type observations struct {
	Plan *planObs
	Diff *diffObs
	// Dirs are the folders of code/files/ (task-relative: "code",
	// "code/files", "code/files/pkg", …) and Files its files (repository
	// paths), as one valid scan found them; both nil when none is cached.
	Dirs  map[string]stamp
	Files map[string]fileObs
	// Agreed lists the comparisons that found code/files/ and the patch
	// in agreement (a disagreement is never cached).
	Agreed []agreeKey
	// Hashes are the sha256 of task files hashed whole (hashFile), by
	// task-relative path.
	Hashes map[string]fileObs
	// Log is the gates' records of the transcript.
	Log *logObs
}

// Cache is the observation cache of one task for one reader's run:
// OpenCache loads it, the Load/Scan methods answer from it or observe
// again, Save writes what this run found true. A nil *Cache caches
// nothing: every method observes again.
type Cache struct {
	path    string
	taskDir string
	old     observations
	cur     observations
	dirty   bool
	// since is the file system's time at which this run's first new
	// observation began (the stamp of everything it observes); tmp is the
	// file it was read from, which becomes the new cache file.
	since int64
	tmp   *os.File
	dir   *os.File // the task folder, for lstatID
	// What this run observed of code/files/: scan, its digest and,
	// when this run read them, the contents.
	scanned  bool
	scan     artifact.Loaded[[]string]
	digest   string
	contents CodeFiles
	// The plan as this run loaded it (LoadPlan loads it once per run).
	planLoaded bool
	plan       artifact.Loaded[artifact.Plan]
	// given holds the gate events the caller read of the transcript
	// (UseRecords); givenErr is the error reading them gave.
	given    []lifecycle.GateEvent
	givenErr error
	useGiven bool
	// Hits and Misses count the observations taken from the cache and
	// made again (for tests and benchmarks).
	Hits, Misses int
}

// UseRecords gives the cache the transcript's gate events as the caller
// read them (GateEventOf over every complete line, oldest first; err the
// first line's error): the gates' records are folded from them instead
// of being read or taken from the cache file. The board reads each
// transcript's tail for its cards and keeps these events with it.
func (c *Cache) UseRecords(evs []lifecycle.GateEvent, err error) {
	if c != nil {
		c.given, c.givenErr, c.useGiven = evs, err, true
	}
}

// OpenCache loads task id's observation cache from orchDir (.orch). A
// missing, unreadable or corrupt cache file is ignored (and replaced by the
// next Save): nothing in it is trusted.
func OpenCache(orchDir, taskDir, id string) *Cache {
	c := &Cache{path: filepath.Join(orchDir, filepath.FromSlash(ObservedDir), id), taskDir: taskDir}
	f, err := os.Open(c.path)
	if err != nil {
		return c
	}
	defer f.Close()
	// Read into a buffer of the file's size (io.ReadAll would grow one by
	// doubling, garbage that made the collector run on a big task).
	var buf bytes.Buffer
	if fi, err := f.Stat(); err == nil && fi.Size() <= maxCacheBytes {
		buf.Grow(int(fi.Size()) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(io.LimitReader(f, maxCacheBytes+1)); err != nil || buf.Len() > maxCacheBytes {
		return c
	}
	if obs, err := parseObservations(buf.Bytes()); err == nil {
		c.old = obs
	}
	return c
}

// begin stamps this run's new observations: it creates the temporary file
// that Save fills and renames over the cache file, and takes its mtime —
// the file system's clock, whatever the process's clock says — as the
// time the observations began. ok is false when no stamp can be taken:
// then nothing observed is cached.
func (c *Cache) begin() bool {
	if c.tmp != nil {
		return true
	}
	if c.since < 0 {
		return false
	}
	c.since = -1
	f, err := durable.CreateCacheTemp(c.path)
	if err != nil {
		return false // not a folder of its own (a symbolic link): write nothing
	}
	id, err := fileid.Fstat(f)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return false
	}
	c.tmp, c.since = f, id.Mtime
	return true
}

// lstatID is the identity of a task-relative path (lstat, relative to the
// task folder opened once); ok is false when it cannot be had.
func (c *Cache) lstatID(rel string) (fileid.ID, bool) {
	if c.dir == nil {
		d, err := os.Open(c.taskDir)
		if err != nil {
			return fileid.ID{}, false
		}
		c.dir = d
	}
	id, err := fileid.LstatAt(c.dir, rel)
	return id, err == nil
}

// LoadPlan is artifact.LoadPlan of taskDir for the decisions, answered
// from the cache when planning/planning.ai.json did not change since it
// was found valid. A plan from the cache holds only what the decisions
// read and the board shows: its title, questions and file_plan (Brief and
// the rest are empty). A run loads the plan once: later calls return what
// the first one loaded.
func (c *Cache) LoadPlan(taskDir string) artifact.Loaded[artifact.Plan] {
	if c == nil {
		return artifact.LoadPlan(taskDir)
	}
	if !c.planLoaded {
		c.plan, c.planLoaded = c.loadPlan(taskDir), true
	}
	return c.plan
}

func (c *Cache) loadPlan(taskDir string) artifact.Loaded[artifact.Plan] {
	id, ok := c.lstatID(artifact.PlanFile)
	if ok && c.old.Plan != nil && c.old.Plan.Trusted(id) && id.IsRegular() && id.Size <= artifact.MaxJSONBytes {
		c.Hits++
		c.cur.Plan = c.old.Plan
		p := c.old.Plan
		return artifact.Loaded[artifact.Plan]{Present: true, SHA256: p.SHA256, Value: artifact.Plan{Title: p.Title, Questions: p.Questions, FilePlan: p.FilePlan}}
	}
	c.Misses++
	stamped := ok && c.begin()
	l := artifact.LoadPlan(taskDir)
	if stamped && l.OK() {
		if after, ok := c.lstatID(artifact.PlanFile); ok && after == id {
			c.cur.Plan = &planObs{stamp: stamp{ID: id, Since: c.since}, SHA256: l.SHA256, Title: l.Value.Title, Questions: l.Value.Questions, FilePlan: l.Value.FilePlan}
			c.dirty = true
		}
	}
	return l
}

// LoadFilePlan is artifact.LoadFilePlan for a plan that LoadPlan returned
// (from the cache or from artifact.LoadPlan): when planning/plan.files.json
// is absent the file plan is the plan's file_plan, whose paths DecodePlan
// checked, so they are not checked a second time. A nil c does the same.
func (c *Cache) LoadFilePlan(taskDir string, plan artifact.Loaded[artifact.Plan]) artifact.Loaded[artifact.FilePlan] {
	if l := artifact.LoadFilePlan(taskDir, artifact.Loaded[artifact.Plan]{}); l.Present {
		return l
	}
	if !plan.OK() || len(plan.Value.FilePlan) == 0 {
		return artifact.Loaded[artifact.FilePlan]{}
	}
	files := append([]artifact.FileEntry(nil), plan.Value.FilePlan...)
	return artifact.Loaded[artifact.FilePlan]{Present: true, Value: artifact.FilePlan{Files: files, Inferred: true}, SHA256: plan.SHA256}
}

// LoadDiff is artifact.LoadDiff of taskDir, answered from the cache when
// code/diff.patch did not change since it was parsed and hashed.
func (c *Cache) LoadDiff(taskDir string) artifact.Loaded[patch.Diff] {
	if c == nil {
		return artifact.LoadDiff(taskDir)
	}
	id, ok := c.lstatID(artifact.DiffFile)
	if ok && c.old.Diff != nil && c.old.Diff.Trusted(id) && id.IsRegular() && id.Size <= artifact.MaxDiffBytes {
		c.Hits++
		c.cur.Diff = c.old.Diff
		return artifact.Loaded[patch.Diff]{Present: true, Value: c.old.Diff.Diff, SHA256: c.old.Diff.SHA256}
	}
	c.Misses++
	stamped := ok && c.begin()
	l := artifact.LoadDiff(taskDir)
	if stamped && l.OK() {
		if after, ok := c.lstatID(artifact.DiffFile); ok && after == id {
			c.cur.Diff = &diffObs{stamp: stamp{ID: id, Since: c.since}, SHA256: l.SHA256, Diff: l.Value}
			c.dirty = true
		}
	}
	return l
}

// ScanCodeFiles is artifact.ScanCodeFiles of taskDir, answered from the
// cache when no folder or file of code/files/ changed since a valid scan.
func (c *Cache) ScanCodeFiles(taskDir string) artifact.Loaded[[]string] {
	if c == nil {
		return artifact.ScanCodeFiles(taskDir)
	}
	c.scanFiles()
	return c.scan
}

// filesDigest is the Digest of code/files/ and whether it is present and
// valid.
func (c *Cache) filesDigest() (string, bool) {
	c.scanFiles()
	return c.digest, c.scan.OK()
}

// scanFiles fills scan and digest once per run.
func (c *Cache) scanFiles() {
	if c.scanned {
		return
	}
	c.scanned = true
	if c.filesFromCache() {
		c.Hits++
		return
	}
	c.Misses++
	// Nothing to stamp (and no cache file to write) without code/files/.
	var dirs map[string]stamp
	if id, ok := c.lstatID(artifact.CodeFilesDir); ok && id.IsDir() && c.begin() {
		dirs = c.codeDirs()
	}
	c.scan = artifact.ScanCodeFiles(c.taskDir)
	if !c.scan.OK() {
		return
	}
	root, err := os.OpenRoot(c.taskDir)
	if err != nil {
		c.scan = artifact.Loaded[[]string]{Present: true, Err: &artifact.Error{File: artifact.CodeFilesDir, Err: err}}
		return
	}
	defer root.Close()
	c.contents = make(CodeFiles, len(c.scan.Value))
	files := make(map[string]fileObs, len(c.scan.Value))
	sums := make(map[string]string, len(c.scan.Value))
	for _, p := range c.scan.Value {
		rel := path.Join(artifact.CodeFilesDir, p)
		before, okBefore := c.lstatID(rel)
		data, err := readRegular(root, rel)
		if err != nil {
			c.scan, c.contents = artifact.Loaded[[]string]{Present: true, Err: err}, nil
			return
		}
		c.contents[p] = data
		sums[p] = SHA256Hex(data)
		if after, ok := c.lstatID(rel); dirs != nil && okBefore && ok && after == before {
			files[p] = fileObs{stamp: stamp{ID: before, Since: c.since}, SHA256: sums[p]}
		} else {
			dirs = nil // not cached: observed while it changed
		}
	}
	c.digest = digestOf(sums)
	if dirs == nil {
		return
	}
	for rel, s := range dirs {
		if now, ok := c.lstatID(rel); !ok || now != s.ID {
			return
		}
	}
	c.cur.Dirs, c.cur.Files, c.dirty = dirs, files, true
}

// filesFromCache answers the scan from the cache when every folder and
// file it recorded is unchanged: no entry was added, removed or renamed
// (each would change a folder's identity) and no file changed.
func (c *Cache) filesFromCache() bool {
	if c.old.Dirs == nil {
		return false
	}
	for rel, s := range c.old.Dirs {
		id, ok := c.lstatID(rel)
		if !ok || !s.Trusted(id) || !id.IsDir() {
			return false
		}
	}
	paths := make([]string, 0, len(c.old.Files))
	for p, o := range c.old.Files {
		id, ok := c.lstatID(path.Join(artifact.CodeFilesDir, p))
		if !ok || !o.Trusted(id) || !id.IsRegular() || id.Size > artifact.MaxCodeFileBytes {
			return false
		}
		paths = append(paths, p)
	}
	slices.Sort(paths)
	c.scan = artifact.Loaded[[]string]{Present: true, Value: paths}
	c.digest = digestSorted(paths, func(p string) string { return c.old.Files[p].SHA256 })
	c.cur.Dirs, c.cur.Files = c.old.Dirs, c.old.Files
	return true
}

// codeDirs stamps code/, code/files/ and every folder below it (nil when
// code/files/ is not a folder tree that can be walked).
func (c *Cache) codeDirs() map[string]stamp {
	dirs := map[string]stamp{}
	for _, rel := range []string{"code", artifact.CodeFilesDir} {
		id, ok := c.lstatID(rel)
		if !ok || !id.IsDir() {
			return nil
		}
		dirs[rel] = stamp{ID: id, Since: c.since}
	}
	top := filepath.Join(c.taskDir, filepath.FromSlash(artifact.CodeFilesDir))
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || p == top {
			return nil
		}
		rel, err := filepath.Rel(c.taskDir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		id, ok := c.lstatID(rel)
		if !ok {
			return errors.New("no identity")
		}
		dirs[rel] = stamp{ID: id, Since: c.since}
		return nil
	})
	if err != nil {
		return nil
	}
	return dirs
}

// codeFiles returns code/files/'s contents, read now unless this run read
// them while scanning.
func (c *Cache) codeFiles() (CodeFiles, error) {
	if c.contents != nil {
		return c.contents, nil
	}
	files, _, err := ReadCodeFiles(c.taskDir)
	return files, err
}

// agreed reports whether the cache holds that k was found in agreement.
func (c *Cache) agreed(k agreeKey) bool {
	if slices.Contains(c.old.Agreed, k) {
		c.Hits++
		c.cur.Agreed = append(c.cur.Agreed, k)
		return true
	}
	c.Misses++
	return false
}

// recordAgreed keeps that k was found in agreement.
func (c *Cache) recordAgreed(k agreeKey) {
	if !slices.Contains(c.cur.Agreed, k) {
		c.cur.Agreed = append(c.cur.Agreed, k)
		c.dirty = true
	}
}

// hashFile is hashFile of the task file rel (task-relative), answered
// from the cache when the file did not change since it was hashed. A
// missing file is neither hashed nor counted.
func (c *Cache) hashFile(rel string) string {
	id, ok := c.lstatID(rel)
	if !ok || !id.IsRegular() {
		return hashFile(c.taskDir, rel) // missing or not a regular file: ""
	}
	if o, hit := c.old.Hashes[rel]; hit && o.Trusted(id) {
		c.Hits++
		c.keepHash(rel, o)
		return o.SHA256
	}
	c.Misses++
	stamped := c.begin()
	sum := hashFile(c.taskDir, rel)
	if stamped && sum != "" {
		if after, ok := c.lstatID(rel); ok && after == id {
			c.keepHash(rel, fileObs{stamp: stamp{ID: id, Since: c.since}, SHA256: sum})
			c.dirty = true
		}
	}
	return sum
}

func (c *Cache) keepHash(rel string, o fileObs) {
	if c.cur.Hashes == nil {
		c.cur.Hashes = map[string]fileObs{}
	}
	c.cur.Hashes[rel] = o
}

// records is ReadRecords of the task's transcript, answered from the
// cache when transcript.jsonl did not change since its gates' records
// were read, or folded from the events UseRecords gave. c is not nil.
func (c *Cache) records() (gates, sentBack lifecycle.Gates, err error) {
	if c.useGiven {
		if c.givenErr != nil {
			return nil, nil, c.givenErr
		}
		return lifecycle.FoldGates(c.given), lifecycle.FoldSentBack(c.given), nil
	}
	id, ok := c.lstatID(transcriptFile)
	var evs []lifecycle.GateEvent
	if ok && id.IsRegular() && c.old.Log != nil && c.old.Log.Trusted(id) {
		c.Hits++
		c.cur.Log = c.old.Log
		evs = c.old.Log.Events
	} else {
		stamped := false
		if ok && id.IsRegular() {
			c.Misses++
			stamped = c.begin()
		}
		if evs, err = readGateEvents(c.taskDir); err != nil {
			return nil, nil, err
		}
		if stamped {
			if after, ok := c.lstatID(transcriptFile); ok && after == id {
				c.cur.Log = &logObs{stamp: stamp{ID: id, Since: c.since}, Events: gateRecords(evs)}
				c.dirty = true
			}
		}
	}
	return lifecycle.FoldGates(evs), lifecycle.FoldSentBack(evs), nil
}

// gateRecords is what the cache keeps of the gate events: those with
// valid phases, with their non-empty hashes (the folds skip the rest).
func gateRecords(evs []lifecycle.GateEvent) []lifecycle.GateEvent {
	out := make([]lifecycle.GateEvent, 0, len(evs))
	for _, e := range evs {
		if !e.From.Valid() || !e.To.Valid() {
			continue
		}
		var hashes map[string]string
		for k, v := range e.Hashes {
			if v != "" {
				if hashes == nil {
					hashes = make(map[string]string, len(e.Hashes))
				}
				hashes[k] = v
			}
		}
		e.Hashes = hashes
		out = append(out, e)
	}
	return out
}

// Save closes what the cache holds open and writes what this run observed and found still true as the task's
// cache file, when it observed anything new: written to a temporary file
// in the same folder and renamed over the old one, so a reader sees the
// old file or the new one, never a part. It is not synced: a file torn by
// a crash fails its checksum and is ignored. Errors are ignored too: the
// cache only saves work. A nil *Cache does nothing.
func (c *Cache) Save() {
	if c == nil {
		return
	}
	if c.dir != nil {
		c.dir.Close()
		c.dir = nil
	}
	if c.tmp == nil {
		return
	}
	f := c.tmp
	c.tmp = nil
	if c.dirty {
		if _, err := f.Write(encodeObservations(c.cur)); err == nil && f.Close() == nil {
			if os.Rename(f.Name(), c.path) == nil {
				c.removeStray()
				return
			}
		}
	}
	f.Close()
	os.Remove(f.Name())
}

// removeStray removes the task's temporary cache files that a reader
// killed before its Save left behind (an hour old: a live reader's file is
// seconds old). A process looks once per task: the board saves a task's
// cache on every change, and listing the folder each time cost more than
// the save.
func (c *Cache) removeStray() {
	if _, seen := swept.LoadOrStore(c.path, true); seen {
		return
	}
	durable.RemoveStaleTemps(c.path, time.Hour)
}

// swept holds the cache files whose strays this process removed.
var swept sync.Map

// cacheable reports whether base names a commit by its full object id
// (sha1 or sha256 hex), so that a comparison against it is keyed by
// content.
func cacheable(base string) bool {
	if len(base) != 40 && len(base) != 64 {
		return false
	}
	return strings.Trim(base, "0123456789abcdef") == ""
}
