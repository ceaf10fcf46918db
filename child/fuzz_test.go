package child

import (
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

var fuzzScripts = []string{"print:a", "call", "eager", "os", "lookup", "call futures", "error", "typing",
	"print:x call print:y lookup", "big:9000 call", "err:e raw:r"}

// FuzzServe drives the state machine with random request sequences over
// the scripted engine: no panic, every reply decodes, exactly one
// turn-ending event per request with nothing after it, and the child ends
// only on Shutdown or a refused version. The protocol is 4, or 2 when the
// first byte's bit 7 is set, else 5 when its bit 6 is.
func FuzzServe(f *testing.F) {
	f.Add([]byte{0, 1, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{0, 2, 1, 3, 2, 3, 3, 7, 11, 12})
	f.Add([]byte{0, 1, 5, 10, 0, 9, 3})
	f.Add([]byte{13, 0, 1, 6, 4, 2, 4, 0, 14})
	f.Add([]byte{0x40, 0x08, 1, 3, 2, 0, 6, 0, 7, 1, 12, 0})
	f.Add([]byte{0x40, 0x09, 1, 1, 6, 0, 7, 0, 8, 0, 0, 0x18, 1, 6})
	f.Fuzz(func(t *testing.T, data []byte) {
		version := uint32(4)
		switch {
		case len(data) > 0 && data[0]&0x80 != 0:
			version = 2
		case len(data) > 0 && data[0]&0x40 != 0:
			version = 5
		}
		p := startChild(t, version, Options{Versions: []uint32{version}})
		next := func() byte {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return b
		}
		for steps := 0; len(data) > 0 && steps < 64; steps++ {
			op := next()
			arg := next()
			var ev *message.ChildEvent
			switch op % 16 {
			case 0:
				v := version
				if arg == 0xff {
					v = uint32(arg)
				}
				c := &message.Configure{ProtocolVersion: v, PrintFlushIntervalMs: u32(uint32(arg % 3))}
				if v == 5 && arg&0x08 != 0 {
					// Protocol 5's limits, which the child echoes, and a
					// policy it validates.
					us := uint64(arg) * 1000
					c.Limits = &message.ResourceLimits{MaxFeedDurationMicros: &us, MaxTurnDurationMicros: &us, MaxTotalSleepMicros: &us}
					c.OsPolicy = &message.OsPolicy{Clock: message.ClockFixed, Fixed: message.FixedDateTime{UnixSeconds: -int64(arg) << 40, Microsecond: uint32(arg)}}
				}
				ev = p.do(c)
			case 1:
				ev = p.feed(fuzzScripts[int(arg)%len(fuzzScripts)])
			case 2:
				r := &message.ResumeCall{CallID: uint32(arg % 4)}
				if arg&0x10 == 0 {
					r.Result = &message.ExtResult{Kind: message.ResultKind(arg>>5%5 + 1)}
					switch r.Result.Kind {
					case message.ResultReturn:
						r.Result.Value = r.Values.Add(value.Int(int64(arg)))
					case message.ResultError:
						r.Result.Error = message.NewException("ValueError", "x")
					case message.ResultNotFound:
						r.Result.Name = "f"
					}
				}
				ev = p.do(r)
			case 3:
				r := &message.ResumeNameLookup{Kind: message.LookupKind(arg % 4)}
				switch r.Kind {
				case message.LookupValue:
					r.Value = r.Values.Add(value.None())
				case message.LookupError:
					r.Error = message.NewException("NameError", "x")
				}
				ev = p.do(r)
			case 4:
				r := &message.ResumeFutures{}
				for i := 0; i < int(arg%3); i++ {
					fr := message.FutureResult{CallID: uint32(arg>>2) % 3, Result: &message.ExtResult{Kind: message.ResultKind((int(arg)>>4+i)%4 + 1)}}
					switch fr.Result.Kind {
					case message.ResultReturn:
						fr.Result.Value = r.Values.Add(value.None())
					case message.ResultError:
						fr.Result.Error = message.NewException("ValueError", "x")
					}
					r.Results = append(r.Results, fr)
				}
				ev = p.do(r)
			case 5:
				r := &message.AbortFeed{}
				if arg&1 == 0 {
					r.Exception = message.NewException("RuntimeError", "abort")
				}
				ev = p.do(r)
			case 6:
				ev = p.do(&message.Dump{})
			case 7:
				states := []string{"dump:", "dump:call", "dump:lookup print:z", "nonsense"}
				ev = p.do(&message.Load{State: []byte(states[int(arg)%len(states)])})
			case 8:
				ev = p.do(&message.Reset{})
			case 9:
				ev = p.do(&message.InstallDependencies{})
			case 10:
				ev = p.raw([]byte{arg, arg ^ 0x5a, 0x01})
			case 11:
				ev = p.raw(nil)
			case 12:
				ev = p.do(&message.Shutdown{})
				if ev.Body.EventKind() != message.KindOk {
					t.Fatalf("Shutdown answered %s", describe(ev))
				}
				if err := p.exit(); err != nil {
					t.Fatalf("Shutdown ended with %v", err)
				}
				return
			default:
				ev = p.feed(fuzzScripts[int(arg)%len(fuzzScripts)] + " " + fuzzScripts[int(arg>>4)%len(fuzzScripts)])
			}
			switch b := ev.Body.(type) {
			case *message.FatalError:
				if err := p.exit(); err == nil {
					t.Fatalf("FatalError %q but a clean end", b.Message)
				}
				return
			case *message.Error:
				if b.Exception == nil || b.Exception.Type == "" {
					t.Fatal("Error without an exception")
				}
			case *message.Complete:
				if b.Values.Check(b.Value) != nil {
					t.Fatal("Complete with an invalid value")
				}
			}
		}
	})
}
