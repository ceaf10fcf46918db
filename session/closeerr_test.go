package session_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
)

// Close documents nil for a remote session: a server that drops its socket
// without the close handshake left nothing running here, and its
// "failed to close WebSocket" came through Close as an error before.
func TestCloseOfARemoteSessionWhoseServerDroppedTheSocketReturnsNil(t *testing.T) {
	cd, _ := codec.ForVersion(4)
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wg.Add(1)
		defer wg.Done()
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"monty"}})
		if err != nil {
			return
		}
		_, _, err = c.Read(context.Background())
		if err != nil {
			return
		}
		b, _ := cd.AppendEvent(nil, &message.ChildEvent{Body: &message.Ok{}})
		c.Write(context.Background(), websocket.MessageBinary, b)
		c.CloseNow()
	}))
	defer func() { srv.Close(); wg.Wait() }()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/"
	s, err := session.Start(context.Background(), session.Launch{Launcher: session.RemoteLauncher{URL: url}, ProtocolVersion: 4}, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait() // the server has dropped the socket
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
