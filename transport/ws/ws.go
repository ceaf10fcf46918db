// Package ws carries protocol frames over a WebSocket connection, the
// transport of remote Monty workers.
//
// Each protocol message travels as one binary WebSocket message with no
// length prefix: requests from the parent, events from the child. Both
// directions are capped at the frame cap (256 MiB by default), checked before
// a frame is sent and enforced as the read limit on receipt, so no message
// a peer sends takes more than the cap to hold; a message whose header
// announces more than the cap is refused (Close 1009, a
// *frame.TooLargeError) from that header, without waiting for its body.
// The reader reads one
// message ahead: a peer that sends without waiting for answers can make
// this side hold two capped messages not yet returned by ReadFrame (the
// next one, and the one after it, read but not handed over), besides the
// one its caller is working on.
//
// A [Conn] reads in a background goroutine for its whole life, so pings
// from the peer are answered while the parent is idle between requests (a
// keepalive server would otherwise drop the connection as vanished), and a
// frame that arrives while no request is outstanding is visible through
// [Conn.Pending]. Every way of closing a Conn sends a Close frame and waits a
// bounded time (250 ms by default) for the peer's, because some load
// balancers forward a Close frame but never a bare TCP disconnect.
//
// [Dial] opens the client side; [Accept] upgrades an HTTP request on the
// server side. Both return a [Conn], which satisfies transport.Conn.
package ws

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/redact"
	"github.com/gomonty/monty/internal/safetext"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/transport"
)

var _ transport.Conn = (*Conn)(nil)

// DefaultCloseWait is how long closing a Conn waits for the peer's Close
// frame before dropping the socket.
const DefaultCloseWait = 250 * time.Millisecond

// Version is the gomonty version sent in the default User-Agent header,
// "gomonty/<Version>".
var Version = "dev"

// DialOptions configures [Dial]. The zero value dials with the protocol's
// frame cap, a 250 ms close wait and Go's default HTTP transport.
//
// DialOptions is plain data, safe to share.
type DialOptions struct {
	// Header holds extra upgrade headers. They replace defaults of the same
	// name (User-Agent, traceparent, tracestate).
	Header http.Header
	// HeaderFunc, when set, is called on every dial for headers that may
	// change between dials (refreshed auth tokens). Its headers are applied
	// after Header; for a name given more than once the last value wins.
	// An error it returns fails the dial, before any I/O, with a
	// *DialError (StatusCode 0) that wraps it; a header it returns that
	// cannot be sent fails it with a *HeaderError.
	HeaderFunc func(ctx context.Context) (http.Header, error)
	// TraceHeaders, when set, returns the W3C traceparent and tracestate of
	// the span in ctx ("" for none). They are sent unless Header or
	// HeaderFunc sets the same names.
	TraceHeaders func(ctx context.Context) (traceparent, tracestate string)
	// TLSConfig is used for wss:// URLs when HTTPClient is nil.
	TLSConfig *tls.Config
	// NetDialer, when set, opens the TCP connection when HTTPClient is nil.
	NetDialer *net.Dialer
	// HTTPClient, when set, performs the upgrade request; TLSConfig and
	// NetDialer are then ignored, so is the 64 KiB cap on the header
	// block of the server's answer (its transport's own applies, 10 MB by
	// default), redirects are the client's to follow
	// or not (its CheckRedirect; nil follows up to 10, as for any
	// http.Client), and the close wait is the library's own (up to 5 s) since the socket is
	// not in this package's hands; so is its read after a 101 it refuses
	// (up to 3 s, or until ctx ends), which Dial's own transport skips.
	HTTPClient *http.Client
	// MaxFrameLen caps frame bodies in both directions; <= 0 means the
	// protocol maximum (protocol.MaxFrameLen).
	MaxFrameLen int
	// CloseWait bounds the wait for the peer's Close frame; 0 means
	// DefaultCloseWait.
	CloseWait time.Duration
}

// AcceptOptions configures [Accept]. The zero value accepts with the
// protocol's frame cap and a 250 ms close wait, and refuses cross-origin
// browser requests.
//
// AcceptOptions is plain data, safe to share.
type AcceptOptions struct {
	// MaxFrameLen caps frame bodies in both directions; <= 0 means the
	// protocol maximum.
	MaxFrameLen int
	// CloseWait bounds the wait for the peer's Close frame; 0 means
	// DefaultCloseWait.
	CloseWait time.Duration
	// OriginPatterns lists host patterns allowed as the Origin of browser
	// requests (see github.com/coder/websocket AcceptOptions).
	OriginPatterns []string
}

// HeaderError reports an upgrade header that is not a valid HTTP header
// name or value. It is returned before any network I/O.
//
// It is not modified after it is returned; it is safe to read concurrently.
type HeaderError struct {
	Name  string
	Value string
}

