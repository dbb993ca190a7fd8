package repomap

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/durable"
)

// outRow is one row of the index file being written: either an old row's
// entry reused byte for byte (old >= 0) or a freshly parsed one.
type outRow struct {
	path  string
	blob  string // raw object name
	lang  Lang
	flags uint8
	old   int32 // the row of the old file whose entry this is, or -1
	fresh int32 // index into the fresh entries when old < 0
}

// freshEntry is a parsed file's entry on its way into the file, encoded
// as soon as it is parsed (the tags' strings are not kept).
type freshEntry struct {
	flags   uint8
	encoded []byte
	ndefs   uint32
	nrefs   uint32
	off     uint32
	written bool
}

// namer gives the names of fresh entries their ids in the file being
// written: old's ids, then new ones appended. The new names are kept in
// one byte arena with an open-addressing table of their positions, not
// a map of strings: a first index's first batch meets a few hundred
// thousand names, and a map held each as its own string, twice the
// bytes.
type namer struct {
	old   *segment
	n0    int
	arena []byte   // the new names, one after another
	ends  []uint32 // where each new name ends in arena
	table []uint32 // open addressing by fnv1a: 0 = empty, else k+1
	buf   []byte
}

func newNamer(old *segment) *namer {
	nm := &namer{old: old}
	if old != nil {
		nm.n0 = old.nnames
	}
	return nm
}

// count is how many new names there are.
func (nm *namer) count() int { return len(nm.ends) }

// newName returns the k-th new name (id n0+k).
func (nm *namer) newName(k int) []byte {
	a := uint32(0)
	if k > 0 {
		a = nm.ends[k-1]
	}
	return nm.arena[a:nm.ends[k]]
}

func (nm *namer) intern(s string) uint32 {
	h := fnv1a(s)
	if id, ok := nm.old.lookupHash(s, h); ok {
		return id
	}
	if 3*(len(nm.ends)+1) > 2*len(nm.table) {
		nm.grow()
	}
	mask := uint64(len(nm.table) - 1)
	i := h & mask
	for {
		v := nm.table[i]
		if v == 0 {
			break
		}
		if string(nm.newName(int(v-1))) == s {
			return uint32(nm.n0) + v - 1
		}
		i = (i + 1) & mask
	}
	nm.arena = append(nm.arena, s...)
	nm.ends = append(nm.ends, uint32(len(nm.arena)))
	k := len(nm.ends) - 1
	nm.table[i] = uint32(k) + 1
	return uint32(nm.n0 + k)
}

// grow doubles the table (at least 1,024 slots) and puts the names back.
func (nm *namer) grow() {
	nm.table = make([]uint32, max(1024, 2*len(nm.table)))
	for k := range nm.ends {
		insertName(nm.table, fnv1a(nm.newName(k)), uint32(k))
	}
}

// entry encodes a parse result.
func (nm *namer) entry(tags fileTags, flags uint8) *freshEntry {
	fe := &freshEntry{flags: flags}
	e := entry{}
	for _, d := range tags.Defs {
		k, ok := kindIndex(d.Kind)
		if !ok || !isIdent(d.Name) {
			continue
		}
		id := nm.intern(d.Name)
		e.defs = append(e.defs, defRec{name: id, kind: k, line: uint32(d.Line), sig: d.Sig})
	}
	for _, r := range tags.Refs {
		id := nm.intern(r.Name)
		e.refs = append(e.refs, refRec{name: id, count: uint16(min(r.Count, 1<<16-1))})
	}
	nm.buf = appendEntry(nm.buf[:0], &e)
	fe.encoded = bytes.Clone(nm.buf)
	fe.ndefs, fe.nrefs = uint32(len(e.defs)), uint32(len(e.refs))
	return fe
}

