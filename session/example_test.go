package session_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gomonty/monty/mount"
	"github.com/gomonty/monty/session"
)

// Start a session, run code with a Go function available to it, and read
// the result back into Go.
func Example() {
	ctx := context.Background()
	s, err := session.Start(ctx, session.Launch{}, session.Config{Print: session.Writers(os.Stdout, os.Stderr)})
	if err != nil {
		fmt.Println("no worker:", err)
		return
	}
	defer s.Close()

	reg := session.NewRegistry()
	reg.MustRegister("shout", func(ctx context.Context, text string, times int) (string, error) {
		return strings.Repeat(strings.ToUpper(text)+"!", times), nil
	})

	r, err := s.Run(ctx, "greeting = shout('hi', 2)\nprint(greeting)\nlen(greeting)",
		session.WithFunctions(reg))
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	var n int
	if err := r.Decode(&n); err != nil {
		fmt.Println("decode:", err)
		return
	}
	fmt.Println("length:", n)
	// Output:
	// HI!HI!
	// length: 6
}

// Globals persist between runs, and a Python exception leaves the session
// usable.
func ExampleSession_Run() {
	ctx := context.Background()
	s, err := session.Start(ctx, session.Launch{}, session.Config{})
	if err != nil {
		fmt.Println("no worker:", err)
		return
	}
	defer s.Close()

	if _, err := s.Run(ctx, "total = 40"); err != nil {
		fmt.Println(err)
		return
	}
	_, err = s.Run(ctx, "total / 0")
	var pe *session.PythonError
	if errors.As(err, &pe) {
		fmt.Println("python raised:", pe.Type())
	}
	r, err := s.Run(ctx, "total + 2")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Repr())
	// Output:
	// python raised: ZeroDivisionError
	// 42
}

// Host functions registered with Async run concurrently under
// asyncio.gather.
func ExampleAsync() {
	ctx := context.Background()
	s, err := session.Start(ctx, session.Launch{}, session.Config{})
	if err != nil {
		fmt.Println("no worker:", err)
		return
	}
	defer s.Close()

	reg := session.NewRegistry()
	reg.MustRegister("fetch", func(ctx context.Context, id int) (map[string]any, error) {
		return map[string]any{"id": id, "ok": true}, nil
	}, session.Async())

	r, err := s.Run(ctx, "import asyncio\nawait asyncio.gather(fetch(1), fetch(2))", session.WithFunctions(reg))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Repr())
	// Output:
	// [{'id': 1, 'ok': True}, {'id': 2, 'ok': True}]
}

// The low-level turn API answers each suspension by hand.
func ExampleSession_Feed() {
	ctx := context.Background()
	s, err := session.Start(ctx, session.Launch{}, session.Config{})
	if err != nil {
		fmt.Println("no worker:", err)
		return
	}
	defer s.Close()

	ev, err := s.Feed(ctx, "double(21)")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ev.Body.EventKind(), s.State())
	ev, err = s.Resume(ctx, session.Return(42))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ev.Body.EventKind(), s.State())
	// Output:
	// FunctionCall suspended
	// Complete idle
}

// A session moves to a fresh worker through Dump and LoadWith. The dump
// carries the sandbox (globals, limits, consumed time); LoadOptions carries
// what only the parent knew, the sleep already charged to the budget.
func ExampleSession_LoadWith() {
	ctx := context.Background()
	a, err := session.Start(ctx, session.Launch{}, session.Config{})
	if err != nil {
		fmt.Println("no worker:", err)
		return
	}
	defer a.Close()
	if _, err := a.Run(ctx, "answer = 41"); err != nil {
		fmt.Println(err)
		return
	}
	dump, err := a.Dump(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}

	b, err := session.Start(ctx, session.Launch{}, session.Config{})
	if err != nil {
		fmt.Println("no worker:", err)
		return
	}
	defer b.Close()
	if _, err := b.LoadWith(ctx, dump, session.LoadOptions{TotalSleep: a.Stamps().TotalSleep}); err != nil {
		fmt.Println(err)
		return
	}
	r, err := b.Run(ctx, "answer + 1")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Repr())
	// Output: 42
}

