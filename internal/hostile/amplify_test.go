package hostile_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"testing"
	"time"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/budget"
	"github.com/gomonty/monty/internal/hostile"
	p2 "github.com/gomonty/monty/internal/pb/montyp2v1"
	p4 "github.com/gomonty/monty/internal/pb/montyv1"
)

const ptrSize = int64(unsafe.Sizeof(uintptr(0)))

// ampSpec describes where an amplification frame keeps its repeated run
// and what each element costs once decoded.
type ampSpec struct {
	// path lists the length-delimited fields leading to the message that
	// holds the run (the last occurrence of each is followed).
	path []protowire.Number
	// elem is the repeated field of the run; 0 means the region is a packed
	// run of one-byte zero ids.
	elem protowire.Number
	// payload is each element's payload.
	payload []byte
	// cost is a lower bound of the decoded size of one element, in bytes:
	// the generated struct plus its slice slot, or the contract's charge
	// when that is higher.
	cost int64
	// count decodes a frame with the generated types and returns how many
	// elements the run decoded to.
	count func(body []byte) (int, error)
}

func decode2(body []byte) (*p2.ChildEvent, error) {
	m := new(p2.ChildEvent)
	return m, proto.Unmarshal(body, m)
}

func decode4(body []byte) (*p4.ChildEvent, error) {
	m := new(p4.ChildEvent)
	return m, proto.Unmarshal(body, m)
}

func ampSpecs() map[string]ampSpec {
	return map[string]ampSpec{
		"amplify_empty_items/2": {path: nums(6, 1, 11), elem: 1, payload: nil,
			cost: int64(unsafe.Sizeof(p2.MontyObject{})) + ptrSize,
			count: func(b []byte) (int, error) {
				e, err := decode2(b)
				return len(e.GetComplete().GetValue().GetList().GetItems()), err
			}},
		"amplify_empty_items/4": {path: nums(6, 2), elem: 2, payload: nil,
			cost: int64(unsafe.Sizeof(p4.MontyNode{})) + ptrSize,
			count: func(b []byte) (int, error) {
				e, err := decode4(b)
				return len(e.GetComplete().GetValues().GetNodes()) - 0, err
			}},
		"amplify_none_items/2": {path: nums(6, 1, 11), elem: 1, payload: []byte{0x12, 0x00},
			cost: int64(unsafe.Sizeof(p2.MontyObject{})+unsafe.Sizeof(p2.MontyObject_None{})+unsafe.Sizeof(p2.Unit{})) + ptrSize,
			count: func(b []byte) (int, error) {
				e, err := decode2(b)
				n := 0
				for _, it := range e.GetComplete().GetValue().GetList().GetItems() {
					if it.GetNone() != nil {
						n++
					}
				}
				return n, err
			}},
		"amplify_none_items/4": {path: nums(6, 2, 2, 11, 1), elem: 0,
			cost: max(4, budget.RefCost),
			count: func(b []byte) (int, error) {
				e, err := decode4(b)
				nodes := e.GetComplete().GetValues().GetNodes()
				if len(nodes) != 2 || nodes[0].GetNone() == nil || e.GetComplete().GetValue() != 1 {
					return 0, fmt.Errorf("unexpected arena %v", nodes)
				}
				return len(nodes[1].GetList().GetItems()), err
			}},
		"amplify_dict_pairs/2": {path: nums(6, 1, 14), elem: 1, payload: nil,
			cost: int64(unsafe.Sizeof(p2.Pair{})) + ptrSize,
			count: func(b []byte) (int, error) {
				e, err := decode2(b)
				return len(e.GetComplete().GetValue().GetDict().GetPairs()), err
			}},
		"amplify_dict_pairs/4": {path: nums(6, 2, 2, 14), elem: 1, payload: nil,
			cost: max(int64(unsafe.Sizeof(p4.NodePair{}))+ptrSize, budget.PairCost),
			count: func(b []byte) (int, error) {
				e, err := decode4(b)
				nodes := e.GetComplete().GetValues().GetNodes()
				if len(nodes) != 2 || nodes[0].GetNone() == nil {
					return 0, fmt.Errorf("unexpected arena %v", nodes)
				}
				return len(nodes[1].GetDict().GetPairs()), err
			}},
		"amplify_traceback/2": {path: nums(7, 1), elem: 3, payload: nil,
			cost: int64(unsafe.Sizeof(p2.StackFrame{})) + ptrSize,
			count: func(b []byte) (int, error) {
				e, err := decode2(b)
				return len(e.GetError().GetException().GetTraceback()), err
			}},
		"amplify_traceback/4": {path: nums(7, 1), elem: 3, payload: nil,
			cost: int64(unsafe.Sizeof(p4.StackFrame{})) + ptrSize,
			count: func(b []byte) (int, error) {
				e, err := decode4(b)
				return len(e.GetError().GetException().GetTraceback()), err
			}},
		"amplify_print_segments/4": {path: nums(1), elem: 1, payload: nil,
			cost: int64(unsafe.Sizeof(p4.PrintSegment{})) + ptrSize,
			count: func(b []byte) (int, error) {
				e, err := decode4(b)
				return len(e.GetPrint().GetSegments()), err
			}},
		"amplify_none_nodes/4": {path: nums(6, 2), elem: 2, payload: []byte{0x12, 0x00},
			cost: int64(unsafe.Sizeof(p4.MontyNode{})+unsafe.Sizeof(p4.MontyNode_None{})+unsafe.Sizeof(p4.Unit{})) + ptrSize,
			count: func(b []byte) (int, error) {
				e, err := decode4(b)
				n := 0
				for _, nd := range e.GetComplete().GetValues().GetNodes() {
					if nd.GetNone() != nil {
						n++
					}
				}
				return n, err
			}},
	}
}

