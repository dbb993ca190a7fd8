package fileid

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Supported is true where the functions below give identities.
const Supported = true

// ofStat is the identity a stat call gave.
func ofStat(st *unix.Stat_t) ID {
	return ID{
		Size:  st.Size,
		Mtime: st.Mtim.Nano(),
		Ctime: st.Ctim.Nano(),
		Ino:   st.Ino,
		Dev:   uint64(st.Dev), //nolint:unconvert // int on some architectures
		Mode:  st.Mode,
	}
}

// Fstat is the identity of the open file f.
func Fstat(f *os.File) (ID, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstat(int(f.Fd()), &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return ID{}, err
		}
		return ofStat(&st), nil
	}
}

// Lstat is the identity of path, without following a final symbolic
// link. A missing file's error is fs.ErrNotExist.
func Lstat(path string) (ID, error) {
	var st unix.Stat_t
	for {
		err := unix.Lstat(path, &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return ID{}, err
		}
		return ofStat(&st), nil
	}
}

// LstatAt is the identity of rel (slash-separated) below the folder open
// as dir, without following a final symbolic link: the kernel resolves
// only rel's own elements, not dir's whole path.
func LstatAt(dir *os.File, rel string) (ID, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(int(dir.Fd()), rel, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return ID{}, err
		}
		return ofStat(&st), nil
	}
}

// IsDir and IsRegular read an ID's Mode (st_mode).
func (id ID) IsDir() bool     { return id.Mode&syscall.S_IFMT == syscall.S_IFDIR }
func (id ID) IsRegular() bool { return id.Mode&syscall.S_IFMT == syscall.S_IFREG }