// Host functions with named parameters (so the sandbox may pass them by
// keyword), and the stubs that let a type-checked session call them; the
// same text tells a model writing the code what it may call.
func ExampleRegistry_Stubs() {
	reg := session.NewRegistry().
		MustRegister("fetch_price", func(item string, qty int) float64 { return 0.5 * float64(qty) }, session.Params("item", "qty"))
	fmt.Print(reg.Stubs())

	ctx := context.Background()
	s, err := session.Start(ctx, session.Launch{}, session.Config{TypeCheck: true, TypeCheckStubs: reg.Stubs()})
	if err != nil {
		fmt.Println("no worker:", err)
		return
	}
	defer s.Close()
	r, err := s.Run(ctx, "fetch_price('apple', qty=4)", session.WithFunctions(reg))
	fmt.Println(r.Repr(), err)
	_, err = s.Run(ctx, "fetch_price(4, 'apple')", session.WithFunctions(reg))
	var tc *session.TypeCheckError
	fmt.Println(errors.As(err, &tc))
	// Output:
	// def fetch_price(item: str, qty: int) -> float: ...
	// 2.0 <nil>
	// true
}

// OS calls answered by a hardened mount table: the sandbox reads a host
// directory mounted read-only at /data, sees the environment the table
// gives it, and may not write.
func ExampleWithOS() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "monty-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "greeting.txt"), []byte("hello from the host"), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	table, err := mount.New([]mount.Mount{{HostDir: dir, VirtualPath: "/data", Mode: mount.ReadOnly}},
		mount.Options{Env: map[string]string{"STAGE": "test"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer table.Close()

	s, err := session.Start(ctx, session.Launch{}, session.Config{})
	if err != nil {
		fmt.Println("no worker:", err)
		return
	}
	defer s.Close()

	r, err := s.Run(ctx, `
from pathlib import Path
import os
(Path("/data/greeting.txt").read_text(), os.getenv("STAGE"))`, session.WithOS(table))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Repr())
	_, err = s.Run(ctx, `Path("/data/new.txt").write_text("x")`, session.WithOS(table))
	var pe *session.PythonError
	if errors.As(err, &pe) {
		fmt.Println("python raised:", pe.Type())
	}
	// Output:
	// ('hello from the host', 'test')
	// python raised: PermissionError
}

// Limits are the worker's to enforce: a run past MaxDuration raises
// TimeoutError in the sandbox and the session survives (its time budget
// spent, until Reset). A context that ends while the worker computes
// kills the worker: the session is closed.
func ExampleLimits() {
	ctx := context.Background()
	s, err := session.Start(ctx, session.Launch{}, session.Config{Limits: session.Limits{MaxDuration: 100 * time.Millisecond}})
	if err != nil {
		fmt.Println("no worker:", err)
		return
	}
	defer s.Close()
	_, err = s.Run(ctx, "while True: pass")
	var pe *session.PythonError
	if errors.As(err, &pe) {
		fmt.Println("python raised:", pe.Type(), "survives:", session.Survives(err))
	}

	s2, err := session.Start(ctx, session.Launch{}, session.Config{})
	if err != nil {
		fmt.Println("no worker:", err)
		return
	}
	defer s2.Close()
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = s2.Run(cctx, "while True: pass")
	var te *session.TimeoutError
	fmt.Println("timeout:", errors.As(err, &te), "survives:", session.Survives(err))
	// Output:
	// python raised: TimeoutError survives: true
	// timeout: true survives: false
}

// Cart is a Go type the sandbox sees as a host class: its fields and the
// methods a Policy lists, nothing else.
type Cart struct {
	Owner string   `json:"owner"`
	Items []string `json:"items"`
}

// Add puts an item in the cart and returns how many it holds.
func (c *Cart) Add(item string) int {
	c.Items = append(c.Items, item)
	return len(c.Items)
}

// A Go value as a host object: the sandbox reads its fields and calls its
// methods, and what the methods change is the Go value itself.
func ExampleClassOf() {
	cls, err := session.ClassOf[Cart]("Cart", session.Policy{
		Eager:   []string{"owner"},     // sent with the instance: read locally, shown by repr
		Lazy:    []string{"items"},     // read from the Go value at every access
		Methods: []string{"add(item)"}, // (*Cart).Add, item also by keyword
	})
	if err != nil {
		fmt.Println(err) // the policy names a field or method Cart lacks
		return
	}
	cart := &Cart{Owner: "ada"}
	reg := session.NewRegistry().MustRegisterClass("Cart", cls)
	reg.SetValue("cart", cart) // the sandbox sees a Cart instance, not a dict

	ctx := context.Background()
	s, err := session.Start(ctx, session.Launch{}, session.Config{})
	if err != nil {
		fmt.Println("no worker:", err)
		return
	}
	defer s.Close()
	r, err := s.Run(ctx, "cart.add('apple')\ncart.add(item='pear')\n(cart, cart.items)", session.WithFunctions(reg))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Repr())
	fmt.Println(cart.Items)
	// Output:
	// (Cart(owner='ada'), ['apple', 'pear'])
	// [apple pear]
}
