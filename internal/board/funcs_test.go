package board

import "testing"

// Text quoting commands between backticks shows them as code, escaped;
// nothing else becomes markup.
func TestCodeSpans(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"the task is done; `orch redo PHASE` re-opens it", "the task is done; <code>orch redo PHASE</code> re-opens it"},
		{"no backtick", "no backtick"},
		{"one ` alone", "one ` alone"},
		{"`a` and `b` and ` c", "<code>a</code> and <code>b</code> and ` c"},
		{"``", "<code></code>"},
		{"<b>`<i>x</i>`</b> & more", "&lt;b&gt;<code>&lt;i&gt;x&lt;/i&gt;</code>&lt;/b&gt; &amp; more"},
		{"", ""},
	} {
		if got := string(codeSpans(c.in)); got != c.want {
			t.Errorf("codeSpans(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
