package session_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/internal/servertest"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/value"
	"github.com/gomonty/monty/worker"
)

// scripted is a protocol-4 WebSocket endpoint whose answers a test
// writes: reply returns the events that answer the n-th request of a
// connection (nil: answer nothing, keep reading). It records every
// request kind received and how each connection ended.
type scripted struct {
	url   string
	srv   *httptest.Server
	wg    sync.WaitGroup
	reply func(req message.Request) []message.Event

	mu     sync.Mutex
	got    []message.RequestKind
	tps    []string // each request's traceparent, "" for none
	ends   []error
	closed chan struct{} // one send per connection end
}

func newScripted(t *testing.T, reply func(req message.Request) []message.Event) *scripted {
	t.Helper()
	return newScriptedAt(t, 4, reply)
}

// newScriptedAt is newScripted speaking protocol version v.
func newScriptedAt(t *testing.T, v uint32, reply func(req message.Request) []message.Event) *scripted {
	t.Helper()
	cd, _ := codec.ForVersion(v)
	sc := &scripted{reply: reply, closed: make(chan struct{}, 16)}
	sc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sc.wg.Add(1)
		defer sc.wg.Done()
		c, err := ws.Accept(w, r, ws.AcceptOptions{})
		if err != nil {
			return
		}
		defer c.Close()
		for {
			body, err := c.ReadFrame()
			if err != nil {
				sc.mu.Lock()
				sc.ends = append(sc.ends, err)
				sc.mu.Unlock()
				sc.closed <- struct{}{}
				return
			}
			req, err := cd.DecodeRequest(body, codec.Limits{})
			if err != nil {
				t.Errorf("scripted endpoint: %v", err)
				return
			}
			sc.mu.Lock()
			sc.got = append(sc.got, req.Body.RequestKind())
			tp := ""
			if req.TraceParent != nil {
				tp = *req.TraceParent
			}
			sc.tps = append(sc.tps, tp)
			sc.mu.Unlock()
			for _, ev := range sc.reply(req.Body) {
				b, err := cd.AppendEvent(nil, &message.ChildEvent{Body: ev})
				if err != nil {
					t.Errorf("scripted endpoint: %v", err)
					return
				}
				if err := c.WriteFrame(b); err != nil {
					return
				}
			}
		}
	}))
	sc.url = "ws" + strings.TrimPrefix(sc.srv.URL, "http") + "/"
	t.Cleanup(func() {
		sc.srv.Close()
		sc.wg.Wait()
	})
	return sc
}

func (sc *scripted) requests() []message.RequestKind {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return append([]message.RequestKind(nil), sc.got...)
}

