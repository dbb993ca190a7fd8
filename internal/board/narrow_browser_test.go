package board_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/orchdev/orch/internal/board"
	"github.com/orchdev/orch/internal/lifecycle"
)

// TestBrowserNarrowAndKeyboard uses the board as a person on a phone and
// one with only a keyboard would, in chromium: at 390 px nothing is wider
// than the screen (the columns stack, the forms fit, the diagram scrolls
// inside its box); a jump to a section (the page after an action lands on
// #actions) shows the section's heading below the sticky contents; and
// Tab reaches every card with a focus ring that shows, also on the
// project's current task, whose own outline used to hide it.
func TestBrowserNarrowAndKeyboard(t *testing.T) {
	exe := chromium(t)
	f := board.NewFixture(t)
	f.Task("a-question", "greet people")
	f.Plan("a-question", "Greet people with a rather long title that has to wrap on a phone", "How warmly should we greet?", nil)
	f.Task("b-accept", "add hello.txt")
	f.ToAccept("b-accept", "Add hello.txt")
	f.Task("c-current", "the current task") // created last: the current one
	url := serve(t, f.Root)
	base := strings.SplitN(url, "/?", 2)[0]
	ctx := browser(t, exe)
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	do(t, ctx, "open the board", 30*time.Second, chromedp.Navigate(url), chromedp.WaitVisible(css("#live.on")))

	// A phone.
	size := func(w, h int64, mobile bool) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: w, Height: h, DeviceScaleFactor: 1, Mobile: mobile})
			return err
		})
	}
	// The screen's 390 px, not innerWidth: a mobile browser widens its
	// layout viewport to a page that is too wide.
	overflow := `(() => { const d = document.documentElement;
		const wide = [...document.querySelectorAll("main *")].filter(e => e.getBoundingClientRect().right > 391 && !e.closest(".diagram"))
			.slice(0, 3).map(e => e.tagName + "." + e.className);
		return d.scrollWidth > 390 ? "page " + d.scrollWidth + " px wide: " + wide.join(", ") : "" })()`
	for _, path := range []string{"/", "/task/a-question", "/task/b-accept"} {
		do(t, ctx, "narrow "+path, 30*time.Second, size(390, 844, true), chromedp.Navigate(base+path), chromedp.WaitVisible(css("#live.on")))
		if o := get(t, ctx, "overflow "+path, chromedp.Evaluate[string](overflow)); o != "" {
			t.Errorf("%s at 390 px: %s", path, o)
		}
	}
	// On the phone the columns are one under the other.
	do(t, ctx, "narrow board", 30*time.Second, chromedp.Navigate(base+"/"), chromedp.WaitVisible(css(card(lifecycle.Accept, "b-accept"))))
	if lefts := get(t, ctx, "column positions", chromedp.Evaluate[int](`new Set([...document.querySelectorAll("section.column")].map(c => Math.round(c.getBoundingClientRect().left))).size`)); lefts != 1 {
		t.Errorf("on a phone the columns stand side by side (%d different left edges)", lefts)
	}

	// A desktop window: the page after an action lands on #actions, below
	// the contents.
	do(t, ctx, "wide", 30*time.Second, size(1200, 700, false), chromedp.Navigate(base+"/task/b-accept#actions"), chromedp.WaitVisible(css("#btn-accept")))
	covered := get(t, ctx, "the heading under the contents", chromedp.Poll[string](`(() => {
		const h = document.querySelector("#actions h2"), toc = document.querySelector("nav.toc");
		if (scrollY === 0) return null; // not jumped yet
		const ht = h.getBoundingClientRect().top, tb = toc.getBoundingClientRect().bottom;
		return ht >= tb ? "ok" : "the heading's top " + ht + " is under the contents' bottom " + tb })()`))
	if covered != "ok" {
		t.Error(covered)
	}

	// Only a keyboard: Tab from the top of the board reaches every card,
	// each with a visible ring; the current task's differs from its look
	// without focus.
	do(t, ctx, "board for the keyboard", 30*time.Second, chromedp.Navigate(base+"/"), chromedp.WaitVisible(css("#live.on")))
	unfocused := get(t, ctx, "current card's outline", chromedp.Evaluate[string](`(() => { const s = getComputedStyle(document.querySelector("a.card.current")); return s.outlineStyle + " " + s.outlineWidth + " " + s.outlineColor })()`))
	reached := map[string]string{}
	for i := 0; i < 12 && len(reached) < 3; i++ {
		do(t, ctx, "Tab", 10*time.Second, chromedp.KeyEvent(kb.Tab))
		id, ring := get(t, ctx, "focus", chromedp.Evaluate[string](`(() => { const e = document.activeElement, s = getComputedStyle(e);
			return (e.dataset.task || e.tagName) + "|" + s.outlineStyle + " " + s.outlineWidth + " " + s.outlineColor })()`)), ""
		id, ring, _ = strings.Cut(id, "|")
		if strings.HasPrefix(ring, "none") || strings.Contains(ring, " 0px ") {
			t.Errorf("Tab %d: %s has no visible focus ring (%s)", i+1, id, ring)
		}
		if id != "A" && id != "BODY" {
			reached[id] = ring
		}
	}
	for _, id := range []string{"a-question", "b-accept", "c-current"} {
		if _, ok := reached[id]; !ok {
			t.Errorf("Tab did not reach the card of %s (reached %v)", id, reached)
		}
	}
	if ring := reached["c-current"]; ring == unfocused {
		t.Errorf("the current task's card looks the same focused and not (%s)", ring)
	}
}
