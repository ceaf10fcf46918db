//go:build unix

package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gomonty/monty/internal/wsframe"
	"github.com/gomonty/monty/message"
)

// bigIdleSession configures a session on ts by hand whose dump (32 MiB,
// under a memory ceiling of 128 MiB, as the dump needs its room) is far more than the socket buffers
// hold, then stops reading: a client that will not take its ShutdownDump.
func bigIdleSession(t *testing.T, ts *testServer) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc, br := rawUpgrade(t, ts)
	nc.SetReadDeadline(time.Now().Add(60 * time.Second))
	for _, req := range []message.Request{&message.Configure{ProtocolVersion: 4}, &message.Feed{Code: "x = 'a' * (32 << 20)\n0"}} {
		if _, err := nc.Write(wsframe.Client(true, 2, encodeRequest(t, 4, req))); err != nil {
			t.Fatal(err)
		}
		_, p, err := wsframe.Read(br)
		if err != nil {
			t.Fatal(err)
		}
		if k := decodeEvent(t, 4, p).Body.EventKind(); k != message.KindOk && k != message.KindComplete {
			t.Fatalf("%s answered %s", req.RequestKind(), k)
		}
	}
	nc.(*net.TCPConn).SetReadBuffer(4096)
	return nc, br
}

// At the end of a drain's grace an idle session is handed its signed dump
// (drainIdle). A client that reads the start of its ShutdownDump and then
// stops cannot hold that handover, and with it the server's exit, until
// its idle timeout (an hour here): the handover has its own bound
// (drainDumpBound, at most the turn timeout), and a second signal
// (Shutdown's ctx) ends it at once. Both waited out the idle timeout: the
// write had no bound of its own, and Shutdown no longer watched its ctx
// once the grace was over.
func TestHostileDrainHandOverNeverRead(t *testing.T) {
	for _, second := range []bool{false, true} {
		name := "bounded"
		if second {
			name = "second signal"
		}
		t.Run(name, func(t *testing.T) {
			ts := startServer(t, func(c *Config) {
				c.MaxMemory = 128 << 20
				c.DrainGrace = 100 * time.Millisecond
				c.IdleTimeout = time.Hour
				c.TurnTimeout = time.Hour
				c.handOverBound = 5 * time.Second
				if second {
					c.handOverBound = time.Hour
				}
			})
			nc, br := bigIdleSession(t, ts)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			shut := make(chan error, 1)
			go func() { shut <- ts.Shutdown(ctx) }()
			// The ShutdownDump's header: the dump is made and its write
			// under way, and stuck.
			var h [10]byte
			if _, err := io.ReadFull(br, h[:]); err != nil {
				t.Fatal(err)
			}
			if h[0] != 0x82 || h[1] != 127 || binary.BigEndian.Uint64(h[2:]) < 32<<20 {
				// A machine too busy to dump 32 MiB within the bound: the
				// handover ended before any write could be stuck.
				t.Skipf("no ShutdownDump with the dump within the handover's bound (% x)", h)
			}
			if second {
				cancel()
			}
			select {
			case err := <-shut:
				if second && !errors.Is(err, context.Canceled) {
					t.Errorf("Shutdown cut short by its ctx: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("Shutdown still waits for a client that does not read its ShutdownDump")
				nc.Close() // let the server go
				<-shut
				return
			}
			// The session ended without its dump delivered: shut down, not
			// drained (Shutdown waits for every session to end).
			rec := httptest.NewRecorder()
			promhttp.HandlerFor(ts.m.reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
			if want := `monty_server_sessions_ended_total{outcome="shutdown"} 1`; !strings.Contains(rec.Body.String(), want+"\n") {
				t.Errorf("no %s after the handover was cut short:\n%s", want, grepMonty(rec.Body.String()))
			}
		})
	}
}
