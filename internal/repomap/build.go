package repomap

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/visibility"
)

// Options configure Build. The zero value indexes the index (the tracked
// files) without a cache.
type Options struct {
	// CacheDir holds the tags cache (the agents pass .orch/cache/repomap).
	// Empty: no cache.
	CacheDir string
	// Commit, when set, indexes that commit's tree instead of the index.
	Commit string
	// Policy decides which files may reach a model (visibility).
	Policy visibility.Policy
	// MaxFileBytes: larger files are listed but not indexed (default
	// 512 KiB; generated and minified files are skipped too).
	MaxFileBytes int64
	// Workers parse in parallel (default GOMAXPROCS).
	Workers int
	// Fresh builds anew even when this process holds an index of the same
	// files (Build reuses one otherwise: see memo).
	Fresh bool
	// Progress, when set, receives a progress line (rewritten in place
	// with "\r") while a build that has been parsing for more than a
	// second goes on: set it only when writing to a terminal.
	Progress io.Writer
}

// Stats describe one build.
type Stats struct {
	Files    int           // visible files
	Indexed  int           // source files with indexed tags (cached or parsed)
	Cached   int           // distinct blobs read from the cache
	Parsed   int           // distinct blobs parsed in this build
	Skipped  int           // source files too large, binary or minified
	Defs     int           // definitions in the index
	Names    int           // distinct identifiers
	Damaged  int           // cache records ignored as damaged
	Warnings []string      // cache problems; the build still succeeded
	Duration time.Duration // wall time of Build
}

// Index is a repository's symbol index over an index file (format.go),
// read in place: entries are decoded when a ranking or lookup visits
// them. It is read-only after Build and safe for concurrent use.
type Index struct {
	repo   *gitx.Repo
	commit string
	files  *visibility.Files
	all    []visibility.File
	seg    *segment // nil when no file is indexed
	row    []int32  // per file of all: its row in seg, or -1
	cur    []int32  // per row of seg: its file in all, or -1
	stats  Stats

	mu   sync.Mutex
	ents map[int32]*entry // decoded entries by file
}

// entry is the tags of one file, names as ids of the index file.
type entry struct {
	lang    Lang
	defs    []defRec
	refs    []refRec
	skipped bool // too large, binary or minified
}

type defRec struct {
	name uint32
	kind uint8
	line uint32
	sig  string
}

type refRec struct {
	name  uint32
	count uint16
}

const defaultMaxFileBytes = 512 << 10

// parseBatch is how many files a first index parses between two writes
// of the index file: it bounds the memory of a build (the tags of one
// batch) and lets an interrupted first index resume.
var parseBatch = 8192

// source is one visible file to index.
type source struct {
	file int32
	key  cacheKey
}

// cacheKey names one indexed blob: its object name (raw bytes as a
// string) and the language it was indexed as.
type cacheKey struct {
	blob string
	lang Lang
}

func keyOf(blobHex string, l Lang) (cacheKey, bool) {
	raw, err := hex.DecodeString(blobHex)
	if err != nil || (len(raw) != 20 && len(raw) != 32) {
		return cacheKey{}, false
	}
	return cacheKey{blob: string(raw), lang: l}, true
}

