//go:build unix

package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/internal/wsframe"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/worker"
)

// The chaos soak: many clients, well-behaved and not, against the real
// server with real workers behind it, while servers drain and are
// replaced and worker processes are killed. It runs a few seconds by
// default; MONTY_CHAOS=5m runs it for that long (pin it to one CPU:
// taskset -c 0), and MONTY_CHAOS_SEED=N replays one seed's choices (the
// timing of the machine still differs).

// chaosSpan returns how long the soak runs and how long each of its
// progress windows is.
func chaosSpan(t *testing.T) (total, window time.Duration) {
	v := os.Getenv("MONTY_CHAOS")
	if v == "" {
		return 3 * time.Second, 3 * time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("MONTY_CHAOS=%q: want a duration such as 5m", v)
	}
	return d, min(d, 30*time.Second)
}

func chaosSeed(t *testing.T) uint64 {
	if v := os.Getenv("MONTY_CHAOS_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("MONTY_CHAOS_SEED=%q: %v", v, err)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

// chaosTokens are the identities of the soak's clients: one per kind of
// client, so that the per-client quota only ever refuses the greedy one.
const chaosTokens = `good0:tok-good0-0123456789abc
good1:tok-good1-0123456789abc
good2:tok-good2-0123456789abc
dumper:tok-dumper-0123456789abc
dropper0:tok-dropper0-0123456789abc
dropper1:tok-dropper1-0123456789abc
mute:tok-mute-0123456789abc
garbage:tok-garbage-0123456789abc
greedy:tok-greedy-0123456789abc
fleeting:tok-fleeting-0123456789abc
`

func token(name string) string { return "tok-" + name + "-0123456789abc" }

// chaos is one soak run.
type chaos struct {
	t    *testing.T
	bin  string
	seed uint64
	ctx  context.Context

	mu  sync.Mutex
	cur *testServer

	// Counted events: clients judge a close code by whether one of these
	// happened while they ran.
	kills, drains atomic.Int64

	good, goodFailed, dumps, tampered     atomic.Int64
	drops, mutes, garbage, greedy, badTok atomic.Int64
	loris, revokes                        atomic.Int64
}

func (c *chaos) rng(stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(c.seed, stream))
}

func (c *chaos) server() *testServer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur
}

func (c *chaos) url() string { return c.server().URL }

func (c *chaos) addr() string { return strings.TrimPrefix(c.server().HTTP, "http://") }

func (c *chaos) failf(format string, args ...any) {
	c.t.Helper()
	c.t.Errorf("seed %d: "+format, append([]any{c.seed}, args...)...)
}

func chaosConfig(cfg *Config) {
	tokens, err := ParseTokens(strings.NewReader(chaosTokens))
	if err != nil {
		panic(err) // the constant above
	}
	cfg.Tokens = tokens
	cfg.TrustForwardedFor = true
	cfg.MaxAuthFailures = 3
	cfg.MaxSessions = 14
	cfg.MaxSessionsPerClient = 2
	cfg.Prewarm = 2
	// Long enough for a client answering host calls on a loaded machine
	// (all on one CPU in long mode), short enough for the client that
	// never reads to be ended within the short run.
	cfg.IdleTimeout = 4 * time.Second
	if os.Getenv("MONTY_CHAOS") != "" {
		cfg.IdleTimeout = 10 * time.Second
	}
	cfg.TurnTimeout = 20 * time.Second
	cfg.DrainGrace = time.Second
	cfg.ReadHeaderTimeout = time.Second
	cfg.MaxFrameLen = 1 << 20
	cfg.MaxRestarts = -1
}

