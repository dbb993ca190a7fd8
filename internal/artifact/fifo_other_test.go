//go:build !unix

package artifact

import "testing"

func mkfifo(t *testing.T, path string) {
	t.Skip("named pipes need a unix system")
}
