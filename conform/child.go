//go:build unix

package conform

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/internal/hostile"
)

// ChildCommand is the hidden subcommand under which a program that embeds
// the kit (montygo: `montygo conform __child`) plays the scripted child
// of [RunParent]. Nobody else should run it.
const ChildCommand = "__child"

// ServeChild plays one hostile-child scenario as a worker on stdin and
// stdout, and records what it sees in a control file: one line per event
// of its life ("spawn PID ARGS", "request PID KIND SIZE", "configure PID
// VERSION ok|refused"), appended with one
// write each so that a SIGKILL loses nothing already recorded. It returns
// the process exit status the scenario asks for; a scenario that dies by
// a signal does not return.
//
// Flags: --scenario NAME, --control FILE, --protocol 2|4|2,4,
// --lifetime D (exit 124 after D whatever happens), --token DEV:INO (the
// pipe [RunParent] passed the parent under test: a copy this process
// inherited is closed once its spawn is recorded); a "subprocess"
// argument, as a parent passes it to a worker, is accepted and ignored.
func ServeChild(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(ChildCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	scenario := fs.String("scenario", "normal", "scenario to play")
	control := fs.String("control", "", "file recording what the child saw")
	protos := fs.String("protocol", "", "protocol versions to claim (default: the scenario's)")
	lifetime := fs.Duration("lifetime", 60*time.Second, "exit after this long whatever happens")
	token := fs.String("token", "", "DEV:INO of the judge's pipe, to close once the spawn is recorded")
	var rest []string
	for _, a := range args {
		if a != "subprocess" {
			rest = append(rest, a)
		}
	}
	if err := fs.Parse(rest); err != nil {
		return 2
	}
	claim, err := hostile.ParseProtocols(*protos)
	if err != nil {
		fmt.Fprintln(stderr, "conform child:", err)
		return 2
	}
	rec := &recorder{}
	if *control != "" {
		f, err := os.OpenFile(*control, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			fmt.Fprintln(stderr, "conform child:", err)
			return 2
		}
		defer f.Close()
		rec.f = f
	}
	pid := os.Getpid()
	rec.line(fmt.Sprintf("spawn %d %s", pid, strings.Join(args, " ")))
	if *token != "" {
		// The judge reads its pipe until every copy is closed: this
		// child is recorded now, so it no longer needs to be waited for.
		releaseToken(*token)
	}
	if *lifetime > 0 {
		time.AfterFunc(*lifetime, func() {
			fmt.Fprintf(stderr, "conform child: lifetime of %v reached, exiting\n", *lifetime)
			os.Exit(124)
		})
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var closeOut func() error
	if c, ok := stdout.(io.Closer); ok {
		closeOut = c.Close
	}
	err = hostile.Run(*scenario, &tapReader{r: stdin, rec: rec, pid: pid}, stdout, hostile.Options{
		Protocols: claim, Stderr: stderr, Context: ctx, CloseStdout: closeOut,
		OnConfigure: func(v uint32, accepted bool) {
			verdict := "refused"
			if accepted {
				verdict = "ok"
			}
			rec.line(fmt.Sprintf("configure %d %d %s", pid, v, verdict))
		},
	})
	return hostile.Exit(err, stderr, "conform child")
}

// recorder appends lines to the control file.
type recorder struct {
	mu sync.Mutex
	f  *os.File
}

func (r *recorder) line(s string) {
	if r.f == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = r.f.WriteString(s + "\n")
}

// tapReader passes the parent's bytes through unchanged and records the
// kind of every complete request frame that goes by. Its parse state is
// only a prefix and a bounded head of each body: enough to classify, never
// the whole frame.
type tapReader struct {
	r   io.Reader
	rec *recorder
	pid int

	hdr  [4]byte
	nhdr int
	left uint32 // body bytes still to pass in the current frame
	head []byte // first bytes of the current body, up to headCap
	size uint32
}

const headCap = 64

func (t *tapReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.scan(p[:n])
	return n, err
}

func (t *tapReader) scan(b []byte) {
	for len(b) > 0 {
		if t.nhdr < 4 {
			k := copy(t.hdr[t.nhdr:], b)
			t.nhdr += k
			b = b[k:]
			if t.nhdr == 4 {
				t.size = binary.LittleEndian.Uint32(t.hdr[:])
				t.left = t.size
				t.head = t.head[:0]
				if t.left == 0 {
					t.done()
				}
			}
			continue
		}
		k := min(uint32(len(b)), t.left)
		if room := headCap - len(t.head); room > 0 {
			t.head = append(t.head, b[:min(int(k), room)]...)
		}
		t.left -= k
		b = b[k:]
		if t.left == 0 {
			t.done()
		}
	}
}

func (t *tapReader) done() {
	kind := "none"
	if k := headKind(t.head); k != 0 {
		kind = strconv.Itoa(int(k))
	}
	t.rec.line(fmt.Sprintf("request %d %s %d", t.pid, kind, t.size))
	t.nhdr = 0
}

// headKind returns the request arm (1..19) of a frame from the first bytes
// of its body: the last arm whose key is seen, even when its payload runs
// past the head. 0 means none was seen.
func headKind(b []byte) protowire.Number {
	var kind protowire.Number
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return kind
		}
		b = b[n:]
		if typ == protowire.BytesType {
			l, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return kind
			}
			if num >= 1 && num <= 19 {
				kind = num
			}
			if l > uint64(len(b)-m) {
				return kind
			}
			b = b[m+int(l):]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return kind
		}
		b = b[m:]
	}
	return kind
}