func nums(n ...protowire.Number) []protowire.Number { return n }

// span is one level of a descent: the bytes around the followed field.
type span struct {
	num           protowire.Number
	before, after []byte
}

// descend follows path through b and returns the levels and the innermost
// content.
func descend(b []byte, path []protowire.Number) ([]span, []byte, error) {
	var spans []span
	for _, want := range path {
		start, end, vstart := -1, -1, -1
		for off := 0; off < len(b); {
			num, typ, tl := protowire.ConsumeTag(b[off:])
			if tl < 0 {
				return nil, nil, protowire.ParseError(tl)
			}
			vl := protowire.ConsumeFieldValue(num, typ, b[off+tl:])
			if vl < 0 {
				return nil, nil, protowire.ParseError(vl)
			}
			if num == want && typ == protowire.BytesType {
				start, end, vstart = off, off+tl+vl, off+tl
			}
			off += tl + vl
		}
		if start < 0 {
			return nil, nil, fmt.Errorf("no field %d", want)
		}
		content, _ := protowire.ConsumeBytes(b[vstart:end])
		spans = append(spans, span{num: want, before: b[:start], after: b[end:]})
		b = content
	}
	return spans, b, nil
}

// rebuild wraps inner back into the levels.
func rebuild(spans []span, inner []byte) []byte {
	for i := len(spans) - 1; i >= 0; i-- {
		var out []byte
		out = append(out, spans[i].before...)
		out = protowire.AppendTag(out, spans[i].num, protowire.BytesType)
		out = protowire.AppendBytes(out, inner)
		out = append(out, spans[i].after...)
		inner = out
	}
	return inner
}

// descendHead follows path through the head of a body of size bytes,
// taking at each level the first field of the wanted number whose content
// runs past the head (the big one). It returns the levels, with the length
// of the bytes that follow each followed field (they arrive after the run),
// and the offset and length of the innermost content.
func descendHead(head []byte, size int, path []protowire.Number) ([]span, []int, int, int, error) {
	start, end := 0, size
	var (
		spans  []span
		afters []int
	)
	for _, want := range path {
		found := false
		for off := start; off < end && !found; {
			if off >= len(head) {
				return nil, nil, 0, 0, fmt.Errorf("no big field %d within the head", want)
			}
			num, typ, tl := protowire.ConsumeTag(head[off:])
			if tl < 0 {
				return nil, nil, 0, 0, protowire.ParseError(tl)
			}
			if typ != protowire.BytesType {
				vl := protowire.ConsumeFieldValue(num, typ, head[off+tl:])
				if vl < 0 {
					return nil, nil, 0, 0, protowire.ParseError(vl)
				}
				off += tl + vl
				continue
			}
			l, ll := protowire.ConsumeVarint(head[off+tl:])
			if ll < 0 {
				return nil, nil, 0, 0, protowire.ParseError(ll)
			}
			cstart := off + tl + ll
			cend := cstart + int(l)
			if cend > end {
				return nil, nil, 0, 0, fmt.Errorf("field %d overruns its message", num)
			}
			if num == want && cend > len(head) {
				spans = append(spans, span{num: want, before: head[start:off]})
				afters = append(afters, end-cend)
				start, end, found = cstart, cend, true
				continue
			}
			off = cend
		}
		if !found {
			return nil, nil, 0, 0, fmt.Errorf("no big field %d", want)
		}
	}
	return spans, afters, start, end - start, nil
}

