// Package soak holds gomonty's soak test: thousands of sessions over a
// pool of real workers, with faults injected at random, checking that every
// session ends with its own correct result or the typed error of the fault
// it was given. It has no API; run it with
//
//	go test ./internal/soak -run Soak -soak.sessions=10000
package soak