// writeIndex writes an index file to w whose rows are old's rows that
// keep lists (ascending, so in path and blob order) merged with extra
// (sorted by path, then blob; an extra row replaces an old one of the
// same path and blob): copies of old's entries (old >= 0) and fresh
// ones. The names of old keep their ids and the new ones (nm's, whose
// old is old) are appended, so old entries are copied unchanged; the
// postings are old's, renumbered, merged with the fresh entries'. Old's
// rows, paths and tables are read through buffers, never through the
// mapping: a first index rewrites the file after every batch, and every
// page of the old file it touched through the mapping stayed resident.
func writeIndex(bw *bufio.Writer, old *segment, keep []int32, extra []outRow, fresh []*freshEntry, nm *namer) error {
	n0 := nm.n0
	nnames := n0 + nm.count()
	if nnames >= 1<<31 || len(keep)+len(extra) >= 1<<31 {
		return fmt.Errorf("index too large: %d names, %d rows", nnames, len(keep)+len(extra))
	}

	fw, err := newFileWriter(bw)
	if err != nil {
		return err
	}
	copyBuf := make([]byte, 256<<10)

	// The rows in order, as old rows (>= 0) and extra rows (-1-k), with
	// the entries written on the way (their offsets go into the rows).
	if err := fw.begin(secEntries); err != nil {
		return err
	}
	n := len(keep) + len(extra)
	plan := make([]int32, 0, n)
	entryOff := make([]uint32, 0, n)
	entryLen := make([]uint32, 0, n)
	ndefs := make([]uint32, 0, n)
	// Postings: each old row's new row (and the further rows of an old
	// row copied under other paths); the fresh rows' names.
	var newOf []int32
	var oldAt []uint32
	more := map[int32][]int32{}
	if old != nil {
		newOf = make([]int32, old.nrows)
		oldAt = make([]uint32, old.nrows) // where an old entry went, or noOff
		for i := range newOf {
			newOf[i], oldAt[i] = -1, noOff
		}
	}
	nd, nr := 0, 0
	for _, fe := range fresh {
		nd += int(fe.ndefs)
		nr += int(fe.nrefs)
	}
	defPairs, refPairs := make([]uint64, 0, nd), make([]uint64, 0, nr)

	var pendStart, pendEnd int64 = -1, -1 // a run of old entry bytes to copy
	flush := func() error {
		if pendStart < 0 {
			return nil
		}
		err := fw.copyFrom(old.file, old.off[secEntries]+pendStart, pendEnd-pendStart, copyBuf)
		pendStart, pendEnd = -1, -1
		return err
	}
	base := fw.off
	// oldEntry places the entry of old row r (decoded as or).
	oldEntry := func(r int32, or row) error {
		entryLen = append(entryLen, or.entryLen)
		ndefs = append(ndefs, or.ndefs)
		i := int32(len(plan) - 1)
		if newOf[r] < 0 {
			newOf[r] = i
		} else {
			more[r] = append(more[r], i)
		}
		if at := oldAt[r]; at != noOff {
			entryOff = append(entryOff, at)
			return nil
		}
		start := int64(or.entryOff)
		if start != pendEnd {
			if err := flush(); err != nil {
				return err
			}
			pendStart, pendEnd = start, start
		}
		at := fw.off + (pendEnd - pendStart) - base
		if at >= noOff {
			return fmt.Errorf("index too large: %d bytes of entries", at)
		}
		entryOff = append(entryOff, uint32(at))
		oldAt[r] = uint32(at)
		pendEnd += int64(or.entryLen)
		return nil
	}
	rr := old.rowReader(true)
	for i, j := 0, 0; i < len(keep) || j < len(extra); {
		if i < len(keep) {
			or, p, err := rr.read(int(keep[i]))
			if err != nil {
				return err
			}
			c := -1
			if j < len(extra) {
				if c = strings.Compare(string(p), extra[j].path); c == 0 {
					c = strings.Compare(string(or.blob), extra[j].blob)
				}
			}
			if c == 0 {
				i++ // the extra row replaces it
				continue
			}
			if c < 0 {
				plan = append(plan, keep[i])
				i++
				if err := oldEntry(keep[i-1], or); err != nil {
					return err
				}
				continue
			}
		}
		x := extra[j]
		plan = append(plan, int32(-1-j))
		j++
		if x.old >= 0 {
			or, err := old.readRow(int(x.old))
			if err != nil {
				return err
			}
			if err := oldEntry(x.old, or); err != nil {
				return err
			}
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		fe := fresh[x.fresh]
		if !fe.written {
			if fw.off-base >= noOff {
				return fmt.Errorf("index too large: %d bytes of entries", fw.off-base)
			}
			fe.off, fe.written = uint32(fw.off-base), true
			if err := fw.write(fe.encoded); err != nil {
				return err
			}
		}
		entryOff = append(entryOff, fe.off)
		entryLen = append(entryLen, uint32(len(fe.encoded)))
		ndefs = append(ndefs, fe.ndefs)
		row := uint64(len(plan) - 1)
		if err := entryNames(fe.encoded, func(def bool, name uint32) {
			if def {
				defPairs = append(defPairs, uint64(name)<<32|row)
			} else {
				refPairs = append(refPairs, uint64(name)<<32|row)
			}
		}); err != nil {
			return err
		}
	}
	if err := flush(); err != nil {
		return err
	}
	oldAt = nil

	// Rows, then paths.
	if err := fw.begin(secRows); err != nil {
		return err
	}
	var rb [rowBytes]byte
	pathOff := uint64(0)
	rr = old.rowReader(false)
	for i, v := range plan {
		var pathLen int
		var lang Lang
		var flags uint8
		var blob []byte
		if v >= 0 {
			or, _, err := rr.read(int(v))
			if err != nil {
				return err
			}
			pathLen, lang, flags, blob = int(or.pathLen), or.lang, or.flags, or.blob
		} else {
			x := &extra[-1-v]
			pathLen, lang, flags, blob = len(x.path), x.lang, x.flags, []byte(x.blob)
		}
		if pathOff+uint64(pathLen) >= 1<<32 {
			return fmt.Errorf("index too large: %d bytes of paths", pathOff+uint64(pathLen))
		}
		clear(rb[:])
		binary.LittleEndian.PutUint32(rb[0:], uint32(pathOff))
		binary.LittleEndian.PutUint32(rb[4:], uint32(pathLen))
		binary.LittleEndian.PutUint32(rb[8:], entryOff[i])
		binary.LittleEndian.PutUint32(rb[12:], entryLen[i])
		binary.LittleEndian.PutUint32(rb[16:], ndefs[i])
		rb[20], rb[21], rb[22] = byte(lang), flags, byte(len(blob))
		copy(rb[24:], blob)
		if err := fw.write(rb[:]); err != nil {
			return err
		}
		pathOff += uint64(pathLen)
	}
	entryOff, entryLen, ndefs = nil, nil, nil
	if err := fw.begin(secPaths); err != nil {
		return err
	}
	rr = old.rowReader(true)
	for _, v := range plan {
		if v >= 0 {
			_, p, err := rr.read(int(v))
			if err != nil {
				return err
			}
			if err := fw.write(p); err != nil {
				return err
			}
		} else if err := fw.writeString(extra[-1-v].path); err != nil {
			return err
		}
	}
	nrows := len(plan)
	plan = nil

	// Names: old's verbatim, then the new ones.
	if err := fw.begin(secNameOff); err != nil {
		return err
	}
	namesLen := uint32(0)
	if old != nil {
		if err := fw.copyFrom(old.file, old.off[secNameOff], int64(4*(n0+1)), copyBuf); err != nil {
			return err
		}
		namesLen = uint32(len(old.sec[secNames]))
	} else if err := fw.u32(0); err != nil {
		return err
	}
	for _, end := range nm.ends {
		if err := fw.u32(namesLen + end); err != nil {
			return err
		}
	}
	if err := fw.begin(secNames); err != nil {
		return err
	}
	if old != nil {
		if err := fw.copyFrom(old.file, old.off[secNames], int64(len(old.sec[secNames])), copyBuf); err != nil {
			return err
		}
	}
	if err := fw.write(nm.arena); err != nil {
		return err
	}

	if err := fw.begin(secNameFlags); err != nil {
		return err
	}
	if old != nil {
		if err := fw.copyFrom(old.file, old.off[secNameFlags], int64(n0), copyBuf); err != nil {
			return err
		}
	}
	flags := make([]byte, nm.count())
	for k := range flags {
		flags[k] = nameFlagsOf(string(nm.newName(k)))
	}
	if err := fw.write(flags); err != nil {
		return err
	}

	// The hash table: old's with the new names added while it stays at
	// most two thirds full (streamed: old's slots read through a buffer,
	// the new names' slots kept aside), else a new one twice the names.
	if err := fw.begin(secHash); err != nil {
		return err
	}
	if old != nil && uint64(nnames)*3 < (old.mask+1)*2 {
		if err := writeGrownHash(fw, old, nm, copyBuf); err != nil {
			return err
		}
	} else {
		table := make([]uint32, max(8, 1<<bits.Len(uint(2*nnames))))
		for id := 0; id < n0; id++ {
			insertName(table, fnv1a(old.name(uint32(id))), uint32(id)) // no string copies
		}
		for k := range nm.count() {
			insertName(table, fnv1a(nm.newName(k)), uint32(n0+k))
		}
		if err := fw.u32s(table); err != nil {
			return err
		}
	}

	// Postings: old rows renumbered, merged with the fresh entries'.
	for _, ps := range []*[]uint64{&defPairs, &refPairs} {
		slices.Sort(*ps)
		*ps = slices.Compact(*ps)
	}
	for _, p := range []struct {
		start, rows int
		pairs       []uint64
	}{{secDefStart, secDefRow, defPairs}, {secRefStart, secRefRow, refPairs}} {
		starts, err := writePostings(fw, old, p.start, p.rows, p.pairs, newOf, more, nnames, copyBuf)
		if err != nil {
			return err
		}
		if err := fw.begin(p.start); err != nil {
			return err
		}
		if err := fw.u32s(starts); err != nil {
			return err
		}
	}
	return fw.finish(nrows, nnames)
}

// noOff marks an old entry not yet written (entries end below it).
const noOff = 1<<32 - 1

// entryNames calls fn with each name an encoded entry defines (def) and
// mentions, in the entry's order.
func entryNames(p []byte, fn func(def bool, name uint32)) error {
	d := decoder{p: p}
	nd := d.uvarint()
	for k := uint64(0); k < nd && d.err == nil; k++ {
		name := d.uvarint()
		d.byte()
		d.uvarint()
		d.bytes()
		if d.err == nil {
			fn(true, uint32(name))
		}
	}
	nr := d.uvarint()
	for k := uint64(0); k < nr && d.err == nil; k++ {
		name := d.uvarint()
		d.uvarint()
		if d.err == nil {
			fn(false, uint32(name))
		}
	}
	if d.err != nil {
		return fmt.Errorf("fresh entry: %w", d.err)
	}
	return nil
}

// writePostings writes one postings table's rows section and returns its
// starts: per name, old's rows (read through a buffer, renumbered by
// newOf and extra, dropped when -1) and the fresh pairs (name<<32|row).
func writePostings(fw *fileWriter, old *segment, startSec, rowSec int, pairs []uint64, newOf []int32, extra map[int32][]int32, nnames int, buf []byte) ([]uint32, error) {
	if err := fw.begin(rowSec); err != nil {
		return nil, err
	}
	starts := make([]uint32, nnames+1)
	var rd, sd *bufio.Reader
	n0 := 0
	var word [4]byte
	var next uint32 // where the postings of the next old name start
	if old != nil {
		n0 = old.nnames
		rd = bufio.NewReaderSize(io.NewSectionReader(old.file, old.off[rowSec], int64(len(old.sec[rowSec]))), len(buf))
		sd = bufio.NewReaderSize(io.NewSectionReader(old.file, old.off[startSec], int64(len(old.sec[startSec]))), 64<<10)
		if _, err := io.ReadFull(sd, word[:]); err != nil {
			return nil, damagedf("postings: %v", err)
		}
		next = binary.LittleEndian.Uint32(word[:])
	}
	var list []uint32
	out := make([]byte, 0, 64<<10)
	count := uint32(0)
	p := 0
	for id := 0; id < nnames; id++ {
		list = list[:0]
		if id < n0 {
			if _, err := io.ReadFull(sd, word[:]); err != nil {
				return nil, damagedf("postings of name %d: %v", id, err)
			}
			a, b := next, binary.LittleEndian.Uint32(word[:])
			if a > b {
				return nil, damagedf("postings of name %d", id)
			}
			next = b
			for k := a; k < b; k++ {
				if _, err := io.ReadFull(rd, word[:]); err != nil {
					return nil, damagedf("postings of name %d: %v", id, err)
				}
				r := binary.LittleEndian.Uint32(word[:])
				if int(r) >= len(newOf) {
					return nil, damagedf("postings of name %d: row %d", id, r)
				}
				if nr := newOf[r]; nr >= 0 {
					list = append(list, uint32(nr))
					for _, x := range extra[int32(r)] {
						list = append(list, uint32(x))
					}
				}
			}
		}
		for p < len(pairs) && pairs[p]>>32 == uint64(id) {
			list = append(list, uint32(pairs[p]))
			p++
		}
		if !slices.IsSorted(list) {
			slices.Sort(list)
		}
		for _, r := range list {
			out = binary.LittleEndian.AppendUint32(out, r)
		}
		if len(out) > cap(out)-4096 {
			if err := fw.write(out); err != nil {
				return nil, err
			}
			out = out[:0]
		}
		count += uint32(len(list))
		starts[id+1] = count
	}
	return starts, fw.write(out)
}

// writeGrownHash writes old's hash table with the new names (ids from
// n0 on) inserted, without holding the table: the new names' slots are
// found by probing old's slots and the ones already taken, then old's
// slots are streamed through buf with those filled in.
func writeGrownHash(fw *fileWriter, old *segment, nm *namer, buf []byte) error {
	taken := make(map[uint64]uint32, nm.count())
	for k := range nm.count() {
		slot := fnv1a(nm.newName(k)) & old.mask
		for probe := uint64(0); old.u32(secHash, int(slot)) != 0 || taken[slot] != 0; probe++ {
			if probe > old.mask {
				return damagedf("hash table full")
			}
			slot = (slot + 1) & old.mask
		}
		taken[slot] = uint32(nm.n0+k) + 1
	}
	type filled struct {
		slot uint64
		v    uint32 // id+1
	}
	fill := make([]filled, 0, len(taken))
	for slot, v := range taken {
		fill = append(fill, filled{slot, v})
	}
	taken = nil
	slices.SortFunc(fill, func(a, b filled) int { return cmp.Compare(a.slot, b.slot) })
	// Old's slots a buffer at a time (len(buf) is a multiple of 4).
	size := int64(len(old.sec[secHash]))
	for at := int64(0); at < size; {
		chunk := buf[:min(int64(len(buf)), size-at)]
		if _, err := old.file.ReadAt(chunk, old.off[secHash]+at); err != nil {
			return damagedf("hash table: %v", err)
		}
		first, end := uint64(at/4), uint64((at+int64(len(chunk)))/4)
		for len(fill) > 0 && fill[0].slot < end {
			binary.LittleEndian.PutUint32(chunk[4*(fill[0].slot-first):], fill[0].v)
			fill = fill[1:]
		}
		if err := fw.write(chunk); err != nil {
			return err
		}
		at += int64(len(chunk))
	}
	return nil
}

func insertName(table []uint32, hash uint64, id uint32) {
	mask := uint64(len(table) - 1)
	i := hash & mask
	for table[i] != 0 {
		i = (i + 1) & mask
	}
	table[i] = id + 1
}

// createIndex writes an index file with fill and opens it: in dir,
// replacing its index file atomically (temporary file, fsync, rename,
// fsync of the folder) when dir is set, else as an unnamed temporary
// file that lives as long as the index. The file is opened before the
// rename, so a concurrent writer's file is never mistaken for this one.
func createIndex(dir string, fill func(*bufio.Writer) error) (*segment, error) {
	var f *os.File
	var err error
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		f, err = os.CreateTemp(dir, indexName+durable.TempInfix+"*")
	} else {
		f, err = os.CreateTemp("", "orch-repomap-*")
		if err == nil {
			os.Remove(f.Name())
		}
	}
	if err != nil {
		return nil, err
	}
	abandon := func(err error) (*segment, error) {
		f.Close()
		if dir != "" {
			os.Remove(f.Name())
		}
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := fill(bw); err != nil {
		return abandon(err)
	}
	if err := bw.Flush(); err != nil {
		return abandon(err)
	}
	if testHookWritten != nil {
		testHookWritten(f.Name())
	}
	if dir != "" {
		if err := f.Chmod(0o600); err != nil {
			return abandon(err)
		}
		if err := f.Sync(); err != nil {
			return abandon(err)
		}
	}
	s, err := newSegment(f)
	if err != nil {
		return abandon(fmt.Errorf("reopen the index just written: %w", err))
	}
	if dir != "" {
		if err := os.Rename(f.Name(), filepath.Join(dir, indexName)); err != nil {
			os.Remove(f.Name())
			return nil, err
		}
		if err := durable.SyncDir(durable.OS, dir); err != nil {
			return s, nil // the index is usable; only its durability is unknown
		}
	}
	return s, nil
}

// removeStaleTemps removes temporary files a crashed build left behind
// (older than an hour, so a concurrent build's file is left alone).
func removeStaleTemps(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		if !durable.IsTemp(name, indexName) {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
			os.Remove(filepath.Join(dir, name))
		}
	}
}

// testHookWritten, set by tests only, runs when an index file is written
// and not yet renamed into place (the crash test stops the process there).
var testHookWritten func(tmp string)
