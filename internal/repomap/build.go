package repomap

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"runtime"
	"slices"
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

// Index is a repository's symbol index. It is read-only after Build and
// safe for concurrent use.
type Index struct {
	repo   *gitx.Repo
	commit string
	files  *visibility.Files
	all    []visibility.File
	ent    []*entry // per file of all; nil for files that are not source code

	names []string
	ids   map[string]uint32
	// defStart[n]..defStart[n+1] index defFile: the files defining
	// name n.
	defStart []int32
	defFile  []int32
	// refFiles counts, per name, the files that mention it.
	refFiles []int32
	byPath   map[string]int32

	g     graph
	stats Stats
}

// entry is the tags of one blob, with names interned.
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

func (ix *Index) intern(b []byte) uint32 {
	if id, ok := ix.ids[string(b)]; ok {
		return id
	}
	s := string(b)
	id := uint32(len(ix.names))
	ix.names = append(ix.names, s)
	ix.ids[s] = id
	return id
}

func (ix *Index) internString(s string) uint32 {
	if id, ok := ix.ids[s]; ok {
		return id
	}
	id := uint32(len(ix.names))
	ix.names = append(ix.names, s)
	ix.ids[s] = id
	return id
}

const defaultMaxFileBytes = 512 << 10

// Build indexes the repository at dir: it lists the files a model may see
// (visibility), takes the tags of each source file from the cache by blob
// hash, parses the others with tree-sitter in parallel, and saves the
// cache. A cache that cannot be read or written is a warning in Stats,
// never an error.
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
	ix := &Index{
		repo: repo, commit: opt.Commit, files: files, all: files.All(),
		ids:    map[string]uint32{},
		byPath: make(map[string]int32, files.Len()),
	}
	ix.ent = make([]*entry, len(ix.all))
	ix.stats.Files = len(ix.all)

	// The blobs to index, each once.
	want := map[cacheKey]*entry{}
	var order []cacheKey
	fileKey := make([]cacheKey, len(ix.all))
	for i, f := range ix.all {
		ix.byPath[f.Path] = int32(i)
		l := LangOf(f.Path)
		if l == LangNone {
			continue
		}
		k, ok := keyOf(f.Blob, l)
		if !ok {
			continue
		}
		fileKey[i] = k
		if _, dup := want[k]; !dup {
			want[k] = nil
			order = append(order, k)
		}
	}

	// The cache.
	var others [][]byte
	otherBytes := 0
	if opt.CacheDir != "" {
		damaged, err := readSnapshot(snapshotPath(opt.CacheDir), func(k cacheKey, rest, payload []byte) {
			e, needed := want[k]
			if !needed {
				if otherBytes+len(payload) <= maxOtherBytes {
					others = append(others, bytes.Clone(payload))
					otherBytes += len(payload)
				}
				return
			}
			if e != nil {
				return // a duplicate record
			}
			if e, err := ix.decodeEntry(k.lang, rest); err == nil {
				want[k] = e
				ix.stats.Cached++
			} else {
				ix.stats.Damaged++
			}
		})
		ix.stats.Damaged += damaged
		if err != nil {
			ix.stats.Warnings = append(ix.stats.Warnings, cacheWarning("read", err))
		}
	}

	// Parse what the cache did not have.
	var missing []cacheKey
	var missingBlobs []string
	for _, k := range order {
		if want[k] == nil {
			missing = append(missing, k)
			missingBlobs = append(missingBlobs, fmt.Sprintf("%x", k.blob))
		}
	}
	uncacheable := map[cacheKey]bool{}
	if len(missing) > 0 {
		if err := ix.parseBlobs(ctx, opt, missing, missingBlobs, want, uncacheable); err != nil {
			return nil, err
		}
	}

	for i, k := range fileKey {
		if k.lang == LangNone {
			continue
		}
		e := want[k]
		ix.ent[i] = e
		if e == nil {
			continue
		}
		if e.skipped {
			ix.stats.Skipped++
		} else {
			ix.stats.Indexed++
		}
	}
	ix.link()

	if opt.CacheDir != "" && (ix.stats.Parsed > 0 || ix.stats.Damaged > 0) {
		err := writeSnapshot(opt.CacheDir, func(w *bufio.Writer) error {
			var buf []byte
			for _, k := range order {
				e := want[k]
				if e == nil || uncacheable[k] {
					continue
				}
				buf = ix.encodeRecord(buf[:0], k, e)
				if _, err := w.Write(buf); err != nil {
					return err
				}
			}
			for _, p := range others {
				var frame [8]byte
				putFrame(frame[:], p)
				if _, err := w.Write(frame[:]); err != nil {
					return err
				}
				if _, err := w.Write(p); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			ix.stats.Warnings = append(ix.stats.Warnings, cacheWarning("write", err))
		}
	}
	ix.stats.Names = len(ix.names)
	ix.stats.Duration = time.Since(start)
	memo.put(key, ix)
	return ix, nil
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
}

// parseBlobs streams the missing blobs out of git and parses them with
// opt.Workers goroutines; the results are interned by this goroutine.
func (ix *Index) parseBlobs(ctx context.Context, opt Options, keys []cacheKey, blobs []string, want map[cacheKey]*entry, uncacheable map[cacheKey]bool) error {
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
	for r := range results {
		e := &entry{lang: r.key.lang, skipped: r.skipped}
		for _, d := range r.tags.Defs {
			k, ok := kindIndex(d.Kind)
			if !ok {
				continue
			}
			e.defs = append(e.defs, defRec{name: ix.internString(d.Name), kind: k, line: uint32(d.Line), sig: d.Sig})
		}
		for _, rf := range r.tags.Refs {
			e.refs = append(e.refs, refRec{name: ix.internString(rf.Name), count: uint16(min(rf.Count, 1<<16-1))})
		}
		want[r.key] = e
		ix.stats.Parsed++
		if !r.cacheable {
			uncacheable[r.key] = true
		}
	}
	if feedErr != nil {
		return fmt.Errorf("repository map: read files: %w", feedErr)
	}
	return ctx.Err()
}

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

// link builds the definer lists (compressed: defStart/defFile) and the
// reference counts.
func (ix *Index) link() {
	n := len(ix.names)
	ix.refFiles = make([]int32, n)
	ix.defStart = make([]int32, n+1)
	seen := map[*entry]bool{}
	var names []uint32
	// uniqueDefs lists the distinct names a file defines, in order.
	uniqueDefs := func(e *entry) []uint32 {
		names = names[:0]
		for _, d := range e.defs {
			names = append(names, d.name)
		}
		slices.Sort(names)
		return slices.Compact(names)
	}
	for _, e := range ix.ent {
		if e == nil {
			continue
		}
		for _, name := range uniqueDefs(e) {
			ix.defStart[name+1]++
		}
		for _, r := range e.refs {
			ix.refFiles[r.name]++
		}
		if !seen[e] {
			seen[e] = true
			ix.stats.Defs += len(e.defs)
		}
	}
	for i := 1; i <= n; i++ {
		ix.defStart[i] += ix.defStart[i-1]
	}
	ix.defFile = make([]int32, ix.defStart[n])
	next := make([]int32, n)
	copy(next, ix.defStart[:n])
	for i, e := range ix.ent {
		if e == nil {
			continue
		}
		for _, name := range uniqueDefs(e) {
			ix.defFile[next[name]] = int32(i)
			next[name]++
		}
	}
}

// definers returns the files defining a name, by file order.
func (ix *Index) definers(name uint32) []int32 {
	if int(name)+1 >= len(ix.defStart) {
		return nil
	}
	return ix.defFile[ix.defStart[name]:ix.defStart[name+1]]
}

func putFrame(frame []byte, payload []byte) {
	binary.LittleEndian.PutUint32(frame[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(frame[4:], crc32.Checksum(payload, crcTable))
}
