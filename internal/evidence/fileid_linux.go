package evidence

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// idOf is a file's identity as an observation is keyed by (see fileID),
// from an lstat. ok is false when the platform gives no such identity.
func idOf(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return idOfStat(st), true
}

func idOfStat(st *syscall.Stat_t) fileID {
	return fileID{
		Size:  st.Size,
		Mtime: st.Mtim.Nano(),
		Ctime: st.Ctim.Nano(),
		Ino:   st.Ino,
		Dev:   uint64(st.Dev), //nolint:unconvert // int on some architectures
		Mode:  st.Mode,
	}
}

func idOfUnixStat(st *unix.Stat_t) fileID {
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
		return idOfUnixStat(&st), true
	}
}

// isDir and isRegular read a fileID's Mode (st_mode).
func (id fileID) isDir() bool     { return id.Mode&syscall.S_IFMT == syscall.S_IFDIR }
func (id fileID) isRegular() bool { return id.Mode&syscall.S_IFMT == syscall.S_IFREG }
