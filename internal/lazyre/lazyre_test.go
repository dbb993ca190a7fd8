package lazyre

import (
	"sync"
	"testing"
)

func TestRegexp(t *testing.T) {
	r := New(`^a(b+)$`)
	if r.re != nil {
		t.Fatal("compiled before first use")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); _ = r.MatchString("abb") }()
	}
	wg.Wait()
	if !r.MatchString("abb") || r.MatchString("ac") || r.FindStringSubmatch("abbb")[1] != "bbb" || r.String() != `^a(b+)$` {
		t.Fatal("not the expression's answers")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("an invalid expression did not panic on first use")
		}
	}()
	New(`(`).MatchString("x")
}
