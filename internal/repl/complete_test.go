package repl

import (
	"slices"
	"testing"
)

func TestComplete(t *testing.T) {
	src := sources{
		tasks:     func() []string { return []string{"0001-add-retry", "0002-fix-login", "hotfix"} },
		questions: func() []string { return []string{"q1", "q2"} },
	}
	tests := []struct {
		head string
		word string
		want []string
	}{
		{"/revi", "/revi", []string{"/review "}},
		{"/rev", "/rev", []string{"/revert ", "/review "}},
		{"/st", "/st", []string{"/status "}},
		{"/", "/", []string{"/accept ", "/advise ", "/answer ", "/codegen ", "/cost ", "/diff ", "/help ", "/init ", "/log ", "/next ", "/plan ", "/quit ", "/redo ", "/revert ", "/review ", "/run ", "/show ", "/status ", "/task ", "/test ", "/verify "}},
		{"/review ", "", []string{"plan ", "code "}},
		{"/show ", "", []string{"brief ", "plan ", "plan-review ", "diff ", "code-review ", "test ", "advice ", "summary ", "regression "}},
		{"/show te", "te", []string{"test "}},
		{"/show test ", "", nil},
		{"/review c", "c", []string{"code "}},
		{"/review plan --f", "--f", []string{"--fresh "}},
		{"/next --to ", "", []string{"planning ", "plan_review ", "codegen ", "review ", "test ", "accept ", "revert ", "done "}},
		{"/next --override 'x' --to te", "te", []string{"test "}},
		{"/next --from p", "p", []string{"planning ", "plan_review "}},
		{"/next --o", "--o", []string{"--override "}},
		{"/next ", "", nil},
		{"/redo ", "", []string{"planning ", "plan_review ", "codegen ", "review ", "test ", "accept ", "revert "}},
		{"/redo co", "co", []string{"codegen "}},
		{"/redo codegen --r", "--r", []string{"--reason "}},
		{"/task ", "", []string{"new ", "switch ", "list "}},
		{"/task sw", "sw", []string{"switch "}},
		{"/task switch ", "", []string{"0001-add-retry ", "0002-fix-login ", "hotfix "}},
		{"/task switch 000", "000", []string{"0001-add-retry ", "0002-fix-login "}},
		{"/task new add", "add", nil},
		{"/answer ", "", []string{"q1 ", "q2 "}},
		{"/answer q1 some", "some", nil},
		{"/accept --verdict ", "", []string{"accepted ", "changes_requested ", "rejected ", "revert "}},
		{"/accept --verdict changes_requested --to ", "", []string{"codegen ", "review ", "planning "}},
		{"/test --sandbox n", "n", []string{"none "}},
		{"/frob ", "", nil},
		{"plain text", "", nil},
		{"", "", nil},
	}
	for _, tt := range tests {
		word, got := complete(tt.head, src)
		if word != tt.word || !slices.Equal(got, tt.want) {
			t.Errorf("complete(%q) = %q, %q; want %q, %q", tt.head, word, got, tt.word, tt.want)
		}
	}
}

// The readline adapter returns the missing suffixes and the typed
// prefix's length in runes, completing at the cursor, not the line's end.
func TestCompleterDo(t *testing.T) {
	c := completer{src: sources{tasks: func() []string { return []string{"0001-é"} }}}
	got, n := c.Do([]rune("/task switch 0001- trailing"), len("/task switch 0001-"))
	if n != 5 || len(got) != 1 || string(got[0]) != "é " {
		t.Errorf("Do = %q, %d; want [\"é \"], 5", got, n)
	}
	got, n = c.Do([]rune("/revi"), 99)
	if n != 5 || len(got) != 1 || string(got[0]) != "ew " {
		t.Errorf("Do(/revi) = %q, %d", got, n)
	}
}