// Build indexes the repository at dir: it lists the files a model may see
// (visibility), finds each source file's row in the index file by path
// and blob (`git ls-files -s`, or the commit's tree), reuses the entry of
// a file whose content another row has (a rename, a copy, another
// branch), parses the others with tree-sitter in parallel, and writes the
// index file again only when something changed, copying the unchanged
// entries without decoding them. A cache that cannot be read or written
// is a warning in Stats, never an error.
func Build(ctx context.Context, dir string, opt Options) (*Index, error) {
	start := time.Now()
	repo, err := gitx.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	var files *visibility.Files
	if opt.Commit != "" {
		files, err = visibility.ListAt(ctx, repo, opt.Commit, opt.Policy)
	} else {
		files, err = visibility.List(ctx, repo, opt.Policy)
	}
	if err != nil {
		return nil, err
	}
	key := memoKey(repo.Dir, opt, files)
	if ix := memo.get(key); ix != nil && !opt.Fresh {
		return ix, nil
	}
	ix := &Index{repo: repo, commit: opt.Commit, files: files, all: files.All(), ents: map[int32]*entry{}}
	ix.stats.Files = len(ix.all)

	var srcs []source
	for i, f := range ix.all {
		l := LangOf(f.Path)
		if l == LangNone {
			continue
		}
		if k, ok := keyOf(f.Blob, l); ok {
			srcs = append(srcs, source{file: int32(i), key: k})
		}
	}

	// The index file of an earlier build.
	var old *segment
	if opt.CacheDir != "" {
		removeStaleTemps(opt.CacheDir)
		old, err = openIndex(filepath.Join(opt.CacheDir, indexName))
		switch {
		case err == nil, errors.Is(err, os.ErrNotExist):
		case errors.Is(err, errDamaged):
			ix.stats.Damaged++
		default:
			ix.stats.Warnings = append(ix.stats.Warnings, cacheWarning("read", err))
		}
	}

	// Which files the old rows cover (same path and blob), which reuse
	// an old row of the same blob, which are parsed; which old rows the
	// new file keeps (ascending) and which rows it adds.
	var keep []int32
	var extra []outRow
	rewrite := true
	var copies, missing []source
	var matched []int32 // per file of ix.all, its row in old
	if old != nil {
		live := make([]bool, old.nrows)
		liveRows := 0
		matched = make([]int32, len(ix.all))
		for i := range matched {
			matched[i] = -1
		}
		j := 0
		for _, s := range srcs {
			r, next := old.find(ix.all[s.file].Path, s.key, j)
			j = next
			if r >= 0 {
				matched[s.file] = int32(r)
				if !live[r] {
					live[r] = true
					liveRows++
					if s.key.lang.source() {
						ix.stats.Cached++
					}
				}
				continue
			}
			missing = append(missing, s)
		}
		if len(missing) > 0 {
			byBlob := old.blobRows(missing)
			still := missing[:0]
			for _, s := range missing {
				if _, ok := byBlob[s.key]; ok {
					copies = append(copies, s)
					if s.key.lang.source() {
						ix.stats.Cached++
					}
				} else {
					still = append(still, s)
				}
			}
			missing = still
			for _, s := range copies {
				extra = append(extra, outRow{path: ix.all[s.file].Path, blob: s.key.blob, lang: s.key.lang, old: byBlob[s.key], fresh: -1})
			}
		}
		// Rows of files no longer visible stay while they are few (a
		// branch switched back finds them); else they all go.
		dead := old.nrows - liveRows
		keepDead := dead <= max(1024, liveRows/8)
		for r := 0; r < old.nrows; r++ {
			if !live[r] && (!keepDead || old.retry(r)) {
				continue
			}
			keep = append(keep, int32(r))
		}
		rewrite = len(missing) > 0 || len(copies) > 0 || !keepDead
	} else {
		missing = srcs
	}

	seg := old
	if rewrite {
		seg, err = ix.update(ctx, opt, old, keep, extra, missing)
		if err != nil {
			return nil, err
		}
	}
	if seg != old {
		matched = nil // rows of a new file
	}
	ix.attach(seg, matched)
	ix.stats.Names = 0
	if seg != nil {
		ix.stats.Names = seg.nnames
	}
	ix.stats.Duration = time.Since(start)
	memo.put(key, ix)
	return ix, nil
}

// update parses the missing files in batches and writes the index file
// after each: old's rows that keep lists (ascending) and the rows extra
// adds (copies of old's entries under other paths), with the batch's,
// then the next batch on top of that file. It returns the last file
// written, and closes the ones it replaced (old included).
func (ix *Index) update(ctx context.Context, opt Options, old *segment, keep []int32, extra []outRow, missing []source) (*segment, error) {
	seg := old
	dir := opt.CacheDir
	progress := newProgress(opt.Progress, len(missing))
	defer progress.done()
	if len(missing) > parseBatch {
		limitMemory() // memlimit.go
		defer releaseMemoryLimit()
	}
	for first := true; first || len(missing) > 0; first = false {
		batch := missing[:min(len(missing), parseBatch)]
		missing = missing[len(batch):]
		nm := newNamer(seg)
		fresh, freshRows, err := ix.parseBlobs(ctx, opt, batch, progress, nm)
		if err != nil {
			return nil, err
		}
		if !first {
			// The next batch on top of the file just written: all its rows.
			keep = make([]int32, seg.nrows)
			for r := range keep {
				keep[r] = int32(r)
			}
		}
		extra = append(extra, freshRows...)
		slices.SortFunc(extra, compareRows)
		prev := seg
		fill := func(w *bufio.Writer) error { return writeIndex(w, prev, keep, extra, fresh, nm) }
		next, err := createIndex(dir, fill)
		if err != nil && dir != "" {
			ix.stats.Warnings = append(ix.stats.Warnings, cacheWarning("write", err))
			dir = "" // the rest in an unnamed temporary file
			next, err = createIndex("", fill)
		}
		if err != nil {
			return nil, fmt.Errorf("repository map: write the index: %w", err)
		}
		// The file just replaced is not read again: its pages go now.
		prev.close()
		seg = next
		keep, extra = nil, nil // not held through the next batch's parse
		adjustMemoryLimit()
	}
	return seg, nil
}

