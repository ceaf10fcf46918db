// Package montyv1 holds the Go types generated from proto/monty/v1/monty.proto,
// the Monty worker wire protocol version 4.
//
// These types are an implementation detail of gomonty and a test oracle. Peer
// bytes must be decoded only through gomonty's budgeted codec; never call
// proto.Unmarshal on bytes received from a worker or relay.
package montyv1
