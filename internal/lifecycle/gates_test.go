package lifecycle

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/docblock"
)

func h(c string) string { return strings.Repeat(c, 64) }

func fwd(seq int64, from, to Phase, hashes map[string]string) GateEvent {
	return GateEvent{Seq: seq, From: from, To: to, Hashes: hashes}
}

func TestFoldGates(t *testing.T) {
	planGate := fwd(3, PlanReview, Codegen, map[string]string{HashPlan: h("p")})
	codeGate := fwd(5, Codegen, Review, map[string]string{HashPlan: h("p"), HashDiff: h("d"), HashFiles: h("f")})
	reviewGate := fwd(7, Review, Test, map[string]string{HashPlan: h("p"), HashDiff: h("d"), HashFiles: h("f"), HashReview: h("r")})
	testGate := fwd(9, Test, Accept, map[string]string{HashPlan: h("p"), HashDiff: h("d"), HashFiles: h("f"), HashReview: h("r"), HashReport: h("t")})
	// sums maps each bound key to "hash@seq".
	for _, tc := range []struct {
		name string
		evs  []GateEvent
		want map[string]string
	}{
		{name: "nothing", want: map[string]string{}},
		{name: "plan gate", evs: []GateEvent{fwd(2, Planning, PlanReview, nil), planGate},
			want: map[string]string{HashPlan: h("p") + "@3"}},
		{name: "every gate: the latest record of a key wins", evs: []GateEvent{planGate, codeGate, reviewGate, testGate},
			want: map[string]string{HashPlan: h("p") + "@9", HashDiff: h("d") + "@9", HashFiles: h("f") + "@9", HashReview: h("r") + "@9", HashReport: h("t") + "@9"}},
		{name: "review → codegen drops the code gate and later ones, keeps the plan gate",
			evs:  []GateEvent{planGate, codeGate, fwd(6, Review, Codegen, nil)},
			want: map[string]string{HashPlan: h("p") + "@3"}},
		{name: "redo review keeps the code gate", evs: []GateEvent{planGate, codeGate, reviewGate, testGate, {Seq: 10, Redo: true, From: Accept, To: Review}},
			want: map[string]string{HashPlan: h("p") + "@5", HashDiff: h("d") + "@5", HashFiles: h("f") + "@5"}},
		{name: "redo of the current phase drops its own record only", evs: []GateEvent{planGate, codeGate, reviewGate, {Seq: 8, Redo: true, From: Test, To: Test}},
			want: map[string]string{HashPlan: h("p") + "@7", HashDiff: h("d") + "@7", HashFiles: h("f") + "@7", HashReview: h("r") + "@7"}},
		{name: "redo from done to planning drops everything", evs: []GateEvent{planGate, codeGate, reviewGate, testGate, fwd(11, Accept, Done, nil), {Seq: 12, Redo: true, From: Done, To: Planning}},
			want: map[string]string{}},
		{name: "accept → done keeps the records", evs: []GateEvent{planGate, codeGate, reviewGate, testGate, fwd(11, Accept, Done, nil)},
			want: map[string]string{HashPlan: h("p") + "@9", HashDiff: h("d") + "@9", HashFiles: h("f") + "@9", HashReview: h("r") + "@9", HashReport: h("t") + "@9"}},
		{name: "an override binds what was present", evs: []GateEvent{planGate, {Seq: 4, Override: true, From: Codegen, To: Test, Hashes: map[string]string{HashPlan: h("p"), HashDiff: h("x")}}},
			want: map[string]string{HashPlan: h("p") + "@4", HashDiff: h("x") + "@4"}},
		{name: "a new attempt binds afresh", evs: []GateEvent{planGate, codeGate, reviewGate, fwd(8, Test, Codegen, nil),
			fwd(10, Codegen, Review, map[string]string{HashPlan: h("p"), HashDiff: h("e"), HashFiles: h("g")})},
			want: map[string]string{HashPlan: h("p") + "@10", HashDiff: h("e") + "@10", HashFiles: h("g") + "@10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]string{}
			for k, b := range FoldGates(tc.evs) {
				got[k] = b.SHA256 + "@" + itoa(b.Seq)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v\nwant %v", got, tc.want)
			}
		})
	}
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestGateHashesAndRecord(t *testing.T) {
	ev := Evidence{Now: map[string]string{HashPlan: h("p"), HashDiff: h("d"), HashFiles: h("f"), HashReview: h("r")}}
	for _, tc := range []struct {
		from, to Phase
		want     map[string]string
	}{
		{Planning, PlanReview, map[string]string{HashPlan: h("p")}},
		{PlanReview, Codegen, map[string]string{HashPlan: h("p")}},
		{Codegen, Review, map[string]string{HashPlan: h("p"), HashDiff: h("d"), HashFiles: h("f")}},
		{Review, Test, map[string]string{HashPlan: h("p"), HashDiff: h("d"), HashFiles: h("f"), HashReview: h("r")}},
		// No report now: the key is left out, not recorded empty.
		{Test, Accept, map[string]string{HashPlan: h("p"), HashDiff: h("d"), HashFiles: h("f"), HashReview: h("r")}},
		// A regression records the output of the phase sent back.
		{Review, Codegen, map[string]string{HashDiff: h("d")}},
		{PlanReview, Planning, map[string]string{HashPlan: h("p")}},
		{Accept, Review, map[string]string{HashReview: h("r")}},
		{Codegen, PlanReview, nil},
		{Accept, Done, nil},
	} {
		if got := ev.Record(tc.from, tc.to); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s → %s records %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
	if got := ev.Present(); len(got) != 4 || got[HashReport] != "" {
		t.Errorf("Present = %v", got)
	}
}

// A regression records what the gate into the judging phase bound, not
// the artifact as it is now: a plan edited in plan review after the
// review is not the one judged.
func TestRecordPrefersTheBoundHash(t *testing.T) {
	ev := Evidence{Gates: Gates{HashPlan: {SHA256: h("b"), Seq: 2, From: Planning, To: PlanReview}}, Now: map[string]string{HashPlan: h("e")}}
	if got := ev.Record(PlanReview, Planning); !reflect.DeepEqual(got, map[string]string{HashPlan: h("b")}) {
		t.Errorf("plan_review → planning records %v, want the bound plan", got)
	}
	// The plan the review names wins: it is the one it judged.
	ev.ReviewedPlan = strings.ToUpper(h("a"))
	if got := ev.Record(PlanReview, Planning); !reflect.DeepEqual(got, map[string]string{HashPlan: h("a")}) {
		t.Errorf("plan_review → planning records %v, want the reviewed plan", got)
	}
}

func TestFoldSentBack(t *testing.T) {
	back := func(seq int64, from, to Phase, key, sum string) GateEvent {
		return GateEvent{Seq: seq, From: from, To: to, Hashes: map[string]string{key: sum}}
	}
	for _, tc := range []struct {
		name string
		evs  []GateEvent
		want map[string]string // key → "hash@seq→phase"
	}{
		{name: "nothing", want: map[string]string{}},
		{name: "plan review sends the plan back", evs: []GateEvent{fwd(2, Planning, PlanReview, map[string]string{HashPlan: h("p")}), back(3, PlanReview, Planning, HashPlan, h("p"))},
			want: map[string]string{HashPlan: h("p") + "@3→planning"}},
		{name: "moving on out of planning ends it", evs: []GateEvent{back(3, PlanReview, Planning, HashPlan, h("p")), fwd(4, Planning, PlanReview, map[string]string{HashPlan: h("q")})},
			want: map[string]string{}},
		{name: "an override out of planning ends it", evs: []GateEvent{back(3, PlanReview, Planning, HashPlan, h("p")), {Seq: 4, Override: true, From: Planning, To: Codegen}},
			want: map[string]string{}},
		{name: "test failures send the patch back", evs: []GateEvent{back(9, Test, Codegen, HashDiff, h("d"))},
			want: map[string]string{HashDiff: h("d") + "@9→codegen"}},
		{name: "redo codegen keeps it", evs: []GateEvent{back(9, Test, Codegen, HashDiff, h("d")), {Seq: 10, Redo: true, From: Codegen, To: Codegen}},
			want: map[string]string{HashDiff: h("d") + "@9→codegen"}},
		{name: "redo planning drops it", evs: []GateEvent{back(9, Test, Codegen, HashDiff, h("d")), {Seq: 10, Redo: true, From: Codegen, To: Planning}},
			want: map[string]string{}},
		{name: "scope mismatch: the plan goes back, the patch's record is dropped", evs: []GateEvent{back(9, Test, Codegen, HashDiff, h("d")), back(10, Codegen, Planning, HashPlan, h("p"))},
			want: map[string]string{HashPlan: h("p") + "@10→planning"}},
		{name: "a backward override records nothing", evs: []GateEvent{{Seq: 5, Override: true, From: Review, To: Codegen, Hashes: map[string]string{HashDiff: h("d")}}},
			want: map[string]string{}},
		{name: "accept sends the review back", evs: []GateEvent{back(12, Accept, Review, HashReview, h("r"))},
			want: map[string]string{HashReview: h("r") + "@12→review"}},
		{name: "a later phase's move forward does not end it", evs: []GateEvent{back(3, PlanReview, Planning, HashPlan, h("p")), fwd(4, Codegen, Review, nil)},
			want: map[string]string{HashPlan: h("p") + "@3→planning"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]string{}
			for k, b := range FoldSentBack(tc.evs) {
				got[k] = b.SHA256 + "@" + itoa(b.Seq) + "→" + string(b.To)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestEvidenceChanged(t *testing.T) {
	gates := Gates{
		HashPlan: {SHA256: h("p"), Seq: 3, From: PlanReview, To: Codegen},
		HashDiff: {SHA256: h("d"), Seq: 7, From: Review, To: Test},
	}
	for _, tc := range []struct {
		name    string
		now     map[string]string
		keys    []string
		wantKey string // "" means unchanged
		wantIn  []string
	}{
		{name: "unchanged", now: map[string]string{HashPlan: h("p"), HashDiff: h("d")}, keys: HashKeys()},
		{name: "upper-case hex is the same hash", now: map[string]string{HashPlan: strings.ToUpper(h("p")), HashDiff: h("d")}, keys: HashKeys()},
		{name: "patch edited", now: map[string]string{HashPlan: h("p"), HashDiff: h("e")}, keys: HashKeys(), wantKey: HashDiff,
			wantIn: []string{"code/diff.patch changed after the review → test gate (transcript seq 7)", "recorded sha256 " + h("d"), "now sha256 " + h("e"), "orch redo codegen", "orch redo review"}},
		{name: "patch removed", now: map[string]string{HashPlan: h("p")}, keys: HashKeys(), wantKey: HashDiff, wantIn: []string{"missing now"}},
		{name: "plan first", now: map[string]string{HashPlan: h("q"), HashDiff: h("e")}, keys: HashKeys(), wantKey: HashPlan,
			wantIn: []string{"planning/planning.ai.json changed after the plan_review → codegen gate", "orch redo plan_review"}},
		{name: "only the keys asked", now: map[string]string{HashPlan: h("q"), HashDiff: h("e")}, keys: []string{HashDiff}, wantKey: HashDiff},
		{name: "a key no gate bound is not checked", now: map[string]string{HashPlan: h("p"), HashDiff: h("d"), HashReport: h("t")}, keys: HashKeys()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Evidence{Gates: gates, Now: tc.now}.Changed(tc.keys...)
			if tc.wantKey == "" {
				if err != nil {
					t.Fatalf("got %v, want unchanged", err)
				}
				return
			}
			var ee *EvidenceError
			if !errors.As(err, &ee) || ee.Key != tc.wantKey {
				t.Fatalf("got %v, want a change of %s", err, tc.wantKey)
			}
			for _, s := range tc.wantIn {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q\ndoes not say %q", err, s)
				}
			}
		})
	}
}

const (
	gatesBegin = "<!-- BEGIN GENERATED: gates (go test ./internal/lifecycle -update) -->"
	gatesEnd   = "<!-- END GENERATED: gates -->"
)

// TestDocsGatesTable keeps the gates table in docs/artifacts.md equal to
// GateHashes. Run `go test ./internal/lifecycle -update` to regenerate it.
func TestDocsGatesTable(t *testing.T) {
	docblock.Check(t, filepath.Join("..", "..", "docs", "artifacts.md"), gatesBegin, gatesEnd,
		"\n"+GatesTable(), *update, "go test ./internal/lifecycle -update")
}
