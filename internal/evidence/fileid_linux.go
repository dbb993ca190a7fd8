package evidence

import (
	"os"
	"syscall"
)

// idOf is a file's identity as an observation is keyed by (see fileID),
// from an lstat. ok is false when the platform gives no such identity.
func idOf(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{
		Size:  fi.Size(),
		Mtime: st.Mtim.Nano(),
		Ctime: st.Ctim.Nano(),
		Ino:   st.Ino,
		Dev:   uint64(st.Dev), //nolint:unconvert // int on some architectures
		Mode:  uint32(fi.Mode()),
	}, true
}
