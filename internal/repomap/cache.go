package repomap

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/orchdev/orch/internal/durable"
)

// The cache is one snapshot file in Options.CacheDir holding the tags of
// every indexed blob of the last build (plus, bounded, blobs of earlier
// builds, so switching branches stays warm):
//
//	header:  "ORCHRMAP" version:u32le reserved:u32le
//	record:  length:u32le crc32c(payload):u32le payload
//	payload: lang:u8 bloblen:u8 blob:[bloblen] (raw object name)
//	         ndefs:uvarint {name:str kind:u8 line:uvarint sig:str}
//	         nrefs:uvarint {name:str count:uvarint}
//	str:     len:uvarint bytes
//
// A record whose checksum or shape is wrong is skipped (its blob is parsed
// again); a bad header or a torn length ends the read, keeping the records
// before it. The file is replaced atomically (temporary file in the same
// folder, fsync, rename), so concurrent builds never see a torn snapshot;
// the last writer wins, and every snapshot is valid.
const (
	snapshotName    = "repomap.idx"
	snapshotMagic   = "ORCHRMAP"
	snapshotVersion = 1
	maxRecordBytes  = 8 << 20
	// maxOtherBytes bounds the records kept from earlier builds.
	maxOtherBytes = 64 << 20
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

var kindList = []string{KindFunc, KindMethod, KindType, KindClass, KindInterface, KindField, KindConst, KindVar, KindModule, KindMacro}

func kindIndex(k string) (uint8, bool) {
	for i, x := range kindList {
		if x == k {
			return uint8(i), true
		}
	}
	return 0, false
}

// cacheKey names one indexed blob: its object name (raw bytes as a string)
// and the language it was indexed as.
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

// encodeRecord appends the framed record of e to dst.
func (ix *Index) encodeRecord(dst []byte, k cacheKey, e *entry) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	dst = append(dst, byte(k.lang), byte(len(k.blob)))
	dst = append(dst, k.blob...)
	dst = binary.AppendUvarint(dst, uint64(len(e.defs)))
	for _, d := range e.defs {
		dst = appendStr(dst, ix.names[d.name])
		dst = append(dst, d.kind)
		dst = binary.AppendUvarint(dst, uint64(d.line))
		dst = appendStr(dst, d.sig)
	}
	dst = binary.AppendUvarint(dst, uint64(len(e.refs)))
	for _, r := range e.refs {
		dst = appendStr(dst, ix.names[r.name])
		dst = binary.AppendUvarint(dst, uint64(r.count))
	}
	payload := dst[start+8:]
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(payload, crcTable))
	return dst
}

func appendStr(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// errRecord marks a payload that does not decode.
var errRecord = errors.New("bad cache record")

// payloadKey reads the key at the start of a payload.
func payloadKey(p []byte) (cacheKey, []byte, error) {
	if len(p) < 2 {
		return cacheKey{}, nil, errRecord
	}
	l, n := Lang(p[0]), int(p[1])
	if l == LangNone || l >= numLangs || (n != 20 && n != 32) || len(p) < 2+n {
		return cacheKey{}, nil, errRecord
	}
	return cacheKey{blob: string(p[2 : 2+n]), lang: l}, p[2+n:], nil
}

// decodeEntry decodes the rest of a payload, interning names.
func (ix *Index) decodeEntry(l Lang, p []byte) (*entry, error) {
	d := decoder{p: p}
	e := &entry{lang: l}
	nd := d.uvarint()
	if nd > uint64(len(p)) {
		return nil, errRecord
	}
	e.defs = make([]defRec, 0, nd)
	for i := uint64(0); i < nd && d.err == nil; i++ {
		name := d.bytes()
		kind := d.byte()
		line := d.uvarint()
		sig := d.bytes()
		if d.err != nil || int(kind) >= len(kindList) || line == 0 || line > 1<<31 || !isIdent(string(name)) || len(sig) > maxSigBytes || printable(sig) != string(sig) {
			return nil, errRecord
		}
		e.defs = append(e.defs, defRec{name: ix.intern(name), kind: kind, line: uint32(line), sig: string(sig)})
	}
	nr := d.uvarint()
	if nr > uint64(len(p)) {
		return nil, errRecord
	}
	e.refs = make([]refRec, 0, nr)
	for i := uint64(0); i < nr && d.err == nil; i++ {
		name := d.bytes()
		count := d.uvarint()
		if d.err != nil || len(name) < minIdent || len(name) > maxIdent || !isIdent(string(name)) {
			return nil, errRecord
		}
		e.refs = append(e.refs, refRec{name: ix.intern(name), count: uint16(min(count, 1<<16-1))})
	}
	if d.err != nil || len(d.p) != 0 {
		return nil, errRecord
	}
	return e, nil
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
		d.err = errRecord
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.p) == 0 {
		d.err = errRecord
		return 0
	}
	b := d.p[0]
	d.p = d.p[1:]
	return b
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.p)) {
		d.err = errRecord
		return nil
	}
	b := d.p[:n]
	d.p = d.p[n:]
	return b
}

// readSnapshot streams the snapshot at path, calling use for each intact
// record with its key and the rest of the payload (valid during the call
// only). It returns how many records were damaged. A missing file is no
// error.
func readSnapshot(path string, use func(k cacheKey, rest, payload []byte)) (damaged int, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	var hdr [16]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil || string(hdr[:8]) != snapshotMagic || binary.LittleEndian.Uint32(hdr[8:]) != snapshotVersion {
		return 1, nil // not ours, an older version, or torn: rebuild
	}
	var frame [8]byte
	var buf []byte
	for {
		if _, err := io.ReadFull(br, frame[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return damaged, nil
			}
			return damaged + 1, nil
		}
		n := binary.LittleEndian.Uint32(frame[:4])
		if n > maxRecordBytes {
			return damaged + 1, nil // a damaged length: nothing after it can be trusted
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(br, buf); err != nil {
			return damaged + 1, nil
		}
		if crc32.Checksum(buf, crcTable) != binary.LittleEndian.Uint32(frame[4:]) {
			damaged++
			continue
		}
		k, rest, err := payloadKey(buf)
		if err != nil {
			damaged++
			continue
		}
		use(k, rest, buf)
	}
}

// writeSnapshot atomically replaces the snapshot in dir with the records
// produced by fill (which appends framed records and may flush through w).
func writeSnapshot(dir string, fill func(w *bufio.Writer) error) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	removeStaleTemps(dir)
	return durable.WriteFunc(filepath.Join(dir, snapshotName), 0o600, func(w *bufio.Writer) error {
		var hdr [16]byte
		copy(hdr[:], snapshotMagic)
		binary.LittleEndian.PutUint32(hdr[8:], snapshotVersion)
		if _, err := w.Write(hdr[:]); err != nil {
			return err
		}
		return fill(w)
	})
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
		if !durable.IsTemp(name, snapshotName) {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
			os.Remove(filepath.Join(dir, name))
		}
	}
}

// snapshotPath is the snapshot file in dir.
func snapshotPath(dir string) string { return filepath.Join(dir, snapshotName) }

// errCacheDir wraps cache failures, which never fail a build.
func cacheWarning(op string, err error) string {
	return fmt.Sprintf("repository map cache: %s: %v (the map is still built; only the cache is lost)", op, err)
}
