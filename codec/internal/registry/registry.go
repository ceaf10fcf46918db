// Package registry holds the linked-in codecs by protocol version. The
// codec packages add themselves from their init functions and package
// codec reads the table (ForVersion, Versions, Highest); it lives here so
// that registering is not part of the public API. Registration happens
// only while packages initialise, so reads need no lock.
package registry

import "fmt"

var codecs = map[uint32]any{}

// Add registers c, a codec.Codec, for protocol version v. Registering a
// version twice panics (a build that links two codecs for one version).
func Add(v uint32, c any) {
	if _, dup := codecs[v]; dup {
		panic(fmt.Sprintf("codec: version %d registered twice", v))
	}
	codecs[v] = c
}

// Get returns the codec registered for v.
func Get(v uint32) (any, bool) {
	c, ok := codecs[v]
	return c, ok
}

// Versions returns the registered versions, in no particular order.
func Versions() []uint32 {
	vs := make([]uint32, 0, len(codecs))
	for v := range codecs {
		vs = append(vs, v)
	}
	return vs
}
