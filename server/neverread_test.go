//go:build unix

package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/wsframe"
	"github.com/gomonty/monty/message"
)

// A client that stops reading while its session prints is ended once the
// server's write has been stuck past the idle timeout, and its connection
// is reset: the server's socket is gone at once, with what the client
// left unread, and the client's next read past the data it already holds
// fails with ECONNRESET. Before, the server closed the connection
// gracefully: its socket stayed in FIN-WAIT-1 holding the unsent prints
// (up to a few MiB, for as long as the client kept its window shut), and
// a client that read again got about 2 MiB of them and then waited,
// neither the rest nor an end of stream coming (here until its 60 s
// deadline).
func TestNeverReadingClientIsReset(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.IdleTimeout = 500 * time.Millisecond })
	nc, br := rawUpgrade(t, ts)
	nc.SetReadDeadline(time.Now().Add(60 * time.Second))
	if _, err := nc.Write(wsframe.Client(true, 2, encodeRequest(t, 4, &message.Configure{ProtocolVersion: 4}))); err != nil {
		t.Fatal(err)
	}
	if _, p, err := wsframe.Read(br); err != nil || decodeEvent(t, 4, p).Body.EventKind() != message.KindOk {
		t.Fatalf("Configure: %v", err)
	}
	nc.(*net.TCPConn).SetReadBuffer(4096)
	if _, err := nc.Write(wsframe.Client(true, 2, encodeRequest(t, 4, &message.Feed{Code: "while True:\n    print('x' * 10000)"}))); err != nil {
		t.Fatal(err)
	}
	// Never read until the server has given up on the client (its
	// stuck write fails once the socket is closed, before the session
	// counts as ended).
	waitMetric(t, ts, `monty_server_sessions_ended_total{outcome="idle_timeout"} 1`)
	waitMetric(t, ts, "monty_server_sessions_active 0")

	// Linux lists the server's socket while it lives: a reset one is
	// gone, a gracefully closed one with data the client never took
	// waits in FIN-WAIT-1.
	if state, ok := tcpState(t, ts.HTTP, nc.LocalAddr()); ok {
		t.Fatalf("the server's socket of the connection is still there, in state %s", state)
	}
	// What the client's socket holds comes first, then the reset.
	nc.SetReadDeadline(time.Now().Add(60 * time.Second))
	n, err := io.Copy(io.Discard, br)
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the client read %d bytes more, then %v; want ECONNRESET", n, err)
	}
}

// tcpState returns the state of the server's side of a loopback TCP
// connection to client, as /proc/net/tcp lists it, and whether it is
// listed at all (never where there is no /proc).
func tcpState(t *testing.T, server string, client net.Addr) (string, bool) {
	t.Helper()
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return "", false
	}
	_, sport, _ := net.SplitHostPort(strings.TrimPrefix(server, "http://"))
	_, cport, _ := net.SplitHostPort(client.String())
	var sp, cp int
	fmt.Sscan(sport, &sp)
	fmt.Sscan(cport, &cp)
	local, remote := fmt.Sprintf(":%04X", sp), fmt.Sprintf(":%04X", cp)
	states := map[string]string{"01": "ESTABLISHED", "04": "FIN-WAIT-1", "05": "FIN-WAIT-2", "06": "TIME-WAIT", "07": "CLOSE", "08": "CLOSE-WAIT", "0B": "CLOSING"}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasSuffix(f[1], local) || !strings.HasSuffix(f[2], remote) {
			continue
		}
		if s, ok := states[f[3]]; ok {
			return s, true
		}
		return f[3], true
	}
	return "", false
}

// At the end of a drain's grace an idle session is handed its signed dump.
// A client that has stopped reading cannot take it: once the handover's
// bound is over, with the write stuck, the connection is reset, as for a
// client that stops reading its prints (above), so that the server's
// socket is gone at once with the unsent rest of the dump, and the client
// reads what its socket already holds and then ECONNRESET. Before, the
// handover closed the connection gracefully: the server's socket stayed in
// FIN-WAIT-1 holding megabytes of dump for as long as the client kept its
// window shut.
func TestDrainHandOverNeverReadIsReset(t *testing.T) {
	ts := startServer(t, func(c *Config) {
		c.MaxMemory = 128 << 20
		c.DrainGrace = 100 * time.Millisecond
		c.IdleTimeout = time.Hour // only the handover's bound can end the write
		c.TurnTimeout = time.Hour
		c.handOverBound = 5 * time.Second
	})
	nc, br := bigIdleSession(t, ts)
	shut := make(chan error, 1)
	go func() { shut <- ts.Shutdown(context.Background()) }()
	// The ShutdownDump's header only: the dump is made and its write
	// under way. Past it the client never reads, so the write sticks
	// once the socket buffers are full, and Shutdown returns when the
	// handover's bound has ended the session.
	var h [10]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		t.Fatal(err)
	}
	if h[0] != 0x82 || h[1] != 127 || binary.BigEndian.Uint64(h[2:]) < 32<<20 {
		// A machine too busy to dump 32 MiB within the bound: the
		// handover ended before any write could be stuck.
		t.Skipf("no ShutdownDump with the dump within the handover's bound (% x)", h)
	}
	select {
	case err := <-shut:
		if err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	case <-time.After(60 * time.Second):
		nc.Close()
		t.Fatal("Shutdown still waits for a client that does not read its ShutdownDump")
	}
	if state, ok := tcpState(t, ts.HTTP, nc.LocalAddr()); ok {
		t.Fatalf("the server's socket of the connection is still there, in state %s", state)
	}
	nc.SetReadDeadline(time.Now().Add(60 * time.Second))
	n, err := io.Copy(io.Discard, br)
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the client read %d bytes, then %v; want ECONNRESET", n, err)
	}
}

// A client that reads its ShutdownDump at the end of a drain's grace gets
// all of it and a graceful close (CloseDrain), not a reset: the handover
// resets only a write that is stuck.
func TestDrainHandOverReadIsClosedGracefully(t *testing.T) {
	ts := startServer(t, func(c *Config) {
		c.DrainGrace = 100 * time.Millisecond
		c.IdleTimeout = time.Hour
		c.TurnTimeout = time.Hour
	})
	nc, br := rawUpgrade(t, ts)
	nc.SetReadDeadline(time.Now().Add(60 * time.Second))
	for _, req := range []message.Request{&message.Configure{ProtocolVersion: 4}, &message.Feed{Code: "x = 'a' * (4 << 20)\n0"}} {
		if _, err := nc.Write(wsframe.Client(true, 2, encodeRequest(t, 4, req))); err != nil {
			t.Fatal(err)
		}
		if _, _, err := wsframe.Read(br); err != nil {
			t.Fatal(err)
		}
	}
	shut := make(chan error, 1)
	go func() { shut <- ts.Shutdown(context.Background()) }()
	op, p, err := wsframe.Read(br)
	if err != nil || op != 2 {
		t.Fatalf("read the handover: opcode %d, %v", op, err)
	}
	sd, ok := decodeEvent(t, 4, p).Body.(*message.ShutdownDump)
	if !ok || sd.Dump == nil {
		t.Fatalf("handed %T, want a ShutdownDump with the dump", decodeEvent(t, 4, p).Body)
	}
	op, p, err = wsframe.Read(br)
	if err != nil || op != 8 || len(p) < 2 || int(p[0])<<8|int(p[1]) != CloseDrain {
		t.Fatalf("after the ShutdownDump: opcode %d % x, %v; want a Close frame with code %d", op, p, err, CloseDrain)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}
