package codec

import (
	"errors"
	"fmt"

	"github.com/gomonty/monty/message"
)

// ErrUnsupported is matched (errors.Is) by every *UnsupportedError: a
// message uses a field its protocol version cannot express, and that the
// peer would have to act on.
var ErrUnsupported = errors.New("field not expressible in this protocol version")

// UnsupportedError reports a field that the codec's protocol version has no
// way to carry (a protocol-5 limit or policy at 4 or 2, protocol 4's
// per-session duration at 5). Encoding fails, and nothing is written,
// rather than dropping something the peer must act on. It is returned
// wrapped in an *EncodeError.
type UnsupportedError struct {
	// Version is the codec's protocol version.
	Version uint32
	// Field names the domain field, e.g. "ResourceLimits.MaxFeedDurationMicros".
	Field string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s cannot be expressed in protocol %d", e.Field, e.Version)
}

// Is makes every UnsupportedError match ErrUnsupported.
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

func unsupported(version uint32, field string) error {
	return &EncodeError{Msg: fmt.Sprintf("codec: protocol %d", version),
		Err: &UnsupportedError{Version: version, Field: field}}
}

// The version-dependent fields of the domain types, in one place. A field
// listed for protocol 5 only is refused at 4 and 2, and one listed for 4 and
// 2 only is refused at 5, with an *UnsupportedError. Source positions are
// the one documented translation: they are informational (a peer that
// predates them reports an empty range), so a codec without them leaves
// them out.

// CheckRequestFields returns an *EncodeError wrapping an *UnsupportedError
// when r uses a field protocol version cannot express, and nil otherwise.
// Codecs call it before encoding.
func CheckRequestFields(version uint32, r *message.ParentRequest) error {
	if r == nil {
		return nil
	}
	switch x := r.Body.(type) {
	case *message.Configure:
		if x == nil {
			return nil
		}
		if version >= 5 {
			if x.Limits != nil && x.Limits.MaxDurationMicros != nil {
				return unsupported(version, "ResourceLimits.MaxDurationMicros")
			}
			return nil
		}
		if l := x.Limits; l != nil {
			switch {
			case l.MaxFeedDurationMicros != nil:
				return unsupported(version, "ResourceLimits.MaxFeedDurationMicros")
			case l.MaxTurnDurationMicros != nil:
				return unsupported(version, "ResourceLimits.MaxTurnDurationMicros")
			case l.MaxTotalSleepMicros != nil:
				return unsupported(version, "ResourceLimits.MaxTotalSleepMicros")
			}
		}
		switch {
		case x.OsPolicy != nil:
			return unsupported(version, "Configure.OsPolicy")
		case x.Persistence != message.PersistenceUnspecified:
			return unsupported(version, "Configure.Persistence")
		case x.Profile != nil:
			return unsupported(version, "Configure.Profile")
		}
	}
	return nil
}

// CheckEventFields is CheckRequestFields for events.
func CheckEventFields(version uint32, e *message.ChildEvent) error {
	if e == nil {
		return nil
	}
	if version >= 5 {
		if e.MaxDurationMicros != nil {
			return unsupported(version, "ChildEvent.MaxDurationMicros")
		}
		return nil
	}
	switch {
	case e.FeedExecutionMicros != 0:
		return unsupported(version, "ChildEvent.FeedExecutionMicros")
	case e.MaxFeedDurationMicros != nil:
		return unsupported(version, "ChildEvent.MaxFeedDurationMicros")
	case e.MaxTurnDurationMicros != nil:
		return unsupported(version, "ChildEvent.MaxTurnDurationMicros")
	case e.MaxTotalSleepMicros != nil:
		return unsupported(version, "ChildEvent.MaxTotalSleepMicros")
	case e.SessionID != nil:
		return unsupported(version, "ChildEvent.SessionID")
	}
	if x, ok := e.Body.(*message.OsCall); ok && x != nil {
		if x.Op >= message.OpTime && x.Op <= message.OpAsyncSystemSleep {
			return unsupported(version, "OsCall."+x.Op.String())
		}
		if x.AllowEagerAwait {
			return unsupported(version, "OsCall.AllowEagerAwait")
		}
	}
	return nil
}
