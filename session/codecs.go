package session

// The session speaks every protocol version this module implements.
import (
	_ "github.com/gomonty/monty/codec/v2" // protocol 2: the released worker
	_ "github.com/gomonty/monty/codec/v4" // protocol 4: the seed's schema
	_ "github.com/gomonty/monty/codec/v5" // protocol 5: upstream's 1.x workers
)
