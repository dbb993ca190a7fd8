// Package fileid is a file's identity as an lstat gives it (size, mtime,
// ctime, inode, device, mode) and the rule by which a cache keyed by it
// trusts what it read of a file, as git's index does: an entry holds only
// when the identity is unchanged and the file's mtime and ctime are both
// older than the file system's time at which the reading began, so that a
// file changed in the same clock tick as it was read (a same-size edit
// within the same second, on a coarse clock) is read again. The
// observation cache (internal/evidence) and the board's card cache
// (internal/board) use it.
package fileid

// ID is the identity of a file as an lstat gives it.
type ID struct {
	Size         int64
	Mtime, Ctime int64 // nanoseconds since the epoch
	Ino, Dev     uint64
	Mode         uint32 // st_mode: type and permissions
}

// ChangedBefore reports whether the file was last changed (mtime and
// ctime) before since, the file system's time in nanoseconds.
func (id ID) ChangedBefore(since int64) bool {
	return id.Mtime < since && id.Ctime < since
}

// Stamp is a file's identity when it was read and the file system's time
// at which the reading began (Since, nanoseconds).
type Stamp struct {
	ID    ID
	Since int64
}

// Trusted reports whether what was read of a file stamped s still holds
// for the file whose identity is now id.
func (s Stamp) Trusted(id ID) bool {
	return s.ID == id && s.ID.ChangedBefore(s.Since)
}
