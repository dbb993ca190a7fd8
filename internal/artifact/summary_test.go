package artifact

import "testing"

// Errors (cases that could not run) are named apart from failed tests in
// every line that shows the counts.
func TestSummaryString(t *testing.T) {
	for _, tc := range []struct {
		s    Summary
		want string
	}{
		{Summary{}, "0 passed, 0 failed, 0 skipped"},
		{Summary{Passed: 3, Failed: 1, Skipped: 2}, "3 passed, 1 failed, 2 skipped"},
		{Summary{Passed: 3, Failed: 1, Error: 1}, "3 passed, 1 failed, 0 skipped, 1 error"},
		{Summary{Failed: 0, Error: 13}, "0 passed, 0 failed, 0 skipped, 13 errors"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.s, got, tc.want)
		}
	}
}
