package codecv4

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/internal/codectest"
)

// TestRepeatedCorpusFramesStayWithinTheBudget holds every message of the
// protocol-4 and protocol-5 corpora to its budget when it is repeated
// many times in one frame. Protobuf merges the copies: repeated fields
// grow, scalars and strings are read again and replace the earlier
// value, so an allocation a decoder makes per field occurrence without
// charging it shows up thousands of times over. heapFrames covers a few
// chosen shapes; this covers every arm the corpora hold (OS calls, the
// protocol-5 policy and source positions included), those that then fail
// their checks too.
func TestRepeatedCorpusFramesStayWithinTheBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation")
	}
	const copies = 2000
	type frame struct {
		name    string
		request bool
		v       *dialect
		b       []byte
	}
	var frames []frame
	for i, r := range requestCorpus() {
		frames = append(frames, frame{fmt.Sprintf("v4/request%d", i), true, dialect4, mustEncodeRequest(t, r)})
	}
	for i, e := range eventCorpus() {
		frames = append(frames, frame{fmt.Sprintf("v4/event%d", i), false, dialect4, mustEncodeEvent(t, e)})
	}
	for i, r := range request5Corpus() {
		frames = append(frames, frame{fmt.Sprintf("v5/request%d", i), true, dialect5, mustEncode5Request(t, r)})
	}
	for i, e := range event5Corpus() {
		frames = append(frames, frame{fmt.Sprintf("v5/event%d", i), false, dialect5, mustEncode5Event(t, e)})
	}
	for _, f := range frames {
		rep := bytes.Repeat(f.b, copies)
		decode := func(l codec.Limits) (spent, error) {
			if f.request {
				_, s, err := decodeRequestIn(rep, l, f.v)
				return s, err
			}
			_, s, err := decodeEventIn(rep, l, f.v)
			return s, err
		}
		charged, err := decode(codec.Limits{})
		if errors.Is(err, codec.ErrBudget) {
			t.Fatalf("%s: %v", f.name, err)
		}
		var again error
		got := codectest.Measure(func() { _, again = decode(lim(charged.Charged())) })
		if errors.Is(again, codec.ErrBudget) {
			t.Errorf("%s: the budget it charged (%d) is not enough a second time: %v", f.name, charged, again)
			continue
		}
		if limit := uint64(charged) + heapSlack; got > limit {
			t.Errorf("%s ×%d (%d B, %v): allocated %d > charged %d + slack", f.name, copies, len(rep), err, got, charged)
		}
	}
}

// TestNodeVectorAttacksAreBounded is TestWrapperAttacksAreBounded for the
// repeated fields inside arena nodes that it leaves out: a named tuple's
// field names and values (unpacked entries and a packed run), a tuple's,
// set's and frozenset's items, and the attribute pairs of a type and of a
// class instance. Each is 100,000 empty entries (2 bytes each on the
// wire) and must fail for the budget under 4 KiB, allocating no more than
// that budget and the slack.
func TestNodeVectorAttacksAreBounded(t *testing.T) {
	const n = 100_000
	for name, frame := range map[string][]byte{
		"named_tuple_field_names":   completeFrame(0, node(pb(nil).msg(13, repeatBytes(n, 0x12, 0x00)))),
		"named_tuple_values":        completeFrame(0, node(pb(nil).msg(13, repeatBytes(n, 0x18, 0x00)))),
		"named_tuple_values_packed": completeFrame(0, node(pb(nil).msg(13, pb(nil).bytes(3, make([]byte, n))))),
		"tuple_items":               completeFrame(0, node(pb(nil).msg(12, repeatBytes(n, 0x08, 0x00)))),
		"set_items":                 completeFrame(0, node(pb(nil).msg(15, repeatBytes(n, 0x08, 0x00)))),
		"frozen_set_items":          completeFrame(0, node(pb(nil).msg(16, repeatBytes(n, 0x08, 0x00)))),
		"type_attrs":                completeFrame(0, node(pb(nil).msg(23, pb(nil).msg(5, repeatBytes(n, 0x0a, 0x00))))),
		"class_instance_attrs":      completeFrame(0, node(pb(nil).msg(24, pb(nil).msg(3, repeatBytes(n, 0x0a, 0x00))))),
	} {
		for _, v := range []*dialect{dialect4, dialect5} {
			_, b, err := decodeEventIn(frame, lim(4096), v)
			if !errors.Is(err, codec.ErrBudget) {
				t.Errorf("%s at %s: %v", name, v.Name, err)
				continue
			}
			if b.Charged() > 4096 {
				t.Errorf("%s at %s: charged %d", name, v.Name, b.Charged())
			}
			if raceEnabled {
				continue
			}
			if got := codectest.Measure(func() { decodeEventIn(frame, lim(4096), v) }); got > 4096+heapSlack {
				t.Errorf("%s at %s: allocated %d bytes under a 4096-byte budget", name, v.Name, got)
			}
		}
	}
}