// compareRows orders rows by path, then blob.
func compareRows(a, b outRow) int {
	if c := strings.Compare(a.path, b.path); c != 0 {
		return c
	}
	return strings.Compare(a.blob, b.blob)
}

// attach points the index at seg: each file's row (matched, when the
// caller has found them already), each row's file.
func (ix *Index) attach(seg *segment, matched []int32) {
	ix.seg = seg
	ix.row = make([]int32, len(ix.all))
	for i := range ix.row {
		ix.row[i] = -1
	}
	if seg == nil {
		return
	}
	ix.cur = make([]int32, seg.nrows)
	for r := range ix.cur {
		ix.cur[r] = -1
	}
	counted := make([]bool, seg.nrows)
	j := 0
	for i, f := range ix.all {
		l := LangOf(f.Path)
		if l == LangNone {
			continue
		}
		var r int
		if matched != nil {
			r = int(matched[i])
		} else {
			k, ok := keyOf(f.Blob, l)
			if !ok {
				continue
			}
			r, j = seg.find(f.Path, k, j)
		}
		if r < 0 {
			continue
		}
		ix.row[i], ix.cur[r] = int32(r), int32(i)
		or, _ := seg.row(r)
		if !l.source() {
			continue
		}
		if or.flags&flagSkipped != 0 {
			ix.stats.Skipped++
		} else {
			ix.stats.Indexed++
		}
		if !counted[r] {
			counted[r] = true
			ix.stats.Defs += int(or.ndefs)
		}
	}
}

// find returns the row of path with key, searching from row j on (the
// callers ask in path order, so the rows are walked once), and where the
// next search may start; -1 when there is none (or its parse is to be
// retried).
func (s *segment) find(p string, k cacheKey, j int) (int, int) {
	// The first row whose path is not below p: a step from j, then a
	// binary search when p is further on.
	lo := j
	for step := 0; lo < s.nrows && step < 8 && string(s.rowPath(lo)) < p; step++ {
		lo++
	}
	if lo < s.nrows && string(s.rowPath(lo)) < p {
		hi := s.nrows
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if string(s.rowPath(m)) < p {
				lo = m + 1
			} else {
				hi = m
			}
		}
	}
	for r := lo; r < s.nrows && string(s.rowPath(r)) == p; r++ {
		or, ok := s.row(r)
		if ok && string(or.blob) == k.blob && or.lang == k.lang && reusable(or.flags) {
			return r, lo
		}
	}
	return -1, lo
}

// retry reports whether row r is to be parsed again (not reusable by
// this build): such a row is not kept for a later build.
func (s *segment) retry(r int) bool {
	or, ok := s.row(r)
	return !ok || !reusable(or.flags)
}

// blobRows maps the blobs of srcs that the file holds to a row holding
// each (the first), reading the rows once.
func (s *segment) blobRows(srcs []source) map[cacheKey]int32 {
	m := make(map[cacheKey]int32, len(srcs))
	for _, src := range srcs {
		m[src.key] = -1
	}
	for r := 0; r < s.nrows; r++ {
		or, ok := s.row(r)
		if !ok || !reusable(or.flags) {
			continue
		}
		k := cacheKey{blob: string(or.blob), lang: or.lang}
		if v, want := m[k]; want && v < 0 {
			m[k] = int32(r)
		}
	}
	for k, v := range m {
		if v < 0 {
			delete(m, k)
		}
	}
	return m
}

// memo keeps the last indexes built in this process: the roles of one
// phase run (five plan reviewers, say) ask for the map of the same files,
// and an index is read-only once built. An index is reused only for the
// same folder, commit, visible files with the same blobs and options.
var memo indexMemo

// memoSize bounds the indexes kept (each holds a whole repository's tags).
const memoSize = 2

type indexMemo struct {
	mu   sync.Mutex
	keys [memoSize][sha256.Size]byte
	ixs  [memoSize]*Index
	next int
}

func (m *indexMemo) get(k [sha256.Size]byte) *Index {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, key := range m.keys {
		if key == k && m.ixs[i] != nil {
			return m.ixs[i]
		}
	}
	return nil
}

func (m *indexMemo) put(k [sha256.Size]byte, ix *Index) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.keys[m.next], m.ixs[m.next] = k, ix
	m.next = (m.next + 1) % memoSize
}