func TestChaosSoak(t *testing.T) {
	total, window := chaosSpan(t)
	seed := chaosSeed(t)
	t.Logf("chaos seed %d (MONTY_CHAOS_SEED=%d reruns it), %v in windows of %v", seed, seed, total, window)

	http.DefaultClient.CloseIdleConnections()
	leaks := goleak.IgnoreCurrent()
	fds0 := openFDs(t)
	if live, _ := children(t); live != 0 {
		t.Fatalf("%d child processes before the soak", live)
	}

	ctx, cancel := context.WithCancel(context.Background())
	c := &chaos{t: t, seed: seed, ctx: ctx, bin: testenv.Worker(t)}
	first, err := c.startServer()
	if err != nil {
		t.Fatal(err)
	}
	c.cur = first
	t.Cleanup(func() {
		// A failed run's server; Close after Shutdown does nothing.
		c.mu.Lock()
		defer c.mu.Unlock()
		c.cur.Close()
	})

	var wg sync.WaitGroup
	stream := uint64(100)
	spawn := func(n int, f func(r *rand.Rand, i int)) {
		for i := range n {
			stream++
			r := c.rng(stream)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					f(r, i)
				}
			}()
		}
	}
	spawn(3, func(r *rand.Rand, i int) { c.goodClient(r, "good"+strconv.Itoa(i)) })
	spawn(1, func(r *rand.Rand, _ int) { c.dumper(r) })
	spawn(2, func(r *rand.Rand, i int) { c.dropper(r, "dropper"+strconv.Itoa(i)) })
	spawn(1, func(r *rand.Rand, _ int) { c.mute(r) })
	spawn(1, func(r *rand.Rand, _ int) { c.garbageClient(r) })
	spawn(1, func(r *rand.Rand, _ int) { c.greedyClient(r) })
	spawn(1, func(r *rand.Rand, _ int) { c.badToken(r) })
	spawn(1, func(r *rand.Rand, _ int) { c.slowLoris(r) })
	spawn(1, func(r *rand.Rand, _ int) { c.revoked(r) })
	var bg sync.WaitGroup
	bg.Add(2)
	go func() { defer bg.Done(); c.killer(c.rng(1)) }()
	go func() { defer bg.Done(); c.drainer(c.rng(2), total) }()

	// Progress and memory, window by window.
	var heaps []uint64
	end := time.Now().Add(total)
	for time.Now().Before(end) {
		before := c.good.Load()
		w := min(window, time.Until(end))
		time.Sleep(w)
		if got := c.good.Load() - before; got == 0 {
			c.failf("no well-behaved session finished in a window of %v", w)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heaps = append(heaps, ms.HeapInuse)
	}
	cancel()
	wg.Wait()
	bg.Wait()

	t.Logf("good %d (failed %d), dumps %d, tampered %d, drops %d, mutes %d, garbage %d, greedy %d, bad tokens %d, slow loris %d, revocations %d; kills %d, drains %d",
		c.good.Load(), c.goodFailed.Load(), c.dumps.Load(), c.tampered.Load(), c.drops.Load(), c.mutes.Load(),
		c.garbage.Load(), c.greedy.Load(), c.badTok.Load(), c.loris.Load(), c.revokes.Load(), c.kills.Load(), c.drains.Load())
	t.Logf("heap in use after GC by window (MiB): %v", mib(heaps))
	if len(heaps) >= 4 {
		// The first window warms up; later ones must not keep growing.
		base := heaps[1]
		if last := heaps[len(heaps)-1]; last > 2*base+16<<20 {
			c.failf("heap in use grew from %d to %d bytes across windows", base, last)
		}
	}

	// With every client gone the current server holds no session and
	// no busy worker, and says so in its metrics.
	ts := c.server()
	settles(t, "live sessions", 0, func() int { n, _ := ts.adm.count(); return n })
	settles(t, "active sessions gauge", 0, func() int { return int(gaugeValue(ts, "monty_server_sessions_active")) })
	settles(t, "busy workers", 0, func() int { return ts.pool.Stat().Busy })
	if in := ts.Info(); in.ActiveSessions != 0 {
		c.failf("/info: %d active sessions", in.ActiveSessions)
	}
	sctx, scancel := context.WithTimeout(context.Background(), time.Minute)
	defer scancel()
	if err := ts.Shutdown(sctx); err != nil {
		c.failf("final Shutdown: %v", err)
	}
	c.retire(ts)
	settles(t, "worker processes", 0, func() int { live, _ := children(t); return live })
	noLingering(t)
	settles(t, "open descriptors", fds0, func() int { return openFDs(t) })
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := goleak.Find(leaks)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			c.failf("goroutines left after Shutdown: %v", err)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// gaugeValue reads a gauge of ts's registry by name (-1: not found).
func gaugeValue(ts *testServer, name string) float64 {
	mfs, err := ts.m.reg.Gather()
	if err != nil {
		return -1
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}

func mib(bs []uint64) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = fmt.Sprintf("%.1f", float64(b)/(1<<20))
	}
	return out
}

