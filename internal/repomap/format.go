package repomap

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// The index file (Options.CacheDir/repomap.idx) holds the tags of every
// indexed file in a form that is memory-mapped and read in place: a map
// for a brief touches the rows, names and postings the ranking visits, not
// the whole file.
//
//	header:   "ORCHRMAP" version:u32le(4) reserved:u32le
//	sections: each 8-byte aligned, little-endian
//	  rows      nrows × 56 bytes, sorted by path then blob:
//	            pathOff:u32 pathLen:u32 entryOff:u32 entryLen:u32
//	            ndefs:u32 lang:u8 flags:u8 bloblen:u8 pad:u8 blob:[32]
//	  paths     the rows' paths
//	  entries   per row: ndefs:uvarint {name:uvarint kind:u8 line:uvarint
//	            siglen:uvarint sig} nrefs:uvarint {name:uvarint count:uvarint}
//	  nameOff   (nnames+1) × u32 into names
//	  names     the identifiers (name ids are positions in nameOff)
//	  hash      2^k × u32: open addressing by FNV-1a, 0 = empty, else id+1
//	  defStart  (nnames+1) × u32 into defRow: the rows defining each name
//	  defRow    u32 rows, ascending per name
//	  refStart  (nnames+1) × u32 into refRow: the rows mentioning each name
//	  refRow    u32 rows, ascending per name
//	trailer:  numSections × (off:u64 len:u64) nrows:u32 nnames:u32
//	          crc32c(everything before it):u32 reserved:u32 "RMAPEND\x00"
//
// Version 3 indexes every name of a Go constant spec (`const a, b = 1,
// 2`; version 2 kept the first only): a version 2 file is rebuilt.
// Version 4 marks the rows a build without tree-sitter indexed
// (flagNoParser), so that orch built with and without cgo can share one
// cache folder: a version 3 file does not say which build wrote a row,
// and is rebuilt.
//
// Opening a file checks its checksum (streamed through a buffer, so the
// pages are not mapped in), its shape and every section's bounds; every
// read of a row, entry or posting is bounds-checked again, so a damaged or
// hostile file is ignored (and rebuilt), never trusted. Name ids are
// never renumbered: a new build appends the names it has not seen, so the
// entries of unchanged files are copied byte for byte (build.go). The
// file is replaced atomically (temporary file, fsync, rename), so a
// reader never sees a torn file and concurrent writers each leave a whole
// one.
const (
	indexName    = "repomap.idx"
	indexMagic   = "ORCHRMAP"
	indexEnd     = "RMAPEND\x00"
	indexVersion = 4
	rowBytes     = 56
	headerBytes  = 16
	trailerBytes = numSections*16 + 24
	maxBlobBytes = 32
)

// Sections of the index file, in file order.
const (
	secRows = iota
	secPaths
	secEntries
	secNameOff
	secNames
	secHash
	secDefStart
	secDefRow
	secRefStart
	secRefRow
	secNameFlags
	numSections
)

// Name flags.
const (
	nameLong = 1 << iota
	nameUnderscore
)

func nameFlagsOf(s string) byte {
	var f byte
	if len(s) >= 8 && codeLike(s) {
		f |= nameLong
	}
	if strings.HasPrefix(s, "_") {
		f |= nameUnderscore
	}
	return f
}

// Row flags.
const (
	flagSkipped = 1 << iota // too large, binary or minified: listed, not indexed
	flagRetry               // the parse hit a limit: used once, parsed again next build
	// flagNoParser: indexed by a build without tree-sitter (no cgo), so
	// without the definitions tree-sitter would find (every language but
	// Go, and a Go file go/parser rejects). Such a build reuses the row;
	// a build with tree-sitter parses the file again.
	flagNoParser
)

// reusable reports whether this build takes a row's entry as it is: not
// when its parse hit a limit, nor, in a build with tree-sitter, when a
// build without it left the definitions out. A build without tree-sitter
// takes the rows of one with it: they are complete.
func reusable(flags uint8) bool {
	return flags&flagRetry == 0 && (flags&flagNoParser == 0 || !DefinitionsAvailable)
}

