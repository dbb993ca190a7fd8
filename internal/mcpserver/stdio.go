package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits of a line read over standard input (docs/mcp.md, "Transports").
const (
	// MaxLineBytes bounds one line (one JSON-RPC message or batch), its
	// line break not counted. A longer line is answered with an error and
	// skipped; it is never held whole in memory.
	MaxLineBytes = mcp.DefaultMaxLineLength
	// MaxNesting bounds how deep arrays and objects nest in a line.
	MaxNesting = 100
)

// Stdio is `orch mcp`'s transport over standard input and output: one
// JSON-RPC message (or batch) a line. Every line is answered: a line that
// is not JSON gets a parse error (-32700), one that is not a JSON-RPC
// message an invalid-request error (-32600), a line over MaxLineBytes or
// nested deeper than MaxNesting an error too, and the session goes on.
//
// It drains: when the client closes standard input (a user piping
// requests, `printf '…' | orch mcp`), the server stops reading but lets
// the requests it has read finish and writes their responses before the
// session ends. The wait ends early only when the session's context is done
// (SIGINT or SIGTERM to orch mcp), which cancels those requests as Ctrl-C
// would. Closing out is left to the caller.
func Stdio(in io.Reader, out io.Writer) mcp.Transport {
	return &drainTransport{inner: &lineTransport{in: in, out: out, limit: MaxLineBytes}}
}

// lineTransport connects a lineConn.
type lineTransport struct {
	in    io.Reader
	out   io.Writer
	limit int
}

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	return newLineConn(t.in, t.out, t.limit), nil
}

// lineRead is one line read from the input: its bytes, or its length when
// it was over the limit, or the error that ended the input.
type lineRead struct {
	line []byte
	over int64
	err  error
}

// lineConn is a newline-delimited JSON-RPC connection that never lets a
// malformed line end the session (the SDK's own stdio connection ends at
// the first one). It supports JSON-RPC batches while the negotiated
// protocol version does (before 2025-06-18), which it reads from its own
// answer to initialize.
type lineConn struct {
	lines     <-chan lineRead
	closed    chan struct{}
	closeOnce sync.Once

	writeMu sync.Mutex
	out     io.Writer

	queue []jsonrpc.Message // rest of the last batch read; Read is serial

	mu      sync.Mutex
	batches map[jsonrpc.ID]*batchReply
	initID  jsonrpc.ID // the initialize call, whose answer names the version
	version string     // negotiated protocol version; "" before initialize
}

// batchReply collects the responses to one batch's calls.
type batchReply struct {
	unresolved map[jsonrpc.ID]int
	responses  []*jsonrpc.Response
}

// batchesUntil is the first protocol version without JSON-RPC batches.
const batchesUntil = "2025-06-18"

func newLineConn(in io.Reader, out io.Writer, limit int) *lineConn {
	lines, closed := make(chan lineRead), make(chan struct{})
	// Reading stdin cannot be interrupted portably: the goroutine ends at
	// the end of the input or when it next has a line and the connection
	// is closed.
	go readLines(in, limit, lines, closed)
	return &lineConn{lines: lines, closed: closed, out: out, batches: map[jsonrpc.ID]*batchReply{}}
}

// readLines sends each line of in (without its line break) to lines, or
// only its length when it is longer than limit, then the error that ended
// in (io.EOF at its end).
func readLines(in io.Reader, limit int, lines chan<- lineRead, closed <-chan struct{}) {
	br := bufio.NewReaderSize(in, 64<<10)
	send := func(r lineRead) bool {
		select {
		case lines <- r:
			return true
		case <-closed:
			return false
		}
	}
	for {
		var line []byte
		var n int64
		over := false
		var err error
		for {
			chunk, e := br.ReadSlice('\n')
			n += int64(len(chunk))
			if !over {
				line = append(line, chunk...)
				if len(bytes.TrimRight(line, "\r\n")) > limit {
					over, line = true, nil
				}
			}
			if e != bufio.ErrBufferFull {
				err = e
				break
			}
		}
		if n > 0 {
			r := lineRead{line: line}
			if over {
				r = lineRead{over: n}
			}
			if !send(r) {
				return
			}
		}
		if err != nil {
			send(lineRead{err: err})
			return
		}
	}
}