// waitEnd waits for a connection to end and returns how.
func (sc *scripted) waitEnd(t *testing.T) error {
	t.Helper()
	select {
	case <-sc.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the scripted endpoint's connection did not end")
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.ends[len(sc.ends)-1]
}

// drainer answers Configure with Ok, Feed with the call ask() (call id
// 1), and anything else with a ShutdownDump carrying a dump: a server
// that starts draining while the session is suspended.
func drainer(req message.Request) []message.Event {
	switch req.(type) {
	case *message.Configure:
		return []message.Event{&message.Ok{}}
	case *message.Feed:
		return []message.Event{&message.FunctionCall{FunctionName: "ask", CallID: 1}}
	}
	dump := []byte("opaque signed dump")
	return []message.Event{&message.ShutdownDump{Dump: &dump}}
}

// A resumed suspended session must re-announce the very call that was
// interrupted: anything else ends the session with the ShutdownError
// (the dump inside) and the interrupted answer is never re-sent. The
// matching case shows the answer is re-sent when the call is the same.
func TestRemoteResumeChecksTheCall(t *testing.T) {
	id := value.UUID{1, 2, 3}
	for _, c := range []struct {
		name  string
		load  message.Event // the new replica's answer to Load
		match bool
	}{
		{"same call", &message.FunctionCall{FunctionName: "ask", CallID: 1}, true},
		{"other function", &message.FunctionCall{FunctionName: "tell", CallID: 1}, false},
		{"other call id", &message.FunctionCall{FunctionName: "ask", CallID: 2}, false},
		{"method of an object", &message.FunctionCall{FunctionName: "ask", CallID: 1, ObjectID: &id}, false},
		{"an OS call", &message.OsCall{CallID: 1, Op: message.OpExists, Path: "/x"}, false},
		{"a name lookup", &message.NameLookup{Name: "ask"}, false},
		{"idle", &message.Ok{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := newScripted(t, drainer)
			b := newScripted(t, func(req message.Request) []message.Event {
				switch req.(type) {
				case *message.Configure:
					return []message.Event{&message.Ok{}}
				case *message.Load:
					return []message.Event{c.load}
				case *message.ResumeCall:
					g := value.Graph{}
					return []message.Event{&message.Complete{Value: g.Add(value.Int(42)), Values: g}}
				}
				return nil
			})
			s := startRemote(t, session.RemoteLauncher{URL: a.url, Pick: func() string { return b.url }}, session.Config{})
			ctx := context.Background()
			ev, err := s.Feed(ctx, "ask()")
			if err != nil {
				t.Fatal(err)
			}
			if fc, ok := ev.Body.(*message.FunctionCall); !ok || fc.CallID != 1 {
				t.Fatalf("want ask(), got %v", ev.Body)
			}
			ev, err = s.Resume(ctx, session.Return(7))
			if c.match {
				if err != nil || ev.Body.EventKind() != message.KindComplete || s.Resumed() != 1 {
					t.Fatalf("same call: %v %v (resumes %d)", ev, err, s.Resumed())
				}
				if got := b.requests(); len(got) != 3 || got[2] != message.KindResumeCall {
					t.Fatalf("the new replica got %v, want Configure, Load, ResumeCall", got)
				}
				return
			}
			var se *session.ShutdownError
			if !errors.As(err, &se) || string(se.Dump) != "opaque signed dump" || se.Resume == nil ||
				!strings.Contains(se.Resume.Error(), "not the interrupted suspension") && !strings.Contains(se.Resume.Error(), "answered Load") {
				t.Fatalf("want the ShutdownError with the dump and the call mismatch, got %v", err)
			}
			if !errors.Is(s.Cause(), session.ErrShutdown) || s.Resumed() != 0 {
				t.Fatalf("cause %v, resumes %d", s.Cause(), s.Resumed())
			}
			b.waitEnd(t)
			if got := b.requests(); len(got) != 2 || got[0] != message.KindConfigure || got[1] != message.KindLoad {
				t.Fatalf("the new replica got %v, want only Configure and Load", got)
			}
		})
	}
}

// A replica that accepts the upgrade and never answers cannot hold a
// resume (redial, Configure, Load) past Config.StartTimeout, nor past the
// context of the interrupted request; either way the session ends with
// the ShutdownError and the silent replica sees a Close frame.
func TestRemoteResumeIsBounded(t *testing.T) {
	for _, c := range []struct {
		name    string
		timeout time.Duration // Config.StartTimeout
		ctx     time.Duration // the request's context
		is      error
	}{
		// The bound must pass in full (the silent replica never answers),
		// and it also covers the start on the first replica and the dial
		// and upgrade before the Configure the silent replica is to see:
		// at 300ms, a loaded machine ran out of it before those now and
		// then ("did not answer Configure within 300ms", "the silent
		// replica got []").
		{"StartTimeout", 2 * time.Second, time.Minute, session.ErrTimeout},
		{"context", time.Minute, 2 * time.Second, context.DeadlineExceeded},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := newScripted(t, drainer)
			silent := newScripted(t, func(message.Request) []message.Event { return nil })
			s := startRemote(t, session.RemoteLauncher{URL: a.url, Pick: func() string { return silent.url }},
				session.Config{StartTimeout: c.timeout})
			if _, err := s.Feed(context.Background(), "ask()"); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), c.ctx)
			defer cancel()
			start := time.Now()
			_, err := s.Resume(ctx, session.Return(7))
			took := time.Since(start)
			var se *session.ShutdownError
			if !errors.As(err, &se) || len(se.Dump) == 0 || !errors.Is(err, c.is) {
				t.Fatalf("want a ShutdownError matching %v, got %v", c.is, err)
			}
			if c.is == session.ErrTimeout {
				var ste *session.StartTimeoutError
				if !errors.As(err, &ste) || ste.Timeout != c.timeout {
					t.Fatalf("want a *StartTimeoutError of %v inside, got %v", c.timeout, err)
				}
			}
			if took > 20*time.Second {
				t.Fatalf("the resume took %v", took)
			}
			var ce *ws.CloseError
			if end := silent.waitEnd(t); !errors.As(end, &ce) {
				t.Fatalf("the silent replica saw %v, not a Close frame", end)
			}
			if got := silent.requests(); len(got) != 1 || got[0] != message.KindConfigure {
				t.Fatalf("the silent replica got %v", got)
			}
		})
	}
}

