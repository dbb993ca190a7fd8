package artifact

import "testing"

func TestIssuePlace(t *testing.T) {
	for _, tc := range []struct {
		is   Issue
		want string
	}{
		{Issue{}, ""},
		{Issue{Line: 3}, ""},
		{Issue{File: "a/b.go"}, "a/b.go"},
		{Issue{File: "a/b.go", Line: 12}, "a/b.go:12"},
		{Issue{File: "a/b.go", Line: -1}, "a/b.go"},
	} {
		if got := tc.is.Place(); got != tc.want {
			t.Errorf("%+v.Place() = %q, want %q", tc.is, got, tc.want)
		}
	}
}