// killer SIGKILLs a random worker process now and then.
func (c *chaos) killer(r *rand.Rand) {
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-time.After(time.Duration(300+r.IntN(1500)) * time.Millisecond):
		}
		pids := testenv.ChildPids("monty")
		if len(pids) == 0 {
			continue
		}
		if syscall.Kill(pids[r.IntN(len(pids))], syscall.SIGKILL) == nil {
			c.kills.Add(1)
		}
	}
}

// startServer starts a server as the package's startServer does, from
// any goroutine: the killer may kill the worker a new pool negotiates
// with, which fails New; it is tried again then.
func (c *chaos) startServer() (*testServer, error) {
	cfg := Config{
		DumpKey: testKey,
		Worker:  worker.Config{Binary: c.bin},
		Logger:  quiet,
	}
	chaosConfig(&cfg)
	var srv *Server
	for attempt := 0; ; attempt++ {
		kills := c.kills.Load()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		s, err := New(ctx, cfg)
		cancel()
		if err == nil {
			srv = s
			break
		}
		if c.kills.Load() == kills || attempt == 5 {
			return nil, err
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		return nil, err
	}
	ts := &testServer{Server: srv, URL: "ws://" + l.Addr().String() + "/", HTTP: "http://" + l.Addr().String(), done: make(chan error, 1)}
	go func() { ts.done <- srv.Serve(l) }()
	return ts, nil
}

// retire checks a server that has been shut down: Serve returned, no
// session counted, none in its gauge, no worker left in its pool. The
// soak keeps no reference to it after, so that the heap figures are the
// server's, not the test's.
func (c *chaos) retire(ts *testServer) {
	if err := <-ts.done; !errors.Is(err, http.ErrServerClosed) {
		c.failf("Serve: %v", err)
	}
	if n, _ := ts.adm.count(); n != 0 {
		c.failf("a server still counts %d sessions after its Shutdown", n)
	}
	if n := gaugeValue(ts, "monty_server_sessions_active"); n != 0 {
		c.failf("a shut down server's active sessions gauge reads %v", n)
	}
	if st := ts.pool.Stat(); st.Live != 0 || st.Busy != 0 {
		c.failf("a shut down server's pool has %d live workers (%d busy)", st.Live, st.Busy)
	}
}

// drainer now and then shuts the current server down with a grace and
// puts a fresh one in its place.
func (c *chaos) drainer(r *rand.Rand, total time.Duration) {
	every := max(total/3, 2*time.Second)
	if os.Getenv("MONTY_CHAOS") != "" {
		every = 8 * time.Second
	}
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-time.After(every/2 + time.Duration(r.Int64N(int64(every)))):
		}
		fresh, err := c.startServer()
		if err != nil {
			c.failf("a fresh server: %v", err)
			return
		}
		c.mu.Lock()
		old := c.cur
		c.cur = fresh
		c.mu.Unlock()
		c.drains.Add(1)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = old.Shutdown(ctx)
		cancel()
		if err != nil {
			c.failf("Shutdown of a drained server: %v", err)
		}
		c.retire(old)
	}
}

