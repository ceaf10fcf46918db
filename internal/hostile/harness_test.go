package hostile_test

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/hostile/hostilebuild"
	p2 "github.com/gomonty/monty/internal/pb/montyp2v1"
	p4 "github.com/gomonty/monty/internal/pb/montyv1"
)

// ioTimeout bounds every single read or write a test makes: a guard
// against a hang, not a measure. error_traceback_100k's 100,000 frames
// took the race-built child over 5 s to build while the conform package's
// tests shared the two CPUs of CI ("read |0: i/o timeout").
const ioTimeout = 30 * time.Second

// proc is one hostilechild process driven with raw frames.
type proc struct {
	t      *testing.T
	ver    uint32
	cmd    *exec.Cmd
	stdin  *os.File // our write end
	stdout *os.File // our read end
	r      *frame.Reader

	done    chan struct{}
	state   *os.ProcessState
	errMu   sync.Mutex
	stderrN int64
	tail    []byte
	errDone chan struct{}
}

// start runs scenario claiming the given protocols ("" = the scenario's
// default). ver is the version the test will configure.
func start(t *testing.T, scenario string, ver uint32, protocols string) *proc {
	t.Helper()
	bin := hostilebuild.Build(t)
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "subprocess")
	cmd.Env = append(os.Environ(), "HOSTILE_SCENARIO="+scenario, "HOSTILE_LIFETIME=30s")
	if protocols != "" {
		cmd.Env = append(cmd.Env, "HOSTILE_PROTOCOL="+protocols)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	errW.Close()
	p := &proc{t: t, ver: ver, cmd: cmd, stdin: inW, stdout: outR, r: frame.NewReader(outR, 0),
		done: make(chan struct{}), errDone: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		close(p.done)
	}()
	go p.drainStderr(errR)
	t.Cleanup(func() {
		p.kill()
		p.stdin.Close()
		p.stdout.Close()
		<-p.errDone
	})
	return p
}

func (p *proc) drainStderr(f *os.File) {
	defer close(p.errDone)
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		n, err := f.Read(buf)
		p.errMu.Lock()
		p.stderrN += int64(n)
		// Keep the last 4 KiB without copying every byte through.
		chunk := buf[max(0, n-4096):n]
		keep := p.tail[max(0, len(p.tail)+len(chunk)-4096):]
		p.tail = append(append([]byte{}, keep...), chunk...)
		p.errMu.Unlock()
		if err != nil {
			return
		}
	}
}

func (p *proc) stderr() (int64, string) {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return p.stderrN, string(p.tail)
}

