package board

import "golang.org/x/sys/unix"

// lstatID is the identity of path as an lstat gives it (see fileID); a
// file that does not exist has the zero identity. ok is false when it
// cannot be had: then nothing is taken from the cards' cache.
func lstatID(path string) (id fileID, ok bool) {
	var st unix.Stat_t
	for {
		err := unix.Lstat(path, &st)
		switch err {
		case nil:
			return fileID{
				Size:  st.Size,
				Mtime: st.Mtim.Nano(),
				Ctime: st.Ctim.Nano(),
				Ino:   st.Ino,
				Dev:   uint64(st.Dev), //nolint:unconvert // int on some architectures
				Mode:  st.Mode,
			}, true
		case unix.EINTR:
			continue
		case unix.ENOENT:
			return fileID{}, true
		}
		return fileID{}, false
	}
}

// fstatMtime is the modification time of the open file fd.
func fstatMtime(fd uintptr) (int64, bool) {
	var st unix.Stat_t
	if err := unix.Fstat(int(fd), &st); err != nil {
		return 0, false
	}
	return st.Mtim.Nano(), true
}
