package hostile

import (
	"google.golang.org/protobuf/encoding/protowire"

	p2 "github.com/gomonty/monty/internal/pb/montyp2v1"
)

// Sizes of the amplification frames. Each run is a little over a power of
// two, so that a receiver growing its vectors by doubling has to take one
// more (large) step.
const (
	// Elements of 2 bytes each: about 64 MiB.
	amp2 = 1<<25 + 2048
	// Elements of 4 bytes each: about 64 MiB.
	amp4 = 1<<24 + 1024
	// Packed one-byte ids: about 64 MiB.
	amp1 = 1<<26 + 4096
	// DeepLevels is how deep the nesting scenarios go.
	deepLevels = 1 << 20
	// tracebackFrames is the length of the long (but valid) traceback.
	tracebackFrames = 100_000
)

// Repeated elements of the amplification frames.
var (
	emptyMsg1 = []byte{0x0a, 0x00} // field 1, empty message
	emptyMsg2 = []byte{0x12, 0x00} // field 2, empty message
	emptyMsg3 = []byte{0x1a, 0x00} // field 3, empty message
	noneItem  = []byte{0x0a, 0x02, 0x12, 0x00}
	zeroByte  = []byte{0x00}
)

// n scales an element count down by the Scale option.
func (c *child) n(count int64) int64 { return max(1, count/int64(c.scale)) }

// ampEmptyItems: a Complete whose value holds empty (kind-less) elements.
// Protocol 2: a list of empty MontyObjects. Protocol 4: an arena of empty
// MontyNodes with an honest node_count hint.
func (c *child) ampEmptyItems() bigFrame {
	if c.ver == 4 {
		return repeated(emptyMsg2, c.n(amp2), c.stamps(),
			level{num: armComplete},
			level{num: 2, pre: varintField(nil, 1, uint64(c.n(amp2)))})
	}
	return repeated(emptyMsg1, c.n(amp2), c.stamps(),
		level{num: armComplete}, level{num: 1}, level{num: 11})
}

// ampNoneItems: a Complete whose value is a list of millions of Nones.
// Protocol 2: a list of None objects (4 bytes each). Protocol 4: one None
// node and a list node holding a packed run of one-byte references to it.
func (c *child) ampNoneItems() bigFrame {
	if c.ver == 4 {
		arenaPre := varintField(nil, 1, 2)
		arenaPre = append(arenaPre, nodeNone...)
		return repeated(zeroByte, c.n(amp1), c.stamps(),
			level{num: armComplete, pre: varintField(nil, 1, 1)},
			level{num: 2, pre: arenaPre},
			level{num: 2}, level{num: 11}, level{num: 1})
	}
	return repeated(noneItem, c.n(amp4), c.stamps(),
		level{num: armComplete}, level{num: 1}, level{num: 11})
}

// ampNoneNodes (protocol 4): an arena of millions of None nodes, root 0.
func (c *child) ampNoneNodes() bigFrame {
	return repeated(nodeNone, c.n(amp4), c.stamps(),
		level{num: armComplete},
		level{num: 2, pre: varintField(nil, 1, uint64(c.n(amp4)))})
}

// ampDictPairs: a Complete whose value is a dict of millions of pairs.
// Protocol 2: empty Pairs (no key, no value). Protocol 4: a dict node whose
// pairs are all (0, 0), both referring to a None node below it, which is
// valid.
func (c *child) ampDictPairs() bigFrame {
	if c.ver == 4 {
		arenaPre := varintField(nil, 1, 2)
		arenaPre = append(arenaPre, nodeNone...)
		return repeated(emptyMsg1, c.n(amp2), c.stamps(),
			level{num: armComplete, pre: varintField(nil, 1, 1)},
			level{num: 2, pre: arenaPre},
			level{num: 2}, level{num: 14})
	}
	return repeated(emptyMsg1, c.n(amp2), c.stamps(),
		level{num: armComplete}, level{num: 1}, level{num: 14})
}

