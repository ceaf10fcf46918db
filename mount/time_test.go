package mount

import (
	"math/big"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// TestTimeArm: protocol 5's time arm (every time-module clock under
// datetime=call_host) is answered from Options.Clock: time.time as float
// Unix seconds, time.time_ns as int nanoseconds, the monotonic and
// perf_counter clocks as the time elapsed on the clock since the table was
// built. A caller the table does not know stays not_handled.
func TestTimeArm(t *testing.T) {
	at := time.Date(2025, 1, 2, 23, 4, 5, 250_000_000, time.UTC)
	tbl := envTable(t, Options{Clock: FixedClock(at)})
	call := func(caller string) *message.ResumeCall {
		return doCall(t, tbl, &message.OsCall{CallID: 9, Op: message.OpTime, Caller: caller})
	}
	n := rootOf(t, call("time.time"))
	if n.Kind != value.KindFloat || n.Float() != float64(at.UnixNano())/1e9 {
		t.Fatalf("time.time: %s %v, want float %v", n.Kind, n.Float(), float64(at.UnixNano())/1e9)
	}
	wantInt(t, call("time.time_ns"), at.UnixNano())
	for _, c := range []string{"time.monotonic", "time.perf_counter"} {
		// A fixed clock stands still.
		if n := rootOf(t, call(c)); n.Kind != value.KindFloat || n.Float() != 0 {
			t.Fatalf("%s: %s %v, want float 0", c, n.Kind, n.Float())
		}
	}
	wantInt(t, call("time.monotonic_ns"), 0)
	wantInt(t, call("time.perf_counter_ns"), 0)
	wantNotHandled(t, call("time.no_such_clock"))
	wantNotHandled(t, call(""))

	// The real clock: time.time is now, and monotonic never goes back.
	real := envTable(t, Options{})
	before := time.Now()
	n = rootOf(t, doCall(t, real, &message.OsCall{Op: message.OpTime, Caller: "time.time"}))
	if n.Kind != value.KindFloat || n.Float() < float64(before.Unix())-1 || n.Float() > float64(time.Now().Unix())+1 {
		t.Fatalf("real time.time %s %v", n.Kind, n.Float())
	}
	m1 := rootOf(t, doCall(t, real, &message.OsCall{Op: message.OpTime, Caller: "time.monotonic_ns"})).Int()
	m2 := rootOf(t, doCall(t, real, &message.OsCall{Op: message.OpTime, Caller: "time.monotonic_ns"})).Int()
	if m1 < 0 || m2 < m1 {
		t.Fatalf("monotonic_ns went %d then %d", m1, m2)
	}
}

// TestTimeArmFarClock: a clock beyond int64 nanoseconds (after 2262) still
// gives the exact time.time_ns, as a big int, and a finite time.time.
func TestTimeArmFarClock(t *testing.T) {
	at := time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC)
	tbl := envTable(t, Options{Clock: FixedClock(at)})
	n := rootOf(t, doCall(t, tbl, &message.OsCall{Op: message.OpTime, Caller: "time.time_ns"}))
	want := new(big.Int).Mul(big.NewInt(at.Unix()), big.NewInt(1e9))
	want.Add(want, big.NewInt(999_999_999))
	if n.Kind != value.KindBigInt || n.Ext().(*big.Int).Cmp(want) != 0 {
		t.Fatalf("time_ns in 9999: %s %v, want %v", n.Kind, n.Ext(), want)
	}
	n = rootOf(t, doCall(t, tbl, &message.OsCall{Op: message.OpTime, Caller: "time.time"}))
	if n.Kind != value.KindFloat || n.Float() < float64(at.Unix()) {
		t.Fatalf("time.time in 9999: %s %v", n.Kind, n.Float())
	}
}
