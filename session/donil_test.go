package session

import (
	"context"
	"errors"
	"testing"

	"github.com/gomonty/monty/message"
)

// Do refuses a nil request, and a nil pointer of a request type, with an
// *InvalidRequestError at every version, sending nothing; the session
// stays as it was. Before, a nil request panicked inside Do, and at
// protocols 4 and 5 a nil *message.Feed went out as an empty Feed (the
// codec reads a nil body as the empty message) while protocol 2 refused
// it.
func TestFakeDoRefusesANilRequest(t *testing.T) {
	for _, v := range []uint32{2, 4, 5} {
		s, child := startFakeOpts(t, fakeOpts{version: v}, Config{}, func(req *message.ParentRequest) fakeReply {
			return reply(completeInt(1))
		})
		for _, req := range []message.Request{nil, (*message.Feed)(nil), (*message.Reset)(nil), (*message.AbortFeed)(nil)} {
			sent := len(child.requests())
			ev, err := func() (ev *message.ChildEvent, err error) {
				defer func() {
					if p := recover(); p != nil {
						err = errors.New("panic")
					}
				}()
				return s.Do(context.Background(), req)
			}()
			var ire *InvalidRequestError
			if !errors.As(err, &ire) || ev != nil || !Survives(err) {
				t.Errorf("v%d: Do(%T(nil)) = %v, %v; want an *InvalidRequestError", v, req, ev, err)
			}
			if n := len(child.requests()); n != sent {
				t.Errorf("v%d: Do(%T(nil)) sent %d requests", v, req, n-sent)
			}
		}
		if s.State() != StateIdle {
			t.Errorf("v%d: state %v after the refusals, want idle", v, s.State())
		}
		if _, err := s.Feed(context.Background(), "1"); err != nil {
			t.Errorf("v%d: Feed after the refusals: %v", v, err)
		}
	}
}
