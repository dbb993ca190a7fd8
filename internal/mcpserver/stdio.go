package mcpserver

import (
	"context"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stdio is `orch mcp`'s transport over standard input and output, which
// drains: when the client closes standard input (a user piping requests,
// `printf '…' | orch mcp`), the server stops reading but lets the requests
// it has read finish and writes their responses before the session ends.
// The wait ends early only when the session's context is done (SIGINT or
// SIGTERM to orch mcp), which cancels those requests as Ctrl-C would.
// Closing out is left to the caller.
func Stdio(in io.Reader, out io.Writer) mcp.Transport {
	return &drainTransport{inner: &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}}
}

// nopWriteCloser keeps the writer open when the session ends.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

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
//
// The SDK tells its own stdio connection the negotiated protocol version
// through an unexported method that a wrapper cannot pass on; without it
// that connection accepts JSON-RPC batches in every version (it refuses
// them from 2025-06-18 on), which is all that changes.
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
