package session

import (
	"encoding/hex"

	"go.opentelemetry.io/otel/trace"
)

// traceParent renders the W3C traceparent of sc,
// "00-<trace id>-<span id>-<flags>", when it is valid.
func traceParent(sc trace.SpanContext) (string, bool) {
	if !sc.IsValid() {
		return "", false
	}
	var b [55]byte
	copy(b[:], "00-")
	tid, sid := sc.TraceID(), sc.SpanID()
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	b[52] = '-'
	hex.Encode(b[53:55], []byte{byte(sc.TraceFlags())})
	return string(b[:]), true
}
