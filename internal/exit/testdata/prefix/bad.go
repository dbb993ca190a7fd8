package prefix

import (
	"errors"
	"fmt"
)

var a = errors.New("orch: one")
var b = fmt.Errorf("orch: two %w", a)
var c = fmt.Sprintf("orch: three %d", 3)
var d = "orch: " + "four"

type e struct{}

func (e) Error() string { return "orch: five" }

func fine() {
	fmt.Printf("orch: a print is an edge\n")
	_ = "orch:// is a URI"
	_ = "an orch: inside"
	_ = struct{ Title string }{Title: "orch: a title"}
}

type Settled struct{}

func (Settled) String() string { return "orch: a note" }