// The version negotiated with an endpoint is cached per URL: the first
// unpinned session to the real server pays for protocol 5's refusal with
// a second dial, the next starts at once with the cached version, and a
// different URL negotiates afresh.
func TestRemoteNegotiationCachedPerURL(t *testing.T) {
	_, url := servertest.Start(t, nil)
	_, other := servertest.Start(t, nil)
	var dials []string
	var mu sync.Mutex
	l := session.RemoteLauncher{URL: url, OnDial: func(u string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			dials = append(dials, u)
		}
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := func(l session.RemoteLauncher) session.Negotiation {
		t.Helper()
		s, err := session.Start(ctx, session.Launch{Launcher: l}, session.Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if r, err := s.Run(ctx, "6 * 7"); err != nil || r.Repr() != "42" {
			t.Fatalf("run: %v %v", r, err)
		}
		return s.Negotiation()
	}
	first := start(l)
	if first.FromCache || first.Attempts < 1 || first.Version == 0 {
		t.Fatalf("first negotiation %+v", first)
	}
	second := start(l)
	if !second.FromCache || second.Attempts != 1 || second.Version != first.Version {
		t.Fatalf("second negotiation %+v (first %+v)", second, first)
	}
	mu.Lock()
	n := len(dials)
	mu.Unlock()
	if n != first.Attempts+1 {
		t.Fatalf("%d dials for negotiations %+v and %+v", n, first, second)
	}
	l.URL = other
	if third := start(l); third.FromCache {
		t.Fatalf("another URL used the cache: %+v", third)
	}
}

// quotaServer refuses our protocol-5 Configure on its first connection,
// then answers the next refused upgrades with 429 and reason (as a server
// whose per-client cap still counts the first connection would, with
// client_quota), then serves a protocol-4 session that only configures.
func quotaServer(t *testing.T, refusals int, reason string) (url string, conns func() int) {
	t.Helper()
	return refusingServer(t, refusals, http.StatusTooManyRequests, reason)
}

// refusingServer is quotaServer refusing with status.
func refusingServer(t *testing.T, refusals, status int, reason string) (url string, conns func() int) {
	t.Helper()
	c5, _ := codec.ForVersion(5)
	c4, _ := codec.ForVersion(4)
	var (
		mu sync.Mutex
		n  int
		wg sync.WaitGroup
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wg.Add(1)
		defer wg.Done()
		mu.Lock()
		n++
		i := n
		mu.Unlock()
		if i > 1 && i <= 1+refusals {
			w.Header().Set("Retry-After", "1")
			http.Error(w, reason, status)
			return
		}
		c, err := ws.Accept(w, r, ws.AcceptOptions{})
		if err != nil {
			return
		}
		defer c.Close()
		cd := c4
		if i == 1 {
			cd = c5
		}
		for {
			body, err := c.ReadFrame()
			if err != nil {
				return
			}
			if _, err := cd.DecodeRequest(body, codec.Limits{}); err != nil {
				t.Errorf("quota server: %v", err)
				return
			}
			var ev message.Event = &message.Ok{}
			if i == 1 {
				refusal := &protocol.UnsupportedVersionError{Requested: 5, Supported: protocol.VersionRange{Min: 2, Max: 4}}
				ev = &message.FatalError{Message: refusal.Error()}
			}
			b, err := cd.AppendEvent(nil, &message.ChildEvent{Body: ev})
			if err != nil {
				t.Errorf("quota server: %v", err)
				return
			}
			if err := c.WriteFrame(b); err != nil || i == 1 {
				return
			}
		}
	}))
	t.Cleanup(func() {
		srv.Close()
		wg.Wait()
	})
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/", func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// A downgrade redial that a server refuses for capacity (its slot still
// held by the connection that refused our version) is retried briefly,
// and such a refusal reaches OnDial only when it is the final outcome.
func TestRemoteDowngradeWaitsOutOwnQuota(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type outcome struct {
		s        *session.Session
		err      error
		reported []error // OnDial's errors
		conns    int     // requests the server saw
	}
	start := func(refusals int, reason string, status ...int) outcome {
		url, conns := quotaServer(t, refusals, reason)
		if len(status) > 0 {
			url, conns = refusingServer(t, refusals, status[0], reason)
		}
		var (
			mu sync.Mutex
			o  outcome
		)
		l := session.RemoteLauncher{URL: url, OnDial: func(_ string, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				o.reported = append(o.reported, err)
			}
		}}
		s, err := session.Start(ctx, session.Launch{Launcher: l}, session.Config{})
		mu.Lock()
		defer mu.Unlock()
		o.s, o.err, o.conns = s, err, conns()
		return o
	}

	o := start(3, "client_quota")
	if o.err != nil {
		t.Fatalf("start after 3 refusals: %v", o.err)
	}
	defer o.s.Close()
	if neg := o.s.Negotiation(); neg.Version != 4 || neg.Attempts != 2 {
		t.Fatalf("negotiation %+v", neg)
	}
	if len(o.reported) != 0 || o.conns != 5 {
		t.Fatalf("refusals reported %v, %d connections (want 0 and 5)", o.reported, o.conns)
	}

	o = start(1000, "client_quota")
	var de *ws.DialError
	if !errors.As(o.err, &de) || de.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a quota that never frees: %v", o.err)
	}
	if len(o.reported) != 1 || !errors.As(o.reported[0], &de) || de.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("refusals reported %v (want the final 429 only)", o.reported)
	}
	if o.conns < 4 {
		t.Fatalf("only %d connections: the redial was not retried", o.conns)
	}

	// A 429 for failed logins (auth_throttled) is no slot of ours still
	// held: waiting a second does not end it, so it is not retried, and
	// OnDial hears of it.
	o = start(1000, "auth_throttled")
	if !errors.As(o.err, &de) || de.StatusCode != http.StatusTooManyRequests || de.Reason != "auth_throttled" {
		t.Fatalf("a throttled redial: %v", o.err)
	}
	if len(o.reported) != 1 || o.conns != 2 {
		t.Fatalf("throttled redial: refusals reported %v, %d connections (want 1 and 2)", o.reported, o.conns)
	}

	// Nor is a 503 from a draining server, or from one whose worker pool
	// is unhealthy: their Retry-After is the drain grace or the restart
	// window, far beyond the short pauses.
	for _, reason := range []string{"draining", "unhealthy"} {
		o = start(1000, reason, http.StatusServiceUnavailable)
		if !errors.As(o.err, &de) || de.StatusCode != http.StatusServiceUnavailable || de.Reason != reason {
			t.Fatalf("a %s redial: %v", reason, o.err)
		}
		if len(o.reported) != 1 || o.conns != 2 {
			t.Fatalf("%s redial: refusals reported %v, %d connections (want 1 and 2)", reason, o.reported, o.conns)
		}
	}
	// A 503 for capacity is retried, as the 429 is.
	o = start(3, "capacity", http.StatusServiceUnavailable)
	if o.err != nil || o.conns != 5 || len(o.reported) != 0 {
		t.Fatalf("capacity redial: %v, %d connections, reported %v (want a session after 5, none reported)", o.err, o.conns, o.reported)
	}
	o.s.Close()
}

