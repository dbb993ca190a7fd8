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
	names   [2][]uint32 // the names it defines and mentions
	ndefs   uint32
	off     uint32
	written bool
}

// namer gives the names of fresh entries their ids in the file being
// written: old's ids, then new ones appended.
type namer struct {
	old   *segment
	n0    int
	ids   map[string]uint32
	names []string
	buf   []byte
}

func newNamer(old *segment) *namer {
	nm := &namer{old: old, ids: map[string]uint32{}}
	if old != nil {
		nm.n0 = old.nnames
	}
	return nm
}

func (nm *namer) intern(s string) uint32 {
	if id, ok := nm.old.lookup(s); ok {
		return id
	}
	if id, ok := nm.ids[s]; ok {
		return id
	}
	id := uint32(nm.n0 + len(nm.names))
	nm.ids[s] = id
	nm.names = append(nm.names, s)
	return id
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
		fe.names[0] = append(fe.names[0], id)
	}
	for _, r := range tags.Refs {
		id := nm.intern(r.Name)
		e.refs = append(e.refs, refRec{name: id, count: uint16(min(r.Count, 1<<16-1))})
		fe.names[1] = append(fe.names[1], id)
	}
	nm.buf = appendEntry(nm.buf[:0], &e)
	fe.encoded = bytes.Clone(nm.buf)
	fe.ndefs = uint32(len(e.defs))
	return fe
}

