// Command codeexec is a code-execution backend in one file: an HTTP
// service that runs untrusted Python (say, written by a model) in a pool of
// crash-isolated workers and answers in JSON.
//
//	POST /run    {"code": "...", "inputs": {"name": <any JSON>}, "timeout_ms": 2000, "type_check": true}
//	          -> {"result": <JSON or null>, "repr": "...", "stdout": "...", "error": {...}, "duration_ms": 1.2}
//	GET  /stubs  the host functions as Python stubs, for the model's prompt
//
// Inputs reach the sandbox as json.loads would read them, the result comes
// back as json.dumps would write it (with its repr beside it, for values
// JSON cannot hold), output is captured up to a cap, and a Python error,
// a type-check failure, a timeout or a worker lost to a memory bomb is an
// "error" object in a 200 answer: the service itself never fails for what
// the code does. Every run gets a fresh worker state (pool.Run) and a
// 64 MiB heap.
//
//	go run ./examples/codeexec -listen :8080 &
//	curl -s localhost:8080/run -d '{"code": "lookup_user(user_id=2)[\"name\"].upper()"}'
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"time"

	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/session"
)

const (
	maxBody        = 1 << 20
	maxStdout      = 64 << 10
	defaultTimeout = 5 * time.Second
	maxTimeout     = 30 * time.Second
)

type runRequest struct {
	Code      string                     `json:"code"`
	Inputs    map[string]json.RawMessage `json:"inputs,omitempty"`
	TimeoutMS int                        `json:"timeout_ms,omitempty"`
	TypeCheck bool                       `json:"type_check,omitempty"`
}

type runError struct {
	Type      string `json:"type"`
	Message   string `json:"message"`
	Traceback string `json:"traceback,omitempty"`
}

type runResponse struct {
	Result     json.RawMessage `json:"result"`
	Repr       string          `json:"repr,omitempty"`
	Stdout     string          `json:"stdout"`
	Truncated  bool            `json:"stdout_truncated,omitempty"`
	Error      *runError       `json:"error,omitempty"`
	DurationMS float64         `json:"duration_ms"`
}

// hostFunctions are what the sandbox may call: a stand-in for the
// service's own data.
// User is the service's own API type: the sandbox sees it as a dict with
// the keys of its JSON, and its stub as a TypedDict.
type User struct {
	Name  string   `json:"name"`
	Langs []string `json:"langs,omitempty"`
}

func hostFunctions() *session.Registry {
	users := map[int]User{1: {Name: "ada", Langs: []string{"en"}}, 2: {Name: "grace", Langs: []string{"en", "fr"}}}
	return session.NewRegistry().
		MustRegister("lookup_user", func(ctx context.Context, id int) (User, error) {
			if u, ok := users[id]; ok {
				return u, nil
			}
			return User{}, fmt.Errorf("no user %d", id)
		}, session.Params("user_id"), session.Doc("The user with this id."))
}

// capped is an io.Writer keeping the first max bytes.
type capped struct {
	buf       bytes.Buffer
	max       int
	truncated bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); len(p) > room {
		c.buf.Write(p[:max(room, 0)])
		c.truncated = true
		return len(p), nil
	}
	return c.buf.Write(p)
}

type server struct {
	pool  *pool.Pool
	funcs *session.Registry
	stubs string
	log   *slog.Logger
}

func newServer(p *pool.Pool, log *slog.Logger) *server {
	funcs := hostFunctions()
	return &server{pool: p, funcs: funcs, stubs: funcs.Stubs(), log: log}
}

func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /run", s.run)
	mux.HandleFunc("GET /stubs", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/x-python; charset=utf-8")
		io.WriteString(w, s.stubs)
	})
	return mux
}

func (s *server) run(w http.ResponseWriter, r *http.Request) {
	var req runRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	timeout := defaultTimeout
	if req.TimeoutMS > 0 {
		// Capped before the multiplication, which overflows past 2^63 ns.
		timeout = time.Duration(min(int64(req.TimeoutMS), maxTimeout.Milliseconds())) * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()

	var inputs []session.Input
	for _, name := range slices.Sorted(maps.Keys(req.Inputs)) {
		inputs = append(inputs, session.Input{Name: name, Value: req.Inputs[name]})
	}
	out := &capped{max: maxStdout}
	cfg := session.Config{
		Print:  session.Writers(out, out),
		Limits: session.Limits{MaxMemory: 64 << 20},
	}
	if req.TypeCheck {
		cfg.TypeCheck, cfg.TypeCheckStubs = true, s.stubs
	}
	start := time.Now()
	res, err := s.pool.Run(ctx, cfg, req.Code, session.WithFunctions(s.funcs), session.WithInputs(inputs...))
	resp := runResponse{Result: json.RawMessage("null"), DurationMS: float64(time.Since(start).Microseconds()) / 1000}
	if err == nil {
		resp.Repr = res.Repr()
		if text, jerr := res.MarshalJSON(); jerr == nil {
			resp.Result = text
		}
	} else if resp.Error = describe(err); resp.Error == nil {
		// Not the code's doing: no worker could be had, or the pool is
		// closing.
		s.log.Error("codeexec: run failed", slog.Any("error", err))
		http.Error(w, "unavailable: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	resp.Stdout, resp.Truncated = out.buf.String(), out.truncated
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// describe turns what the code caused into an error object, or nil for a
// failure of the service.
func describe(err error) *runError {
	var pe *session.PythonError
	var tc *session.TypeCheckError
	var te *session.TimeoutError
	switch {
	case errors.Is(err, pool.ErrExhausted), errors.Is(err, pool.ErrClosed):
		// Before the timeout case: a checkout that ran out of time
		// matches context.DeadlineExceeded too, but no code ran.
		return nil
	case errors.As(err, &pe):
		return &runError{Type: pe.Type(), Message: pe.Exception.Msg(), Traceback: pe.Traceback()}
	case errors.As(err, &tc):
		return &runError{Type: "TypeCheckError", Message: tc.Diagnostics}
	case errors.As(err, &te), errors.Is(err, context.DeadlineExceeded):
		return &runError{Type: "TimeoutError", Message: "the code ran past its time limit and its worker was stopped"}
	case !session.Survives(err):
		// The worker died of the code (an allocation past its heap, a
		// crash): the pool has replaced it.
		return &runError{Type: "WorkerLost", Message: err.Error()}
	}
	return &runError{Type: "Error", Message: err.Error()}
}

func run(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("codeexec", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "address to serve on")
	workers := fs.Int("workers", 4, "most workers in the pool")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	p, err := pool.New(ctx, pool.Config{MinWorkers: 1, MaxWorkers: *workers, CheckoutTimeout: 10 * time.Second, Logger: log})
	if err != nil {
		fmt.Fprintln(stderr, "codeexec:", err)
		return 1
	}
	defer p.Close(context.Background())
	srv := &http.Server{Addr: *listen, Handler: newServer(p, log).handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	log.Info("codeexec: serving", slog.String("addr", *listen))
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "codeexec:", err)
		return 1
	}
	return 0
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stderr)
	stop() // before os.Exit, which runs no deferred calls
	os.Exit(code)
}