// Error renders "invalid header ...".
func (e *HeaderError) Error() string {
	if !validHeaderName(e.Name) {
		return fmt.Sprintf("ws: invalid header name %q", e.Name)
	}
	return fmt.Sprintf("ws: invalid value for header %q", e.Name)
}

// DialError reports a failed dial or upgrade. StatusCode is the HTTP status
// of a refused upgrade (for example 401, 429 or 503), 0 when no response
// came; RetryAfter is the server's Retry-After hint, if any; Reason is the
// first line of the refusal's body (a montygo server's refusal reason, such
// as "draining" or "auth_throttled"), cut to 64 bytes of printable text, ""
// when there was none.
//
// It is not modified after it is returned; it is safe to read concurrently.
type DialError struct {
	URL        string
	StatusCode int
	RetryAfter time.Duration
	Reason     string
	Err        error
}

// Error renders "{url}: {err}" with the URL's password and query values
// masked, there and in the text of Err (net/http's errors quote the
// address they dialled): errors are logged, and a URL may carry a token.
// The URL field itself is kept as given.
func (e *DialError) Error() string {
	cause := "<nil>"
	if e.Err != nil {
		cause = redact.Text(e.Err.Error(), e.URL)
	}
	if e.StatusCode != 0 {
		if e.Reason != "" {
			return fmt.Sprintf("%s: upgrade refused with HTTP %d (%s): %s", redact.URL(e.URL), e.StatusCode, e.Reason, cause)
		}
		return fmt.Sprintf("%s: upgrade refused with HTTP %d: %s", redact.URL(e.URL), e.StatusCode, cause)
	}
	return redact.URL(e.URL) + ": " + cause
}

// Unwrap returns the underlying error.
func (e *DialError) Unwrap() error { return e.Err }

// Overloaded reports whether the server refused the upgrade for now
// (HTTP 503 or 429: it is full, draining, or its workers are unhealthy,
// as a montygo server's Reason says): the endpoint is up and may accept
// a later dial, after RetryAfter when it said. A 429 whose Reason is "auth_throttled"
// (a montygo server throttling a client address for its failed logins)
// is not: it is an authentication failure, like the 401s that led to it.
func (e *DialError) Overloaded() bool {
	if e.StatusCode == http.StatusTooManyRequests {
		return e.Reason != reasonAuthThrottled
	}
	return e.StatusCode == http.StatusServiceUnavailable
}

// reasonAuthThrottled is a montygo server's refusal reason for a client
// address past its failed-login allowance (server.ReasonAuthThrottled).
const reasonAuthThrottled = "auth_throttled"

// ErrDisconnected is matched, through errors.Is, by every *CloseError.
var ErrDisconnected = errors.New("ws: connection closed")

// CloseError reports the end of a connection. Code and Reason come from the
// peer's Close frame; Code is -1 when the connection dropped without one.
// The peer may be hostile and the reason ends up in logs, so line breaks
// and tabs in it become spaces, and invalid UTF-8 and other control
// characters U+FFFD.
// A normal closure (code 1000) also matches io.EOF, the clean end of a
// transport.Conn.
//
// It is not modified after it is returned; it is safe to read concurrently.
type CloseError struct {
	Code   int
	Reason string
	// Err is the underlying read error.
	Err error
}

// Error renders the close code and reason.
func (e *CloseError) Error() string {
	if e.Code < 0 {
		return fmt.Sprintf("ws: connection dropped without a close frame: %v", e.Err)
	}
	if e.Reason == "" {
		return fmt.Sprintf("ws: connection closed with code %d", e.Code)
	}
	return fmt.Sprintf("ws: connection closed with code %d: %s", e.Code, e.Reason)
}

// Is matches ErrDisconnected, and io.EOF for a normal closure.
func (e *CloseError) Is(target error) bool {
	return target == ErrDisconnected || (target == io.EOF && e.Code == int(websocket.StatusNormalClosure))
}

// Unwrap returns the underlying read error.
func (e *CloseError) Unwrap() error { return e.Err }

// ErrNotBinary reports a text message from the peer; the connection is
// closed with the policy-violation code.
var ErrNotBinary = errors.New("ws: peer sent a text message; frames travel as binary messages")

// ErrProtocol is matched by the error that ends a connection whose peer
// broke the WebSocket protocol (RFC 6455): reserved bits set, an unknown
// opcode, a malformed control frame or Close payload, a continuation out
// of place, an unmasked frame from a client. The connection ends (the
// WebSocket library answers most such frames with a protocol-error Close,
// 1002); the error wraps the library's.
var ErrProtocol = errors.New("ws: peer broke the WebSocket protocol")