// hugeInt (protocol 2): a Complete whose value is a BigInt with a
// magnitude of HugeIntBytes 0xff bytes (scaled).
func (c *child) hugeInt() bigFrame {
	return repeated([]byte{0xff}, c.n(HugeIntBytes), c.stamps(),
		level{num: armComplete}, level{num: 1}, level{num: 6}, level{num: 2})
}

// ampTraceback: an Error whose exception has millions of empty stack
// frames.
func (c *child) ampTraceback() bigFrame {
	return repeated(emptyMsg3, c.n(amp2), c.stamps(),
		level{num: armError},
		level{num: 1, pre: msgField(nil, 1, []byte("RuntimeError"))})
}

// ampPrintSegments (protocol 4): a Print with millions of empty segments.
func (c *child) ampPrintSegments() bigFrame {
	return repeated(emptyMsg1, c.n(amp2), nil, level{num: armPrint})
}

// deepList (protocol 2) returns a Complete whose value is None wrapped in
// levels nested one-element lists.
func (c *child) deepList(levels int) []byte {
	// sizes[k] is the encoded size of the MontyObject at depth k (0 is the
	// innermost None).
	none := leafNone()
	sizes := make([]int, levels+1)
	sizes[0] = len(none)
	for k := 1; k <= levels; k++ {
		list := 1 + protowire.SizeVarint(uint64(sizes[k-1])) + sizes[k-1]
		sizes[k] = 1 + protowire.SizeVarint(uint64(list)) + list
	}
	obj := make([]byte, 0, sizes[levels])
	for k := levels; k >= 1; k-- {
		list := 1 + protowire.SizeVarint(uint64(sizes[k-1])) + sizes[k-1]
		obj = protowire.AppendTag(obj, 11, protowire.BytesType)
		obj = protowire.AppendVarint(obj, uint64(list))
		obj = protowire.AppendTag(obj, 1, protowire.BytesType)
		obj = protowire.AppendVarint(obj, uint64(sizes[k-1]))
	}
	obj = append(obj, none...)
	return c.turn(armComplete, msgField(nil, 1, obj))
}

// deepChain (protocol 4) returns a Complete whose arena is a chain: node 0
// is None and node i is a one-element list holding node i-1. The root is
// the last node. It is valid protocol 4, which has no depth limit.
func (c *child) deepChain(levels int) []byte {
	arena := make([]byte, 0, levels*10+16)
	arena = varintField(arena, 1, uint64(levels+1))
	arena = append(arena, nodeNone...)
	var node, items []byte
	for i := 1; i <= levels; i++ {
		items = protowire.AppendVarint(items[:0], uint64(i-1))
		node = msgField(node[:0], 11, msgField(nil, 1, items))
		arena = msgField(arena, 2, node)
	}
	payload := varintField(nil, 1, uint64(levels))
	return c.turn(armComplete, msgField(payload, 2, arena))
}

// longTraceback returns a valid Error whose exception carries n frames.
func (c *child) longTraceback(n int) []byte {
	exc := &p2.RaisedException{ExcType: "RecursionError", Message: ptr("maximum recursion depth exceeded")}
	exc.Traceback = make([]*p2.StackFrame, n)
	for i := range exc.Traceback {
		exc.Traceback[i] = &p2.StackFrame{
			Filename:    "<python-input-0>",
			Start:       &p2.CodeLoc{Line: 1, Column: 9},
			End:         &p2.CodeLoc{Line: 1, Column: 12},
			FrameName:   ptr("f"),
			PreviewLine: ptr("def f(): f()"),
		}
	}
	return c.errorEvent(exc, true)
}

// printOfSize returns a Print event (text of 'x') whose body is exactly
// size bytes.
func (c *child) printOfSize(size int64) bigFrame {
	stream := varintField(nil, 1, uint64(p2.PrintStream_PRINT_STREAM_STDOUT))
	var (
		f  bigFrame
		ok bool
	)
	if c.ver == 4 {
		f, ok = sized(size, 'x', nil, level{num: armPrint}, level{num: 1, pre: stream}, level{num: 2})
	} else {
		f, ok = sized(size, 'x', nil, level{num: armPrint, pre: stream}, level{num: 2})
	}
	if !ok {
		panic("hostile: no Print body of the requested size")
	}
	return f
}
