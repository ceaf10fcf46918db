package mount

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// secret is the content of the file outside every mount; no answer may
// ever contain it.
const secret = "TOPSECRET"

// fixture is a temporary host tree:
//
//	base/host/x.txt        "hello"
//	base/host/bin.dat      00 01 02
//	base/host/sub/a.txt    "A"
//	base/outside/secret.txt "TOPSECRET"
//
// with base/host mounted at /data.
type fixture struct {
	t       *testing.T
	base    string
	host    string
	outside string
	tbl     *Table
}

// newFixture builds the tree and a table mounting it at /data in mode.
// edit may adjust the mount and options before the table is built.
func newFixture(t *testing.T, mode Mode, edit ...func(*Mount, *Options)) *fixture {
	t.Helper()
	// A short base path keeps unix socket paths under their length limit.
	base, err := os.MkdirTemp("", "mnt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	f := &fixture{t: t, base: base, host: filepath.Join(base, "host"), outside: filepath.Join(base, "outside")}
	mustMkdir(t, f.host)
	mustMkdir(t, filepath.Join(f.host, "sub"))
	mustMkdir(t, f.outside)
	mustWrite(t, filepath.Join(f.host, "x.txt"), "hello")
	mustWrite(t, filepath.Join(f.host, "bin.dat"), "\x00\x01\x02")
	mustWrite(t, filepath.Join(f.host, "sub", "a.txt"), "A")
	mustWrite(t, filepath.Join(f.outside, "secret.txt"), secret)
	m := Mount{HostDir: f.host, VirtualPath: "/data", Mode: mode}
	opts := Options{Clock: FixedClock(time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC))}
	for _, e := range edit {
		e(&m, &opts)
	}
	tbl, err := New([]Mount{m}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	f.tbl = tbl
	return f
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func readHost(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func hostExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// Call constructors.

func opCall(op message.OsOp, p string) *message.OsCall {
	return &message.OsCall{CallID: 7, Op: op, Path: p}
}

func textCall(op message.OsOp, p, s string) *message.OsCall {
	return &message.OsCall{CallID: 7, Op: op, Path: p, Text: s}
}

func bytesCall(op message.OsOp, p string, b []byte) *message.OsCall {
	return &message.OsCall{CallID: 7, Op: op, Path: p, Data: b}
}

func openCall(p, mode string) *message.OsCall {
	return &message.OsCall{CallID: 7, Op: message.OpOpen, Path: p, Mode: mode}
}

func mkdirCall(p string, parents, existOK bool) *message.OsCall {
	return &message.OsCall{CallID: 7, Op: message.OpMkdir, Path: p, Parents: parents, ExistOK: existOK}
}

func renameCall(src, dst string) *message.OsCall {
	return &message.OsCall{CallID: 7, Op: message.OpRename, Path: src, Dst: dst}
}

// do runs one call on the fixture's table.
func (f *fixture) do(c *message.OsCall) *message.ResumeCall {
	f.t.Helper()
	return doCall(f.t, f.tbl, c)
}

func doCall(t *testing.T, tbl *Table, c *message.OsCall) *message.ResumeCall {
	t.Helper()
	rc, err := tbl.HandleOS(context.Background(), c)
	if err != nil {
		t.Fatalf("%s %q: HandleOS error: %v", c.Op, c.Path, err)
	}
	if rc.CallID != c.CallID {
		t.Fatalf("CallID %d, want %d", rc.CallID, c.CallID)
	}
	if rc.Result == nil {
		t.Fatalf("%s %q: nil result", c.Op, c.Path)
	}
	if rc.Result.Kind == message.ResultReturn {
		if err := rc.Values.Check(rc.Result.Value); err != nil {
			t.Fatalf("%s %q: invalid answer graph: %v", c.Op, c.Path, err)
		}
		if err := rc.Values.CheckInput(rc.Result.Value); err != nil {
			t.Fatalf("%s %q: answer not a valid input: %v", c.Op, c.Path, err)
		}
		assertNoSecret(t, &rc.Values)
	}
	if rc.Result.Kind == message.ResultError {
		if rc.Result.Error == nil {
			t.Fatalf("%s %q: error result without exception", c.Op, c.Path)
		}
		if err := rc.Result.Error.Sanitize(); err != nil {
			t.Fatalf("%s %q: exception does not validate: %v", c.Op, c.Path, err)
		}
	}
	return rc
}

// assertNoSecret fails when any node of g carries the outside file's
// content.
func assertNoSecret(t *testing.T, g *value.Graph) {
	t.Helper()
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if bytes.Contains([]byte(n.Text()), []byte(secret)) || bytes.Contains(n.Bytes(), []byte(secret)) {
			t.Fatalf("ESCAPE: answer contains the outside file's content")
		}
	}
}

// Answer assertions.

func rootOf(t *testing.T, rc *message.ResumeCall) *value.Node {
	t.Helper()
	if rc.Result.Kind != message.ResultReturn {
		if rc.Result.Kind == message.ResultError {
			t.Fatalf("got exception %s, want a value", rc.Result.Error)
		}
		t.Fatalf("got %s, want a value", rc.Result.Kind)
	}
	return rc.Values.Node(rc.Result.Value)
}

func wantBool(t *testing.T, rc *message.ResumeCall, want bool) {
	t.Helper()
	n := rootOf(t, rc)
	if n.Kind != value.KindBool || n.Bool() != want {
		t.Fatalf("got %s %v, want bool %v", n.Kind, n.Num, want)
	}
}

func wantStr(t *testing.T, rc *message.ResumeCall, want string) {
	t.Helper()
	n := rootOf(t, rc)
	if n.Kind != value.KindStr || n.Text() != want {
		t.Fatalf("got %s %q, want str %q", n.Kind, n.Text(), want)
	}
}

func wantBytes(t *testing.T, rc *message.ResumeCall, want []byte) {
	t.Helper()
	n := rootOf(t, rc)
	if n.Kind != value.KindBytes || !bytes.Equal(n.Bytes(), want) {
		t.Fatalf("got %s %q, want bytes %q", n.Kind, n.Bytes(), want)
	}
}

func wantInt(t *testing.T, rc *message.ResumeCall, want int64) {
	t.Helper()
	n := rootOf(t, rc)
	if n.Kind != value.KindInt || n.Int() != want {
		t.Fatalf("got %s %d, want int %d", n.Kind, n.Int(), want)
	}
}

func wantNone(t *testing.T, rc *message.ResumeCall) {
	t.Helper()
	if n := rootOf(t, rc); n.Kind != value.KindNone {
		t.Fatalf("got %s, want None", n.Kind)
	}
}

func wantPath(t *testing.T, rc *message.ResumeCall, want string) {
	t.Helper()
	n := rootOf(t, rc)
	if n.Kind != value.KindPath || n.Text() != want {
		t.Fatalf("got %s %q, want path %q", n.Kind, n.Text(), want)
	}
}

func wantPaths(t *testing.T, rc *message.ResumeCall, want ...string) {
	t.Helper()
	n := rootOf(t, rc)
	if n.Kind != value.KindList {
		t.Fatalf("got %s, want list", n.Kind)
	}
	var got []string
	for _, r := range n.Refs() {
		c := rc.Values.Node(r)
		if c.Kind != value.KindPath {
			t.Fatalf("list item %s, want path", c.Kind)
		}
		got = append(got, c.Text())
	}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

func wantHandle(t *testing.T, rc *message.ResumeCall, p, mode string, pos uint64) {
	t.Helper()
	n := rootOf(t, rc)
	fh, ok := n.Ext().(*value.FileHandle)
	if n.Kind != value.KindFileHandle || !ok {
		t.Fatalf("got %s, want file_handle", n.Kind)
	}
	if fh.Path != p || fh.Mode != mode || fh.Position != pos {
		t.Fatalf("got handle %+v, want {%s %s %d}", *fh, p, mode, pos)
	}
}

// wantExc asserts an exception of type typ with message msg.
func wantExc(t *testing.T, rc *message.ResumeCall, typ, msg string) {
	t.Helper()
	if rc.Result.Kind != message.ResultError {
		if rc.Result.Kind == message.ResultReturn {
			n := rc.Values.Node(rc.Result.Value)
			t.Fatalf("got value %s %q, want %s: %s", n.Kind, n.Text(), typ, msg)
		}
		t.Fatalf("got %s, want %s: %s", rc.Result.Kind, typ, msg)
	}
	e := rc.Result.Error
	if e.Type != typ || e.Msg() != msg {
		t.Fatalf("got %s: %s\nwant %s: %s", e.Type, e.Msg(), typ, msg)
	}
}

// wantExcType asserts only the exception type.
func wantExcType(t *testing.T, rc *message.ResumeCall, typ string) {
	t.Helper()
	if rc.Result.Kind != message.ResultError {
		t.Fatalf("got %s, want %s", rc.Result.Kind, typ)
	}
	if rc.Result.Error.Type != typ {
		t.Fatalf("got %s, want %s", rc.Result.Error, typ)
	}
}

func wantNotHandled(t *testing.T, rc *message.ResumeCall) {
	t.Helper()
	if rc.Result.Kind != message.ResultNotHandled {
		t.Fatalf("got %s, want not_handled", rc.Result.Kind)
	}
}

// statField returns field i of a stat answer.
func statField(t *testing.T, rc *message.ResumeCall, name string) *value.Node {
	t.Helper()
	n := rootOf(t, rc)
	nt, ok := n.Ext().(*value.NamedTuple)
	if n.Kind != value.KindNamedTuple || !ok {
		t.Fatalf("got %s, want named tuple", n.Kind)
	}
	for i, f := range nt.FieldNames {
		if f == name {
			return rc.Values.Node(n.Refs()[i])
		}
	}
	t.Fatalf("no field %s", name)
	return nil
}
