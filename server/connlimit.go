package server

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// ReasonTooManyConnections is the body of the 503 a connection over
// MaxConnections or MaxConnectionsPerClient gets (see Config).
const ReasonTooManyConnections = "too_many_connections"

// connLimiter caps the open TCP connections, upgraded or not, server-wide
// and per peer address (an IPv6 address by its /64, as clientKey names
// it): without the caps, a client opening connections and sending nothing
// holds a goroutine, two buffers and a descriptor per connection for the
// header timeout, and enough of them exhaust the descriptors the workers'
// pipes need, or the memory.
//
// A connection over a cap still gets a place in a small overflow, when
// one is free (overflowConns server-wide, overflowPerPeer per address):
// it is read (after its TLS handshake) for at most overflowLife, a health
// probe on it is answered and anything else gets a 503 (Server.serveHTTP),
// and it is closed after that one answer. A kubelet probes from the
// node's address, which may also carry the clients that filled its cap;
// without the overflow its liveness probe would fail and the pod be
// restarted in the middle of a flood. The overflow is bounded in count
// and in time, so neither probes nor connections that send nothing get
// around the caps by more than it. Past the overflow too, a connection is
// answered 503 at once (or, under TLS, dropped: answering it would take a
// handshake per connection, without bound) and closed, before it costs a
// goroutine or a buffer.
type connLimiter struct {
	net.Listener
	max, perPeer int // < 0: no cap
	plain        bool
	refused      func()

	mu     sync.Mutex
	open   int
	byPeer map[string]int
	over   int            // connections in the overflow
	overBy map[string]int // the same by peer
}

func newConnLimiter(l net.Listener, max, perPeer int, plain bool, refused func()) *connLimiter {
	if max < 0 && perPeer < 0 {
		return nil
	}
	return &connLimiter{Listener: l, max: max, perPeer: perPeer, plain: plain, refused: refused,
		byPeer: map[string]int{}, overBy: map[string]int{}}
}

// tooMany is the whole answer to a connection over a cap and the overflow.
var tooMany = []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n" +
	"Retry-After: 1\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(ReasonTooManyConnections)+1) +
	"\r\n\r\n" + ReasonTooManyConnections + "\n")

// Accept returns the next connection under the caps or in the overflow,
// refusing those past both.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		peer := peerKey(c.RemoteAddr())
		switch l.take(peer) {
		case placeCapped:
			return &limitedConn{Conn: c, l: l, peer: peer}, nil
		case placeOverflow:
			lc := &limitedConn{Conn: c, l: l, peer: peer, overflow: true, expiry: time.Now().Add(overflowLife)}
			lc.Conn.SetDeadline(lc.expiry)
			return lc, nil
		}
		if l.refused != nil {
			l.refused()
		}
		if l.plain {
			// A new socket's send buffer is empty: the short answer does
			// not block, and the deadline covers a peer that is not there.
			c.SetWriteDeadline(time.Now().Add(time.Second))
			c.Write(tooMany)
		}
		c.Close()
	}
}

// The places take gives a connection.
const (
	placeNone     = iota // refused
	placeCapped          // under the caps
	placeOverflow        // over a cap, in the overflow
)

func (l *connLimiter) take(peer string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if (l.max < 0 || l.open < l.max) && (l.perPeer < 0 || l.byPeer[peer] < l.perPeer) {
		l.open++
		l.byPeer[peer]++
		return placeCapped
	}
	if l.over < overflowConns && l.overBy[peer] < overflowPerPeer {
		l.over++
		l.overBy[peer]++
		return placeOverflow
	}
	return placeNone
}

// overflowed reports how many connections hold a place in the overflow.
func (l *connLimiter) overflowed() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.over
}

func (l *connLimiter) release(peer string, overflow bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	open, byPeer := &l.open, l.byPeer
	if overflow {
		open, byPeer = &l.over, l.overBy
	}
	*open--
	if byPeer[peer]--; byPeer[peer] <= 0 {
		delete(byPeer, peer)
	}
}

// peerKey names a connection's peer as clientKey names an address.
func peerKey(a net.Addr) string {
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		host = a.String()
	}
	return clientKey(host)
}

// limitedConn gives its place under the caps (or in the overflow) back
// when it is closed, once. A connection in the overflow keeps its
// deadlines at or before its expiry, whatever net/http sets.
type limitedConn struct {
	net.Conn
	l        *connLimiter
	peer     string
	overflow bool
	expiry   time.Time // overflow only
	once     sync.Once
}

// bound returns the deadline t, no later than the overflow's expiry.
func (c *limitedConn) bound(t time.Time) time.Time {
	if c.overflow && (t.IsZero() || t.After(c.expiry)) {
		return c.expiry
	}
	return t
}

// SetDeadline sets both deadlines (see bound).
func (c *limitedConn) SetDeadline(t time.Time) error { return c.Conn.SetDeadline(c.bound(t)) }

// SetReadDeadline sets the read deadline (see bound).
func (c *limitedConn) SetReadDeadline(t time.Time) error { return c.Conn.SetReadDeadline(c.bound(t)) }

// SetWriteDeadline sets the write deadline (see bound).
func (c *limitedConn) SetWriteDeadline(t time.Time) error { return c.Conn.SetWriteDeadline(c.bound(t)) }

// CloseWrite half-closes the connection when it can (net/http does so
// before it drops a connection it refused).
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// NetConn returns the connection it wraps (so that the WebSocket
// transport can reset a connection whose client stopped reading).
func (c *limitedConn) NetConn() net.Conn { return c.Conn }

// Close closes the connection and frees its place.
func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.peer, c.overflow) })
	return err
}

// Connections over the caps that are still read, so that a health probe
// among them can be answered (see connLimiter): at most overflowConns
// server-wide and overflowPerPeer of one peer address, each for at most
// overflowLife (TLS handshake, request and response).
const (
	overflowConns   = 8
	overflowPerPeer = 4
	overflowLife    = 5 * time.Second
)

type overflowKey struct{}

// connContext marks the context of a connection in the overflow (net/http
// calls it with the connection Accept returned, under TLS wrapped).
func connContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if lc, ok := c.(*limitedConn); ok && lc.overflow {
		return context.WithValue(ctx, overflowKey{}, true)
	}
	return ctx
}

// inOverflow reports whether r came on a connection in the overflow.
func inOverflow(r *http.Request) bool {
	over, _ := r.Context().Value(overflowKey{}).(bool)
	return over
}

// isProbe reports whether r is a health probe: a GET (or HEAD) of
// /healthz, /readyz or /health.
func isProbe(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	switch r.URL.Path {
	case "/healthz", "/readyz", "/health":
		return true
	}
	return false
}
