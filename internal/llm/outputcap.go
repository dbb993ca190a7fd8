package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// A streamed answer is counted as it arrives, and orch stops reading once
// it has certainly passed the output cap (Request.MaxTokens): a server that
// keeps streaming past it (a broken gateway, a model in a loop with a
// server that ignores the limit) would otherwise hold the call until the
// timeout. Tokens cannot be counted exactly without the model's tokenizer,
// so the guard counts what bounds them from above:
//
//   - deltas that carry output (text, tool arguments, thinking): a delta
//     holds at least one token, so more deltas than MaxTokens (plus
//     streamCapSlack for deltas split mid-token) means the cap was passed;
//   - bytes of output: more than streamCapBytesPerToken per allowed token;
//   - events of any kind (empty deltas): more than
//     streamCapEventsPerToken per allowed token;
//   - bytes of the HTTP body, whatever they hold (events an SDK skips,
//     such as pings, or a non-streamed answer that never ends): more than
//     bodyCapBytesPerToken per allowed token plus bodyCapBase.
//
// A request without MaxTokens is guarded with streamCapDefaultTokens.
const (
	streamCapSlack          = 64
	streamCapBytesPerToken  = 64
	streamCapEventsPerToken = 8
	streamCapDefaultTokens  = 256_000
	bodyCapBytesPerToken    = 1024
	bodyCapBase             = 1 << 20
)

// streamGuard counts one answer (one HTTP attempt).
type streamGuard struct {
	maxTokens             int
	deltas, bytes, events int
	bodyCut               atomic.Bool
	// errBody is the start of an HTTP error answer's body, kept for the
	// caller to read a message an SDK did not find (errBodyKeep bytes).
	errBody atomic.Pointer[string]
}

// errBodyKeep bounds what is kept of an error answer's body.
const errBodyKeep = 16 << 10

// errBodyCap ends the read of a body that passed the cap.
var errBodyCap = errors.New("the answer passed the output cap")

// middleware caps the answer's HTTP body; both SDKs' middleware types
// have this signature.
func (g *streamGuard) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	resp, err := next(req)
	if err != nil || resp == nil || resp.Body == nil {
		return resp, err
	}
	if resp.StatusCode >= 400 {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, errBodyKeep))
		s := string(head)
		g.errBody.Store(&s)
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, left: int64(g.maxTokens)*bodyCapBytesPerToken + bodyCapBase, cut: &g.bodyCut}
	return resp, nil
}

// errorBody returns the start of the last HTTP error answer's body, "" when
// there was none.
func (g *streamGuard) errorBody() string {
	if s := g.errBody.Load(); s != nil {
		return *s
	}
	return ""
}

// cut reports whether the body was cut at the cap.
func (g *streamGuard) cut() bool { return g.bodyCut.Load() }

type cappedBody struct {
	io.ReadCloser
	left int64
	cut  *atomic.Bool
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		b.cut.Store(true)
		return 0, errBodyCap
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

func newStreamGuard(maxTokens int) *streamGuard {
	if maxTokens <= 0 {
		maxTokens = streamCapDefaultTokens
	}
	return &streamGuard{maxTokens: maxTokens}
}

// event counts one event carrying n bytes of output (0 for none) and
// reports whether the answer has passed the cap.
func (g *streamGuard) event(n int) bool {
	g.events++
	if n > 0 {
		g.deltas++
		g.bytes += n
	}
	return g.deltas > g.maxTokens+streamCapSlack ||
		g.bytes > g.maxTokens*streamCapBytesPerToken+streamCapSlack*streamCapBytesPerToken ||
		g.events > g.maxTokens*streamCapEventsPerToken+streamCapSlack*streamCapEventsPerToken
}

// outputTokens is the usage reported for an answer cut by the guard: the
// server sent no usage, and at least the cap was produced.
func (g *streamGuard) outputTokens() int64 {
	return int64(max(g.maxTokens, g.deltas))
}

// modelArguments turns the arguments a model sent for a tool call into a
// ToolCall's Arguments: the JSON object as sent (compacted), an empty
// arguments string as {}, and anything that is not a JSON object as a
// JSON string holding the text, so that decoding it into the tool's
// parameters fails and the agent can tell the model why.
func modelArguments(s string) json.RawMessage {
	t := strings.TrimSpace(s)
	if t == "" {
		return json.RawMessage("{}")
	}
	if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) && checkJSONText([]byte(t)) == nil {
		if c, err := compactJSON([]byte(t)); err == nil {
			return json.RawMessage(c)
		}
	}
	b, _ := json.Marshal(s)
	return b
}
