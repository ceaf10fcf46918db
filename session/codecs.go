package session

// The session speaks every protocol version this module implements.
import (
	_ "github.com/gomonty/monty/codec/codecv2" // protocol 2: the released worker
	_ "github.com/gomonty/monty/codec/codecv4" // protocol 4: the seed's schema
	_ "github.com/gomonty/monty/codec/codecv5" // protocol 5: upstream's 1.x workers
)
