package mount

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

func envTable(t *testing.T, opts Options) *Table {
	t.Helper()
	tbl, err := New(nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return tbl
}

func TestGetenv(t *testing.T) {
	tbl := envTable(t, Options{Env: map[string]string{"HOME": "/home/u", "EMPTY": ""}})

	// The worker always sends a default; None when omitted.
	none := &message.OsCall{CallID: 3, Op: message.OpGetenv, Key: "HOME"}
	none.Default = none.Values.Add(value.None())
	wantStr(t, doCall(t, tbl, &message.OsCall{CallID: 3, Op: message.OpGetenv, Key: "HOME", Values: none.Values}), "/home/u")
	wantStr(t, doCall(t, tbl, &message.OsCall{CallID: 3, Op: message.OpGetenv, Key: "EMPTY", Values: none.Values}), "")
	wantNone(t, doCall(t, tbl, &message.OsCall{CallID: 3, Op: message.OpGetenv, Key: "NOPE", Values: none.Values}))

	// A default of 42 comes back as 42.
	c := &message.OsCall{CallID: 4, Op: message.OpGetenv, Key: "NOPE"}
	c.Default = c.Values.Add(value.Int(42))
	wantInt(t, doCall(t, tbl, c), 42)

	// A nested default is copied with only its reachable nodes.
	c = &message.OsCall{CallID: 5, Op: message.OpGetenv, Key: "NOPE"}
	c.Values.Add(value.Str("unrelated"))
	a := c.Values.Add(value.Str("a"))
	one := c.Values.Add(value.Int(1))
	d := c.Values.Add(value.Dict(value.Pair{Key: a, Value: one}))
	c.Default = c.Values.Add(value.List(d, a))
	rc := doCall(t, tbl, c)
	if rc.Values.Len() != 4 {
		t.Fatalf("copied %d nodes, want 4", rc.Values.Len())
	}
	root := rootOf(t, rc)
	if root.Kind != value.KindList || len(root.Refs()) != 2 || rc.Values.Node(root.Refs()[1]).Text() != "a" {
		t.Fatalf("default copied wrongly: %+v", root)
	}
	dn := rc.Values.Node(root.Refs()[0])
	if dn.Kind != value.KindDict || rc.Values.Node(dn.Refs()[1]).Int() != 1 {
		t.Fatalf("dict default copied wrongly: %+v", dn)
	}

	// A default that cannot travel back raises TypeError.
	c = &message.OsCall{CallID: 6, Op: message.OpGetenv, Key: "NOPE"}
	c.Default = c.Values.Add(value.Repr("range(0, 3)"))
	wantExcType(t, doCall(t, tbl, c), "TypeError")

	// A default root out of range is a malformed call.
	c = &message.OsCall{CallID: 6, Op: message.OpGetenv, Key: "NOPE", Default: 9}
	c.Values.Add(value.None())
	if _, err := tbl.HandleOS(context.Background(), c); err == nil {
		t.Fatal("out-of-range default accepted")
	}

	// So is a default whose arena breaks the rules (a reference up, or to
	// itself): HandleOS used to copy it into an answer whose list held
	// itself, an arena the worker refuses.
	for _, refs := range [][]value.NodeID{{1}, {0}} {
		c = &message.OsCall{CallID: 6, Op: message.OpGetenv, Key: "NOPE"}
		c.Default = c.Values.Add(value.List(refs...))
		c.Values.Add(value.Int(5))
		var ae *value.ArenaError
		if rc, err := tbl.HandleOS(context.Background(), c); !errors.As(err, &ae) {
			t.Fatalf("default list%v: answer %+v, error %v; want an *value.ArenaError", refs, rc, err)
		}
	}
}

func TestEnviron(t *testing.T) {
	tbl := envTable(t, Options{Env: map[string]string{"B": "2", "A": "1"}})
	rc := doCall(t, tbl, &message.OsCall{Op: message.OpGetEnviron})
	root := rootOf(t, rc)
	if root.Kind != value.KindDict {
		t.Fatalf("got %s", root.Kind)
	}
	var got []string
	for _, p := range root.Pairs() {
		got = append(got, rc.Values.Node(p.Key).Text()+"="+rc.Values.Node(p.Value).Text())
	}
	if strings.Join(got, ",") != "A=1,B=2" {
		t.Fatalf("environ %q", got)
	}
	// The host environment is never consulted.
	t.Setenv("MOUNT_TEST_HOST_VAR", "leak")
	empty := envTable(t, Options{})
	if n := rootOf(t, doCall(t, empty, &message.OsCall{Op: message.OpGetEnviron})); len(n.Refs()) != 0 {
		t.Fatal("empty environment is not empty")
	}
	c := &message.OsCall{Op: message.OpGetenv, Key: "MOUNT_TEST_HOST_VAR"}
	c.Default = c.Values.Add(value.None())
	wantNone(t, doCall(t, empty, c))
}

func TestClockArms(t *testing.T) {
	at := time.Date(2025, 1, 2, 23, 4, 5, 123456789, time.UTC)
	tbl := envTable(t, Options{Clock: FixedClock(at)})

	n := rootOf(t, doCall(t, tbl, &message.OsCall{Op: message.OpDateToday}))
	if d := n.Ext().(*value.Date); n.Kind != value.KindDate || *d != (value.Date{Year: 2025, Month: 1, Day: 2}) {
		t.Fatalf("date_today %+v", n)
	}

	// Naive: UTC by default, no offset.
	n = rootOf(t, doCall(t, tbl, &message.OsCall{Op: message.OpDateTimeNow}))
	dt := n.Ext().(*value.DateTime)
	if n.Kind != value.KindDateTime || dt.Offset != nil || dt.Hour != 23 || dt.Microsecond != 123456 || dt.Second != 5 {
		t.Fatalf("naive now %+v", dt)
	}

	// datetime.now(timezone.utc): an empty TimeZone; offset 0, no name.
	n = rootOf(t, doCall(t, tbl, &message.OsCall{Op: message.OpDateTimeNow, TZ: &value.TimeZone{}}))
	dt = n.Ext().(*value.DateTime)
	if dt.Offset == nil || *dt.Offset != 0 || dt.TZName != nil || dt.Hour != 23 {
		t.Fatalf("utc now %+v", dt)
	}

	// A named +02:00 zone crosses midnight.
	name := "CEST"
	n = rootOf(t, doCall(t, tbl, &message.OsCall{Op: message.OpDateTimeNow, TZ: &value.TimeZone{Offset: 7200, Name: &name}}))
	dt = n.Ext().(*value.DateTime)
	if dt.Offset == nil || *dt.Offset != 7200 || dt.TZName == nil || *dt.TZName != "CEST" || dt.Day != 3 || dt.Hour != 1 {
		t.Fatalf("+02:00 now %+v", dt)
	}
	wantExcType(t, doCall(t, tbl, &message.OsCall{Op: message.OpDateTimeNow, TZ: &value.TimeZone{Offset: 86400}}), "ValueError")

	// Options.Location sets the zone of naive values.
	loc := time.FixedZone("X", -5*3600)
	tbl2 := envTable(t, Options{Clock: FixedClock(at), Location: loc})
	n = rootOf(t, doCall(t, tbl2, &message.OsCall{Op: message.OpDateTimeNow}))
	if dt := n.Ext().(*value.DateTime); dt.Hour != 18 || dt.Offset != nil {
		t.Fatalf("naive now in -05:00 %+v", dt)
	}
	n = rootOf(t, doCall(t, tbl2, &message.OsCall{Op: message.OpDateToday}))
	if d := n.Ext().(*value.Date); d.Day != 2 {
		t.Fatalf("date in -05:00 %+v", d)
	}

	// The real clock is the default.
	real := envTable(t, Options{})
	n = rootOf(t, doCall(t, real, &message.OsCall{Op: message.OpDateToday}))
	if d := n.Ext().(*value.Date); int(d.Year) != time.Now().UTC().Year() {
		t.Fatalf("real clock year %d", d.Year)
	}
}

func TestUrandom(t *testing.T) {
	src := bytes.NewReader(bytes.Repeat([]byte{7}, 100))
	tbl := envTable(t, Options{Rand: src})
	wantBytes(t, doCall(t, tbl, &message.OsCall{Op: message.OpUrandom, Size: 4}), []byte{7, 7, 7, 7})
	wantBytes(t, doCall(t, tbl, &message.OsCall{Op: message.OpUrandom, Size: 0}), []byte{})
	wantExc(t, doCall(t, tbl, &message.OsCall{Op: message.OpUrandom, Size: MaxUrandom + 1}), "ValueError",
		"os.urandom(1048577) exceeds the sandbox limit of 1048576 bytes")
	wantExcType(t, doCall(t, tbl, &message.OsCall{Op: message.OpUrandom, Size: 1000}), "OSError") // source exhausted
	def := envTable(t, Options{})
	if n := rootOf(t, doCall(t, def, &message.OsCall{Op: message.OpUrandom, Size: 32})); len(n.Bytes()) != 32 {
		t.Fatal("crypto/rand urandom size")
	}
}

func TestNotHandled(t *testing.T) {
	tbl := envTable(t, Options{})
	for _, op := range []message.OsOp{0, 1, 26, 29, 200} {
		rc := doCall(t, tbl, &message.OsCall{CallID: 9, Op: op})
		wantNotHandled(t, rc)
		if rc.CallID != 9 {
			t.Fatal("CallID")
		}
	}
	if _, err := tbl.HandleOS(context.Background(), nil); err == nil {
		t.Fatal("nil call accepted")
	}
	// A filesystem call with no mounts at all is refused like any path
	// outside the mounts.
	wantExc(t, doCall(t, tbl, opCall(message.OpReadText, "/x")), "PermissionError", "[Errno 13] Permission denied: '/x'")
	wantPath(t, doCall(t, tbl, opCall(message.OpAbsolute, "rel")), "/rel")
}

func TestPyRepr(t *testing.T) {
	for in, want := range map[string]string{
		"/x":        "'/x'",
		"it's":      `"it's"`,
		`a'b"c`:     `'a\'b"c'`,
		"tab\there": `'tab\there'`,
		"nl\n":      `'nl\n'`,
		"bs\\":      `'bs\\'`,
		"\x01":      `'\x01'`,
		"é日本":       "'é日本'",
		"\u00a0":    `'\xa0'`,
		"\u200b":    `'\u200b'`,
		"\xff":      `'\udcff'`,
		// Assigned in Unicode 16 (the worker's edition, newer than Go's
		// tables): printable, as the worker's repr shows it.
		"harp\U0001FA89": "'harp\U0001FA89'",
	} {
		if got := pyRepr(in); got != want {
			t.Errorf("pyRepr(%q) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"": ".", ".": ".", "/": "/", "/a//b/./c/": "/a/b/c", "a/../b": "a/../b", "./x": "x",
	} {
		if got := pyPath(in); got != want {
			t.Errorf("pyPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEnvInvalidUTF8Collision checks that two keys that differ only in
// invalid UTF-8 (one key once repaired) give the same environment every
// time: the last in byte order of the original keys wins, not whichever
// the map yields last.
func TestEnvInvalidUTF8Collision(t *testing.T) {
	env := map[string]string{"K\xff": "ff", "K\xfe": "fe", "K\xfd": "fd", "K\x80": "80"}
	for range 50 {
		tbl := envTable(t, Options{Env: env})
		c := &message.OsCall{Op: message.OpGetenv, Key: "K\uFFFD"}
		c.Default = c.Values.Add(value.None())
		wantStr(t, doCall(t, tbl, c), "ff")
	}
}
