package testreport

import (
	"os"
	"testing"
)

// recorded opens a recorded runner output under testdata, closed when the
// test ends.
func recorded(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
