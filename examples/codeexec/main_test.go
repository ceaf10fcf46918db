package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/session"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newTestServer(t *testing.T) *httptest.Server {
	t.Helper()
	testenv.Worker(t)
	log := slog.New(slog.DiscardHandler)
	p, err := pool.New(context.Background(), pool.Config{MinWorkers: 1, MaxWorkers: 2, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(newServer(p, log).handler())
	t.Cleanup(func() {
		ts.Close()
		p.Close(context.Background())
	})
	return ts
}

func post(t *testing.T, ts *httptest.Server, body string) (int, runResponse) {
	t.Helper()
	resp, err := http.Post(ts.URL+"/run", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out runResponse
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, out
}

func TestRun(t *testing.T) {
	ts := newTestServer(t)
	code, r := post(t, ts, `{"code": "print('hi')\nu = lookup_user(user_id=2)\n{'name': u['name'].upper(), 'n': len(xs) + cfg['k'], 'when': None}",
		"inputs": {"xs": [1, 2, 3], "cfg": {"k": 10}}}`)
	if code != 200 || string(r.Result) != `{"name":"GRACE","n":13,"when":null}` || r.Stdout != "hi\n" || r.Error != nil {
		t.Fatalf("%d %+v", code, r)
	}

	// What the code does is an error object, never a failed request.
	for body, want := range map[string]string{
		`{"code": "lookup_user(9)"}`:                            "RuntimeError: no user 9",
		`{"code": "1 / 0"}`:                                     "ZeroDivisionError: division by zero",
		`{"code": "while True: pass", "timeout_ms": 300}`:       "TimeoutError: ",
		`{"code": "'x' * 10**9"}`:                               "MemoryError: memory limit exceeded",
		`{"code": "lookup_user('a')", "type_check": true}`:      "TypeCheckError: error[invalid-argument-type]",
		`{"code": "lookup_user(1)['nam']", "type_check": true}`: "TypeCheckError: error[invalid-key]",
		`{"code": "x = [0] * 10**5\nwhile True: x = x + x"}`:    "MemoryError",
		`{"code": "b'x' * (40 << 20)"}`:                         "WorkerLost: the worker exceeded its memory limit",
	} {
		code, r := post(t, ts, body)
		if code != 200 || r.Error == nil || !strings.HasPrefix(r.Error.Type+": "+r.Error.Message, want) {
			t.Errorf("%s: %d %+v", body, code, r.Error)
		}
	}
	// A value JSON cannot hold comes back as its repr.
	if _, r := post(t, ts, `{"code": "float('nan')"}`); string(r.Result) != "null" || r.Repr != "nan" {
		t.Errorf("nan: %+v", r)
	}
	// Output is capped.
	if _, r := post(t, ts, `{"code": "for i in range(20000): print('x' * 10)"}`); !r.Truncated || len(r.Stdout) != maxStdout {
		t.Errorf("stdout: %d bytes, truncated %v", len(r.Stdout), r.Truncated)
	}
	// The service still serves after all that.
	if _, r := post(t, ts, `{"code": "sum(range(10))"}`); string(r.Result) != "45" {
		t.Fatalf("after errors: %+v", r)
	}
	if code, _ := post(t, ts, `{"code": 1}`); code != http.StatusBadRequest {
		t.Fatalf("bad body: %d", code)
	}
}

func TestStubs(t *testing.T) {
	ts := newTestServer(t)
	resp, err := http.Get(ts.URL + "/stubs")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	// The service's User type, json tags and all, is a TypedDict.
	want := "class User(TypedDict):\n    name: str\n    langs: NotRequired[list[str]]\n" +
		"def lookup_user(user_id: int) -> User:\n    \"\"\"The user with this id.\"\"\"\n"
	if !strings.HasSuffix(string(b), want) {
		t.Fatalf("%q", b)
	}
}

// The stop comes once the service says it is serving: a fixed pause
// before it (200ms) was, under load, shorter than the pool's start, and
// the run then ended with the start's context error (exit 1).
func TestServeAndStop(t *testing.T) {
	testenv.Worker(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := &watchWriter{want: "codeexec: serving", seen: make(chan struct{})}
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"-listen", "127.0.0.1:0", "-workers", "1"}, log) }()
	select {
	case <-log.seen:
	case code := <-done:
		t.Fatalf("exit %d before serving; log:\n%s", code, log)
	case <-time.After(time.Minute):
		t.Fatalf("not serving after a minute; log:\n%s", log)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("did not stop")
	}
}

// watchWriter keeps what is written to it and closes seen once that
// holds want.
type watchWriter struct {
	mu   sync.Mutex
	b    strings.Builder
	want string
	seen chan struct{}
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.b.String(), w.want)
	w.b.Write(p)
	if !had && strings.Contains(w.b.String(), w.want) {
		close(w.seen)
	}
	return len(p), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// A timeout_ms past what a time.Duration holds is capped at maxTimeout
// like any other large one: the milliseconds were multiplied into a
// Duration first, which overflowed to a negative timeout, so the code
// failed at once with a TimeoutError it never ran into.
func TestHugeTimeoutIsCapped(t *testing.T) {
	ts := newTestServer(t)
	for _, ms := range []string{"9223372036854775807", "9300000000000", "1000000000000000"} {
		code, r := post(t, ts, `{"code": "6 * 7", "timeout_ms": `+ms+`}`)
		if code != 200 || r.Error != nil || string(r.Result) != "42" {
			t.Errorf("timeout_ms %s: %d %+v %+v", ms, code, r, r.Error)
		}
	}
}

// A run that cannot get a worker before its timeout is the service's
// failure (503), not the code's: the checkout's *pool.ExhaustedError
// matches context.DeadlineExceeded too, and was answered 200 with a
// TimeoutError saying the code ran past its limit, code that never ran.
func TestNoWorkerInTimeIsUnavailable(t *testing.T) {
	testenv.Worker(t)
	log := slog.New(slog.DiscardHandler)
	p, err := pool.New(context.Background(), pool.Config{MinWorkers: 1, MaxWorkers: 1, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	srv := newServer(p, log)
	srv.funcs = session.NewRegistry().MustRegister("hold", func(ctx context.Context) (int, error) {
		close(entered)
		select {
		case <-release:
			return 1, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	})
	ts := httptest.NewServer(srv.handler())
	t.Cleanup(func() {
		ts.Close()
		p.Close(context.Background())
	})

	// The only worker is held by a run until the second request is answered.
	held := make(chan string, 1)
	go func() {
		resp, err := http.Post(ts.URL+"/run", "application/json", strings.NewReader(`{"code": "hold()", "timeout_ms": 30000}`))
		if err != nil {
			held <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		held <- resp.Status + " " + string(b)
	}()
	select {
	case <-entered:
	case r := <-held:
		t.Fatalf("the holding run ended before it held the worker: %s", r)
	}
	code, r := post(t, ts, `{"code": "6 * 7", "timeout_ms": 200}`)
	close(release)
	if code != http.StatusServiceUnavailable {
		t.Errorf("no worker in time: %d %+v %+v, want 503", code, r, r.Error)
	}
	if r := <-held; !strings.HasPrefix(r, "200 OK {\"result\":1,") {
		t.Errorf("holding run: %s", r)
	}
}