// ampCheck reads an amplification frame without holding it (a 64 MiB
// buffer per check is slow under the race detector), checking its layout
// element by element, then decodes a small sample of the same shape with
// the generated types.
func ampCheck(t *testing.T, p *proc, sc hostile.Scenario) {
	spec, ok := ampSpecs()[sc.Name+"/"+itoa(p.ver)]
	if !ok {
		t.Fatalf("no amplification spec for %s/%d", sc.Name, p.ver)
	}
	p.configure()
	p.feed(sc.Code)
	size := int(binary.LittleEndian.Uint32(p.readN(4)))
	if size > frame.MaxFrameLen || size < 60<<20 {
		t.Fatalf("frame of %d bytes: want ~64 MiB, within the cap", size)
	}
	head := p.readN(256)
	spans, afters, start, regionLen, err := descendHead(head, size, spec.path)
	if err != nil {
		t.Fatal(err)
	}
	var elem []byte
	if spec.elem == 0 {
		elem = []byte{0}
	} else {
		elem = protowire.AppendTag(nil, spec.elem, protowire.BytesType)
		elem = protowire.AppendBytes(elem, spec.payload)
	}
	// The region is pre (other fields, all within the head), then the run.
	off := start
	for !bytes.HasPrefix(head[off:], elem) {
		num, typ, tl := protowire.ConsumeTag(head[off:])
		vl := protowire.ConsumeFieldValue(num, typ, head[off+tl:])
		if tl < 0 || vl < 0 || off+tl+vl >= len(head) {
			t.Fatalf("cannot find the run in %x", head)
		}
		off += tl + vl
	}
	pre := head[start:off]
	runLen := regionLen - len(pre)
	if runLen%len(elem) != 0 {
		t.Fatalf("run of %d bytes is not a whole number of %d-byte elements", runLen, len(elem))
	}
	count := runLen / len(elem)

	// Stream the run and compare it with the element repeated.
	block := bytes.Repeat(elem, (1<<20)/len(elem)+1)
	phase := 0
	cmp := func(b []byte) {
		if !bytes.Equal(b, block[phase:phase+len(b)]) {
			t.Fatalf("run holds something other than %x", elem)
		}
		phase = (phase + len(b)) % len(elem)
	}
	inHead := min(len(head)-off, runLen)
	cmp(head[off : off+inHead])
	buf := make([]byte, 1<<20)
	for left := runLen - inHead; left > 0; {
		n := min(left, len(buf))
		_ = p.stdout.SetReadDeadline(time.Now().Add(ioTimeout))
		if _, err := io.ReadFull(p.stdout, buf[:n]); err != nil {
			t.Fatalf("reading the run: %v", err)
		}
		cmp(buf[:n])
		left -= n
	}
	// What follows the run: the tail of each level, innermost first.
	tailLen := size - (off + runLen)
	var tails []byte
	if tailLen > 0 {
		tails = p.readN(tailLen)
	}
	for i := len(spans) - 1; i >= 0; i-- {
		if afters[i] > len(tails) {
			t.Fatalf("tails of %d bytes, level %d wants %d", len(tails), i, afters[i])
		}
		spans[i].after, tails = tails[:afters[i]], tails[afters[i]:]
	}

	// A sample of the same frame with 4096 elements decodes, with the
	// generated types, to 4096 elements: so the full frame would too.
	const k = 4096
	sample := rebuild(spans, append(append([]byte{}, pre...), bytes.Repeat(elem, k)...))
	if n, err := spec.count(sample); err != nil || n != k {
		t.Fatalf("sample decodes to %d elements (%v), want %d", n, err, k)
	}

	projected := int64(count) * spec.cost
	t.Logf("%d bytes, %d elements of %d bytes; decoded >= %d bytes (%.1fx)",
		size, count, len(elem), projected, float64(projected)/float64(size))
	if projected <= budget.Default {
		t.Fatalf("decoded size %d does not exceed the 1 GiB budget", projected)
	}
	if projected < 8*int64(size) {
		t.Fatalf("amplification only %.1fx", float64(projected)/float64(size))
	}
}

func deepNestingCheck(t *testing.T, p *proc, sc hostile.Scenario) {
	p.configure()
	p.feed(sc.Code)
	body := p.read()
	if _, err := decode2(body); err == nil {
		t.Fatal("protobuf-go decoded a million levels (its recursion limit should stop it)")
	}
	_, obj, err := descend(body, nums(6, 1))
	if err != nil {
		t.Fatal(err)
	}
	depth := 0
	// Not bytes.Equal: under the race detector it checks the whole
	// (megabytes long) slice at every level.
	for len(obj) != 2 || obj[0] != 0x12 || obj[1] != 0x00 {
		for _, want := range []protowire.Number{11, 1} {
			num, typ, tl := protowire.ConsumeTag(obj)
			if tl < 0 || num != want || typ != protowire.BytesType {
				t.Fatalf("level %d: field %d/%d, want %d", depth, num, typ, want)
			}
			inner, vl := protowire.ConsumeBytes(obj[tl:])
			if vl < 0 || tl+vl != len(obj) {
				t.Fatalf("level %d: trailing or short bytes", depth)
			}
			obj = inner
		}
		depth++
	}
	if depth != 1<<20 {
		t.Fatalf("depth %d, want %d", depth, 1<<20)
	}
	t.Logf("%d levels in %d bytes", depth, len(body))
}

