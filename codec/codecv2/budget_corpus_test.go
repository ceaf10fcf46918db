package codecv2

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/internal/codectest"
)

// TestRepeatedVectorFramesStayWithinTheBudget holds every small frame
// of the recorded sessions (testdata/v2), requests and events, to the
// budget when it is repeated many times in one frame: protobuf merges
// the copies, so repeated fields grow and every other field is read
// again, and an allocation made per field occurrence without a charge
// shows up hundreds of times over. A few frames of each shape are taken.
// Each repeated frame is decoded under
// the least budget that admits it (that decode may still fail a
// conversion check) and may allocate no more than that budget, plus a
// quarter for the allocator's size classes and a constant, as in
// TestConversionFailuresStayWithinTheBudget.
func TestRepeatedVectorFramesStayWithinTheBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation")
	}
	const copies, maxFrame = 300, 1 << 10
	type frame struct {
		name    string
		request bool
		b       []byte
	}
	var frames []frame
	// A few frames per shape (direction, arm, first field of the arm)
	// keep the test quick: the recordings repeat shapes many times.
	shapes := map[[3]byte]int{}
	add := func(name string, request bool, b []byte) {
		if len(b) < 3 || len(b) > maxFrame {
			return
		}
		k := [3]byte{0, b[0], b[2]}
		if request {
			k[0] = 1
		}
		if shapes[k]++; shapes[k] > 3 {
			return
		}
		frames = append(frames, frame{name, request, b})
	}
	for _, v := range loadVectors(t) {
		for _, sf := range v.sentFrames(t) {
			add(v.Name+"/request", true, sf.frame)
		}
		for _, h := range v.Responses {
			add(v.Name+"/event", false, unhex(t, h))
		}
	}
	for _, f := range frames {
		rep := bytes.Repeat(f.b, copies)
		decode := func(l codec.Limits) error {
			var err error
			if f.request {
				_, err = DecodeRequest(rep, l)
			} else {
				_, err = DecodeEvent(rep, l)
			}
			return err
		}
		least := leastBudget(decode)
		var err error
		got := codectest.Measure(func() { err = decode(codec.Limits{MaxDecodeBytes: least}) })
		if errors.Is(err, codec.ErrBudget) {
			t.Fatalf("%s: %v", f.name, err)
		}
		if got > uint64(least)*5/4+16<<10 {
			t.Errorf("%s ×%d (%d B, %v): allocated %d bytes under a budget of %d", f.name, copies, len(rep), err, got, least)
		}
	}
	t.Logf("%d frames", len(frames))
}
