package pool_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/session"
)

// A pool of warm workers: check a session out, run code, give it back.
// (Not run by go test: it needs the worker binary.)
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
