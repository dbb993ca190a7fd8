package procstat

import (
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Info
		ok   bool
	}{
		{"plain", "123 (sleep) S 1 120 110 0 -1", Info{State: 'S', Pgrp: 120, Sid: 110}, true},
		{"comm with spaces and parens", "7 (a) Z 9 9 (b) x) R 5 44 33 0", Info{State: 'R', Pgrp: 44, Sid: 33}, true},
		{"zombie", "8 (sh) Z 1 8 8 0", Info{State: 'Z', Pgrp: 8, Sid: 8}, true},
		{"no paren", "8 sh S 1 8 8", Info{}, false},
		{"too short", "8 (sh) S 1 8", Info{}, false},
		{"bad number", "8 (sh) S 1 x 8", Info{}, false},
		{"long state", "8 (sh) SS 1 8 8", Info{}, false},
		{"flags", "9 (sleep) R 1 9 9 0 -1 4194560 95 0", Info{State: 'R', Pgrp: 9, Sid: 9, Flags: 4194560}, true},
		{"exiting", "9 (sleep) R 1 9 9 0 -1 4194564 95 0", Info{State: 'R', Pgrp: 9, Sid: 9, Flags: 4194564}, true},
		{"bad flags", "9 (sleep) R 1 9 9 0 -1 x 95 0", Info{}, false},
	}
	for _, tt := range tests {
		got, ok := Parse([]byte(tt.line))
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: Parse(%q) = %+v, %v; want %+v, %v", tt.name, tt.line, got, ok, tt.want, tt.ok)
		}
	}
	for line, live := range map[string]bool{
		"9 (sleep) R 1 9 9 0 -1 4194560 95 0": true,
		"9 (sleep) R 1 9 9 0 -1 4194564 95 0": false, // PF_EXITING: on its way out
		"9 (sleep) Z 1 9 9 0 -1 4194564 95 0": false,
		"9 (sleep) S 1 9 9":                   true,
	} {
		if info, _ := Parse([]byte(line)); info.Live() != live {
			t.Errorf("Parse(%q).Live() = %v, want %v", line, !live, live)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("123 (sleep) S 1 120 110 0 -1"))
	f.Add([]byte("7 (a) b) R 5 44 33"))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, ok := Parse(data)
		if !ok && info != (Info{}) {
			t.Fatalf("failed parse returned %+v", info)
		}
	})
}

// TestFromKinfo: macOS's process states and P_WEXIT in the terms of
// /proc/<pid>/stat, and what is not live there.
func TestFromKinfo(t *testing.T) {
	tests := []struct {
		name      string
		stat      int8
		flag      int32
		pgid      int32
		sid       int
		sidOK, ok bool
		want      Info
		live      bool
	}{
		{"running", darwinSRUN, 0x4004, 120, 110, true, true, Info{State: 'R', Pgrp: 120, Sid: 110}, true},
		{"being forked", darwinSIDL, 0, 7, 7, true, true, Info{State: 'R', Pgrp: 7, Sid: 7}, true},
		{"sleeping", darwinSSLEEP, 0, 9, 8, true, true, Info{State: 'S', Pgrp: 9, Sid: 8}, true},
		{"stopped", darwinSSTOP, 0, 9, 8, true, true, Info{State: 'T', Pgrp: 9, Sid: 8}, true},
		{"zombie", darwinSZOMB, 0, 9, 8, true, true, Info{State: 'Z', Pgrp: 9, Sid: 8}, false},
		{"exiting", darwinSRUN, darwinPWEXIT | 0x4, 9, 8, true, true, Info{State: 'R', Pgrp: 9, Sid: 8, Flags: pfExiting}, false},
		{"zombie without session", darwinSZOMB, 0, 9, 0, false, true, Info{State: 'Z', Pgrp: 9, Sid: -1}, false},
		{"live without session", darwinSSLEEP, 0, 9, 0, false, false, Info{}, false},
		{"unknown state", 6, 0, 9, 8, true, false, Info{}, false},
		{"no state", 0, 0, 9, 8, true, false, Info{}, false},
	}
	for _, tt := range tests {
		got, ok := fromKinfo(tt.stat, tt.flag, tt.pgid, tt.sid, tt.sidOK)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: fromKinfo = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
		if ok && got.Live() != tt.live {
			t.Errorf("%s: Live() = %v, want %v", tt.name, got.Live(), tt.live)
		}
	}
}
