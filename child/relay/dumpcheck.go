package relay

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/gomonty/monty/message"
)

// The released protocol-2 worker refuses a dump of another format version
// with "dump format version {v}, this build reads {m}"; the contract (§12)
// words the refusal of an older dump as "dump format version {v} is older
// than {min}, the oldest this build reads". The inner worker stays the
// judge: the relay only rewords its refusal, and only when the refused
// dump's own header (the u16 little-endian at bytes 6..8) names the version
// the refusal names and that version is below the one the worker reads.
// A newer dump keeps the worker's text (the contract words only the older
// case), and so does any refusal in another wording (a worker that already
// speaks the contract's).
const (
	loadRefusalPrefix = "protocol violation: failed to load session: dump format version "
	releasedReadsMid  = ", this build reads "
)

// dumpVersion returns the format version in a dump's header, if the state
// is long enough to hold one.
func dumpVersion(state []byte) (uint16, bool) {
	if len(state) < 8 {
		return 0, false
	}
	return binary.LittleEndian.Uint16(state[6:8]), true
}

// rewordLoadRefusal returns the contract's refusal of an older dump in
// place of the inner worker's, or ev unchanged.
func rewordLoadRefusal(state []byte, ev message.Event) message.Event {
	e, ok := ev.(*message.Error)
	if !ok || e.Exception == nil || e.Exception.Type != "RuntimeError" || len(e.Exception.Traceback) != 0 {
		return ev
	}
	rest, ok := strings.CutPrefix(e.Exception.Msg(), loadRefusalPrefix)
	if !ok {
		return ev
	}
	vs, ms, ok := strings.Cut(rest, releasedReadsMid)
	if !ok {
		return ev
	}
	v, err1 := strconv.ParseUint(vs, 10, 16)
	m, err2 := strconv.ParseUint(ms, 10, 16)
	if err1 != nil || err2 != nil || v >= m {
		return ev
	}
	if hv, ok := dumpVersion(state); !ok || uint64(hv) != v {
		return ev
	}
	return &message.Error{Exception: message.NewException("RuntimeError",
		loadRefusalPrefix+vs+" is older than "+ms+", the oldest this build reads")}
}