// memoKey digests what an index depends on.
func memoKey(dir string, opt Options, files *visibility.Files) [sha256.Size]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%q %q %q %d\x00", dir, opt.Commit, opt.CacheDir, opt.MaxFileBytes)
	for _, f := range files.All() {
		h.Write([]byte(f.Path))
		h.Write([]byte{0})
		h.Write([]byte(f.Blob))
		h.Write([]byte(f.Mode))
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// parsed is one parse result on its way to the collector.
type parsed struct {
	key       cacheKey
	tags      fileTags
	skipped   bool
	cacheable bool
	noParser  bool // definitions left out: this build has no parser for them
}

// parseBlobs streams the batch's blobs out of git and parses them with
// opt.Workers goroutines, each distinct blob once; it returns the fresh
// entries and a row for each file.
func (ix *Index) parseBlobs(ctx context.Context, opt Options, batch []source, pr *progress, nm *namer) ([]*freshEntry, []outRow, error) {
	if len(batch) == 0 {
		return nil, nil, nil
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	maxBytes := opt.MaxFileBytes
	if maxBytes <= 0 {
		maxBytes = defaultMaxFileBytes
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	byKey := map[cacheKey]int32{}
	var keys []cacheKey
	var blobs []string
	for _, s := range batch {
		if _, dup := byKey[s.key]; !dup {
			byKey[s.key] = -1
			keys = append(keys, s.key)
			blobs = append(blobs, ix.all[s.file].Blob)
		}
	}
	type job struct {
		key  cacheKey
		data []byte // nil: skipped for its size
	}
	jobs := make(chan job, 4*workers)
	results := make(chan parsed, 4*workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ex := newExtractor()
			defer ex.close()
			for j := range jobs {
				r := indexBlob(ctx, ex, j.key.lang, j.data)
				r.key = j.key
				results <- r
			}
		}()
	}
	var feedErr error
	go func() {
		feedErr = ix.repo.CatBlobs(ctx, blobs, maxBytes, func(i int, data []byte, size int64) error {
			var d []byte
			if data != nil {
				d = bytes.Clone(data)
			}
			select {
			case jobs <- job{key: keys[i], data: d}:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		close(jobs)
		wg.Wait()
		close(results)
	}()
	var fresh []*freshEntry
	for r := range results {
		var flags uint8
		if r.skipped {
			flags |= flagSkipped
		}
		if !r.cacheable {
			flags |= flagRetry
		}
		if r.noParser {
			flags |= flagNoParser
		}
		fe := nm.entry(r.tags, flags)
		byKey[r.key] = int32(len(fresh))
		fresh = append(fresh, fe)
		if r.key.lang.source() {
			ix.stats.Parsed++
		}
		pr.add(1)
	}
	if feedErr != nil {
		return nil, nil, fmt.Errorf("repository map: read files: %w", feedErr)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	rows := make([]outRow, 0, len(batch))
	for _, s := range batch {
		fi := byKey[s.key]
		if fi < 0 {
			return nil, nil, fmt.Errorf("repository map: read files: %s missing", ix.all[s.file].Blob)
		}
		rows = append(rows, outRow{path: ix.all[s.file].Path, blob: s.key.blob, lang: s.key.lang, flags: fresh[fi].flags, old: -1, fresh: fi})
	}
	return fresh, rows, nil
}

// errNoParser marks a file whose definitions this build cannot find: it
// was built without tree-sitter (parse_nocgo.go).
var errNoParser = errors.New("no parser for the language in this build (built without cgo)")

// indexBlob computes the tags of one file's content.
func indexBlob(ctx context.Context, ex *extractor, l Lang, data []byte) parsed {
	r := parsed{tags: fileTags{Lang: l}, cacheable: true}
	if data == nil || looksBinary(data) || looksMinified(data) {
		r.skipped = true
		return r
	}
	if l.parsed() {
		defs, err := ex.definitions(ctx, l, data)
		switch {
		case errors.Is(err, errParseLimit):
			r.cacheable = false // a slower machine; try again next time
		case errors.Is(err, errNoParser):
			r.noParser = true // a build with tree-sitter parses it again
		case err != nil:
			r.cacheable = false
		default:
			r.tags.Defs = defs
		}
	}
	r.tags.Refs = scanRefs(data)
	return r
}

func looksBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}

// looksMinified reports generated one-line bundles, whose identifiers are
// noise.
func looksMinified(b []byte) bool {
	if len(b) < 32<<10 {
		return false
	}
	lines := bytes.Count(b, []byte{'\n'}) + 1
	return len(b)/lines > 1000
}

// cacheWarning describes a cache failure, which never fails a build.
func cacheWarning(op string, err error) string {
	return fmt.Sprintf("repository map cache: %s: %v (the map is still built; only the cache is lost)", op, err)
}