// lineError is a line refused before the server sees it: the JSON-RPC
// error code, the message, and the id to answer (the line's own id when it
// has a valid one, else null).
type lineError struct {
	code int64
	msg  string
	id   jsonrpc.ID
}

func (e *lineError) Error() string { return fmt.Sprintf("%d %s", e.code, e.msg) }

// decodeLine turns one line into the messages it holds (several for a
// batch; none for a blank line), or the error to answer. batches says
// whether the session still accepts batches.
func decodeLine(line []byte, batches bool) ([]jsonrpc.Message, bool, *lineError) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, false, nil
	}
	if tooDeep(line, MaxNesting) {
		return nil, false, &lineError{code: jsonrpc.CodeParseError, msg: fmt.Sprintf("Parse error: arrays and objects nest deeper than %d levels", MaxNesting)}
	}
	var raw json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, false, &lineError{code: jsonrpc.CodeParseError, msg: "Parse error: " + err.Error()}
	}
	if line[0] != '[' {
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			return nil, false, &lineError{code: jsonrpc.CodeInvalidRequest, msg: "Invalid Request: " + err.Error(), id: lineID(line)}
		}
		return []jsonrpc.Message{msg}, false, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(line, &elems); err != nil || len(elems) == 0 {
		return nil, true, &lineError{code: jsonrpc.CodeInvalidRequest, msg: "Invalid Request: an empty batch"}
	}
	if !batches {
		return nil, true, &lineError{code: jsonrpc.CodeInvalidRequest, msg: "Invalid Request: JSON-RPC batches are not supported from protocol version " + batchesUntil + " on"}
	}
	msgs := make([]jsonrpc.Message, 0, len(elems))
	seen := map[jsonrpc.ID]bool{}
	for i, e := range elems {
		msg, err := jsonrpc.DecodeMessage(e)
		if err != nil {
			return nil, true, &lineError{code: jsonrpc.CodeInvalidRequest, msg: fmt.Sprintf("Invalid Request: batch element %d: %v", i, err)}
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			if seen[req.ID] {
				return nil, true, &lineError{code: jsonrpc.CodeInvalidRequest, msg: fmt.Sprintf("Invalid Request: batch element %d: id %v used twice in the batch", i, req.ID.Raw())}
			}
			seen[req.ID] = true
		}
		msgs = append(msgs, msg)
	}
	return msgs, true, nil
}

// tooDeep reports whether arrays and objects in b nest deeper than max,
// in one pass that skips strings.
func tooDeep(b []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			if depth > max {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}

// lineID is the id of a line that is an object with a string or number
// id; the invalid (null) id otherwise.
func lineID(line []byte) jsonrpc.ID {
	var obj struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(line, &obj) != nil {
		return jsonrpc.ID{}
	}
	id, err := jsonrpc.MakeID(obj.ID)
	if err != nil {
		return jsonrpc.ID{}
	}
	return id
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if len(c.queue) > 0 {
			next := c.queue[0]
			c.queue = c.queue[1:]
			return next, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var r lineRead
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case r = <-c.lines:
		}
		if r.err != nil {
			return nil, r.err
		}
		if r.over > 0 {
			if err := c.refuse(&lineError{code: jsonrpc.CodeInvalidRequest, msg: fmt.Sprintf("Invalid Request: a line of %d bytes is over the limit of %d bytes; it was skipped", r.over, MaxLineBytes)}); err != nil {
				return nil, err
			}
			continue
		}
		c.mu.Lock()
		batches := c.version == "" || c.version < batchesUntil
		c.mu.Unlock()
		msgs, batch, lerr := decodeLine(r.line, batches)
		if lerr == nil && batch {
			lerr = c.addBatch(msgs)
		}
		if lerr != nil {
			if err := c.refuse(lerr); err != nil {
				return nil, err
			}
			continue
		}
		if len(msgs) == 0 {
			continue
		}
		for _, m := range msgs {
			if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() && req.Method == "initialize" {
				c.mu.Lock()
				c.initID = req.ID
				c.mu.Unlock()
			}
		}
		c.queue = msgs[1:]
		return msgs[0], nil
	}
}