// Conn is one WebSocket connection carrying protocol frames. It satisfies
// transport.Conn: one goroutine may read while another writes, reads must
// not overlap each other nor writes each other, and Close, CloseWith and
// Pending are safe from any goroutine.
type Conn struct {
	c         *websocket.Conn
	maxFrame  int
	closeWait time.Duration

	frames chan []byte
	done   chan struct{} // closed when the read loop has ended
	err    error         // the read loop's final error, set before done closes

	closeOnce sync.Once
	closeErr  error
	closing   chan struct{}
	local     atomic.Bool // closed by this side
	raw       *rawConn    // the socket, when this package opened it
	// cr is the header check the library reads the peer's frames
	// through (nil when it does not), which knows each message's
	// announced length before its body arrives.
	cr    *capReader
	probe [1]byte // readMessage's look past a full buffer
}

// rawConn records the network connection under a WebSocket so a close
// handshake the peer never answers can be cut short.
type rawConn struct {
	mu sync.Mutex
	c  net.Conn
}

func (r *rawConn) set(c net.Conn) {
	r.mu.Lock()
	r.c = c
	r.mu.Unlock()
}

func (r *rawConn) close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	c := r.c
	r.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// resetOnClose makes the socket's close discard what is still unsent
// and reset the peer's connection (SO_LINGER 0), where the socket is TCP
// (under TLS, and under wrappers that expose what they wrap through
// NetConn, too).
func (r *rawConn) resetOnClose() {
	if r == nil {
		return
	}
	r.mu.Lock()
	c := r.c
	r.mu.Unlock()
	for range 100 {
		switch t := c.(type) {
		case interface{ SetLinger(sec int) error }:
			t.SetLinger(0)
			return
		case interface{ NetConn() net.Conn }:
			c = t.NetConn()
		default:
			return
		}
	}
}

// hijackRecorder passes an http.ResponseWriter through and records the
// connection taken by the upgrade through hj, the writer's hijacker.
type hijackRecorder struct {
	http.ResponseWriter
	hj  http.Hijacker
	raw *rawConn
	// max, when positive, is the frame cap the connection's reads check
	// each frame header against (see capReader).
	max int
	// cr is the header check of the hijacked connection, once hijacked.
	cr *capReader
}

// findHijacker returns the hijacker of w: w itself, or the first writer
// down its Unwrap chain (a middleware's wrapper, as http.ResponseController
// and the WebSocket library follow it) that can hijack.
func findHijacker(w http.ResponseWriter) (http.Hijacker, bool) {
	for range 100 {
		switch t := w.(type) {
		case http.Hijacker:
			return t, true
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return nil, false
		}
	}
	return nil, false
}

func (h *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := h.hj.Hijack()
	if err != nil {
		return c, rw, err
	}
	h.raw.set(c)
	if h.max <= 0 {
		return c, rw, nil
	}
	// The library reads through the cap check, which reads what the HTTP
	// server had buffered, then the socket itself (as the library does:
	// not through the hijacked reader, which still reads through the HTTP
	// server's connection state), buffered so that headers cost no reads
	// of their own.
	buffered, _ := rw.Reader.Peek(rw.Reader.Buffered())
	src := io.MultiReader(bytes.NewReader(bytes.Clone(buffered)), c)
	h.cr = &capReader{src: bufio.NewReader(src), max: uint64(h.max)}
	cc := &capConn{Conn: c, r: h.cr}
	return cc, bufio.NewReadWriter(bufio.NewReader(cc), rw.Writer), nil
}

