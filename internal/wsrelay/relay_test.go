package wsrelay_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gomonty/monty/codec"
	_ "github.com/gomonty/monty/codec/codecv2"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/internal/wsrelay"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/worker"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRelayRunsCodeOnARealWorker drives the released worker through the
// relay at protocol 2, frame by frame, and checks that the client's Close
// frame reached the relay.
func TestRelayRunsCodeOnARealWorker(t *testing.T) {
	bin := testenv.Worker(t)
	r := &wsrelay.Relay{Worker: worker.Config{Binary: bin}}
	srv := httptest.NewServer(r)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := ws.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), ws.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cd, _ := codec.ForVersion(2)
	roundTrip := func(req message.Request) *message.ChildEvent {
		t.Helper()
		b, err := cd.AppendRequest(nil, &message.ParentRequest{Body: req})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.WriteFrame(b); err != nil {
			t.Fatal(err)
		}
		f, err := c.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		ev, err := cd.DecodeEvent(f, codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	roundTrip(&message.Configure{ProtocolVersion: 2})
	ev := roundTrip(&message.Feed{Code: "6 * 7"})
	done, ok := ev.Body.(*message.Complete)
	if !ok {
		t.Fatalf("feed ended with %T, want Complete", ev.Body)
	}
	if got := done.Values.Repr(done.Value); got != "42" {
		t.Fatalf("result %s, want 42", got)
	}
	c.Close()
	r.Wait()
	ends := r.Ends()
	if len(ends) != 1 || ends[0].Code != 1000 || ends[0].Frames != 2 {
		t.Fatalf("relay saw %+v, want one normal closure after 2 frames", ends)
	}
}