// writeIndex writes the index file made of rows (sorted by path, then
// blob) to w: the names of old keep their ids and the new ones (nm's,
// whose old is old) are appended, so old entries are copied unchanged;
// the postings are old's, renumbered, merged with the fresh entries'.
func writeIndex(bw *bufio.Writer, old *segment, rows []outRow, fresh []*freshEntry, nm *namer) error {
	n0 := nm.n0
	newNames := nm.names
	nnames := n0 + len(newNames)
	if nnames >= 1<<31 || len(rows) >= 1<<31 {
		return fmt.Errorf("index too large: %d names, %d rows", nnames, len(rows))
	}

	fw, err := newFileWriter(bw)
	if err != nil {
		return err
	}
	copyBuf := make([]byte, 256<<10)

	// Entries first (their offsets go into the rows).
	if err := fw.begin(secEntries); err != nil {
		return err
	}
	entryOff := make([]uint32, len(rows))
	entryLen := make([]uint32, len(rows))
	ndefs := make([]uint32, len(rows))
	oldOff := map[int32]uint32{}
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
	for i, r := range rows {
		if r.old >= 0 {
			or, ok := old.row(int(r.old))
			if !ok {
				return damagedf("row %d", r.old)
			}
			ndefs[i], entryLen[i] = or.ndefs, or.entryLen
			if off, ok := oldOff[r.old]; ok {
				entryOff[i] = off
				continue
			}
			start := int64(or.entryOff)
			if start != pendEnd {
				if err := flush(); err != nil {
					return err
				}
				pendStart, pendEnd = start, start
			}
			at := fw.off + (pendEnd - pendStart) - base
			if at >= 1<<32 {
				return fmt.Errorf("index too large: %d bytes of entries", at)
			}
			entryOff[i] = uint32(at)
			oldOff[r.old] = uint32(at)
			pendEnd += int64(or.entryLen)
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		fe := fresh[r.fresh]
		ndefs[i], entryLen[i] = fe.ndefs, uint32(len(fe.encoded))
		if !fe.written {
			if fw.off-base >= 1<<32 {
				return fmt.Errorf("index too large: %d bytes of entries", fw.off-base)
			}
			fe.off, fe.written = uint32(fw.off-base), true
			if err := fw.write(fe.encoded); err != nil {
				return err
			}
		}
		entryOff[i] = fe.off
	}
	if err := flush(); err != nil {
		return err
	}

	// Rows and paths.
	if err := fw.begin(secRows); err != nil {
		return err
	}
	var rb [rowBytes]byte
	pathOff := uint32(0)
	for i, r := range rows {
		clear(rb[:])
		binary.LittleEndian.PutUint32(rb[0:], pathOff)
		binary.LittleEndian.PutUint32(rb[4:], uint32(len(r.path)))
		binary.LittleEndian.PutUint32(rb[8:], entryOff[i])
		binary.LittleEndian.PutUint32(rb[12:], entryLen[i])
		binary.LittleEndian.PutUint32(rb[16:], ndefs[i])
		rb[20], rb[21], rb[22] = byte(r.lang), r.flags, byte(len(r.blob))
		copy(rb[24:], r.blob)
		if err := fw.write(rb[:]); err != nil {
			return err
		}
		pathOff += uint32(len(r.path))
	}
	if err := fw.begin(secPaths); err != nil {
		return err
	}
	for _, r := range rows {
		if err := fw.write([]byte(r.path)); err != nil {
			return err
		}
	}

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
	for _, s := range newNames {
		namesLen += uint32(len(s))
		if err := fw.u32(namesLen); err != nil {
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
	for _, s := range newNames {
		if err := fw.write([]byte(s)); err != nil {
			return err
		}
	}

	if err := fw.begin(secNameFlags); err != nil {
		return err
	}
	if old != nil {
		if err := fw.copyFrom(old.file, old.off[secNameFlags], int64(n0), copyBuf); err != nil {
			return err
		}
	}
	flags := make([]byte, len(newNames))
	for i, s := range newNames {
		flags[i] = nameFlagsOf(s)
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
		if err := writeGrownHash(fw, old, newNames, n0, copyBuf); err != nil {
			return err
		}
	} else {
		table := make([]uint32, max(8, 1<<bits.Len(uint(2*nnames))))
		for id := 0; id < n0; id++ {
			insertName(table, fnv1a(old.name(uint32(id))), uint32(id)) // no string copies
		}
		for i, s := range newNames {
			insertName(table, fnv1a(s), uint32(n0+i))
		}
		if err := fw.u32s(table); err != nil {
			return err
		}
	}

	// Postings: old rows renumbered, merged with the fresh entries'.
	newOf := make([]int32, 0)
	extra := map[int32][]int32{}
	if old != nil {
		newOf = make([]int32, old.nrows)
		for i := range newOf {
			newOf[i] = -1
		}
	}
	nd, nr := 0, 0
	for _, fe := range fresh {
		nd += len(fe.names[0])
		nr += len(fe.names[1])
	}
	defPairs, refPairs := make([]uint64, 0, nd), make([]uint64, 0, nr)
	for i, r := range rows {
		if r.old >= 0 {
			if newOf[r.old] < 0 {
				newOf[r.old] = int32(i)
			} else {
				extra[r.old] = append(extra[r.old], int32(i))
			}
			continue
		}
		fe := fresh[r.fresh]
		for _, name := range fe.names[0] {
			defPairs = append(defPairs, uint64(name)<<32|uint64(i))
		}
		for _, name := range fe.names[1] {
			refPairs = append(refPairs, uint64(name)<<32|uint64(i))
		}
	}
	for _, ps := range []*[]uint64{&defPairs, &refPairs} {
		slices.Sort(*ps)
		*ps = slices.Compact(*ps)
	}
	for _, p := range []struct {
		start, rows int
		pairs       []uint64
	}{{secDefStart, secDefRow, defPairs}, {secRefStart, secRefRow, refPairs}} {
		starts, err := writePostings(fw, old, p.start, p.rows, p.pairs, newOf, extra, nnames, copyBuf)
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
	return fw.finish(len(rows), nnames)
}

// writePostings writes one postings table's rows section and returns its
// starts: per name, old's rows (read through a buffer, renumbered by
// newOf and extra, dropped when -1) and the fresh pairs (name<<32|row).
func writePostings(fw *fileWriter, old *segment, startSec, rowSec int, pairs []uint64, newOf []int32, extra map[int32][]int32, nnames int, buf []byte) ([]uint32, error) {
	if err := fw.begin(rowSec); err != nil {
		return nil, err
	}
	starts := make([]uint32, nnames+1)
	var rd *bufio.Reader
	n0 := 0
	if old != nil {
		n0 = old.nnames
		rd = bufio.NewReaderSize(io.NewSectionReader(old.file, old.off[rowSec], int64(len(old.sec[rowSec]))), len(buf))
	}
	var list []uint32
	out := make([]byte, 0, 64<<10)
	var word [4]byte
	count := uint32(0)
	p := 0
	for id := 0; id < nnames; id++ {
		list = list[:0]
		if id < n0 {
			a, b := old.u32(startSec, id), old.u32(startSec, id+1)
			if a > b {
				return nil, damagedf("postings of name %d", id)
			}
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
func writeGrownHash(fw *fileWriter, old *segment, newNames []string, n0 int, buf []byte) error {
	taken := make(map[uint64]uint32, len(newNames))
	for i, s := range newNames {
		slot := fnv1a(s) & old.mask
		for old.u32(secHash, int(slot)) != 0 || taken[slot] != 0 {
			slot = (slot + 1) & old.mask
		}
		taken[slot] = uint32(n0+i) + 1
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