// A remote session resumed after a ShutdownDump keeps the sleep it has
// been charged (protocol 5): the sleep after the resume is charged on top
// of the one before it and refused past the budget, with upstream's text.
func TestRemoteResumeKeepsTotalSleep(t *testing.T) {
	sleep := func(id uint32) message.Event {
		return &message.OsCall{CallID: id, Op: message.OpSystemSleep, Seconds: 0.1}
	}
	a := newScriptedAt(t, 5, func(req message.Request) []message.Event {
		switch req.(type) {
		case *message.Configure:
			return []message.Event{&message.Ok{}}
		case *message.Feed:
			return []message.Event{sleep(1)}
		}
		dump := []byte("opaque dump")
		return []message.Event{&message.ShutdownDump{Dump: &dump}}
	})
	var abort *message.AbortFeed
	b := newScriptedAt(t, 5, func(req message.Request) []message.Event {
		switch r := req.(type) {
		case *message.Configure:
			return []message.Event{&message.Ok{}}
		case *message.Load:
			return []message.Event{sleep(1)}
		case *message.ResumeCall:
			return []message.Event{sleep(2)}
		case *message.AbortFeed:
			abort = r
			return []message.Event{&message.Error{Exception: r.Exception}}
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := session.Start(ctx, session.Launch{Launcher: session.RemoteLauncher{URL: a.url, Pick: func() string { return b.url }}, ProtocolVersion: 5},
		session.Config{Limits: session.Limits{MaxTotalSleep: 150 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Run(ctx, "time.sleep(0.1); time.sleep(0.1)")
	var pe *session.PythonError
	if !errors.As(err, &pe) || pe.Exception.Msg() != "sleep limit exceeded: 200ms > 150ms" || abort == nil || s.Resumed() != 1 {
		t.Fatalf("got %v (abort %v, resumes %d), want the second sleep refused at 200ms > 150ms", err, abort, s.Resumed())
	}
	if got := s.Stamps().TotalSleep; got != 100*time.Millisecond {
		t.Fatalf("TotalSleep %v after the resume, want 100ms", got)
	}
}

// A text message from the server breaks the protocol (frames travel as
// binary messages): the session ends with a *ProtocolError, as for a
// message over the cap, not with a DisconnectedError claiming the server
// dropped the connection without a Close frame (it was this side that
// closed it, with a policy-violation code).
func TestRemoteTextMessageIsProtocolError(t *testing.T) {
	cd, _ := codec.ForVersion(4)
	ok, err := cd.AppendEvent(nil, &message.ChildEvent{Body: &message.Ok{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		if _, _, err := c.Read(ctx); err != nil { // Configure
			return
		}
		c.Write(ctx, websocket.MessageBinary, ok)
		if _, _, err := c.Read(ctx); err != nil { // Feed
			return
		}
		c.Write(ctx, websocket.MessageText, []byte(`{"kind":"complete"}`))
		c.Read(ctx) // until the client closes
	}))
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/"
	s, err := session.Start(context.Background(), session.Launch{Launcher: session.RemoteLauncher{URL: url}, ProtocolVersion: 4}, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Feed(context.Background(), "1")
	var pe *session.ProtocolError
	if !errors.As(err, &pe) || !errors.Is(err, ws.ErrNotBinary) || errors.Is(err, session.ErrDisconnected) {
		t.Fatalf("Feed answered with a text message = %v, want a ProtocolError wrapping ws.ErrNotBinary", err)
	}
}

// Start bounds a remote session's dial by Config.StartTimeout, as it
// bounds the Configure handshake: an endpoint that accepts the TCP
// connection and never answers the upgrade (a hung balancer) ends the
// start with a *StartTimeoutError instead of holding it for as long as
// the caller's context allows (for ever with context.Background, which
// kept montygo run from trying its next --remote).
func TestRemoteDialBoundedByStartTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	conns := make(chan net.Conn, 1)
	go func() {
		if c, err := l.Accept(); err == nil {
			conns <- c // read nothing, answer nothing
		}
	}()
	defer func() {
		l.Close()
		select {
		case c := <-conns:
			c.Close()
		default:
		}
	}()
	url := "ws://" + l.Addr().String() + "/"
	done := make(chan error, 1)
	go func() {
		s, err := session.Start(context.Background(), session.Launch{Launcher: session.RemoteLauncher{URL: url}, ProtocolVersion: 4},
			session.Config{StartTimeout: 200 * time.Millisecond})
		if s != nil {
			s.Close()
		}
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		(<-conns).Close()
		<-done
		t.Fatal("Start waited on an upgrade that never came, past StartTimeout")
	}
	var st *session.StartTimeoutError
	var de *ws.DialError
	if !errors.As(err, &st) || !errors.As(err, &de) || !errors.Is(err, session.ErrTimeout) {
		t.Fatalf("Start = %v, want a StartTimeoutError wrapping the DialError", err)
	}
	if !strings.Contains(err.Error(), url) {
		t.Errorf("the error %q does not name the endpoint", err)
	}
}

// Close stops a resume that is dialling the next replica: the interrupted
// request returns at once (with the ShutdownError and its dump, the
// resume failed because the session closed) instead of when
// StartTimeout ends the dial, and the abandoned dial is not reported to
// OnDial as the endpoint's failure.
func TestRemoteCloseStopsAResumeDial(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns <- c // never answer the upgrade
		}
	}()
	defer func() {
		l.Close()
		for {
			select {
			case c := <-conns:
				c.Close()
			default:
				return
			}
		}
	}()
	hung := "ws://" + l.Addr().String() + "/"
	a := newScripted(t, drainer)
	var mu sync.Mutex
	var dials []error
	s := startRemote(t, session.RemoteLauncher{
		URL:  a.url,
		Pick: func() string { return hung },
		OnDial: func(url string, err error) {
			if url == hung {
				mu.Lock()
				dials = append(dials, err)
				mu.Unlock()
			}
		},
	}, session.Config{StartTimeout: time.Minute})
	if _, err := s.Feed(context.Background(), "ask()"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Resume(context.Background(), session.Return(7))
		done <- err
	}()
	c := <-conns // the resume is dialling the hung replica
	conns <- c   // closed by the deferred cleanup
	s.Close()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		l.Close()
		for len(conns) > 0 {
			(<-conns).Close()
		}
		<-done
		t.Fatal("the resume went on dialling after Close")
	}
	var se *session.ShutdownError
	if !errors.As(err, &se) || len(se.Dump) == 0 || !errors.Is(se.Resume, net.ErrClosed) {
		t.Fatalf("Resume = %v, want a ShutdownError with its dump whose resume ended with net.ErrClosed", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dials) != 0 {
		t.Fatalf("OnDial got %v for the dial Close abandoned", dials)
	}
}

// The remote errors name their endpoint without its password or token.
func TestRemoteErrorsMaskCredentials(t *testing.T) {
	const raw = "wss://alice:s3cretPassw0rd@host.example/ws?token=TOPSECRETTOKEN"
	errs := []error{
		&session.DisconnectedError{URL: raw, Code: -1},
		&session.RemoteCrashError{URL: raw, Message: "boom"},
		&session.ShutdownError{URL: raw},
		&session.StartTimeoutError{Timeout: time.Second, Err: &ws.DialError{URL: raw, Err: errors.New("dial " + raw)}},
	}
	for _, err := range errs {
		msg := err.Error()
		if strings.Contains(msg, "s3cretPassw0rd") || strings.Contains(msg, "TOPSECRETTOKEN") {
			t.Errorf("%T: %q holds a secret", err, msg)
		}
		if !strings.Contains(msg, "wss://alice:xxxxx@host.example/ws?token=xxxxx") {
			t.Errorf("%T: %q does not name the endpoint", err, msg)
		}
	}
}

// A drop with close code 4003 (the server's worker exceeded its memory
// limit) matches worker.ErrMemoryLimit, as a local worker's exit does;
// other drops do not.
func TestDisconnectedMemoryLimitMatches(t *testing.T) {
	var err error = &session.DisconnectedError{URL: "ws://h/", Code: 4003, Reason: "memory limit"}
	if !errors.Is(err, worker.ErrMemoryLimit) || !errors.Is(err, session.ErrDisconnected) {
		t.Fatalf("4003: %v", err)
	}
	for _, code := range []int{-1, 1000, 1011, 4000, 4001, 4002, 4004} {
		err = &session.DisconnectedError{URL: "ws://h/", Code: code}
		if errors.Is(err, worker.ErrMemoryLimit) || !errors.Is(err, session.ErrDisconnected) {
			t.Fatalf("code %d: %v", code, err)
		}
		// 4002 and 4004: the server killed its worker for running a turn
		// too long, as the local watchdog does (a *TimeoutError); an idle
		// or expired connection (4000, 4001) is not the code's timeout.
		if timeout := code == 4002 || code == 4004; errors.Is(err, session.ErrTimeout) != timeout ||
			errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("code %d: errors.Is(ErrTimeout) = %v", code, !timeout)
		}
	}
}

// A request answered with a ShutdownDump on every connection it resumes
// on (replicas that each drain at once, or a hostile server) stops after
// a few resumes with the ShutdownError, rather than resuming, one level of
// recursion deeper each time, until its context ends: with none, for
// ever, until the stack overflowed.
func TestRemoteResumeChainIsBounded(t *testing.T) {
	sc := newScripted(t, func(req message.Request) []message.Event {
		switch req.(type) {
		case *message.Configure, *message.Load:
			return []message.Event{&message.Ok{}}
		}
		dump := []byte("dump")
		return []message.Event{&message.ShutdownDump{Dump: &dump}}
	})
	s := startRemote(t, session.RemoteLauncher{URL: sc.url}, session.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := s.Feed(ctx, "1")
	var se *session.ShutdownError
	if !errors.As(err, &se) || se.Resume == nil || ctx.Err() != nil {
		t.Fatalf("feed = %v (context: %v), want a ShutdownError with the resume's failure", err, ctx.Err())
	}
	if n := s.Resumed(); n < 1 || n > 10 {
		t.Fatalf("%d resumes for one request", n)
	}
}
