//go:build unix

package session

import "github.com/gomonty/monty/transport"

// Within is within (replybound_test.go), for the tests of package
// session_test.
var Within = within

// heldCount returns how many new host objects answers not yet sent hold
// (see heldObjects).
func (st *objectStore) heldCount() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.held
}

// WatchReads wraps s's connection: seen is called with each frame the
// session reads, before the session looks at it, and with a func that
// reports whether another frame is already waiting behind it. Call it
// before s's next turn, from the goroutine that runs s's turns.
func WatchReads(s *Session, seen func(body []byte, pending func() bool)) {
	s.conn = watchedConn{Conn: s.conn, seen: seen}
}

type watchedConn struct {
	transport.Conn
	seen func(body []byte, pending func() bool)
}

func (c watchedConn) ReadFrame() ([]byte, error) {
	b, err := c.Conn.ReadFrame()
	if err == nil {
		c.seen(b, c.Conn.Pending)
	}
	return b, err
}