// crcTable is the Castagnoli table, made on first use: making it sets up
// the CPU's tables, which every orch command paid at start otherwise.
var crcTable = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

var kindList = []string{KindFunc, KindMethod, KindType, KindClass, KindInterface, KindField, KindConst, KindVar, KindModule, KindMacro}

func kindIndex(k string) (uint8, bool) {
	for i, x := range kindList {
		if x == k {
			return uint8(i), true
		}
	}
	return 0, false
}

// errDamaged marks an index file that fails a check.
var errDamaged = errors.New("damaged index file")

func damagedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errDamaged, fmt.Sprintf(format, args...))
}

// segment is one opened index file: its bytes (mapped read-only), the
// sections, and the file for bulk copies that should not map pages in.
type segment struct {
	data    []byte
	file    *os.File
	cleanup runtime.Cleanup // unmaps data and closes file once unreachable
	sec     [numSections][]byte
	off     [numSections]int64
	nrows   int
	nnames  int
	mask    uint64 // hash slots - 1
}

// openIndex opens and checks the index file at path. A missing file is
// os.ErrNotExist; any other problem is errDamaged (or the I/O error).
func openIndex(path string) (*segment, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	s, err := newSegment(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func newSegment(f *os.File) (*segment, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size < headerBytes+trailerBytes || size > 1<<40 {
		return nil, damagedf("%d bytes", size)
	}
	// The checksum, through a buffer no larger than the file (1 MiB at
	// most): a small index needs no 1 MiB to be zeroed.
	h := crc32.New(crcTable())
	if _, err := io.CopyBuffer(h, io.NewSectionReader(f, 0, size-16), make([]byte, min(size-16, 1<<20))); err != nil {
		return nil, err
	}
	var tail [16]byte
	if _, err := f.ReadAt(tail[:], size-16); err != nil {
		return nil, err
	}
	if err := checkTail(tail[:], h.Sum32()); err != nil {
		return nil, err
	}
	data, err := mapFile(f, size)
	if err != nil {
		return nil, err
	}
	s, err := parseSegment(data)
	if err != nil {
		unmapFile(data)
		return nil, err
	}
	s.file = f
	registerUnmap(s)
	return s, nil
}

// checkTail checks the last 16 bytes of an index file against the
// checksum of the bytes before them.
func checkTail(tail []byte, sum uint32) error {
	if len(tail) != 16 || string(tail[8:]) != indexEnd || binary.LittleEndian.Uint32(tail[:4]) != sum {
		return damagedf("checksum")
	}
	return nil
}

// parseSegment checks the header, the trailer and the sections' shapes
// (not the checksum: newSegment did).
func parseSegment(data []byte) (*segment, error) {
	size := int64(len(data))
	if size < headerBytes+trailerBytes {
		return nil, damagedf("%d bytes", size)
	}
	if string(data[:8]) != indexMagic || binary.LittleEndian.Uint32(data[8:]) != indexVersion {
		return nil, damagedf("not a version %d index", indexVersion)
	}
	t := data[size-trailerBytes:]
	s := &segment{data: data}
	for i := 0; i < numSections; i++ {
		off := binary.LittleEndian.Uint64(t[16*i:])
		n := binary.LittleEndian.Uint64(t[16*i+8:])
		if limit := uint64(size - trailerBytes); off < headerBytes || off%8 != 0 || n > limit || off > limit-n {
			return nil, damagedf("section %d out of bounds", i)
		}
		s.sec[i] = data[off : off+n : off+n]
		s.off[i] = int64(off)
	}
	nrows := uint64(binary.LittleEndian.Uint32(t[numSections*16:]))
	nnames := uint64(binary.LittleEndian.Uint32(t[numSections*16+4:]))
	s.nrows, s.nnames = int(nrows), int(nnames)
	switch {
	case uint64(len(s.sec[secRows])) != nrows*rowBytes:
		return nil, damagedf("rows")
	case uint64(len(s.sec[secNameOff])) != 4*(nnames+1),
		uint64(len(s.sec[secDefStart])) != 4*(nnames+1),
		uint64(len(s.sec[secRefStart])) != 4*(nnames+1):
		return nil, damagedf("name tables")
	case len(s.sec[secDefRow])%4 != 0 || len(s.sec[secRefRow])%4 != 0:
		return nil, damagedf("postings")
	case uint64(len(s.sec[secNameFlags])) != nnames:
		return nil, damagedf("name flags")
	case s.u32(secNameOff, s.nnames) != uint32(len(s.sec[secNames])),
		s.u32(secDefStart, s.nnames) != uint32(len(s.sec[secDefRow])/4),
		s.u32(secRefStart, s.nnames) != uint32(len(s.sec[secRefRow])/4):
		return nil, damagedf("table ends")
	}
	slots := uint64(len(s.sec[secHash]) / 4)
	if len(s.sec[secHash])%4 != 0 || slots == 0 || bits.OnesCount64(slots) != 1 || slots <= nnames {
		return nil, damagedf("hash table")
	}
	s.mask = slots - 1
	return s, nil
}

// u32 reads the i-th u32 of a section; out of bounds reads 0 (callers
// check what they read against the tables' sizes).
func (s *segment) u32(sec, i int) uint32 {
	b := s.sec[sec]
	if i < 0 || 4*i+4 > len(b) {
		return 0
	}
	return binary.LittleEndian.Uint32(b[4*i:])
}

// row is one decoded row.
type row struct {
	pathOff, pathLen   uint32
	entryOff, entryLen uint32
	ndefs              uint32
	lang               Lang
	flags              uint8
	blob               []byte // aliases the mapping: copy before keeping
}

func (s *segment) row(i int) (row, bool) {
	if i < 0 || i >= s.nrows {
		return row{}, false
	}
	return s.decodeRow(s.sec[secRows][i*rowBytes : (i+1)*rowBytes])
}

// decodeRow decodes and checks the bytes of one row; its blob aliases b.
func (s *segment) decodeRow(b []byte) (row, bool) {
	r := row{
		pathOff: binary.LittleEndian.Uint32(b[0:]), pathLen: binary.LittleEndian.Uint32(b[4:]),
		entryOff: binary.LittleEndian.Uint32(b[8:]), entryLen: binary.LittleEndian.Uint32(b[12:]),
		ndefs: binary.LittleEndian.Uint32(b[16:]), lang: Lang(b[20]), flags: b[21],
	}
	n := int(b[22])
	if n != 20 && n != 32 || r.lang == LangNone || r.lang >= numLangs ||
		uint64(r.pathOff)+uint64(r.pathLen) > uint64(len(s.sec[secPaths])) ||
		uint64(r.entryOff)+uint64(r.entryLen) > uint64(len(s.sec[secEntries])) {
		return row{}, false
	}
	r.blob = b[24 : 24+n]
	return r, true
}

// readRow reads row i with pread, not through the mapping (a build reads
// the rows of the file it replaces without mapping their pages in); its
// blob is its own.
func (s *segment) readRow(i int) (row, error) {
	if i < 0 || i >= s.nrows {
		return row{}, damagedf("row %d of %d", i, s.nrows)
	}
	b := make([]byte, rowBytes)
	if _, err := s.file.ReadAt(b, s.off[secRows]+int64(i)*rowBytes); err != nil {
		return row{}, damagedf("row %d: %v", i, err)
	}
	r, ok := s.decodeRow(b)
	if !ok {
		return row{}, damagedf("row %d", i)
	}
	return r, nil
}

// rowReader reads rows (and their paths) in ascending order through
// buffers, with pread: a build walks every row of the file it replaces,
// and through the mapping their pages would stay resident.
type rowReader struct {
	s      *segment
	rows   *bufio.Reader
	paths  *bufio.Reader // nil: paths are not read
	next   int           // the row the rows reader is at
	pathAt uint64        // where the paths reader is
	last   int           // the row read last, or -1
	b      [rowBytes]byte
	r      row
	path   []byte
}

func (s *segment) rowReader(withPaths bool) *rowReader {
	rr := &rowReader{s: s, last: -1}
	if s == nil {
		return rr
	}
	rr.rows = bufio.NewReaderSize(io.NewSectionReader(s.file, s.off[secRows], int64(len(s.sec[secRows]))), 64<<10)
	if withPaths {
		rr.paths = bufio.NewReaderSize(io.NewSectionReader(s.file, s.off[secPaths], int64(len(s.sec[secPaths]))), 64<<10)
	}
	return rr
}

// read returns row i and its path (nil unless the reader reads paths),
// valid until the next read. Rows are read in ascending order (a row
// before the last one read is errDamaged); so are paths, except in a
// file whose rows do not hold their paths in order, read with pread.
func (rr *rowReader) read(i int) (row, []byte, error) {
	if i == rr.last {
		return rr.r, rr.path, nil
	}
	if i < rr.next || i >= rr.s.nrows {
		return row{}, nil, damagedf("row %d read out of order", i)
	}
	if _, err := rr.rows.Discard((i - rr.next) * rowBytes); err != nil {
		return row{}, nil, damagedf("row %d: %v", i, err)
	}
	if _, err := io.ReadFull(rr.rows, rr.b[:]); err != nil {
		return row{}, nil, damagedf("row %d: %v", i, err)
	}
	rr.next = i + 1
	r, ok := rr.s.decodeRow(rr.b[:])
	if !ok {
		return row{}, nil, damagedf("row %d", i)
	}
	rr.r, rr.path, rr.last = r, rr.path[:0], i
	if rr.paths == nil {
		return r, nil, nil
	}
	rr.path = slices.Grow(rr.path, int(r.pathLen))[:r.pathLen]
	if uint64(r.pathOff) < rr.pathAt {
		if _, err := rr.s.file.ReadAt(rr.path, rr.s.off[secPaths]+int64(r.pathOff)); err != nil {
			return row{}, nil, damagedf("row %d: path: %v", i, err)
		}
		return r, rr.path, nil
	}
	if _, err := rr.paths.Discard(int(uint64(r.pathOff) - rr.pathAt)); err != nil {
		return row{}, nil, damagedf("row %d: path: %v", i, err)
	}
	if _, err := io.ReadFull(rr.paths, rr.path); err != nil {
		return row{}, nil, damagedf("row %d: path: %v", i, err)
	}
	rr.pathAt = uint64(r.pathOff) + uint64(r.pathLen)
	return r, rr.path, nil
}

// rowPath returns the path of a row as bytes of the mapping ("" when the
// row is damaged).
func (s *segment) rowPath(i int) []byte {
	r, ok := s.row(i)
	if !ok {
		return nil
	}
	return s.sec[secPaths][r.pathOff : r.pathOff+r.pathLen]
}

// name returns identifier id ("" when out of range or damaged).
func (s *segment) name(id uint32) []byte {
	if int(id) >= s.nnames {
		return nil
	}
	a, b := s.u32(secNameOff, int(id)), s.u32(secNameOff, int(id)+1)
	if a > b || int(b) > len(s.sec[secNames]) {
		return nil
	}
	return s.sec[secNames][a:b]
}

// nameFlags returns the flags of identifier id.
func (s *segment) nameFlags(id uint32) byte {
	if int(id) >= len(s.sec[secNameFlags]) {
		return 0
	}
	return s.sec[secNameFlags][id]
}

// fnv1a is the hash of the name table.
func fnv1a[T string | []byte](s T) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// lookup returns the id of name.
func (s *segment) lookup(name string) (uint32, bool) {
	return s.lookupHash(name, fnv1a(name))
}

// lookupHash is lookup with the name's fnv1a hash already computed.
func (s *segment) lookupHash(name string, h uint64) (uint32, bool) {
	if s == nil || s.nnames == 0 {
		return 0, false
	}
	i := h & s.mask
	for probe := uint64(0); probe <= s.mask; probe++ {
		v := s.u32(secHash, int(i))
		if v == 0 {
			return 0, false
		}
		if id := v - 1; string(s.name(id)) == name {
			return id, true
		}
		i = (i + 1) & s.mask
	}
	return 0, false
}

// postings returns the rows of name id in a start/row table pair (nil
// when damaged).
func (s *segment) postings(startSec, rowSec int, id uint32) []byte {
	if int(id) >= s.nnames {
		return nil
	}
	a, b := s.u32(startSec, int(id)), s.u32(startSec, int(id)+1)
	if a > b || uint64(b)*4 > uint64(len(s.sec[rowSec])) {
		return nil
	}
	return s.sec[rowSec][4*a : 4*b]
}

// entry decodes the entry of row i; an entry that does not decode (or
// names an identifier the file does not have) is errDamaged.
func (s *segment) entry(i int) (*entry, error) {
	r, ok := s.row(i)
	if !ok {
		return nil, damagedf("row %d", i)
	}
	e := &entry{lang: r.lang, skipped: r.flags&flagSkipped != 0}
	p := s.sec[secEntries][r.entryOff : r.entryOff+r.entryLen]
	if s.file != nil {
		// Read, not mapped: the kernel maps the pages around each page
		// touched in (fault-around), and the entries a ranking visits
		// are scattered over the largest section.
		p = make([]byte, r.entryLen)
		if _, err := s.file.ReadAt(p, s.off[secEntries]+int64(r.entryOff)); err != nil {
			return nil, damagedf("row %d: %v", i, err)
		}
	}
	d := decoder{p: p}
	nd := d.uvarint()
	if nd > uint64(len(p)) {
		return nil, damagedf("row %d: definitions", i)
	}
	e.defs = make([]defRec, 0, nd)
	for k := uint64(0); k < nd && d.err == nil; k++ {
		name := d.uvarint()
		kind := d.byte()
		line := d.uvarint()
		sig := d.bytes()
		if d.err != nil || name >= uint64(s.nnames) || int(kind) >= len(kindList) || line == 0 || line > 1<<31 || len(sig) > maxSigBytes {
			return nil, damagedf("row %d: definition %d", i, k)
		}
		e.defs = append(e.defs, defRec{name: uint32(name), kind: kind, line: uint32(line), sig: string(sig)})
	}
	nr := d.uvarint()
	if nr > uint64(len(p)) {
		return nil, damagedf("row %d: references", i)
	}
	e.refs = make([]refRec, 0, nr)
	for k := uint64(0); k < nr && d.err == nil; k++ {
		name := d.uvarint()
		count := d.uvarint()
		if d.err != nil || name >= uint64(s.nnames) {
			return nil, damagedf("row %d: reference %d", i, k)
		}
		e.refs = append(e.refs, refRec{name: uint32(name), count: uint16(min(count, 1<<16-1))})
	}
	if d.err != nil || len(d.p) != 0 {
		return nil, damagedf("row %d: trailing bytes", i)
	}
	return e, nil
}

// appendEntry encodes e (names as ids of the file being written).
func appendEntry(dst []byte, e *entry) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(e.defs)))
	for _, d := range e.defs {
		dst = binary.AppendUvarint(dst, uint64(d.name))
		dst = append(dst, d.kind)
		dst = binary.AppendUvarint(dst, uint64(d.line))
		dst = binary.AppendUvarint(dst, uint64(len(d.sig)))
		dst = append(dst, d.sig...)
	}
	dst = binary.AppendUvarint(dst, uint64(len(e.refs)))
	for _, r := range e.refs {
		dst = binary.AppendUvarint(dst, uint64(r.name))
		dst = binary.AppendUvarint(dst, uint64(r.count))
	}
	return dst
}

