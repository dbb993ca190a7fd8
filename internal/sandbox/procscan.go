package sandbox

import "bytes"

// envBlockHas reports whether a NUL-separated environment block holds kv
// as a whole entry.
func envBlockHas(block []byte, kv string) bool {
	for len(block) > 0 {
		entry, rest, _ := bytes.Cut(block, []byte{0})
		if string(entry) == kv {
			return true
		}
		block = rest
	}
	return false
}
