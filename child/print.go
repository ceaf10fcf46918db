package child

import (
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
)

// printer buffers a turn's print output and emits Print events: when the
// buffer reaches PrintFlushThreshold bytes, when its oldest byte has
// waited the flush interval (a timer releases the output of a silent
// turn), per completed line in line mode (interval 0), and always before
// the turn-ending event. It also serializes every write to the
// connection, so a timer flush never interleaves with a turn's end.
type printer struct {
	mu   sync.Mutex
	segs []message.PrintSegment // completed segments; tail follows them
	// tail is the text of the last segment, still growing (on tailStream):
	// appending to a byte slice keeps a turn of many small writes linear,
	// where concatenating strings copied the segment at every write.
	tail       []byte
	tailStream message.PrintStream
	n          int           // bytes buffered, tail included
	interval   time.Duration // 0: line buffering
	oneSeg     bool          // protocol 2: one segment per Print event
	timer      *time.Timer
	active     bool // a turn is running; the timer may emit
	err        error
	emit       func(*message.Print) error // called with mu held
	// broken, when set, is called (mu held) once a Print could not be
	// sent: the running turn is to stop.
	broken func(error)
}

func (p *printer) reset(interval time.Duration, oneSeg bool) {
	p.mu.Lock()
	p.interval, p.oneSeg = interval, oneSeg
	p.mu.Unlock()
}

// begin starts a turn.
func (p *printer) begin() {
	p.mu.Lock()
	p.active = true
	p.mu.Unlock()
}

// Print implements Output.
func (p *printer) Print(stream message.PrintStream, text string) {
	if stream != message.StreamStderr {
		stream = message.StreamStdout
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil || text == "" {
		return
	}
	if p.interval == 0 {
		for text != "" {
			i := indexNL(text)
			if i < 0 {
				p.add(stream, text)
				break
			}
			p.add(stream, text[:i+1])
			text = text[i+1:]
			p.flushLocked()
		}
		return
	}
	p.add(stream, text)
	if p.n > 0 && p.timer == nil && p.active {
		p.timer = time.AfterFunc(p.interval, p.tick)
	}
}

func indexNL(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return i
		}
	}
	return -1
}

// add appends text, emitting whenever the buffer reaches the threshold;
// a long write is cut at UTF-8 boundaries so the buffer never holds more.
func (p *printer) add(stream message.PrintStream, text string) {
	for text != "" && p.err == nil {
		room := protocol.PrintFlushThreshold - p.n
		part := text
		if len(part) > room {
			cut := room
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			if cut == 0 && p.n == 0 {
				// A single character wider than the room left in an
				// empty buffer cannot happen (room is 8192), but never
				// loop forever.
				cut = len(text)
			}
			part = text[:cut]
		}
		if part != "" {
			if len(p.tail) > 0 && p.tailStream != stream {
				p.closeTail()
			}
			p.tailStream = stream
			p.tail = append(p.tail, part...)
			p.n += len(part)
			text = text[len(part):]
		}
		if p.n >= protocol.PrintFlushThreshold || (text != "" && part == "") {
			p.flushLocked()
		}
	}
}

func (p *printer) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timer = nil
	if p.active {
		p.flushLocked()
	}
}

// closeTail ends the growing segment, appending it to segs. Text that is
// not UTF-8 (an engine's bytes) gets U+FFFD for each bad sequence, since
// a frame carries only UTF-8: unencodable, the Print would have ended the
// child as if its stdout had broken.
func (p *printer) closeTail() {
	if len(p.tail) > 0 {
		text := string(p.tail)
		if !utf8.ValidString(text) {
			text = strings.ToValidUTF8(text, "\uFFFD")
		}
		p.segs = append(p.segs, message.PrintSegment{Stream: p.tailStream, Text: text})
		p.tail = p.tail[:0]
	}
}

// flushLocked emits everything buffered.
func (p *printer) flushLocked() {
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if p.n == 0 {
		return
	}
	p.closeTail()
	segs := p.segs
	p.segs, p.n = nil, 0
	if p.err != nil {
		return
	}
	if p.oneSeg {
		for i := range segs {
			if p.err = p.emit(&message.Print{Segments: segs[i : i+1]}); p.err != nil {
				break
			}
		}
	} else {
		p.err = p.emit(&message.Print{Segments: segs})
	}
	if p.err != nil && p.broken != nil {
		p.broken(p.err)
	}
}

// failure returns the error that stopped the output, nil while it works.
func (p *printer) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// end flushes the turn's output and ends the turn; the caller then writes
// the turn-ending event with write, which runs with the lock held.
func (p *printer) end(write func() error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flushLocked()
	p.active = false
	if p.err != nil {
		return p.err
	}
	p.err = write()
	return p.err
}

// stop ends the printer when the child ends: output a failed turn printed
// before its engine died is still sent (best effort), and the flush timer
// can no longer write once Serve has returned.
func (p *printer) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flushLocked()
	p.active = false
}
