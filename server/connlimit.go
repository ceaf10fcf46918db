package server

import (
	"net"
	"strconv"
	"sync"
	"time"
)

// ReasonTooManyConnections is the body of the 503 a connection over
// MaxConnections or MaxConnectionsPerClient gets (plain HTTP only: a TLS
// listener drops it before the handshake).
const ReasonTooManyConnections = "too_many_connections"

// connLimiter caps the open TCP connections, upgraded or not, server-wide
// and per peer address (an IPv6 address by its /64, as clientKey names
// it). A connection over either cap is answered at once with a 503 (or,
// under TLS, dropped) and closed, before it costs a goroutine or a
// buffer: without the caps, a client opening connections and sending
// nothing holds a goroutine, two buffers and a descriptor per connection
// for the header timeout, and enough of them exhaust the descriptors the
// workers' pipes need, or the memory.
type connLimiter struct {
	net.Listener
	max, perPeer int // < 0: no cap
	plain        bool
	refused      func()

	mu     sync.Mutex
	open   int
	byPeer map[string]int
}

func newConnLimiter(l net.Listener, max, perPeer int, plain bool, refused func()) net.Listener {
	if max < 0 && perPeer < 0 {
		return l
	}
	return &connLimiter{Listener: l, max: max, perPeer: perPeer, plain: plain, refused: refused, byPeer: map[string]int{}}
}

// tooMany is the whole answer to a connection over a cap.
var tooMany = []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n" +
	"Retry-After: 1\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(ReasonTooManyConnections)+1) +
	"\r\n\r\n" + ReasonTooManyConnections + "\n")

// Accept returns the next connection under the caps, refusing those over
// them.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		peer := peerKey(c.RemoteAddr())
		if l.take(peer) {
			return &limitedConn{Conn: c, l: l, peer: peer}, nil
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

func (l *connLimiter) take(peer string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.max >= 0 && l.open >= l.max {
		return false
	}
	if l.perPeer >= 0 && l.byPeer[peer] >= l.perPeer {
		return false
	}
	l.open++
	l.byPeer[peer]++
	return true
}

func (l *connLimiter) release(peer string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byPeer[peer]--; l.byPeer[peer] <= 0 {
		delete(l.byPeer, peer)
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

// limitedConn gives its place under the caps back when it is closed, once.
type limitedConn struct {
	net.Conn
	l    *connLimiter
	peer string
	once sync.Once
}

// CloseWrite half-closes the connection when it can (net/http does so
// before it drops a connection it refused).
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close closes the connection and frees its place.
func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.peer) })
	return err
}