func (p *proc) kill() {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// alive reports whether the process is still running after d.
func (p *proc) alive(d time.Duration) bool {
	select {
	case <-p.done:
		return false
	case <-time.After(d):
		return true
	}
}

// exited waits for the process to end and returns its state.
func (p *proc) exited() *os.ProcessState {
	p.t.Helper()
	select {
	case <-p.done:
		return p.state
	case <-time.After(ioTimeout):
		p.t.Fatalf("process still running after %v", ioTimeout)
		return nil
	}
}

func (p *proc) wantExit(code int) {
	p.t.Helper()
	st := p.exited()
	if st.ExitCode() != code {
		p.t.Fatalf("exit: got %v, want status %d", st, code)
	}
}

func (p *proc) wantSignal(sig syscall.Signal) {
	p.t.Helper()
	st := p.exited()
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != sig {
		p.t.Fatalf("exit: got %v, want death by %v", st, sig)
	}
}

// --- writing --------------------------------------------------------------

func (p *proc) writeRaw(b []byte) error {
	_ = p.stdin.SetWriteDeadline(time.Now().Add(ioTimeout))
	_, err := p.stdin.Write(b)
	return err
}

func (p *proc) send(m proto.Message) {
	p.t.Helper()
	body, err := proto.Marshal(m)
	if err != nil {
		p.t.Fatal(err)
	}
	if err := p.writeRaw(frame.AppendFrame(nil, body)); err != nil {
		p.t.Fatalf("writing request: %v", err)
	}
}

func configureMsg(v uint32, maxSusp uint64) proto.Message {
	if v == 4 {
		cf := &p4.Configure{ScriptName: "main.py", ProtocolVersion: v}
		if maxSusp > 0 {
			cf.Limits = &p4.ResourceLimits{MaxSuspensions: &maxSusp}
		}
		return &p4.ParentRequest{Kind: &p4.ParentRequest_Configure{Configure: cf}}
	}
	cf := &p2.Configure{ScriptName: "main.py", ProtocolVersion: v}
	if maxSusp > 0 {
		cf.Limits = &p2.ResourceLimits{MaxSuspensions: &maxSusp}
	}
	return &p2.ParentRequest{Kind: &p2.ParentRequest_Configure{Configure: cf}}
}

func (p *proc) feedMsg(code string) proto.Message {
	if p.ver == 4 {
		return &p4.ParentRequest{Kind: &p4.ParentRequest_Feed{Feed: &p4.Feed{Code: code}}}
	}
	return &p2.ParentRequest{Kind: &p2.ParentRequest_Feed{Feed: &p2.Feed{Code: code}}}
}

// configure sends Configure(p.ver) and expects Ok.
func (p *proc) configure() {
	p.t.Helper()
	p.configureLimit(0)
}

func (p *proc) configureLimit(maxSusp uint64) {
	p.t.Helper()
	p.send(configureMsg(p.ver, maxSusp))
	if arm := armOf(p.t, p.read()); arm != armOk {
		p.t.Fatalf("Configure answered with arm %d, want Ok", arm)
	}
}

func (p *proc) feed(code string) { p.t.Helper(); p.send(p.feedMsg(code)) }

// resume answers call id with the int n.
func (p *proc) resume(id uint32, n int64) {
	p.t.Helper()
	if p.ver == 4 {
		arena := &p4.Arena{NodeCount: 1, Nodes: []*p4.MontyNode{{Kind: &p4.MontyNode_Int{Int: n}}}}
		p.send(&p4.ParentRequest{Kind: &p4.ParentRequest_ResumeCall{ResumeCall: &p4.ResumeCall{
			CallId: id, Result: &p4.ExtFunctionResult{Kind: &p4.ExtFunctionResult_ReturnValue{ReturnValue: 0}}, Values: arena}}})
		return
	}
	p.send(&p2.ParentRequest{Kind: &p2.ParentRequest_ResumeCall{ResumeCall: &p2.ResumeCall{
		CallId: id, Result: &p2.ExtFunctionResult{Kind: &p2.ExtFunctionResult_ReturnValue{
			ReturnValue: &p2.MontyObject{Kind: &p2.MontyObject_Int{Int: n}}}}}}})
}

func (p *proc) abort() {
	p.t.Helper()
	msg := "suspension limit exceeded"
	if p.ver == 4 {
		p.send(&p4.ParentRequest{Kind: &p4.ParentRequest_AbortFeed{AbortFeed: &p4.AbortFeed{
			Exception: &p4.RaisedException{ExcType: "RuntimeError", Message: &msg}}}})
		return
	}
	p.send(&p2.ParentRequest{Kind: &p2.ParentRequest_AbortFeed{AbortFeed: &p2.AbortFeed{
		Exception: &p2.RaisedException{ExcType: "RuntimeError", Message: &msg}}}})
}

func (p *proc) shutdown() {
	p.t.Helper()
	if p.ver == 4 {
		p.send(&p4.ParentRequest{Kind: &p4.ParentRequest_Shutdown{Shutdown: &p4.Shutdown{}}})
	} else {
		p.send(&p2.ParentRequest{Kind: &p2.ParentRequest_Shutdown{Shutdown: &p2.Shutdown{}}})
	}
}

// --- reading --------------------------------------------------------------

// readErr reads one frame within d.
func (p *proc) readErr(d time.Duration) ([]byte, error) {
	_ = p.stdout.SetReadDeadline(time.Now().Add(d))
	return p.r.ReadFrame()
}

func (p *proc) read() []byte {
	p.t.Helper()
	b, err := p.readErr(ioTimeout)
	if err != nil {
		p.t.Fatalf("reading event: %v", err)
	}
	return b
}

// readN reads exactly n raw bytes.
func (p *proc) readN(n int) []byte {
	p.t.Helper()
	_ = p.stdout.SetReadDeadline(time.Now().Add(ioTimeout))
	b := make([]byte, n)
	if _, err := io.ReadFull(p.stdout, b); err != nil {
		p.t.Fatalf("reading %d raw bytes: %v", n, err)
	}
	return b
}

// silent asserts nothing arrives on stdout for d.
func (p *proc) silent(d time.Duration) {
	p.t.Helper()
	_ = p.stdout.SetReadDeadline(time.Now().Add(d))
	var b [1]byte
	n, err := p.stdout.Read(b[:])
	if n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		p.t.Fatalf("expected silence on stdout, got %d bytes, err %v", n, err)
	}
}

// ev2 / ev4 decode an event with the generated types.
func (p *proc) ev2(body []byte) *p2.ChildEvent {
	p.t.Helper()
	m := new(p2.ChildEvent)
	if err := proto.Unmarshal(body, m); err != nil {
		p.t.Fatalf("decoding v2 event: %v", err)
	}
	return m
}

