//go:build unix

package session

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/worker"
)

// A protocol version this module has no codec for, pinned or given to
// Attach or Validate, is a typed error naming the version and the linked-in
// ones. Before, all three were fmt.Errorf texts no caller could match.
func TestUnknownVersionIsTyped(t *testing.T) {
	const v = 99
	check := func(t *testing.T, err error) {
		t.Helper()
		var uv *UnknownVersionError
		if !errors.As(err, &uv) {
			t.Fatalf("err = %v (%T), want a *UnknownVersionError", err, err)
		}
		if uv.Version != v || !slices.Equal(uv.Have, codec.Versions()) {
			t.Fatalf("UnknownVersionError = %+v, want version %d and the linked-in %v", uv, v, codec.Versions())
		}
		if Survives(err) {
			t.Fatal("Survives reports true for a session that never started")
		}
	}
	t.Run("Start", func(t *testing.T) {
		// Refused before anything is launched: the launcher is never called.
		l := LauncherFunc(func(context.Context) (Peer, error) {
			t.Fatal("the launcher was called")
			return nil, nil
		})
		_, err := Start(context.Background(), Launch{Launcher: l, ProtocolVersion: v}, Config{Logger: quietLogger})
		check(t, err)
	})
	t.Run("Validate", func(t *testing.T) {
		check(t, Config{}.Validate(v))
	})
	t.Run("Attach", func(t *testing.T) {
		requireWorker(t)
		p, err := worker.Start(context.Background(), worker.Config{Logger: quietLogger})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Attach(context.Background(), p, v, Config{Logger: quietLogger})
		check(t, err)
		if _, ok := p.Exit(); !ok {
			t.Fatal("Attach left the worker running")
		}
	})
}
