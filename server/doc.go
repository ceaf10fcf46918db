// Package server is the Monty server (`montygo serve`): it serves Monty
// sessions over WebSockets, one session per connection at "/", each on a
// worker of an internal prewarmed pool, behind the server's policy.
//
// Open TCP connections, upgraded or not, are capped server-wide and per
// peer address (Config.MaxConnections, MaxConnectionsPerClient). One over
// a cap is closed after one answer: while a small overflow has room its
// request is read, a health probe answered as usual and anything else
// answered 503; past the overflow it is answered 503 before it is read
// (dropped, under TLS). A request's headers
// are bounded in time (Config.ReadHeaderTimeout, which also bounds a TLS
// handshake) and size (Config.MaxHeaderBytes, 431 past it).
//
// Before the upgrade a request is authenticated (bearer [Tokens], verified
// client certificates, or neither: then the client is its address, an
// IPv6 address by its /64), and admitted under the server-wide and
// per-client session caps; refusals are HTTP 401, 403, 429 and 503, with
// Retry-After where waiting helps. Failed token logins are limited per
// client address (Config.MaxAuthFailures). Without authentication, a
// request that arrives on a loopback address must name a loopback host
// ([LoopbackHost]), against DNS rebinding.
//
// After the upgrade the server keeps the session within its ceilings
// (max_duration, memory, recursion depth and max_suspensions clamped;
// max_suspensions, the turn, idle and session timeouts enforced), refuses the requests a client
// could use to escape them (a second Configure, Reset, Shutdown, the Load
// of a dump it did not sign with a [Signer]) and, during a drain, answers
// each session's next request with a signed dump another replica can
// restore. Sessions end with the Close* codes (CloseIdleTimeout, …).
//
// /healthz, /readyz (and /health), /info and /metrics (Prometheus, which
// wants a token when tokens are set, unless Config.OpenMetrics) are served
// beside it. docs/PROTOCOL.md ("The Monty server") describes the protocol
// side and docs/DEPLOY.md the deployment.
package server