// Dial opens a WebSocket to rawURL (ws:// or wss://, used exactly as
// given: unless DialOptions.HTTPClient says otherwise, a redirect is not
// followed but refused with a *DialError carrying its 3xx status). Headers are validated before any network
// I/O. The server's answer to the upgrade may carry at most 64 KiB of
// headers; more fails the dial with a *DialError. Dial waits for the
// server for as long as ctx allows (only the TCP connect has a timeout of
// its own, 30 s): a server that accepts the connection and never answers
// holds a Dial under a context that never ends.
func Dial(ctx context.Context, rawURL string, opts DialOptions) (*Conn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, &DialError{URL: rawURL, Err: err}
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return nil, &DialError{URL: rawURL, Err: fmt.Errorf("scheme %q is not ws or wss", u.Scheme)}
	}
	h, err := upgradeHeader(ctx, opts)
	if err != nil {
		var he *HeaderError
		if !errors.As(err, &he) {
			// The header function failed (its token service is down,
			// say): the dial failed, as it would every time until that
			// recovers, so it is a *DialError (no status) a pool backs
			// the endpoint off for.
			err = &DialError{URL: rawURL, Err: err}
		}
		return nil, err
	}
	// The connection reads the server's frames through a check of the
	// length each header announces, as an accepted one reads the
	// client's (see capReader): the 101's body, which is the socket, is
	// wrapped on its way to the library.
	checked := &checkUpgrade{max: uint64(frameCap(opts.MaxFrameLen))}
	client := opts.HTTPClient
	if client != nil {
		c := *client
		if c.CheckRedirect == nil {
			// The WebSocket library wraps the client's CheckRedirect, and
			// wraps a nil one into "follow every redirect": net/http's
			// default of 10 would be lost, and a server redirecting to
			// itself would be asked again and again, as fast as it
			// answers, until ctx ends. Keep the default.
			c.CheckRedirect = tenRedirects
		}
		checked.rt = c.Transport
		if checked.rt == nil {
			checked.rt = http.DefaultTransport
		}
		c.Transport = checked
		client = &c
	}
	var raw *rawConn
	var tr *http.Transport
	if client == nil {
		d := opts.NetDialer
		if d == nil {
			d = &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		}
		raw = &rawConn{}
		tr = &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := d.DialContext(ctx, network, addr)
				if err == nil {
					raw.set(c)
				}
				return c, err
			},
			DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := d.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				cfg := opts.TLSConfig.Clone()
				if cfg == nil {
					cfg = &tls.Config{}
				}
				if cfg.ServerName == "" {
					host, _, _ := net.SplitHostPort(addr)
					cfg.ServerName = host
				}
				tc := tls.Client(c, cfg)
				if err := tc.HandshakeContext(ctx); err != nil {
					c.Close()
					return nil, err
				}
				raw.set(tc)
				return tc, nil
			},
			TLSClientConfig:        opts.TLSConfig,
			ForceAttemptHTTP2:      false,
			Proxy:                  http.ProxyFromEnvironment,
			MaxResponseHeaderBytes: maxResponseHeader,
		}
		// A redirect is never followed: the URL is dialled exactly as
		// given, and following one could carry the upgrade headers (a
		// bearer token) from wss:// to a plain http:// address. The 3xx
		// comes back as a DialError.
		checked.rt = refuseBadUpgrade{tr}
		client = &http.Client{Transport: checked, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}
	}
	var stop func() bool
	if raw != nil {
		// The library reads what follows a 101 it refuses for up to 3 s,
		// whatever the context says (refuseBadUpgrade spares it the
		// refusals it foresees): closing the socket when the context
		// ends cuts that short too.
		stop = context.AfterFunc(ctx, raw.close)
	}
	c, resp, err := websocket.Dial(ctx, rawURL, &websocket.DialOptions{
		HTTPClient: client,
		HTTPHeader: h,
	})
	if stop != nil && !stop() {
		// The context ended during the dial and the socket was closed:
		// say so (the transport may only have seen a closed socket), and
		// drop an upgrade that completed meanwhile.
		switch {
		case err == nil:
			c.CloseNow()
			c, resp, err = nil, nil, ctx.Err()
		case !errors.Is(err, ctx.Err()):
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
	}
	if tr != nil {
		// The transport is this dial's alone: a refused upgrade's
		// connection would otherwise stay open as an idle keep-alive
		// connection nobody will use (an upgraded one is not idle).
		defer tr.CloseIdleConnections()
	}
	if err != nil {
		de := &DialError{URL: rawURL, Err: err}
		if resp != nil {
			de.StatusCode = resp.StatusCode
			de.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"))
			if resp.Body != nil {
				de.Reason = refusalReason(resp.Body)
				resp.Body.Close()
			}
		}
		return nil, de
	}
	return newConn(c, opts.MaxFrameLen, opts.CloseWait, raw, checked.cr), nil
}

// maxResponseHeader caps the header block of the server's answer to the
// upgrade (net/http's MaxResponseHeaderBytes, whose default is 10 MB): a
// 101 or a refusal carries a few hundred bytes of headers, a balancer's
// cookies a few kilobytes, and a hostile server must not make each dial
// hold megabytes of header lines.
const maxResponseHeader = 64 << 10

// tenRedirects is net/http's default redirect policy: follow at most 10.
func tenRedirects(_ *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// checkUpgrade is the RoundTripper of every dial: it hands the WebSocket
// library the body of a 101 answer (the socket) read through a capReader,
// and records that reader for the connection. A dial's round trips run
// on the dialing goroutine, one after another; the last 101 is the one
// the library upgrades.
type checkUpgrade struct {
	rt  http.RoundTripper
	max uint64
	cr  *capReader
}

func (u *checkUpgrade) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := u.rt.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		return resp, err
	}
	body, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		return resp, nil // the library refuses a body it cannot write to
	}
	// Buffered so that headers cost no reads of their own; a payload
	// read of the buffer's size or more goes straight to the socket.
	u.cr = &capReader{src: bufio.NewReader(body), max: u.max}
	resp.Body = &capBody{ReadWriteCloser: body, r: u.cr}
	return resp, nil
}

// refuseBadUpgrade is the RoundTripper of the dials this package makes
// itself: a 101 whose handshake the WebSocket library will refuse (see
// badUpgrade) has its connection closed and its body emptied before the
// library sees it. The library reads the body of a response it refuses
// for up to 3 s, to quote it, and after a 101 that body is the connection,
// which a server that stays silent leaves open: each dial would wait out
// those 3 s. It still refuses the response, in its own words, at once.
type refuseBadUpgrade struct{ rt http.RoundTripper }

