package codecv2

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
	"testing"
)

// TestLiveLeafCheckOrder gives a DateTime and a Time two faults at a time,
// every pair of them, and requires our decoder to report the one the
// worker reports (its order: a timezone name without an offset first, then
// the fields in order, the offset's range, and Time's fold).
func TestLiveLeafCheckOrder(t *testing.T) {
	w := startWorker(t)
	type fld struct {
		name string
		num  uint64
		v    uint64
	}
	dt := []fld{{"year", 1, 0}, {"month", 2, 13}, {"day", 3, 32}, {"hour", 4, 24}, {"minute", 5, 60}, {"second", 6, 60}, {"micro", 7, 1000000}, {"offset", 8, 100000}, {"name", 9, 0}}
	tm := []fld{{"hour", 1, 24}, {"minute", 2, 60}, {"second", 3, 60}, {"micro", 4, 1000000}, {"offset", 5, 100000}, {"name", 6, 0}, {"fold", 7, 2}}
	checked := 0
	run := func(arm uint64, all []fld, base map[uint64]uint64, nameNum, offNum uint64) {
		for i := range all {
			for j := range all {
				if i >= j {
					continue
				}
				vals := map[uint64]uint64{}
				for k, v := range base {
					vals[k] = v
				}
				name := false
				for _, f := range []fld{all[i], all[j]} {
					if f.num == nameNum {
						name = true
						delete(vals, offNum)
					} else {
						vals[f.num] = f.v
					}
				}
				var body []byte
				for n := uint64(1); n <= 9; n++ {
					if v, ok := vals[n]; ok {
						body = append(body, vi(protowire.Number(n), v)...)
					}
				}
				if name {
					body = append(body, sf(protowire.Number(nameNum), "X")...)
				}
				f := feedWith(ld(protowire.Number(arm), body))
				got := errText(last(w.turnRaw(f)))
				_, err := DecodeRequest(f, codec.Limits{})
				if want := "RuntimeError: protocol violation: malformed request: " + fmt.Sprint(err); got != want {
					t.Errorf("%s and %s: worker %s, ours %v", all[i].name, all[j].name, got, err)
				}
				checked++
			}
		}
	}
	run(19, dt, map[uint64]uint64{1: 2020, 2: 1, 3: 1, 8: 60}, 9, 8)
	run(18, tm, map[uint64]uint64{5: 60}, 6, 5)
	if checked != 36+21 {
		t.Fatalf("%d pairs checked", checked)
	}
}
