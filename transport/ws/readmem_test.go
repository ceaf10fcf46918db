package ws

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// allocated returns the bytes the program has allocated so far.
func allocated() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// acceptedPair returns this package's accepted Conn and the library's
// client end of one connection.
func acceptedPair(t *testing.T, opts AcceptOptions) (*Conn, *websocket.Conn) {
	t.Helper()
	conns := make(chan *Conn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := Accept(w, r, opts); err == nil {
			conns <- c
		}
	}))
	t.Cleanup(srv.Close)
	cl, _, err := websocket.Dial(ctx10(t), "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cl.SetReadLimit(-1)
	t.Cleanup(func() { cl.CloseNow() })
	c := <-conns
	t.Cleanup(func() { c.Close() })
	return c, cl
}

// A large message costs about its own length to read, on a dialed and
// on an accepted connection alike: the read loop reads it into a buffer
// grown to the length its header announced, not through io.ReadAll,
// which gathers a message in pieces and copies them into one buffer at
// the end (a 16 MiB message cost 2.16 times its length in allocations,
// about twice its length held at once).
func TestLargeMessageCostsItsLength(t *testing.T) {
	const n = 16 << 20
	msg := bytes.Repeat([]byte{0x5a}, n)
	for _, side := range []string{"dialed", "accepted"} {
		t.Run(side, func(t *testing.T) {
			var c *Conn
			var peerWrite func() error
			if side == "dialed" {
				p := newPeer(t)
				var s *websocket.Conn
				c, s = dial(t, p, DialOptions{MaxFrameLen: 2 * n})
				peerWrite = func() error { return s.Write(context.Background(), websocket.MessageBinary, msg) }
			} else {
				var cl *websocket.Conn
				c, cl = acceptedPair(t, AcceptOptions{MaxFrameLen: 2 * n})
				peerWrite = func() error { return cl.Write(context.Background(), websocket.MessageBinary, msg) }
			}
			// Twice, the second read measured: the first warms up what
			// the connection allocates once.
			for i := range 2 {
				wrote := make(chan error, 1)
				before := allocated()
				go func() { wrote <- peerWrite() }()
				got, err := c.ReadFrame()
				cost := allocated() - before
				if err := <-wrote; err != nil {
					t.Fatal(err)
				}
				if err != nil || !bytes.Equal(got, msg) {
					t.Fatalf("ReadFrame: %d bytes, %v", len(got), err)
				}
				if i == 1 && cost > n+n/2 { // 1.12 n by the growth rule; the rest is room for noise
					t.Fatalf("reading a message of %d MiB allocated %.1f MiB (%.2f times its length)", n>>20, float64(cost)/(1<<20), float64(cost)/n)
				}
				t.Logf("read %d MiB, allocated %.1f MiB", n>>20, float64(cost)/(1<<20))
			}
		})
	}
}

// trickle delivers n bytes, then fails with errStalled: a peer that sent
// part of what it announced.
type trickle struct{ n int }

var errStalled = errors.New("stalled")

func (r *trickle) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, errStalled
	}
	k := min(len(p), r.n)
	r.n -= k
	return k, nil
}

// A message's buffer is not made its announced length before the bytes
// come: a peer that announces the whole cap and sends little costs this
// side at most jumpShare times what it sent, and a 14-byte header costs
// firstRead. Messages of every length read back whole, whether their
// length was announced or not.
func TestReadMessageGrowsAsBytesArrive(t *testing.T) {
	const limit = 256 << 20
	for _, sent := range []int{0, 1000, 1 << 20, 3<<20 + 5} {
		cr := &capReader{max: limit}
		cr.first.Store(limit<<1 | 1) // the whole cap announced, in one frame
		cn := &Conn{maxFrame: limit, cr: cr}
		before := allocated()
		_, err := cn.readMessage(&trickle{n: sent})
		cost := allocated() - before
		if !errors.Is(err, errStalled) {
			t.Fatalf("readMessage = %v, want the reader's error", err)
		}
		if bound := uint64(jumpShare*sent + 2*firstRead); cost > bound {
			t.Fatalf("%d bytes sent of %d announced: %d allocated, over %d", sent, limit, cost, bound)
		}
	}
	for _, n := range []int{0, 1, 511, 512, firstRead - 1, firstRead, firstRead + 1, 5 << 20} {
		msg := make([]byte, n)
		for i := range msg {
			msg[i] = byte(i * 7)
		}
		for _, announce := range []bool{true, false} {
			cr := &capReader{max: limit}
			if announce {
				cr.first.Store(uint64(n)<<1 | 1)
			}
			cn := &Conn{maxFrame: limit, cr: cr}
			got, err := cn.readMessage(bytes.NewReader(msg))
			if err != nil || !bytes.Equal(got, msg) || got == nil {
				t.Fatalf("%d bytes (announced %t): read %d, %v", n, announce, len(got), err)
			}
			if announce && cap(got) != n {
				t.Fatalf("%d bytes announced: a buffer of %d", n, cap(got))
			}
		}
	}
}

// BenchmarkReadLargeMessage reads 64 MiB messages from a dialed
// connection: B/op is what reading one costs in allocations (about 1.1
// times the message's length; through io.ReadAll, about 2.5 times).
func BenchmarkReadLargeMessage(b *testing.B) {
	const n = 64 << 20
	msg := make([]byte, n)
	p := newPeer(b)
	ctx := context.Background()
	c, err := Dial(ctx, p.url(), DialOptions{MaxFrameLen: n})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	s := <-p.conns
	defer s.CloseNow()
	b.SetBytes(n)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		wrote := make(chan error, 1)
		go func() { wrote <- s.Write(ctx, websocket.MessageBinary, msg) }()
		if got, err := c.ReadFrame(); err != nil || len(got) != n {
			b.Fatalf("ReadFrame: %d bytes, %v", len(got), err)
		}
		if err := <-wrote; err != nil {
			b.Fatal(err)
		}
	}
}
