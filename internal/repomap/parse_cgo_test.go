//go:build cgo

package repomap

import "testing"

func TestQueriesCompile(t *testing.T) {
	for l := LangGo; l <= LangJava; l++ {
		if _, err := loadGrammar(l); err != nil {
			t.Errorf("%s: %v", l, err)
		}
	}
}