func (r refuseBadUpgrade) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.rt.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols || !badUpgrade(req, resp) {
		return resp, err
	}
	resp.Body.Close()
	resp.Body = http.NoBody
	return resp, nil
}

// badUpgrade reports whether the WebSocket library (v1.8, compression
// off, no subprotocol asked for) refuses resp, a 101 to req: a Connection
// without the upgrade token, an Upgrade without websocket, a wrong
// Sec-WebSocket-Accept, any subprotocol or extension.
func badUpgrade(req *http.Request, resp *http.Response) bool {
	sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	switch {
	case !hasToken(resp.Header, "Connection", "upgrade"), !hasToken(resp.Header, "Upgrade", "websocket"):
		return true
	case resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]):
		return true
	case resp.Header.Get("Sec-WebSocket-Protocol") != "":
		return true
	}
	for _, t := range headerTokens(resp.Header, "Sec-WebSocket-Extensions") {
		if t != "" {
			return true
		}
	}
	return false
}

// hasToken reports whether the comma-separated values of h's key hold
// token, in any case.
func hasToken(h http.Header, key, token string) bool {
	for _, t := range headerTokens(h, key) {
		if strings.EqualFold(t, token) {
			return true
		}
	}
	return false
}

// headerTokens splits the values of h's key at commas, trimmed.
func headerTokens(h http.Header, key string) []string {
	var ts []string
	for _, v := range h.Values(key) {
		for _, t := range strings.Split(v, ",") {
			ts = append(ts, strings.TrimSpace(t))
		}
	}
	return ts
}

// Accept upgrades an HTTP request to a frame-carrying WebSocket. The
// response writer must be able to hijack its connection, itself or through
// a writer down its Unwrap chain (as a middleware's wrapper exposes it); one
// that cannot is refused with 501. On failure Accept has already written
// an HTTP error response.
func Accept(w http.ResponseWriter, r *http.Request, opts AcceptOptions) (*Conn, error) {
	raw := &rawConn{}
	aw := w
	var hr *hijackRecorder
	if hj, ok := findHijacker(w); ok {
		hr = &hijackRecorder{ResponseWriter: w, hj: hj, raw: raw, max: frameCap(opts.MaxFrameLen)}
		aw = hr
	} // else the library refuses w with 501 before writing anything else
	c, err := websocket.Accept(aw, r, &websocket.AcceptOptions{OriginPatterns: opts.OriginPatterns})
	if err != nil {
		return nil, err
	}
	var cr *capReader
	if hr != nil {
		cr = hr.cr
	}
	return newConn(c, opts.MaxFrameLen, opts.CloseWait, raw, cr), nil
}

// frameCap is the frame cap in force for a MaxFrameLen option.
func frameCap(maxFrame int) int {
	if maxFrame <= 0 || maxFrame > protocol.MaxFrameLen {
		return protocol.MaxFrameLen
	}
	return maxFrame
}

func newConn(c *websocket.Conn, maxFrame int, closeWait time.Duration, raw *rawConn, cr *capReader) *Conn {
	maxFrame = frameCap(maxFrame)
	if closeWait <= 0 {
		closeWait = DefaultCloseWait
	}
	c.SetReadLimit(int64(maxFrame))
	cn := &Conn{
		c:         c,
		maxFrame:  maxFrame,
		closeWait: closeWait,
		frames:    make(chan []byte, 1),
		done:      make(chan struct{}),
		closing:   make(chan struct{}),
		raw:       raw,
		cr:        cr,
	}
	go cn.readLoop()
	return cn
}

// readLoop reads messages for the life of the connection, so control
// frames (pings, the peer's Close) are handled even while no request is
// outstanding.
func (cn *Conn) readLoop() {
	defer close(cn.done)
	for {
		typ, r, err := cn.c.Reader(context.Background())
		if err != nil {
			cn.err = cn.classifyReadError(err)
			return
		}
		if typ != websocket.MessageBinary {
			cn.err = ErrNotBinary
			go cn.closeWire(int(websocket.StatusPolicyViolation), "frames must be binary messages")
			return
		}
		data, err := cn.readMessage(r)
		if err != nil {
			cn.err = cn.classifyReadError(err)
			return
		}
		select {
		case cn.frames <- data:
		case <-cn.closing:
			cn.err = net.ErrClosed
			return
		}
	}
}

// The buffer a message is read into (see readMessage): it starts at
// firstRead bytes, or the message's announced length when that is less,
// and doubles as the message arrives until a 1/jumpShare share of its
// announced length has; it is then grown once to the whole length.
const (
	firstRead = 64 << 10
	jumpShare = 16
)