type decoder struct {
	p   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.p)
	if n <= 0 {
		d.err = errDamaged
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.p) == 0 {
		d.err = errDamaged
		return 0
	}
	b := d.p[0]
	d.p = d.p[1:]
	return b
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.p)) {
		d.err = errDamaged
		return nil
	}
	b := d.p[:n]
	d.p = d.p[n:]
	return b
}

// fileWriter writes an index file section by section, keeping the
// checksum and the sections' places.
type fileWriter struct {
	w   *bufio.Writer
	crc uint32
	off int64
	sec [numSections][2]uint64
	cur int
	buf [8]byte
	str []byte
}

func newFileWriter(w *bufio.Writer) (*fileWriter, error) {
	fw := &fileWriter{w: w, cur: -1}
	var hdr [headerBytes]byte
	copy(hdr[:], indexMagic)
	binary.LittleEndian.PutUint32(hdr[8:], indexVersion)
	return fw, fw.write(hdr[:])
}

func (fw *fileWriter) write(p []byte) error {
	fw.crc = crc32.Update(fw.crc, crcTable(), p)
	fw.off += int64(len(p))
	_, err := fw.w.Write(p)
	return err
}

func (fw *fileWriter) writeString(s string) error {
	fw.str = append(fw.str[:0], s...)
	return fw.write(fw.str)
}