func deepChainCheck(t *testing.T, p *proc, sc hostile.Scenario) {
	p.configure()
	p.feed(sc.Code)
	body := p.read()
	_, complete, err := descend(body, nums(6))
	if err != nil {
		t.Fatal(err)
	}
	var root uint64
	var arena []byte
	for b := complete; len(b) > 0; {
		num, typ, tl := protowire.ConsumeTag(b)
		b = b[tl:]
		switch {
		case num == 1 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			root, b = v, b[n:]
		case num == 2 && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			arena, b = v, b[n:]
		default:
			t.Fatalf("unexpected field %d in Complete", num)
		}
	}
	nodes := 0
	for b := arena; len(b) > 0; {
		num, typ, tl := protowire.ConsumeTag(b)
		b = b[tl:]
		if num == 1 {
			hint, n := protowire.ConsumeVarint(b)
			b = b[n:]
			if hint != 1<<20+1 {
				t.Fatalf("node_count %d", hint)
			}
			continue
		}
		if num != 2 || typ != protowire.BytesType {
			t.Fatalf("unexpected arena field %d", num)
		}
		node, n := protowire.ConsumeBytes(b)
		b = b[n:]
		if nodes == 0 {
			if !bytes.Equal(node, []byte{0x12, 0x00}) {
				t.Fatalf("node 0 is %x, want None", node)
			}
		} else {
			// node = list(11){ items(1) packed [nodes-1] }
			if _, _, tl := protowire.ConsumeTag(node); tl != 1 || node[0] != 0x5a {
				t.Fatalf("node %d is %x, want a list", nodes, node)
			}
			ix, _ := protowire.ConsumeBytes(node[1:])
			packed, _ := protowire.ConsumeBytes(ix[1:])
			id, _ := protowire.ConsumeVarint(packed)
			if ix[0] != 0x0a || id != uint64(nodes-1) {
				t.Fatalf("node %d refers to %d, want %d", nodes, id, nodes-1)
			}
		}
		nodes++
	}
	if nodes != 1<<20+1 || root != 1<<20 {
		t.Fatalf("%d nodes with root %d", nodes, root)
	}
	t.Logf("%d nodes in %d bytes", nodes, len(body))
}

// hugeIntCheck streams huge_int's frame: ChildEvent.complete(6) →
// Complete.value(1) → MontyObject.big_int(6) → BigInt.magnitude(2), a
// magnitude of HugeIntBytes 0xff bytes, then the turn's stamps.
func hugeIntCheck(t *testing.T, p *proc, sc hostile.Scenario) {
	p.configure()
	p.feed(sc.Code)
	size := int(binary.LittleEndian.Uint32(p.readN(4)))
	if size > frame.MaxFrameLen || size < hostile.HugeIntBytes {
		t.Fatalf("frame of %d bytes: want a little over %d, within the cap", size, hostile.HugeIntBytes)
	}
	head := p.readN(32)
	off, inner := 0, size
	for _, want := range []protowire.Number{6, 1, 6, 2} {
		num, typ, tl := protowire.ConsumeTag(head[off:])
		if tl < 0 || num != want || typ != protowire.BytesType {
			t.Fatalf("at %d: field %d/%d, want %d", off, num, typ, want)
		}
		l, ll := protowire.ConsumeVarint(head[off+tl:])
		if ll < 0 || int(l) > inner-tl-ll {
			t.Fatalf("at %d: bad length", off)
		}
		off += tl + ll
		inner = int(l)
	}
	if inner != hostile.HugeIntBytes {
		t.Fatalf("magnitude of %d bytes, want %d", inner, hostile.HugeIntBytes)
	}
	ff := bytes.Repeat([]byte{0xff}, 1<<20)
	check := func(b []byte) {
		if !bytes.Equal(b, ff[:len(b)]) {
			t.Fatal("the magnitude holds a byte other than 0xff")
		}
	}
	check(head[off:])
	buf := make([]byte, 1<<20)
	for left := inner - (len(head) - off); left > 0; {
		n := min(left, len(buf))
		_ = p.stdout.SetReadDeadline(time.Now().Add(ioTimeout))
		if _, err := io.ReadFull(p.stdout, buf[:n]); err != nil {
			t.Fatalf("reading the magnitude: %v", err)
		}
		check(buf[:n])
		left -= n
	}
	// The rest is the Complete's stamps: fields that follow the value.
	tail := p.readN(size - off - inner)
	for len(tail) > 0 {
		num, typ, n := protowire.ConsumeField(tail)
		if n < 0 || typ != protowire.VarintType {
			t.Fatalf("stamps: field %d/%d", num, typ)
		}
		tail = tail[n:]
	}
}