func (p *proc) ev4(body []byte) *p4.ChildEvent {
	p.t.Helper()
	m := new(p4.ChildEvent)
	if err := proto.Unmarshal(body, m); err != nil {
		p.t.Fatalf("decoding v4 event: %v", err)
	}
	return m
}

// ChildEvent arms.
const (
	armPrint          = 1
	armFunctionCall   = 2
	armOsCall         = 3
	armResolveFutures = 5
	armComplete       = 6
	armError          = 7
	armOk             = 10
	armFatalError     = 11
	armShutdownDump   = 12
)

// wantPrints reads n events from p, each of which must be a Print.
func wantPrints(t *testing.T, p *proc, n int) {
	t.Helper()
	for i := range n {
		if arm := armOf(t, p.read()); arm != armPrint {
			t.Fatalf("event %d has arm %d, want Print", i, arm)
		}
	}
}

// armOf returns the last oneof arm (1..19) of an event, 0 for none.
func armOf(t *testing.T, body []byte) protowire.Number {
	t.Helper()
	var arm protowire.Number
	for len(body) > 0 {
		num, typ, n := protowire.ConsumeTag(body)
		if n < 0 {
			t.Fatalf("bad tag in event: %v", protowire.ParseError(n))
		}
		body = body[n:]
		m := protowire.ConsumeFieldValue(num, typ, body)
		if m < 0 {
			t.Fatalf("bad field %d in event: %v", num, protowire.ParseError(m))
		}
		body = body[m:]
		if num >= 1 && num <= 19 && typ == protowire.BytesType {
			arm = num
		}
	}
	return arm
}

// rootObj returns the value of a Complete as a protocol 2 MontyObject (for
// protocol 4 the root node, which has the same encoding for leaves).
func (p *proc) rootObj(body []byte) *p2.MontyObject {
	p.t.Helper()
	if p.ver == 4 {
		c := p.ev4(body).GetComplete()
		if c == nil {
			p.t.Fatalf("not a Complete: %x", body)
		}
		nodes := c.GetValues().GetNodes()
		if int(c.GetValue()) >= len(nodes) {
			p.t.Fatalf("root %d out of range of %d nodes", c.GetValue(), len(nodes))
		}
		b, _ := proto.Marshal(nodes[c.GetValue()])
		o := new(p2.MontyObject)
		if err := proto.Unmarshal(b, o); err != nil {
			p.t.Fatal(err)
		}
		return o
	}
	c := p.ev2(body).GetComplete()
	if c == nil {
		p.t.Fatalf("not a Complete: %x", body)
	}
	return c.GetValue()
}

// wantInt reads a Complete and checks its value is the int n.
func (p *proc) wantInt(n int64) {
	p.t.Helper()
	o := p.rootObj(p.read())
	if k, ok := o.GetKind().(*p2.MontyObject_Int); !ok || k.Int != n {
		p.t.Fatalf("Complete value %v, want int %d", o, n)
	}
}

func (p *proc) wantStr(s string) {
	p.t.Helper()
	o := p.rootObj(p.read())
	if k, ok := o.GetKind().(*p2.MontyObject_Str); !ok || k.Str != s {
		p.t.Fatalf("Complete value %v, want str %q", o, s)
	}
}

// wantCall reads a FunctionCall and returns its name and id.
func (p *proc) wantCall() (string, uint32) {
	p.t.Helper()
	body := p.read()
	if p.ver == 4 {
		fc := p.ev4(body).GetFunctionCall()
		if fc == nil {
			p.t.Fatalf("not a FunctionCall: %x", body)
		}
		return fc.GetFunctionName(), fc.GetCallId()
	}
	fc := p.ev2(body).GetFunctionCall()
	if fc == nil {
		p.t.Fatalf("not a FunctionCall: %x", body)
	}
	return fc.GetFunctionName(), fc.GetCallId()
}

// wantFatal reads a FatalError and returns its message.
func (p *proc) wantFatal() string {
	p.t.Helper()
	body := p.read()
	fe := p.ev2(body).GetFatalError()
	if fe == nil {
		p.t.Fatalf("not a FatalError: %x", body)
	}
	return fe.GetMessage()
}

func (p *proc) wantArm(arm protowire.Number) []byte {
	p.t.Helper()
	body := p.read()
	if got := armOf(p.t, body); got != arm {
		p.t.Fatalf("event arm %d, want %d (%x)", got, arm, head(body))
	}
	return body
}

func head(b []byte) []byte { return b[:min(len(b), 64)] }

func itoa(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
