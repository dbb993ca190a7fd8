package procstat

import (
	"os"
	"path/filepath"
	"strconv"
)

// Read reads /proc/<pid>/stat; ok is false when it cannot be read or
// parsed (the process is gone, or there is no /proc).
func Read(pid int) (info Info, ok bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return Info{}, false
	}
	return Parse(data)
}
