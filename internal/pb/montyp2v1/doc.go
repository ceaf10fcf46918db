// Package montyp2v1 holds the Go types generated from
// proto/montyp2/v1/montyp2.proto, the Monty worker wire protocol version 2
// (the released tree-value worker).
//
// These types are an implementation detail of gomonty and a test oracle. Peer
// bytes must be decoded only through gomonty's budgeted codec; never call
// proto.Unmarshal on bytes received from a worker.
package montyp2v1
