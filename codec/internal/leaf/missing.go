package leaf

import "github.com/gomonty/monty/message"

// MissingCharge is what noting an exception in Missing charges to the
// decode budget: a map entry.
const MissingCharge = 96

// missingLoc is a traceback frame's absent location: the frame's index and
// the field (StackFrame.start or StackFrame.end).
type missingLoc struct {
	frame int
	field string
}

// Missing records, per decoded exception, the first traceback frame that
// lacked a location, which the domain frame cannot say. The zero value is
// ready to use; it allocates only for such an exception.
type Missing struct {
	m map[*message.RaisedException]missingLoc
}

// Note records that e's last frame so far lacked its start (or, with start
// present, its end), unless an earlier frame of e did; charge takes
// MissingCharge from the decode budget first.
func (ms *Missing) Note(e *message.RaisedException, start bool, charge func(int64) error) error {
	if _, seen := ms.m[e]; seen {
		return nil
	}
	if err := charge(MissingCharge); err != nil {
		return err
	}
	if ms.m == nil {
		ms.m = make(map[*message.RaisedException]missingLoc)
	}
	field := "StackFrame.end"
	if !start {
		field = "StackFrame.start"
	}
	ms.m[e] = missingLoc{frame: len(e.Traceback) - 1, field: field}
	return nil
}

// Sanitize checks e as the worker converts it (the type, then frame by
// frame its missing location or its columns): e.SanitizeDecoded with what
// was noted.
func (ms *Missing) Sanitize(e *message.RaisedException) error {
	if loc, ok := ms.m[e]; ok {
		return e.SanitizeDecoded(loc.frame, loc.field)
	}
	return e.SanitizeDecoded(-1, "")
}
