package remotejob

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomonty/monty/transport/ws"
)

// Start tries again while replicas are overloaded (503, a plain 429), but
// not after a 429 auth_throttled: that is an authentication failure, and
// trying again only extends the throttle.
func TestStartRetriesOverloadNotAuthThrottled(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want int32 // upgrade attempts before Start gives up
	}{
		{"auth_throttled", "auth_throttled\n", 1},
		{"overloaded", "busy\n", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusTooManyRequests)
				w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			url := "ws" + strings.TrimPrefix(srv.URL, "http")
			// An overloaded server is tried until the context ends; stop it
			// after the third attempt.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			pick := func() string {
				if hits.Load() >= 3 {
					cancel()
				}
				return url
			}
			_, err := Start(ctx, pick, 4)
			var de *ws.DialError
			if tc.want == 1 && (!errors.As(err, &de) || de.Reason != "auth_throttled") {
				t.Fatalf("Start: %v, want the auth_throttled DialError", err)
			}
			if got := hits.Load(); got != tc.want {
				t.Fatalf("%d upgrade attempts, want %d (err %v)", got, tc.want, err)
			}
		})
	}
}
