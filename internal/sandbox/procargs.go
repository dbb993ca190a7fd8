package sandbox

import (
	"bytes"
	"encoding/binary"
)

// procArgsEnvHas reports whether the environment in a KERN_PROCARGS2
// answer (macOS's sysctl kern.procargs2 of a process: argc as a native
// int32, the executable's path, NUL padding, argc NUL-terminated
// arguments, then the NUL-terminated environment and the kernel's own
// strings) holds kv as a whole entry. It is built on every platform so
// its tests run on Linux; procscan_darwin.go calls it.
func procArgsEnvHas(data []byte, kv string) bool {
	if len(data) < 4 {
		return false
	}
	argc := int64(int32(binary.NativeEndian.Uint32(data)))
	rest := data[4:]
	_, rest, ok := bytes.Cut(rest, []byte{0}) // the executable's path
	if !ok {
		return false
	}
	rest = bytes.TrimLeft(rest, "\x00")
	for i := int64(0); i < argc; i++ {
		if _, rest, ok = bytes.Cut(rest, []byte{0}); !ok {
			return false
		}
	}
	return envBlockHas(rest, kv)
}
