package agenttest

import (
	"strings"
	"testing"
)

// CheckAnswer runs check on a model answer in a subtest named name, for
// table tests of an answer check: want is a fragment the refusal must
// contain, "" when the answer must pass. The subtest fails when an answer
// that should pass is refused, or one that should be refused passes or is
// refused without want in the message.
func CheckAnswer[T any](t *testing.T, name string, check func(raw []byte) (T, error), raw, want string) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		_, err := check([]byte(raw))
		switch {
		case want == "" && err != nil:
			t.Errorf("refused: %v", err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("error %v, want %q", err, want)
		}
	})
}
