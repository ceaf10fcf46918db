//go:build unix

package conform

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// Rules on Dump/Load, limits, OS calls and host objects.

func dumpOf(t *rt, s *sess, what string) []byte {
	r := s.Expect(s.Turn(&message.Dump{}), what, isDumpResult)
	st := r.Event.Body.(*message.DumpResult).State
	if len(st) == 0 {
		t.Failf("%s: expected a non-empty dump, got 0 bytes", what)
	}
	return st
}

func init() {
	// --- dump and load ----------------------------------------------------
	rule("dump.configured-builds-session", "contract §8; behaviour §5", every, 0,
		"Dump in the Configured state answers DumpResult (building an empty interpreter)",
		func(t *rt) {
			s := t.Fresh()
			dumpOf(t, s, "Dump in Configured")
		})

	rule("dump.configured-starts-session", "contract §8", every, 0,
		"Dump in the Configured state builds the interpreter (state Ready), so a Load afterwards is refused (E9)",
		func(t *rt) {
			s := t.Fresh()
			st := dumpOf(t, s, "Dump in Configured")
			s.Expect(s.Turn(&message.Load{State: st}), "Load after the Dump",
				violation("protocol violation: Load requires a session that has not started (a feed has already run)"))
		})

	rule("dump.keeps-session", "contract §12; behaviour §14", every, 0,
		"Dump of an idle session leaves it usable with its globals",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("q = 8"), "Feed q = 8", isComplete)
			dumpOf(t, s, "Dump in Ready")
			s.Expect(s.Feed("q"), "Feed q afterwards", completes("8"))
		})

	rule("dump.while-suspended", "contract §8; behaviour §14", every, 0,
		"Dump while suspended answers DumpResult and the suspension stays answerable",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Feed("foo() + 1"), "Feed foo() + 1", isCall))
			dumpOf(t, s, "Dump while suspended")
			s.Expect(s.Turn(ret(c.CallID, 1)), "ResumeCall afterwards", completes("2"))
		})

	rule("load.idle-restores-globals", "contract §12; behaviour §14", every, 0,
		"Load of an idle dump in a fresh worker answers Ok with restored_script_name, and the globals are back",
		func(t *rt) {
			cfg := t.Config()
			cfg.ScriptName = "restored.py"
			a := t.FreshWith(cfg)
			a.Expect(a.Feed("g1 = 'kept'"), "Feed g1 = 'kept'", isComplete)
			st := dumpOf(t, a, "Dump")
			b := t.Open()
			r := b.Expect(b.Turn(&message.Load{State: st}), "Load in NoSession", isOk)
			if n := r.Event.RestoredScriptName; n == nil || *n != "restored.py" {
				t.Failf("expected restored_script_name \"restored.py\" on the Load's Ok, got %s", describe(r.Event))
			}
			b.Expect(b.Feed("g1"), "Feed g1 after Load", completes("'kept'"))
		})

	rule("load.reannounces-suspension", "contract §12; behaviour §14", every, 0,
		"Load of a dump taken while suspended re-announces the same FunctionCall (name, args, call_id), which can then be resumed",
		func(t *rt) {
			a := t.Fresh()
			c := callOf(a.Expect(a.Feed("x = 1\nfoo(7) + x"), "Feed foo(7)", isCall))
			st := dumpOf(t, a, "Dump while suspended")
			b := t.Open()
			r := b.Expect(b.Turn(&message.Load{State: st}), "Load of a suspended dump", isCall)
			c2 := callOf(r)
			if c2.FunctionName != c.FunctionName || c2.CallID != c.CallID || argsRepr(c2) != argsRepr(c) {
				t.Failf("expected the re-announced %s, got %s", describe(&message.ChildEvent{Body: c}), describe(r.Event))
			}
			b.Expect(b.Turn(ret(c2.CallID, 10)), "ResumeCall after Load", completes("11"))
		})

	rule("load.keeps-flush-interval", "contract §11", every, 0,
		"The print flush interval is applied when Configure arrives, so a Load afterwards keeps it (line buffering stays on)",
		func(t *rt) {
			a := t.Fresh()
			st := dumpOf(t, a, "Dump")
			cfg := t.Config()
			cfg.PrintFlushIntervalMs = u32p(0)
			b := t.FreshWith(cfg)
			b.Expect(b.Turn(&message.Load{State: st}), "Load in Configured", isOk)
			r := b.Expect(b.Feed("print('a')\nprint('b')"), "Feed two prints", isComplete, printed("a\nb\n"))
			if len(r.Prints) != 2 {
				t.Failf("expected two Print events (line buffering kept across the Load), got %d", len(r.Prints))
			}
		})

	rule("load.execution-time-restored", "contract §8, §12; behaviour §6", every, 0,
		"total_execution_micros survives Dump/Load: the Load's reply carries at least the time spent before the Dump",
		func(t *rt) {
			a := t.Fresh()
			r := a.Expect(a.Feed("n = 0\nfor i in range(20000):\n    n += i\nn"), "Feed a loop", isComplete)
			before := r.Event.TotalExecutionMicros
			if before == 0 {
				t.Failf("expected total_execution_micros > 0 after running a loop, got %s", describe(r.Event))
			}
			st := dumpOf(t, a, "Dump")
			b := t.Open()
			r = b.Expect(b.Turn(&message.Load{State: st}), "Load", isOk)
			if r.Event.TotalExecutionMicros < before {
				t.Failf("expected total_execution_micros >= %d on the Load's Ok, got %s", before, describe(r.Event))
			}
		})

	rule("load.garbage-rejected", "contract §12; behaviour §14", every, 0,
		"Load of bytes that are not a dump gets \"protocol violation: failed to load session: …\" and a valid Load still works",
		func(t *rt) {
			a := t.Fresh()
			st := dumpOf(t, a, "Dump")
			b := t.Open()
			b.Expect(b.Turn(&message.Load{State: []byte("definitely not a dump")}), "Load of garbage",
				raisesLike("RuntimeError", "protocol violation: failed to load session: "))
			b.Expect(b.Turn(&message.Load{State: st}), "Load of a real dump afterwards", isOk)
		})

	rule("load.old-dump-version-rejected", "contract §12; tests dispatch.rs load_rejects_old_dump_version", upTo4, 0,
		"Load of a dump whose format version (u16 LE at bytes 6..8) is older than the build reads gets \"failed to load session: dump format version {v} is older than {min}, the oldest this build reads\"",
		func(t *rt) {
			a := t.Fresh()
			st := dumpOf(t, a, "Dump")
			if len(st) < 8 {
				t.Failf("expected a dump of at least 8 bytes, got %d", len(st))
			}
			cur := binary.LittleEndian.Uint16(st[6:8])
			if cur == 0 {
				t.Skipf("the dump's format version field is 0; no older version exists")
			}
			old := slices.Clone(st)
			binary.LittleEndian.PutUint16(old[6:8], cur-1)
			b := t.Open()
			b.Expect(b.Turn(&message.Load{State: old}), "Load of a dump one format version older",
				raisesLike("RuntimeError", fmt.Sprintf("failed to load session: dump format version %d is older than ", cur-1)))
			b.Expect(b.Turn(&message.Load{State: st}), "Load of the real dump afterwards", isOk)
		})

	rule("load.truncated-rejected", "behaviour §14", every, 0,
		"Load of a truncated dump is refused with \"failed to load session: …\"",
		func(t *rt) {
			a := t.Fresh()
			a.Expect(a.Feed("big = list(range(100))"), "Feed", isComplete)
			st := dumpOf(t, a, "Dump")
			b := t.Open()
			b.Expect(b.Turn(&message.Load{State: st[:len(st)/2]}), "Load of half a dump",
				raisesLike("RuntimeError", "protocol violation: failed to load session: "))
		})

	rule("load.after-load-rejected", "contract §12; behaviour §5 (E9)", every, 0,
		"A second Load right after a successful Load of an idle dump is refused (E9)",
		func(t *rt) {
			a := t.Fresh()
			a.Expect(a.Feed("1"), "Feed", isComplete)
			st := dumpOf(t, a, "Dump")
			b := t.Open()
			b.Expect(b.Turn(&message.Load{State: st}), "first Load", isOk)
			b.Expect(b.Turn(&message.Load{State: st}), "second Load",
				violation("protocol violation: Load requires a session that has not started (a feed has already run)"))
		})

	rule("load.in-configured-replaces", "contract §8; behaviour §5", every, 0,
		"Load in the Configured state replaces the configured session",
		func(t *rt) {
			a := t.Fresh()
			a.Expect(a.Feed("m = 'from dump'"), "Feed", isComplete)
			st := dumpOf(t, a, "Dump")
			b := t.Fresh()
			b.Expect(b.Turn(&message.Load{State: st}), "Load in Configured", isOk)
			b.Expect(b.Feed("m"), "Feed m", completes("'from dump'"))
		})

	// --- limits -----------------------------------------------------------
	rule("limits.duration-timeout-error", "contract §12; behaviour §13", upTo4, 0,
		"Running past max_duration_micros ends the feed with Error TimeoutError and the worker keeps serving",
		func(t *rt) {
			cfg := t.Config()
			cfg.Limits = &message.ResourceLimits{MaxDurationMicros: u64(200_000)}
			s := t.FreshWith(cfg)
			s.Expect(s.Feed("while True:\n    pass"), "Feed an endless loop", raisesLike("TimeoutError", "time limit exceeded"))
			s.Expect(s.Turn(&message.Dump{}), "Dump afterwards", isDumpResult)
		})

	rule("limits.timeout-uncatchable", "contract §12", upTo4, 0,
		"The TimeoutError of max_duration_micros cannot be caught by sandbox code",
		func(t *rt) {
			cfg := t.Config()
			cfg.Limits = &message.ResourceLimits{MaxDurationMicros: u64(100_000)}
			s := t.FreshWith(cfg)
			s.Expect(s.Feed("try:\n    while True:\n        pass\nexcept BaseException:\n    r = 'caught'\nr"), "Feed a guarded endless loop",
				raisesLike("TimeoutError", "time limit exceeded"))
		})

	rule("limits.recursion-error-catchable", "contract §12", every, 0,
		"RecursionError, unlike the other resource errors, can be caught by sandbox code",
		func(t *rt) {
			cfg := t.Config()
			cfg.Limits = &message.ResourceLimits{MaxRecursionDepth: u64(50)}
			s := t.FreshWith(cfg)
			s.Expect(s.Feed("def r(n):\n    return r(n + 1)\ntry:\n    r(0)\n    v = 'no'\nexcept RecursionError:\n    v = 'caught'\nv"), "Feed guarded recursion",
				completes("'caught'"))
		})

	rule("limits.memory-error", "contract §12; behaviour §13", every, 0,
		"Allocating past max_memory_bytes raises MemoryError (uncatchable) ending the feed; the session survives",
		func(t *rt) {
			cfg := t.Config()
			cfg.Limits = &message.ResourceLimits{MaxMemoryBytes: u64(1 << 20)}
			s := t.FreshWith(cfg)
			s.Expect(s.Feed("try:\n    x = [0] * 10**7\nexcept MemoryError:\n    x = 'caught'\nx"), "Feed a 10**7 list under 1 MiB",
				raisesLike("MemoryError", "memory limit exceeded"))
			s.Expect(s.Feed("1 + 1"), "Feed afterwards", completes("2"))
		})

	rule("limits.memory-exit-65", "contract §12, §14; behaviour §13, §15", every, NeedProcess,
		"An allocation the process allocator refuses ends the worker with exit 65 (OOM_EXIT_CODE), without a frame",
		func(t *rt) {
			s := t.Fresh()
			s.sendFeed("'x' * 10**13")
			s.ExpectEOF("after an allocation of 10 TB")
			s.ExpectExit(65, 15*time.Second)
		})

	rule("limits.recursion-error", "contract §12; behaviour §13", every, 0,
		"Exceeding max_recursion_depth raises RecursionError \"maximum recursion depth exceeded\"",
		func(t *rt) {
			cfg := t.Config()
			cfg.Limits = &message.ResourceLimits{MaxRecursionDepth: u64(50)}
			s := t.FreshWith(cfg)
			s.Expect(s.Feed("def r(n):\n    return r(n + 1)\nr(0)"), "Feed endless recursion",
				raises("RecursionError", "maximum recursion depth exceeded", false))
			s.Expect(s.Feed("1"), "Feed afterwards", completes("1"))
		})

	// --- OS calls ---------------------------------------------------------
	rule("os.exists-call", "contract §4; behaviour §10", every, 0,
		"Path(p).exists() suspends with OsCall exists(p) and the answer is the result",
		func(t *rt) {
			s := t.Fresh()
			r := s.Expect(s.Feed("from pathlib import Path\nPath('/data/x.txt').exists()"), "Feed Path.exists", isOsCall)
			o := r.Event.Body.(*message.OsCall)
			if o.Op != message.OpExists || o.Path != "/data/x.txt" {
				t.Failf("expected OsCall exists(\"/data/x.txt\"), got %s", describe(r.Event))
			}
			s.Expect(s.Turn(ret(o.CallID, true)), "ResumeCall True", completes("True"))
		})

	rule("os.not-handled-permission-error", "contract §8; behaviour §10", every, 0,
		"not_handled answering a filesystem OsCall raises PermissionError naming the path",
		func(t *rt) {
			s := t.Fresh()
			r := s.Expect(s.Feed("from pathlib import Path\nPath('/secret').read_text()"), "Feed Path.read_text", isOsCall)
			o := r.Event.Body.(*message.OsCall)
			s.Expect(s.Turn(&message.ResumeCall{CallID: o.CallID, Result: &message.ExtResult{Kind: message.ResultNotHandled}}), "ResumeCall not_handled",
				raisesLike("PermissionError", "/secret"))
		})

	rule("os.getenv-call", "contract §3, §4; behaviour §10", every, 0,
		"os.getenv(k, d) suspends with OsCall getenv{key, default} (default a root of the call's values)",
		func(t *rt) {
			s := t.Fresh()
			r := s.Expect(s.Feed("import os\nos.getenv('HOME', 'none')"), "Feed os.getenv", isOsCall)
			o := r.Event.Body.(*message.OsCall)
			if o.Op != message.OpGetenv || o.Key != "HOME" || int(o.Default) >= o.Values.Len() || o.Values.Repr(o.Default) != "'none'" {
				t.Failf("expected OsCall getenv(\"HOME\", default 'none'), got %s", describe(r.Event))
			}
			s.Expect(s.Turn(ret(o.CallID, "/home/u")), "ResumeCall", completes("'/home/u'"))
		})

	// --- host objects -----------------------------------------------------
	rule("objects.method-call-object-id", "contract §6; behaviour §8", every, 0,
		"A method call on a host instance suspends with FunctionCall{method, object_id = the instance's uuid}, the receiver not in args",
		func(t *rt) {
			s := t.Fresh()
			f := &message.Feed{Code: "w.grow(2, by=3)"}
			cls := f.Values.Add(value.TypeNode(value.Type{Name: "Widget", ID: value.UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, Origin: value.OriginHost}))
			inst := value.UUID{16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}
			w := f.Values.Add(value.ClassInstanceNode(value.ClassInstance{Class: cls, InstanceID: inst}))
			f.Inputs = []message.NamedRef{{Name: "w", Value: w}}
			r := s.Expect(s.Turn(f), "Feed w.grow(2, by=3)", isCall)
			c := callOf(r)
			if c.FunctionName != "grow" || c.ObjectID == nil || *c.ObjectID != inst || argsRepr(c) != "2, by=3" {
				t.Failf("expected FunctionCall grow(2, by=3) on object %x, got %s", inst, describe(r.Event))
			}
		})

	rule("objects.lazy-attribute-lookup", "contract §6; behaviour §8", every, 0,
		"A missing attribute of a host instance suspends with NameLookup{name, object_id}; undefined raises AttributeError",
		func(t *rt) {
			s := t.Fresh()
			f := &message.Feed{Code: "w.color"}
			cls := f.Values.Add(value.TypeNode(value.Type{Name: "Widget", ID: value.UUID{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}, Origin: value.OriginHost}))
			inst := value.UUID{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7}
			f.Inputs = []message.NamedRef{{Name: "w", Value: f.Values.Add(value.ClassInstanceNode(value.ClassInstance{Class: cls, InstanceID: inst}))}}
			r := s.Expect(s.Turn(f), "Feed w.color", isLookup)
			if l := r.Event.Body.(*message.NameLookup); l.Name != "color" || l.ObjectID == nil || *l.ObjectID != inst {
				t.Failf("expected NameLookup(\"color\") on object %x, got %s", inst, describe(r.Event))
			}
			s.Expect(s.Turn(&message.ResumeNameLookup{Kind: message.LookupUndefined}), "ResumeNameLookup undefined", raisesLike("AttributeError", "color"))
		})

	rule("objects.host-class-call", "contract §6; behaviour §8", every, 0,
		"Calling a host class suspends with FunctionCall{\"__call__\", object_id = the class uuid}",
		func(t *rt) {
			s := t.Fresh()
			f := &message.Feed{Code: "T(1, a=2)"}
			id := value.UUID{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}
			f.Inputs = []message.NamedRef{{Name: "T", Value: f.Values.Add(value.TypeNode(value.Type{Name: "T", ID: id, Origin: value.OriginHost}))}}
			r := s.Expect(s.Turn(f), "Feed T(1, a=2)", isCall)
			c := callOf(r)
			if c.FunctionName != "__call__" || c.ObjectID == nil || *c.ObjectID != id || !strings.Contains(argsRepr(c), "a=2") {
				t.Failf("expected FunctionCall __call__(1, a=2) on class %x, got %s", id, describe(r.Event))
			}
		})
}

// sendFeed sends a Feed without reading its turn.
func (s *sess) sendFeed(code string) { s.Send(&message.Feed{Code: code}) }