// readMessage reads the rest of the message r delivers. The library's
// own Read does it with io.ReadAll, which gathers the message in pieces
// and then copies them into one buffer of its length: about twice the
// message is held at the peak, more than 500 MiB for one at the 256 MiB
// cap. The header check knows the length the message announced, so the buffer
// could be made that size at once; but a peer would then make this side
// allocate the whole cap for a header of 14 bytes, on as many
// connections as it likes. So the buffer is made to grow as bytes arrive,
// doubling until 1/jumpShare of the announced length has come, and is
// then made the whole length in one step: a message of N bytes costs
// about N(1 + 1/jumpShare) at the peak, and a peer can make this side
// allocate at most jumpShare times what it has sent (firstRead at least,
// never more than the cap). A message whose length is not known in
// advance (one sent in fragments) grows by doubling to the cap.
func (cn *Conn) readMessage(r io.Reader) ([]byte, error) {
	var whole uint64 // the announced length of the whole message, 0 if not known
	hint := uint64(firstRead)
	if cn.cr != nil {
		n, w := cn.cr.announced()
		if w {
			whole = n
		}
		if n < hint {
			hint = n
		}
	}
	buf := make([]byte, 0, hint)
	for {
		if len(buf) == cap(buf) {
			// Full: find out whether the message goes on before growing
			// the buffer for it.
			n, err := r.Read(cn.probe[:])
			if n == 0 {
				if err == io.EOF {
					return buf, nil
				}
				if err != nil {
					return nil, err
				}
				continue
			}
			buf = append(grow(buf, whole, cn.maxFrame), cn.probe[0])
			if err == io.EOF {
				return buf, nil
			}
			if err != nil {
				return nil, err
			}
			continue
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// grow returns buf, full, in a buffer with room for more of a message
// whose announced length is whole (0 when not known), by readMessage's
// rule, never past one byte over the cap (where the library refuses the
// message).
func grow(buf []byte, whole uint64, maxFrame int) []byte {
	size := max(2*cap(buf), 512)
	if whole > uint64(cap(buf)) && uint64(cap(buf)) >= whole/jumpShare {
		size = int(whole)
	}
	size = min(size, maxFrame+1)
	if size <= cap(buf) {
		size = cap(buf) + 1
	}
	b := make([]byte, len(buf), size)
	copy(b, buf)
	return b
}

func (cn *Conn) classifyReadError(err error) error {
	var at *announcedTooLarge
	if errors.As(err, &at) {
		// Refused from its header: the library has sent nothing, so the
		// Close goes out from here, before the reader reports the end, as
		// the library's own would have (a Close of this side's that
		// follows must not go first). It does not wait for the peer's
		// Close: the socket is no longer read.
		cn.closeWire(int(websocket.StatusMessageTooBig), "message over the frame cap")
		return fmt.Errorf("ws: peer announced a message over the frame cap: %w", &frame.TooLargeError{Len: at.n, Max: uint64(cn.maxFrame)})
	}
	if errors.Is(err, websocket.ErrMessageTooBig) {
		// A *frame.TooLargeError, as the stream transport reports it; the
		// library stops reading at the cap, so the length is not known.
		return fmt.Errorf("ws: peer sent a message over the frame cap: %w", &frame.TooLargeError{Max: uint64(cn.maxFrame)})
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return &CloseError{Code: int(ce.Code), Reason: peerReason(ce.Reason), Err: err}
	}
	if brokeProtocol(err) {
		return fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	return &CloseError{Code: -1, Err: err}
}

// brokeProtocol reports whether err, a read error of the WebSocket
// library that is not the peer's Close, is the peer's protocol violation
// rather than a failure of the connection. The library reports a
// violation with an error of its own that wraps no cause, and a failed
// connection by wrapping what failed: end of stream, a closed or reset
// socket, a timed-out write of a pong, a broken TLS record. Finding any
// such cause in err's chain means the connection failed.
func brokeProtocol(err error) bool {
	var (
		ne    net.Error
		errno syscall.Errno
		rh    tls.RecordHeaderError
		alert tls.AlertError
	)
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled),
		errors.As(err, &ne), errors.As(err, &errno), errors.As(err, &rh), errors.As(err, &alert):
		return false
	}
	return true
}

// ReadFrame returns the next frame body. After the peer's Close frame it
// returns a *CloseError (which matches io.EOF for a normal closure), and
// after a drop one with code -1; after a text message ErrNotBinary, after
// a message over the cap a *frame.TooLargeError, after a frame that breaks
// the WebSocket protocol an error matching ErrProtocol; after Close,
// net.ErrClosed.
func (cn *Conn) ReadFrame() ([]byte, error) {
	select {
	case b := <-cn.frames:
		return b, nil
	default:
	}
	select {
	case b := <-cn.frames:
		return b, nil
	case <-cn.done:
		select {
		case b := <-cn.frames:
			return b, nil
		default:
		}
		return nil, cn.Err()
	}
}

// Done returns a channel that is closed once the connection's reader has
// stopped: the peer closed or dropped the connection, or sent what ends it
// (a text message, a message over the cap, a frame that breaks the
// WebSocket protocol), or this side closed it. A
// server uses it to notice a client that went away while a request is
// being served. Frames received before then are still returned by
// ReadFrame, and then [Conn.Err].
func (cn *Conn) Done() <-chan struct{} { return cn.done }

// Err returns the error that stopped the reader once [Conn.Done] is
// closed (what ReadFrame returns after the frames received before it),
// and nil while the reader runs.
func (cn *Conn) Err() error {
	select {
	case <-cn.done:
	default:
		return nil
	}
	if cn.local.Load() {
		return net.ErrClosed
	}
	return cn.err
}

// Pending reports whether a received frame has not been read yet. Under
// strict alternation it is false whenever no request is outstanding, so a
// true answer then means the peer sent an unsolicited frame.
func (cn *Conn) Pending() bool { return len(cn.frames) > 0 }

// MaxFrameLen is the frame cap in force in both directions.
func (cn *Conn) MaxFrameLen() int { return cn.maxFrame }

// WriteFrame sends body as one binary message. A body over the frame cap
// is refused with a *frame.TooLargeError before anything is sent, and the
// connection stays usable. Once the connection has ended it fails with
// what ended it: a *CloseError for the peer's end, net.ErrClosed after
// Close.
func (cn *Conn) WriteFrame(body []byte) error {
	if len(body) > cn.maxFrame {
		return &frame.TooLargeError{Len: uint64(len(body)), Max: uint64(cn.maxFrame)}
	}
	if err := cn.c.Write(context.Background(), websocket.MessageBinary, body); err != nil {
		if cn.local.Load() {
			return net.ErrClosed
		}
		// A write fails when the connection is broken, as a rule because
		// the peer ended it: a peer refusing a frame over its cap sends
		// its Close and drops the socket while the frame is still being
		// written. That Close may be waiting in the socket still; the
		// reader reads it before the failure, so give it the close wait
		// to finish and report what ended the connection.
		t := time.NewTimer(cn.closeWait)
		defer t.Stop()
		select {
		case <-cn.done:
			if cn.local.Load() {
				return net.ErrClosed
			}
			if cn.err != nil {
				return cn.err
			}
		case <-t.C:
		}
		return &CloseError{Code: -1, Err: err}
	}
	return nil
}

// Close sends a normal-closure Close frame, waits for the peer's (at most
// the close wait), then drops the socket. It is idempotent.
func (cn *Conn) Close() error { return cn.CloseWith(int(websocket.StatusNormalClosure), "") }

// CloseWith is Close with a chosen close code and reason (a reason longer
// than 123 bytes is cut on a character boundary; invalid UTF-8 in it is
// replaced, as a Close frame's reason must be UTF-8). A code that a Close
// frame cannot carry (RFC 6455 §7.4: anything but 1000–1003, 1007–1014
// and 3000–4999) is sent as 1011, internal error, rather than leaving the
// peer with no Close frame at all.
func (cn *Conn) CloseWith(code int, reason string) error {
	cn.local.Store(true)
	cn.closeWire(code, reason)
	<-cn.done
	return cn.closeErr
}

// Abort is CloseWith for a peer that has stopped reading, a write to it
// stuck on its full TCP window: the Close frame is tried as CloseWith
// tries it, but the socket is then dropped with SO_LINGER 0, so the
// kernel discards what this side wrote and the peer never took, and
// resets the peer's connection. A graceful close would leave that data
// (up to a few MiB a connection) in a socket the kernel keeps trying to
// deliver from, in FIN-WAIT-1, for as long as the peer keeps its window
// shut. After Close or CloseWith it waits for the close as they do, and
// a socket not yet dropped is reset. Where this package did not open the
// socket (DialOptions.HTTPClient) or it is not TCP, Abort is CloseWith.
func (cn *Conn) Abort(code int, reason string) error {
	cn.raw.resetOnClose()
	return cn.CloseWith(code, reason)
}

// closeWire sends the Close frame once, waits at most the close wait for
// the peer's, then drops the socket.
func (cn *Conn) closeWire(code int, reason string) {
	cn.closeOnce.Do(func() {
		close(cn.closing)
		if !sendableCloseCode(code) {
			code = int(websocket.StatusInternalError)
		}
		reason = closeReason(reason)
		finished := make(chan error, 1)
		go func() { finished <- cn.c.Close(websocket.StatusCode(code), reason) }()
		t := time.NewTimer(cn.closeWait)
		select {
		case err := <-finished:
			t.Stop()
			cn.closeErr = ignoreClosed(err)
		case <-t.C:
			cn.raw.close()
			cn.c.CloseNow()
			<-finished
		}
	})
}

// sendableCloseCode reports whether code may travel in a Close frame: the
// codes RFC 6455 defines for sending (not the reserved 1004, nor 1005,
// 1006 and 1015, which only describe a closure) and the 3000–4999 range
// of registered and private codes.
func sendableCloseCode(code int) bool {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1014:
		return true
	case code >= 3000 && code <= 4999:
		return true
	}
	return false
}

// maxCloseReason is the most a Close frame's reason can hold (125 bytes of
// control-frame payload less the 2-byte code).
const maxCloseReason = 123

// closeReason makes reason fit a Close frame: valid UTF-8 (RFC 6455
// §5.5.1), cut on a character boundary to at most maxCloseReason bytes.
func closeReason(reason string) string {
	return safetext.Prefix(strings.ToValidUTF8(reason, "\uFFFD"), maxCloseReason)
}

// peerReason makes a peer's close reason safe to print (safetext.Clean):
// line breaks, which would forge log lines, become spaces; invalid UTF-8
// (which RFC 6455 forbids there, but the library does not check) and
// other control characters (terminal escapes) become U+FFFD. The protocol
// bounds its length.
func peerReason(reason string) string { return safetext.Clean(reason) }

func ignoreClosed(err error) error {
	if err == nil || errors.Is(err, net.ErrClosed) {
		return nil
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return nil
	}
	return err
}

// upgradeHeader builds and validates the upgrade headers of one dial.
func upgradeHeader(ctx context.Context, opts DialOptions) (http.Header, error) {
	h := http.Header{}
	h.Set("User-Agent", "gomonty/"+Version)
	if opts.TraceHeaders != nil {
		tp, ts := opts.TraceHeaders(ctx)
		if tp != "" {
			h.Set("Traceparent", tp)
			if ts != "" {
				h.Set("Tracestate", ts)
			}
		}
	}
	apply := func(src http.Header) error {
		if err := CheckHeader(src); err != nil {
			return err
		}
		for name, vals := range src {
			if len(vals) > 0 {
				h.Set(name, vals[len(vals)-1]) // last duplicate wins
			}
		}
		return nil
	}
	if err := apply(opts.Header); err != nil {
		return nil, err
	}
	if opts.HeaderFunc != nil {
		extra, err := opts.HeaderFunc(ctx)
		if err != nil {
			return nil, fmt.Errorf("header function: %w", err)
		}
		if err := apply(extra); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// CheckHeader reports the first header of h that Dial would refuse (an
// invalid name, or an invalid value where it is the last of its name's
// values, the one sent) as a *HeaderError, nil when every one can be
// sent. Dial checks DialOptions.Header and HeaderFunc's headers this way
// before any I/O; CheckHeader lets a caller refuse static headers when it
// is configured instead.
func CheckHeader(h http.Header) error {
	for name, vals := range h {
		if !validHeaderName(name) {
			return &HeaderError{Name: name}
		}
		if len(vals) == 0 {
			continue
		}
		if v := vals[len(vals)-1]; !validHeaderValue(v) {
			return &HeaderError{Name: name, Value: v}
		}
	}
	return nil
}

// ParseHeader parses a "Name: value" header line, as given to the CLI's
// --header flag.
func ParseHeader(line string) (name, value string, err error) {
	name, value, ok := strings.Cut(line, ":")
	name = strings.TrimSpace(name)
	value = strings.TrimSpace(value)
	if !ok || !validHeaderName(name) {
		return "", "", &HeaderError{Name: name, Value: value}
	}
	if !validHeaderValue(value) {
		return "", "", &HeaderError{Name: name, Value: value}
	}
	return name, value, nil
}

// parseRetryAfter reads a Retry-After value: delay-seconds or an HTTP
// date. A delay too long for a time.Duration saturates at the longest
// one; what the caller honours of it is the caller's policy.
func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if secs > uint64(math.MaxInt64/time.Second) {
			return math.MaxInt64
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// validHeaderName reports whether s is an RFC 9110 field name (a token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue reports whether s is a valid field value: no control
// characters other than horizontal tab, and no DEL.
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// maxReason bounds DialError.Reason.
const maxReason = 64

// refusalReason reads the first line of a refused upgrade's body, at most
// maxReason bytes of it, keeping printable ASCII only: the server may be
// hostile, and the text ends up in logs.
func refusalReason(body io.Reader) string {
	var buf [maxReason]byte
	n, _ := io.ReadFull(body, buf[:])
	line := buf[:n]
	if i := bytes.IndexAny(line, "\r\n"); i >= 0 {
		line = line[:i]
	}
	out := make([]byte, 0, len(line))
	for _, c := range line {
		if c >= 0x20 && c < 0x7f {
			out = append(out, c)
		}
	}
	return strings.TrimSpace(string(out))
}