// begin starts section i, padding to 8 bytes.
func (fw *fileWriter) begin(i int) error {
	fw.end()
	if pad := (8 - fw.off%8) % 8; pad > 0 {
		if err := fw.write(make([]byte, pad)); err != nil {
			return err
		}
	}
	fw.cur = i
	fw.sec[i][0] = uint64(fw.off)
	return nil
}

func (fw *fileWriter) end() {
	if fw.cur >= 0 {
		fw.sec[fw.cur][1] = uint64(fw.off) - fw.sec[fw.cur][0]
	}
}

func (fw *fileWriter) u32(v uint32) error {
	binary.LittleEndian.PutUint32(fw.buf[:4], v)
	return fw.write(fw.buf[:4])
}

// u32s writes vs through a small buffer.
func (fw *fileWriter) u32s(vs []uint32) error {
	b := make([]byte, 0, 64<<10)
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, v)
		if len(b) == cap(b) {
			if err := fw.write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	return fw.write(b)
}

// copyFrom copies n bytes of r at off into the current section.
func (fw *fileWriter) copyFrom(r io.ReaderAt, off, n int64, buf []byte) error {
	for n > 0 {
		k := min(int64(len(buf)), n)
		if _, err := r.ReadAt(buf[:k], off); err != nil {
			return err
		}
		if err := fw.write(buf[:k]); err != nil {
			return err
		}
		off += k
		n -= k
	}
	return nil
}

