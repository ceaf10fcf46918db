package pool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/worker"
)

// A pool of warm workers: check a session out, run code, give it back.
// (Not checked by go test: the worker id it prints varies.)
func ExampleNew() {
	ctx := context.Background()
	p, err := pool.New(ctx, pool.Config{MinWorkers: 2, MaxWorkers: 4, CheckoutTimeout: 5 * time.Second})
	if err != nil {
		fmt.Println("no pool:", err)
		return
	}
	defer p.Close(ctx)

	s, err := p.Checkout(ctx, session.Config{Limits: session.Limits{MaxDuration: time.Second}})
	switch {
	case errors.Is(err, pool.ErrExhausted):
		fmt.Println("all workers busy")
		return
	case err != nil:
		fmt.Println(err)
		return
	}
	defer s.Close() // reset and back to the pool, or destroyed if unclean
	r, err := s.Run(ctx, "sum(range(10))")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Repr(), "on worker", s.WorkerID())
}

// The README's quickstart: a pool, a Go function the sandbox may call, and
// a run whose result comes back as Python's repr. The README's copy is a
// main package that panics where this prints.
func Example_quickstart() {
	// A pool of crash-isolated workers, two kept warm; one pool serves the
	// whole program.
	p, err := pool.New(context.Background(), pool.Config{MinWorkers: 2, MaxWorkers: 4})
	if err != nil {
		fmt.Println(err) // no worker binary, or it would not start
		return
	}
	defer p.Close(context.Background())

	// Go functions the sandbox may call; arguments and results convert by
	// reflection.
	funcs := session.NewRegistry().
		MustRegister("fetch_price", func(ctx context.Context, item string) (float64, error) {
			return map[string]float64{"apple": 0.5, "pear": 0.75}[item], nil
		})

	// Each piece of work gets a deadline: it bounds the wait for a worker
	// and the run (a worker still computing at the deadline is killed).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// One session holds one worker; Close hands the worker back to the pool.
	s, err := p.Checkout(ctx, session.Config{Limits: session.Limits{MaxDuration: time.Second}})
	if err != nil {
		fmt.Println(err) // matches pool.ErrExhausted when no worker came in time
		return
	}
	defer s.Close()

	res, err := s.Run(ctx, `sum(fetch_price(x) for x in ["apple", "pear", "pear"])`,
		session.WithFunctions(funcs))
	var pe *session.PythonError
	switch {
	case errors.As(err, &pe):
		fmt.Println(pe.Traceback()) // the code raised; the session is still usable
		return
	case err != nil:
		fmt.Println(err) // the deadline, or the worker was lost (session.Survives says)
		return
	}
	fmt.Println(res.Repr())
	// Output: 2.0
}

// One pool over local workers and two remote Monty servers (`montygo
// serve`): a checkout goes to whichever has the fewest sessions out, the
// local workers first on a tie; a server that is draining, full (503,
// 429) or unreachable is skipped for a while. Remote sessions are
// single-use connections that move to the other server, state and all,
// when theirs drains. (Not run by go test: it needs the worker binary
// and the servers.)
func ExampleNew_mixed() {
	ctx := context.Background()
	token := func(context.Context) (http.Header, error) {
		return http.Header{"Authorization": {"Bearer " + os.Getenv("MONTY_TOKEN")}}, nil // read at every dial
	}
	p, err := pool.New(ctx, pool.Config{
		MinWorkers: 1,
		MaxWorkers: 2,
		Endpoints: []pool.Endpoint{
			{Name: "eu-1", URL: "wss://monty-eu-1.example.com/", Dial: ws.DialOptions{HeaderFunc: token}},
			{Name: "eu-2", URL: "wss://monty-eu-2.example.com/", Dial: ws.DialOptions{HeaderFunc: token}},
		},
		ProtocolVersion: 0, // local workers and each server negotiate their own
	})
	if err != nil {
		fmt.Println("no pool:", err)
		return
	}
	defer p.Close(ctx)

	s, err := p.Checkout(ctx, session.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close() // a local worker goes back to the pool; a remote connection is closed
	r, err := s.Run(ctx, "sum(range(10))")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Repr(), "on", s.Endpoint())
	for _, e := range p.Stat().Endpoints {
		fmt.Println(e.Name, e.Outstanding, "out,", e.Refusals, "refusals, backed off until", e.BackedOffUntil)
	}
}

// One-shot runs: a checkout, a run and the worker back in the pool in one
// call; here with JSON in (a json.RawMessage input reads as json.loads
// would) and JSON out (a result marshals as json.dumps would write it).
func ExamplePool_Run() {
	ctx := context.Background()
	p, err := pool.New(ctx, pool.Config{MinWorkers: 1, MaxWorkers: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close(ctx)

	orders := json.RawMessage(`[{"qty": 2, "price": 1.5}, {"qty": 1, "price": 4}]`)
	res, err := p.Run(ctx, session.Config{}, "{'total': sum(o['qty'] * o['price'] for o in orders), 'n': len(orders)}",
		session.WithInputs(session.Input{Name: "orders", Value: orders}))
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := json.Marshal(res)
	fmt.Println(string(out), err)
	// Output: {"total":7.0,"n":2} <nil>
}

// A worker the code kills is a typed error, not a Python one: the session
// is gone, the pool replaces the worker, and the next run gets a fresh
// one. session.Survives tells the two kinds apart without naming every
// error type. Here the code returns a value over about half its memory
// limit: the worker holds it twice while it writes the answer, which
// crosses its allocator's ceiling and ends the process (exit 65), where
// an allocation inside the code would have raised MemoryError.
func ExamplePool_Run_workerLost() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := pool.New(ctx, pool.Config{MinWorkers: 1, MaxWorkers: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close(context.Background())

	cfg := session.Config{Limits: session.Limits{MaxMemory: 64 << 20}}
	_, err = p.Run(ctx, cfg, "b'x' * (40 << 20)")
	var pe *session.PythonError
	fmt.Println("python error:", errors.As(err, &pe), "memory limit:", errors.Is(err, worker.ErrMemoryLimit),
		"survives:", session.Survives(err))

	res, err := p.Run(ctx, cfg, "'fresh worker'")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Repr())
	// Output:
	// python error: false memory limit: true survives: false
	// 'fresh worker'
}