// outcome judges the end of a well-behaved client's session: nil for an
// end the soak explains (a worker it killed, a drain it began, a context
// it ended), else an error saying what was wrong.
func (c *chaos) explained(err error, kills, drains int64) error {
	if err == nil || c.ctx.Err() != nil {
		return nil
	}
	killed := c.kills.Load() > kills
	drained := c.drains.Load() > drains
	var de *session.DisconnectedError
	var rc *session.RemoteCrashError
	var dial *ws.DialError
	switch {
	case errors.As(err, &de):
		switch {
		case de.Code == CloseWorkerFailed && killed && strings.HasPrefix(de.Reason, "worker failed"):
			return nil
		case de.Code == CloseDrain && drained:
			return nil
		case de.Code == -1 && drained:
			// The server's Close went out on a connection a drain
			// closed under it.
			return nil
		}
		return fmt.Errorf("closed with %d %q (kills %v, drains %v): %w", de.Code, de.Reason, killed, drained, err)
	case errors.As(err, &rc):
		if killed {
			return nil
		}
	case errors.As(err, &dial):
		if dial.Overloaded() || dial.StatusCode == 0 && drained {
			return nil
		}
	case errors.Is(err, session.ErrShutdown):
		if drained {
			return nil
		}
	}
	return fmt.Errorf("unexplained (kills %v, drains %v): %w", killed, drained, err)
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func (c *chaos) launch(name string, version uint32) session.Launch {
	return session.Launch{ProtocolVersion: version, Launcher: session.RemoteLauncher{
		URL:  c.url(),
		Pick: c.url,
		Dial: ws.DialOptions{Header: bearerHeader(token(name))},
	}}
}

// start opens a well-behaved session, trying again while the server is
// full or draining.
func (c *chaos) start(ctx context.Context, r *rand.Rand, name string) (*session.Session, error) {
	// Negotiated (the server refuses 5, the client comes down to 4), or
	// pinned to 4 or 2.
	version := []uint32{0, 4, 2}[r.IntN(3)]
	for {
		s, err := session.Start(ctx, c.launch(name, version), session.Config{ScriptName: "chaos.py", Logger: quiet})
		var de *ws.DialError
		if err == nil || ctx.Err() != nil || !(errors.As(err, &de) && (de.Overloaded() || de.StatusCode == 0) || errors.Is(err, session.ErrShutdown)) {
			return s, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// chaosProgram is a feed with host calls and prints whose value depends
// on every call: bump(a, i) = a*3 + i.
func chaosProgram(n int) (code string, want int, stdout string) {
	code = "acc = " + strconv.Itoa(n) + "\nfor i in range(4):\n    print('step', i)\n    acc = bump(acc, i)\nacc"
	want = n
	for i := range 4 {
		want = want*3 + i
		stdout += "step " + strconv.Itoa(i) + "\n"
	}
	return code, want, stdout
}

func bumpRegistry() *session.Registry {
	return session.NewRegistry().MustRegister("bump", func(a, i int) int { return a*3 + i })
}

// goodClient runs one well-behaved session: a few feeds with host calls
// and prints, each checked.
func (c *chaos) goodClient(r *rand.Rand, name string) {
	kills, drains := c.kills.Load(), c.drains.Load()
	ctx, cancel := context.WithTimeout(c.ctx, 2*time.Minute)
	defer cancel()
	err := c.goodSession(ctx, r, name)
	if err := c.explained(err, kills, drains); err != nil {
		c.goodFailed.Add(1)
		c.failf("%s: %v", name, err)
	}
}

func (c *chaos) goodSession(ctx context.Context, r *rand.Rand, name string) error {
	s, err := c.start(ctx, r, name)
	if err != nil {
		return err
	}
	defer s.Close()
	reg := bumpRegistry()
	for range 1 + r.IntN(3) {
		n := r.IntN(1000)
		code, want, stdout := chaosProgram(n)
		var out strings.Builder
		res, err := s.Run(ctx, code, session.WithFunctions(reg), session.WithPrint(session.Writers(&out, io.Discard)))
		if err != nil {
			return err
		}
		if got := res.Repr(); got != strconv.Itoa(want) {
			c.failf("%s: got %s, want %d", name, got, want)
		}
		// A resumed session may print a turn's output again; each
		// complete run prints its own lines once, in order.
		if !strings.HasSuffix(out.String(), stdout) {
			c.failf("%s: printed %q, want %q", name, out.String(), stdout)
		}
		c.good.Add(1)
	}
	return nil
}

// dumper dumps a session, restores it in a new one (and now and then a
// tampered copy, which must be refused).
func (c *chaos) dumper(r *rand.Rand) {
	kills, drains := c.kills.Load(), c.drains.Load()
	ctx, cancel := context.WithTimeout(c.ctx, 2*time.Minute)
	defer cancel()
	if err := c.explained(c.dumpRound(ctx, r), kills, drains); err != nil {
		c.goodFailed.Add(1)
		c.failf("dumper: %v", err)
	}
}

func (c *chaos) dumpRound(ctx context.Context, r *rand.Rand) error {
	s, err := c.start(ctx, r, "dumper")
	if err != nil {
		return err
	}
	n := r.IntN(1000)
	if _, err := s.Run(ctx, "keep = "+strconv.Itoa(n)); err != nil {
		s.Close()
		return err
	}
	state, err := s.Dump(ctx)
	s.Close()
	if err != nil {
		return err
	}
	tamper := r.IntN(3) == 0
	if tamper {
		state = append([]byte(nil), state...)
		state[r.IntN(len(state))] ^= byte(1 + r.IntN(255))
	}
	s2, err := c.start(ctx, r, "dumper")
	if err != nil {
		return err
	}
	defer s2.Close()
	_, err = s2.Load(ctx, state)
	if tamper {
		// Refused with an Error; the session lives on, unchanged.
		var pe *session.PythonError
		if err == nil {
			c.failf("dumper: a tampered dump loaded")
			return nil
		}
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "Load refused") {
			return err
		}
		res, err := s2.Run(ctx, "40 + 2")
		if err != nil {
			return err
		}
		if got := res.Repr(); got != "42" {
			c.failf("dumper: after a refused Load the session answered %s", got)
		}
		c.tampered.Add(1)
		return nil
	}
	if err != nil {
		return err
	}
	res, err := s2.Run(ctx, "keep + 1")
	if err != nil {
		return err
	}
	if got := res.Repr(); got != strconv.Itoa(n+1) {
		c.failf("dumper: restored session answered %s, want %d", got, n+1)
	}
	c.dumps.Add(1)
	c.good.Add(1)
	return nil
}

// rawUp opens a TCP connection to the current server and upgrades it by
// hand as client name; status is the upgrade's answer.
func (c *chaos) rawUp(name string) (net.Conn, *bufio.Reader, int, error) {
	return c.rawUpTo(c.server(), name)
}

// clientSessions is how many sessions ts counts for client.
func clientSessions(ts *testServer, client string) int {
	ts.adm.mu.Lock()
	defer ts.adm.mu.Unlock()
	return ts.adm.byClient[client]
}

func (c *chaos) rawUpTo(ts *testServer, name string) (net.Conn, *bufio.Reader, int, error) {
	nc, err := net.DialTimeout("tcp", strings.TrimPrefix(ts.HTTP, "http://"), 10*time.Second)
	if err != nil {
		return nil, nil, 0, err
	}
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(nc, "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Authorization: Bearer "+token(name)+"\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		nc.Close()
		return nil, nil, 0, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		nc.Close()
		return nil, nil, resp.StatusCode, nil
	}
	nc.SetDeadline(time.Time{})
	return nc, br, resp.StatusCode, nil
}

func decode4(b []byte) (*message.ChildEvent, error) {
	cd, _ := codec.ForVersion(4)
	return cd.DecodeEvent(b, codec.Limits{})
}

func binFrame(t testing.TB, req message.Request) []byte {
	return wsframe.Client(true, 2, encodeRequest(t, 4, req))
}

// readEvent reads server frames up to the next binary one and decodes it;
// a Close frame ends the read with its code.
func readEvent(br *bufio.Reader) (*message.ChildEvent, int, error) {
	for {
		op, p, err := wsframe.Read(br)
		if err != nil {
			return nil, 0, err
		}
		switch op {
		case 8:
			code := 0
			if len(p) >= 2 {
				code = int(binary.BigEndian.Uint16(p))
			}
			return nil, code, nil
		case 2:
			ev, err := decode4(p)
			return ev, 0, err
		}
	}
}

// upOrRefused reports whether an upgrade that did not succeed was refused
// for a reason the soak explains (the server full or draining, or gone
// in a drain); otherwise it records a failure.
func (c *chaos) upOrRefused(who string, status int, err error) {
	switch {
	case err != nil:
		// A drain closed the listener under the dial.
	case status == http.StatusServiceUnavailable:
	case status == http.StatusTooManyRequests:
		// Its quota: a session it left may not have ended yet.
	default:
		c.failf("%s: upgrade answered %d", who, status)
	}
}

// dropper leaves at a random moment: during its Configure, mid-frame,
// mid-turn (a print flood running) or during a Dump.
func (c *chaos) dropper(r *rand.Rand, name string) {
	nc, br, status, err := c.rawUp(name)
	if nc == nil {
		c.upOrRefused(name, status, err)
		time.Sleep(50 * time.Millisecond)
		return
	}
	defer nc.Close()
	c.drops.Add(1)
	cfg := binFrame(c.t, &message.Configure{ProtocolVersion: 4, ScriptName: "drop.py"})
	moment := r.IntN(4)
	if moment == 0 {
		// Part of the Configure, or all of it and gone before its answer.
		nc.Write(cfg[:r.IntN(len(cfg)+1)])
		return
	}
	nc.Write(cfg)
	if _, _, err := readEvent(br); err != nil {
		return
	}
	switch moment {
	case 1:
		f := binFrame(c.t, &message.Feed{Code: "x = 1\nx"})
		nc.Write(f[:1+r.IntN(len(f)-1)])
	case 2:
		nc.Write(binFrame(c.t, &message.Feed{Code: "for i in range(100000):\n    print('flood', i)"}))
		for range r.IntN(20) {
			if _, code, err := readEvent(br); err != nil || code != 0 {
				break
			}
		}
	case 3:
		nc.Write(binFrame(c.t, &message.Feed{Code: "big = list(range(20000))"}))
		readEvent(br)
		nc.Write(binFrame(c.t, &message.Dump{}))
		time.Sleep(time.Duration(r.IntN(5)) * time.Millisecond)
	}
	if r.IntN(2) == 0 {
		// A reset rather than a FIN.
		if tc, ok := nc.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
	}
}

// mute starts a print flood and never reads: the server must end the
// session (the client is not reading) within its idle timeout.
func (c *chaos) mute(r *rand.Rand) {
	kills, drains := c.kills.Load(), c.drains.Load()
	ts := c.server()
	nc, br, status, err := c.rawUpTo(ts, "mute")
	if nc == nil {
		c.upOrRefused("mute", status, err)
		time.Sleep(50 * time.Millisecond)
		return
	}
	defer nc.Close()
	c.mutes.Add(1)
	nc.Write(binFrame(c.t, &message.Configure{ProtocolVersion: 4, ScriptName: "mute.py"}))
	nc.Write(binFrame(c.t, &message.Feed{Code: "for i in range(10**6):\n    print('never read', i, '.' * 200)"}))
	// Never read: the server must end the session (its writes stuck for
	// longer than the idle timeout) on its own.
	deadline := time.Now().Add(ts.cfg.IdleTimeout + time.Minute)
	for clientSessions(ts, "mute") > 0 {
		if time.Now().After(deadline) {
			c.failf("mute: the server did not end a session whose client does not read")
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	// What the socket still holds ends with the close code, if the server
	// could send it.
	nc.SetReadDeadline(time.Now().Add(time.Minute))
	code := 0
	for {
		op, p, err := wsframe.Read(br)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				c.failf("mute: the connection of an ended session stayed open")
			}
			break
		}
		if op == 8 && len(p) >= 2 {
			code = int(binary.BigEndian.Uint16(p))
		}
	}
	switch {
	case code == 0, code == CloseIdleTimeout:
	case code == CloseWorkerFailed && c.kills.Load() > kills:
	case code == CloseDrain && c.drains.Load() > drains:
	default:
		c.failf("mute: closed with %d", code)
	}
}

// garbageClient sends a text message, an oversize frame, a reserved
// opcode or bytes that are no request, and checks the close code.
func (c *chaos) garbageClient(r *rand.Rand) {
	kills, drains := c.kills.Load(), c.drains.Load()
	nc, br, status, err := c.rawUp("garbage")
	if nc == nil {
		c.upOrRefused("garbage", status, err)
		time.Sleep(50 * time.Millisecond)
		return
	}
	defer nc.Close()
	c.garbage.Add(1)
	if r.IntN(2) == 0 {
		nc.Write(binFrame(c.t, &message.Configure{ProtocolVersion: 4, ScriptName: "garbage.py"}))
		if _, _, err := readEvent(br); err != nil {
			return
		}
	}
	var want []int
	switch r.IntN(4) {
	case 0:
		nc.Write(wsframe.Client(true, 1, []byte("hello")))
		want = []int{CloseProtocol}
	case 1:
		// A 2 MiB binary frame, refused from its header: its body comes
		// (the write may fail as the server drops the connection) or not.
		hdr := []byte{0x82, 0xff, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0}
		nc.Write(hdr)
		if r.IntN(2) == 0 {
			go nc.Write(make([]byte, 1<<20+4096))
		}
		want = []int{CloseTooLarge}
	case 2:
		nc.Write(wsframe.Client(true, 3, []byte("reserved")))
		want = []int{CloseProtocol, 1002}
	case 3:
		junk := make([]byte, 1+r.IntN(200))
		for i := range junk {
			junk[i] = byte(r.IntN(256))
		}
		nc.Write(wsframe.Client(true, 2, junk))
		// Junk is refused with an Error (the session lives on) or, when
		// the child cannot read it as a request at all, a FatalError and
		// 1008; the client then closes.
		nc.Write(wsframe.Client(true, 8, []byte{3, 232}))
		want = []int{CloseProtocol, CloseNormal}
	}
	nc.SetReadDeadline(time.Now().Add(time.Minute))
	code := 0
	for {
		op, p, err := wsframe.Read(br)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				c.failf("garbage: the server did not end the session")
			}
			break
		}
		if op == 8 && len(p) >= 2 {
			code = int(binary.BigEndian.Uint16(p))
			break
		}
	}
	for _, w := range want {
		if code == w {
			return
		}
	}
	if code == CloseWorkerFailed && c.kills.Load() > kills || code == CloseDrain && c.drains.Load() > drains {
		return
	}
	if code == 0 && c.drains.Load() > drains {
		return
	}
	c.failf("garbage: closed with %d, want one of %v", code, want)
}

// greedyClient holds its quota of sessions and asks for one more, which
// must be refused with 429 client_quota.
func (c *chaos) greedyClient(r *rand.Rand) {
	ctx, cancel := context.WithTimeout(c.ctx, time.Minute)
	defer cancel()
	var held []*ws.Conn
	defer func() {
		for _, h := range held {
			h.Close()
		}
	}()
	opts := ws.DialOptions{Header: bearerHeader(token("greedy"))}
	url := c.url() // one server: a drain may put another in its place
	for range 2 {
		h, err := ws.Dial(ctx, url, opts)
		if err != nil {
			return // full, draining or ended: try again
		}
		held = append(held, h)
	}
	c.greedy.Add(1)
	_, err := ws.Dial(ctx, url, opts)
	var de *ws.DialError
	switch {
	case err == nil:
		c.failf("greedy: a third session was admitted under a quota of 2")
	case errors.As(err, &de) && (de.StatusCode == http.StatusTooManyRequests && de.Reason == ReasonClientQuota ||
		de.StatusCode == http.StatusServiceUnavailable || de.StatusCode == 0):
	case ctx.Err() != nil:
	default:
		c.failf("greedy: third dial: %v", err)
	}
	time.Sleep(time.Duration(r.IntN(300)) * time.Millisecond)
}

// revoked opens a session, has its token revoked (SetTokens without it)
// and goes on: an open session keeps running, a new upgrade with the
// token is refused with 401; the token is then restored.
func (c *chaos) revoked(r *rand.Rand) {
	kills, drains := c.kills.Load(), c.drains.Load()
	ts := c.server()
	ctx, cancel := context.WithTimeout(c.ctx, time.Minute)
	defer cancel()
	// Its own forwarded address: the failed logins it makes on purpose
	// throttle that address, not the other clients'.
	h := bearerHeader(token("fleeting"))
	h.Set("X-Forwarded-For", "10.8.0.1")
	l := session.RemoteLauncher{URL: ts.URL, NoResume: true, Dial: ws.DialOptions{Header: h}}
	s, err := session.Start(ctx, session.Launch{ProtocolVersion: 4, Launcher: l}, session.Config{Logger: quiet})
	if err != nil {
		var de *ws.DialError
		if errors.As(err, &de) && de.Reason == ReasonAuthThrottled {
			err = nil // its own doing
		}
		if err := c.explained(err, kills, drains); err != nil {
			c.failf("revoked: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
		return
	}
	defer s.Close()
	without, err := ParseTokens(strings.NewReader(strings.ReplaceAll(chaosTokens, "fleeting:", "#fleeting:")))
	if err != nil {
		c.failf("revoked: %v", err)
		return
	}
	full := ts.tokens.Load()
	ts.SetTokens(without)
	defer ts.SetTokens(full)
	c.revokes.Add(1)
	n := r.IntN(1000)
	code, want, _ := chaosProgram(n)
	res, err := s.Run(ctx, code, session.WithFunctions(bumpRegistry()))
	switch {
	case err != nil:
		if err := c.explained(err, kills, drains); err != nil {
			c.failf("revoked: the open session: %v", err)
		}
	case res.Repr() != strconv.Itoa(want):
		c.failf("revoked: got %s, want %d", res.Repr(), want)
	}
	_, err = ws.Dial(ctx, ts.URL, l.Dial)
	var de *ws.DialError
	switch {
	case err == nil:
		c.failf("revoked: a revoked token was admitted")
	case errors.As(err, &de) && (de.StatusCode == http.StatusUnauthorized || de.Reason == ReasonAuthThrottled ||
		(de.StatusCode == http.StatusServiceUnavailable || de.StatusCode == 0) && c.drains.Load() > drains):
	case ctx.Err() != nil:
	default:
		c.failf("revoked: dial with a revoked token: %v", err)
	}
	time.Sleep(time.Duration(r.IntN(200)) * time.Millisecond)
}

// badToken dials with a wrong, missing or revoked token from one of a few
// forwarded addresses: 401, or 429 auth_throttled once the address has
// failed too often.
func (c *chaos) badToken(r *rand.Rand) {
	h := http.Header{"X-Forwarded-For": {"10.9.0." + strconv.Itoa(r.IntN(4))}}
	switch r.IntN(3) {
	case 0:
		h.Set("Authorization", "Bearer tok-nobody-0123456789abc")
	case 1:
	case 2:
		h.Set("Authorization", "Bearer "+token("good0")+"x")
	}
	ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
	defer cancel()
	conn, err := ws.Dial(ctx, c.url(), ws.DialOptions{Header: h})
	var de *ws.DialError
	switch {
	case err == nil:
		conn.Close()
		c.failf("badToken: admitted with a bad token")
	case errors.As(err, &de) && (de.StatusCode == http.StatusUnauthorized ||
		de.StatusCode == http.StatusTooManyRequests && de.Reason == ReasonAuthThrottled ||
		de.StatusCode == http.StatusServiceUnavailable || de.StatusCode == 0):
		c.badTok.Add(1)
	case ctx.Err() != nil:
	default:
		c.failf("badToken: %v", err)
	}
	time.Sleep(time.Duration(20+r.IntN(100)) * time.Millisecond)
}

// slowLoris trickles an upgrade's headers: the server must drop it at its
// header timeout.
func (c *chaos) slowLoris(r *rand.Rand) {
	nc, err := net.DialTimeout("tcp", c.addr(), 10*time.Second)
	if err != nil {
		time.Sleep(50 * time.Millisecond)
		return
	}
	defer nc.Close()
	c.loris.Add(1)
	io.WriteString(nc, "GET / HTTP/1.1\r\nHost: localhost\r\n")
	start := time.Now()
	for i := 0; ; i++ {
		if c.ctx.Err() != nil {
			return
		}
		time.Sleep(time.Duration(100+r.IntN(200)) * time.Millisecond)
		if _, err := io.WriteString(nc, "X-Slow-"+strconv.Itoa(i)+": 1\r\n"); err != nil {
			break
		}
		if time.Since(start) > time.Minute {
			c.failf("slowLoris: headers trickled for a minute without the server dropping them")
			return
		}
	}
}