// addBatch records a batch's calls so that their responses go out as one
// array. An id already waiting in another batch is refused.
func (c *lineConn) addBatch(msgs []jsonrpc.Message) *lineError {
	reply := &batchReply{unresolved: map[jsonrpc.ID]int{}}
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
			reply.unresolved[req.ID] = len(reply.responses)
			reply.responses = append(reply.responses, nil)
		}
	}
	if len(reply.responses) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range reply.unresolved {
		if c.batches[id] != nil {
			return &lineError{code: jsonrpc.CodeInvalidRequest, msg: fmt.Sprintf("Invalid Request: id %v is already in use by a batch in progress", id.Raw())}
		}
	}
	for id := range reply.unresolved {
		c.batches[id] = reply
	}
	return nil
}

// refuse answers a refused line.
func (c *lineConn) refuse(e *lineError) error {
	type wireError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	data, err := json.Marshal(struct {
		JSONRPC string    `json:"jsonrpc"`
		ID      any       `json:"id"`
		Error   wireError `json:"error"`
	}{"2.0", e.id.Raw(), wireError{e.code, e.msg}})
	if err != nil {
		return err
	}
	return c.writeLine(data)
}

func (c *lineConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(append(data, '\n'))
	return err
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		data, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return fmt.Errorf("encode message: %w", err)
		}
		return c.writeLine(data)
	}
	c.mu.Lock()
	if c.initID.IsValid() && resp.ID == c.initID && resp.Error == nil {
		var init struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(resp.Result, &init) == nil {
			c.version = init.ProtocolVersion
		}
	}
	reply := c.batches[resp.ID]
	var complete []*jsonrpc.Response
	if reply != nil {
		delete(c.batches, resp.ID)
		reply.responses[reply.unresolved[resp.ID]] = resp
		delete(reply.unresolved, resp.ID)
		if len(reply.unresolved) == 0 {
			complete = reply.responses
		}
	}
	c.mu.Unlock()
	if reply == nil {
		data, err := jsonrpc.EncodeMessage(resp)
		if err != nil {
			return fmt.Errorf("encode message: %w", err)
		}
		return c.writeLine(data)
	}
	if complete == nil {
		return nil
	}
	raws := make([]json.RawMessage, len(complete))
	for i, r := range complete {
		data, err := jsonrpc.EncodeMessage(r)
		if err != nil {
			return fmt.Errorf("encode message: %w", err)
		}
		raws[i] = data
	}
	data, err := json.Marshal(raws)
	if err != nil {
		return err
	}
	return c.writeLine(data)
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

func (c *lineConn) SessionID() string { return "" }

// drainTransport wraps a transport whose connections drain (drainConn).
type drainTransport struct{ inner mcp.Transport }

func (t *drainTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &drainConn{Connection: c, pending: map[jsonrpc.ID]bool{}, idle: make(chan struct{}), closed: make(chan struct{})}, nil
}

// drainConn counts the calls read and not yet answered. When the reader
// ends (end of input, or a broken stream), Read withholds the error until
// every call read has its response written or the connection is closed:
// the SDK stops answering once a read fails, and cancels the calls in
// flight with the read's error as the cause. When Run's context ends
// (a signal), Server.endWithLife cancels the calls; the SDK closes the
// connection once they have returned.
type drainConn struct {
	mcp.Connection

	mu      sync.Mutex
	pending map[jsonrpc.ID]bool
	idle    chan struct{} // closed (and replaced) whenever pending empties
	closed  chan struct{}
	once    sync.Once
}

func (c *drainConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			c.mu.Lock()
			c.pending[req.ID] = true
			c.mu.Unlock()
		}
		return msg, nil
	}
	if ctx.Err() != nil {
		return nil, err
	}
	for {
		c.mu.Lock()
		n, idle := len(c.pending), c.idle
		c.mu.Unlock()
		if n == 0 {
			return nil, err
		}
		select {
		case <-idle:
		case <-c.closed:
			return nil, err
		case <-ctx.Done():
			return nil, err
		}
	}
}

func (c *drainConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID.IsValid() {
		c.mu.Lock()
		if c.pending[resp.ID] {
			delete(c.pending, resp.ID)
			if len(c.pending) == 0 {
				close(c.idle)
				c.idle = make(chan struct{})
			}
		}
		c.mu.Unlock()
	}
	return err
}

func (c *drainConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Connection.Close()
}
