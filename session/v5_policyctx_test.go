package session

import (
	"context"
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
)

// An OS handler gets the session's OsPolicy in its context
// (message.PolicyFromContext), so that one handler serving several
// sessions answers each in its own terms: package mount answers a naive
// datetime.now() in the policy's zone. A session with no policy passes
// none.
func TestOSHandlerSeesTheSessionsPolicy(t *testing.T) {
	tokyo := &message.OsPolicy{TimeZone: &message.SandboxTimeZone{Kind: message.ZoneNamed, Name: "Asia/Tokyo"}}
	for _, c := range []struct {
		name string
		p    *message.OsPolicy
	}{{"policy", tokyo}, {"none", nil}} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := startFakeOpts(t, fakeOpts{version: 5}, Config{OsPolicy: c.p}, func(req *message.ParentRequest) fakeReply {
				switch req.Body.(type) {
				case *message.Feed:
					return reply(stamp(ev(&message.OsCall{CallID: 1, Op: message.OpDateTimeNow}), protocol.DefaultMaxSuspensions))
				case *message.ResumeCall:
					return reply(completeInt(1))
				}
				return reply(violation("unexpected request"))
			})
			calls := 0
			var got *message.OsPolicy
			_, err := s.Run(bg, "datetime.now()", WithOS(OSFunc(func(ctx context.Context, oc *message.OsCall) (*message.ResumeCall, error) {
				calls++
				got = message.PolicyFromContext(ctx)
				return nil, ErrNotHandled
			})))
			if err != nil {
				t.Fatal(err)
			}
			if calls != 1 || got != c.p {
				t.Fatalf("%d OS calls, policy %+v; want one call seeing %+v", calls, got, c.p)
			}
		})
	}
}
