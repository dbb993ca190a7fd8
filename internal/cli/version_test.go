package cli

import "testing"

func TestBuildInfoString(t *testing.T) {
	for _, tc := range []struct {
		b    BuildInfo
		want string
	}{
		{BuildInfo{Version: "(devel)", GoVersion: "go1.26.8", Platform: "linux/amd64"}, "orch (devel) (go1.26.8 linux/amd64)"},
		{BuildInfo{Version: "v0.3.0", Revision: "9cd328a4fcb0fdd299f7224ac943940c35637c7d", Time: "2026-11-26T06:40:13Z", GoVersion: "go1.26.8", Platform: "linux/amd64"},
			"orch v0.3.0 (rev 9cd328a4fcb0, 2026-11-26T06:40:13Z, go1.26.8 linux/amd64)"},
		{BuildInfo{Version: "(devel)", Revision: "abc", Modified: true, GoVersion: "go1.26.8"}, "orch (devel) (rev abc, modified, go1.26.8)"},
	} {
		if got := tc.b.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}