func (fw *fileWriter) finish(nrows, nnames int) error {
	fw.end()
	if pad := (8 - fw.off%8) % 8; pad > 0 {
		if err := fw.write(make([]byte, pad)); err != nil {
			return err
		}
	}
	t := make([]byte, 0, trailerBytes)
	for _, s := range fw.sec {
		t = binary.LittleEndian.AppendUint64(t, s[0])
		t = binary.LittleEndian.AppendUint64(t, s[1])
	}
	t = binary.LittleEndian.AppendUint32(t, uint32(nrows))
	t = binary.LittleEndian.AppendUint32(t, uint32(nnames))
	if err := fw.write(t); err != nil {
		return err
	}
	t = binary.LittleEndian.AppendUint32(t[:0], fw.crc)
	t = binary.LittleEndian.AppendUint32(t, 0)
	t = append(t, indexEnd...)
	_, err := fw.w.Write(t)
	return err
}

// registerUnmap releases the mapping and the file once the segment is
// unreachable. Nothing outside the segment keeps a slice of the mapping:
// names, signatures and paths are copied out (string conversions).
func registerUnmap(s *segment) {
	s.cleanup = runtime.AddCleanup(s, func(m mapping) {
		unmapFile(m.data)
		m.file.Close()
	}, mapping{s.data, s.file})
}

// close releases the mapping and the file now, not when the collector
// finds the segment unreachable: a build that replaces a file drops the
// old one's pages at once (mapped pages count in the resident memory
// until they are unmapped). The segment must not be used afterwards; if
// it is, it reads as empty.
func (s *segment) close() {
	if s == nil || s.data == nil {
		return
	}
	s.cleanup.Stop()
	unmapFile(s.data)
	s.file.Close()
	*s = segment{}
}

type mapping struct {
	data []byte
	file *os.File
}
