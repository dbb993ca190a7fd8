package evidence

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// fstatID is the identity of the open file f as an observation is keyed
// by (see fileID). ok is false when the platform gives no such identity.
func fstatID(f *os.File) (fileID, bool) {
	var st unix.Stat_t
	for {
		err := unix.Fstat(int(f.Fd()), &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fileID{}, false
		}
		return idOfStat(&st), true
	}
}

// idOfStat is the identity a stat call gave.
func idOfStat(st *unix.Stat_t) fileID {
	return fileID{
		Size:  st.Size,
		Mtime: st.Mtim.Nano(),
		Ctime: st.Ctim.Nano(),
		Ino:   st.Ino,
		Dev:   uint64(st.Dev), //nolint:unconvert // int on some architectures
		Mode:  st.Mode,
	}
}

// lstatAt is the identity of rel (slash-separated) below the folder open
// as dir, without following a final symbolic link: the kernel resolves
// only rel's own elements, not the task folder's whole path, for each of
// the thousands of files a refresh looks at.
func lstatAt(dir *os.File, rel string) (fileID, bool) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(int(dir.Fd()), rel, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fileID{}, false
		}
		return idOfStat(&st), true
	}
}

// isDir and isRegular read a fileID's Mode (st_mode).
func (id fileID) isDir() bool     { return id.Mode&syscall.S_IFMT == syscall.S_IFDIR }
func (id fileID) isRegular() bool { return id.Mode&syscall.S_IFMT == syscall.S_IFREG }
