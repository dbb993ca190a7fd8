package board

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"io"
	"os"
	"time"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/durable"
	"github.com/orchdev/orch/internal/fileid"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

// The cards' cache file (docs/board.md, "Cards"): what the board read of
// each task's state.json and transcript for its card — the committed
// state, the model calls' sum, the phase entered last and the gate
// events (evidence.GateEventOf) — kept in
// .orch/cache/board.cards with the identities of both files and the file
// system's time at which the reading began, so that the first page of
// `orch serve` takes it from there for every task whose files did not
// change, by the same rule as the cards' cache in memory (cardcache.go).
// The file is written whole to a temporary file and renamed over the old
// one, not synced, at most every cardsSaveEvery: one torn or damaged (a
// wrong sum, another version, a value that does not decode) is ignored
// and rewritten.

// cardsFile is the file below .orch.
const cardsFile = "cache/board.cards"

// cardsSaveEvery spaces the writes of the file: a board refreshed on every
// change of a busy project writes it at most this often (and when it
// stops); a file a little behind only costs the next start the reading of
// the tasks changed since.
const cardsSaveEvery = 2 * time.Second

// cardsHeader starts the file, followed by the hex sha256 of the rest and
// a newline, then the entries (encoding/gob, a map from task id to
// diskCard).
const cardsHeader = "orch board cards 1\n"

// maxCardsBytes bounds the file read: a larger one is ignored.
const maxCardsBytes = 16 << 20

// diskCard is one task's entry: what its card read, with the identities
// of state.json and the transcript taken before reading them and the
// file system's time at which the reading began.
type diskCard struct {
	State, Log fileid.ID
	Since      int64
	St         task.State
	Pending    *task.Pending
	Cost       agent.CostSummary
	Entered    Span
	Gates      []lifecycle.GateEvent
}

// trusted reports whether d still holds for files whose identities are
// now state and log.
func (d *diskCard) trusted(state, log fileid.ID) bool {
	return holds(d.State, state, d.Since) && holds(d.Log, log, d.Since)
}

// encodeCards writes the entries in the file's format.
func encodeCards(m map[string]*diskCard) ([]byte, error) {
	var body bytes.Buffer
	if err := gob.NewEncoder(&body).Encode(m); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body.Bytes())
	out := make([]byte, 0, len(cardsHeader)+2*sha256.Size+1+body.Len())
	out = append(out, cardsHeader...)
	out = hex.AppendEncode(out, sum[:])
	out = append(out, '\n')
	return append(out, body.Bytes()...), nil
}

// parseCards reads the file; ok is false when it is not to be trusted at
// all (another header, a wrong sum, entries that do not decode, an entry
// without a state).
func parseCards(data []byte) (m map[string]*diskCard, ok bool) {
	rest, found := bytes.CutPrefix(data, []byte(cardsHeader))
	if !found || len(rest) < 2*sha256.Size+1 || rest[2*sha256.Size] != '\n' {
		return nil, false
	}
	body := rest[2*sha256.Size+1:]
	sum := sha256.Sum256(body)
	var want [2 * sha256.Size]byte
	hex.Encode(want[:], sum[:])
	if !bytes.Equal(want[:], rest[:2*sha256.Size]) {
		return nil, false
	}
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&m); err != nil {
		return nil, false
	}
	for id, d := range m {
		if d == nil || task.ValidID(id) != nil || !d.St.Phase.Valid() {
			return nil, false
		}
	}
	return m, true
}

// readCards reads the file at path; a missing, unreadable or damaged one
// gives no entries.
func readCards(path string) map[string]*diskCard {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxCardsBytes {
		return nil
	}
	data := make([]byte, 0, fi.Size()+1)
	buf := bytes.NewBuffer(data)
	if _, err := buf.ReadFrom(io.LimitReader(f, maxCardsBytes+1)); err != nil || buf.Len() > maxCardsBytes {
		return nil
	}
	m, _ := parseCards(buf.Bytes())
	return m
}

// writeCards replaces the file at path with the entries (errors are
// ignored: the file only saves work). Nothing is written where the cache
// folder is not a folder of its own.
func writeCards(path string, m map[string]*diskCard) {
	data, err := encodeCards(m)
	if err != nil {
		return
	}
	f, err := durable.CreateCacheTemp(path)
	if err != nil {
		return
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(tmp, path) != nil {
		os.Remove(tmp)
	}
}
