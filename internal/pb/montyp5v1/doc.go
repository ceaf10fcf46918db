// Package montyp5v1 holds the Go types generated from
// proto/montyp5/v1/montyp5.proto, the Monty worker wire protocol version 5
// (what upstream's 1.x workers speak).
//
// These types are an implementation detail of gomonty and a test oracle. Peer
// bytes must be decoded only through gomonty's budgeted codec; never call
// proto.Unmarshal on bytes received from a worker.
package montyp5v1
