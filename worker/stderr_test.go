//go:build unix

package worker

import (
	"bytes"
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// records is a slog.Handler that keeps every record.
type records struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *records) Enabled(context.Context, slog.Level) bool { return true }
func (h *records) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}
func (h *records) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *records) WithGroup(string) slog.Handler      { return h }

// stderrCounts returns the stderr line records, and the lines the summary
// records say were not logged (and how many summaries there were).
func (h *records) stderrCounts() (lines int, dropped int64, summaries int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.recs {
		switch r.Message {
		case "monty worker stderr":
			lines++
		case "monty worker stderr lines not logged":
			summaries++
			r.Attrs(func(a slog.Attr) bool {
				if a.Key == "lines" {
					dropped += a.Value.Int64()
				}
				return true
			})
		}
	}
	return lines, dropped, summaries
}

// floodScript writes n stderr lines that each look like a failure (so
// each would be logged at Warn).
func floodScript(n int) []string {
	return []string{"-c", "i=0; while [ $i -lt " + strconv.Itoa(n) + " ]; do echo \"error $i\" >&2; i=$((i+1)); done"}
}

// A worker writing to its stderr in a loop had every line logged (every
// one at Warn, as each says "error"): millions of records a second into
// the host's logs. A zero Config now bounds the records (a burst, then a
// steady rate), and says how many lines were not logged.
func TestStderrFloodIsNotLoggedLineByLine(t *testing.T) {
	const n = 3000
	h := &records{}
	began := time.Now()
	p := start(t, Config{Binary: "/bin/sh", Args: floodScript(n), Logger: slog.New(h)})
	p.Wait(context.Background())
	p.Close(context.Background())
	elapsed := time.Since(began)
	lines, dropped, summaries := h.stderrCounts()
	allowed := DefaultStderrLogBurst + int(elapsed.Seconds()+1)*DefaultStderrLogRate
	if lines > allowed {
		t.Fatalf("%d of %d stderr lines logged in %v, want at most %d", lines, n, elapsed, allowed)
	}
	if int64(lines)+dropped != n || summaries == 0 {
		t.Fatalf("%d lines logged and %d reported not logged (%d summaries), want %d in all", lines, dropped, summaries, n)
	}
	if !strings.HasSuffix(p.Stderr(), "error 2999\n") {
		t.Fatalf("the tail lost the last lines: %q", p.Stderr()[max(0, len(p.Stderr())-100):])
	}
}

// The bound is configurable, and a negative burst logs every line.
func TestStderrLogBounds(t *testing.T) {
	const n = 500
	h := &records{}
	p := start(t, Config{Binary: "/bin/sh", Args: floodScript(n), Logger: slog.New(h), StderrLogBurst: 7, StderrLogRate: 1})
	began := time.Now()
	p.Wait(context.Background())
	p.Close(context.Background())
	lines, dropped, _ := h.stderrCounts()
	if allowed := 7 + int(time.Since(began).Seconds()+2); lines > allowed || int64(lines)+dropped != n {
		t.Fatalf("burst 7: %d lines logged, %d not (want at most %d logged, %d in all)", lines, dropped, allowed, n)
	}

	h = &records{}
	p = start(t, Config{Binary: "/bin/sh", Args: floodScript(n), Logger: slog.New(h), StderrLogBurst: -1})
	p.Wait(context.Background())
	p.Close(context.Background())
	if lines, dropped, summaries := h.stderrCounts(); lines != n || dropped != 0 || summaries != 0 {
		t.Fatalf("no bound: %d lines logged, %d not (%d summaries), want all %d", lines, dropped, summaries, n)
	}
}

func TestNewStderrLogLimiter(t *testing.T) {
	l := NewStderrLogLimiter(3, 2)
	t0 := time.Unix(1000, 0)
	for i := range 3 {
		if !l.AllowN(t0, 1) {
			t.Fatalf("line %d of the burst refused", i)
		}
	}
	if l.AllowN(t0, 1) || l.AllowN(t0.Add(100*time.Millisecond), 1) {
		t.Fatal("a line past the burst was allowed")
	}
	if !l.AllowN(t0.Add(600*time.Millisecond), 1) {
		t.Fatal("no token after half a second at 2 a second")
	}
	// A long quiet spell refills no more than the burst.
	t1 := t0.Add(time.Hour)
	for i := range 3 {
		if !l.AllowN(t1, 1) {
			t.Fatalf("line %d after an hour refused", i)
		}
	}
	if l.AllowN(t1, 1) {
		t.Fatal("more than the burst after an hour")
	}
	// The defaults, and no bound for a negative burst.
	if l := NewStderrLogLimiter(0, 0); l.Burst() != DefaultStderrLogBurst || float64(l.Limit()) != DefaultStderrLogRate {
		t.Fatalf("zero settings: burst %d rate %v", l.Burst(), l.Limit())
	}
	if l := NewStderrLogLimiter(-1, 0); !l.AllowN(t0, 1000) {
		t.Fatal("a negative burst bounds the lines")
	}
}

// Workers started with one StderrLogLimiter share its bound: one burst
// for all of them, where each would otherwise get its own.
func TestStderrLogLimiterShared(t *testing.T) {
	const n, burst = 50, 5
	h := &records{}
	cfg := Config{Binary: "/bin/sh", Args: floodScript(n), Logger: slog.New(h), StderrLogLimiter: NewStderrLogLimiter(burst, 1)}
	began := time.Now()
	for range 3 {
		p := start(t, cfg)
		p.Wait(context.Background())
		p.Close(context.Background())
	}
	lines, dropped, _ := h.stderrCounts()
	if allowed := burst + int(time.Since(began).Seconds()+1); lines > allowed || int64(lines)+dropped != 3*n {
		t.Fatalf("3 workers, one limiter: %d lines logged, %d not (want at most %d logged, %d in all)", lines, dropped, allowed, 3*n)
	}
}

// With StderrTo, the child's stderr arrives byte for byte (a line longer
// than a log record, a last line without a newline), with no stderr
// records logged and no bound applied.
func TestStderrToIsVerbatim(t *testing.T) {
	long := strings.Repeat("x", 10000)
	script := "i=0; while [ $i -lt 1000 ]; do echo \"error $i\" >&2; i=$((i+1)); done; printf '%s\\n' " + long + " >&2; printf 'no newline' >&2"
	var want bytes.Buffer
	for i := range 1000 {
		want.WriteString("error " + strconv.Itoa(i) + "\n")
	}
	want.WriteString(long + "\nno newline")
	h := &records{}
	var got bytes.Buffer
	p := start(t, Config{Binary: "/bin/sh", Args: []string{"-c", script}, Logger: slog.New(h), StderrTo: &got})
	p.Wait(context.Background())
	p.Close(context.Background())
	if got.String() != want.String() {
		t.Fatalf("StderrTo got %d bytes, want %d (first difference at %d)", got.Len(), want.Len(), firstDiff(got.String(), want.String()))
	}
	if lines, dropped, summaries := h.stderrCounts(); lines+summaries != 0 || dropped != 0 {
		t.Fatalf("with StderrTo, %d stderr records and %d summaries were logged", lines, summaries)
	}
	if !strings.HasSuffix(p.Stderr(), "\nno newline") {
		t.Fatalf("tail %q", p.Stderr()[max(0, len(p.Stderr())-50):])
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// gate is a slog.Handler whose first stderr record waits for open.
type gate struct {
	records
	open chan struct{}
	once sync.Once
}

func (g *gate) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "monty worker stderr" {
		g.once.Do(func() { <-g.open })
	}
	return g.records.Handle(ctx, r)
}
func (g *gate) WithAttrs([]slog.Attr) slog.Handler { return g }
func (g *gate) WithGroup(string) slog.Handler      { return g }

// Close stopped reading the child's stderr KillGrace after the exit even
// when nothing held the pipe any more and the drain was only slow (a slow
// log handler, or a StderrTo writer the reader of which lagged): the rest
// of the child's stderr was lost, from the tail and the log. Once the
// child has exited and nothing holds its stderr, Close reads it to the
// end.
func TestCloseReadsAnExitedWorkersStderrToTheEnd(t *testing.T) {
	g := &gate{open: make(chan struct{})}
	p := start(t, Config{Binary: "/bin/sh", Args: floodScript(500), Logger: slog.New(g), KillGrace: time.Nanosecond})
	p.Wait(context.Background())
	closed := make(chan struct{})
	go func() { p.Close(context.Background()); close(closed) }()
	// Let Close's grace pass while the drain is held up, then let it go.
	time.Sleep(50 * time.Millisecond)
	close(g.open)
	<-closed
	if tail := p.Stderr(); !strings.HasSuffix(tail, "error 499\n") {
		t.Fatalf("after Close the tail ends %q, want the last line", tail[max(0, len(tail)-40):])
	}
}

// A stderr line longer than a log record is logged as consecutive
// records of at most 4 KiB that hold all of it: the bytes past a record's
// room in each read were dropped, so what was logged depended on how the
// reads fell.
func TestLongStderrLineIsLoggedWhole(t *testing.T) {
	var line strings.Builder
	for i := 0; line.Len() < 20000; i++ {
		line.WriteString(strconv.Itoa(i) + ",")
	}
	h := &records{}
	p := start(t, Config{Binary: "/bin/sh", Args: []string{"-c", "printf '%s\\n%s' \"$L\" \"$L\" >&2"},
		Env: []string{"L=" + line.String()}, Logger: slog.New(h), StderrLogBurst: -1})
	p.Wait(context.Background())
	p.Close(context.Background())
	var got strings.Builder
	h.mu.Lock()
	for _, r := range h.recs {
		if r.Message != "monty worker stderr" {
			continue
		}
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "line" {
				if n := len(a.Value.String()); n > maxLogLine {
					t.Errorf("a record of %d bytes", n)
				}
				got.WriteString(a.Value.String())
			}
			return true
		})
	}
	h.mu.Unlock()
	if want := line.String() + line.String(); got.String() != want {
		t.Fatalf("logged %d bytes of the two lines' %d (first difference at %d)", got.Len(), len(want), firstDiff(got.String(), want))
	}
}

// A long line is cut between characters, never inside one: each record
// is valid UTF-8 (a handler writing JSON replaces the halves of a cut
// character with U+FFFD), and the records still join to the line.
func TestLongStderrLineIsCutBetweenCharacters(t *testing.T) {
	line := "é" + strings.Repeat("€", 5000) // 2 + 3*5000 bytes: cuts at 4096 fall inside characters
	h := &records{}
	p := start(t, Config{Binary: "/bin/sh", Args: []string{"-c", "printf '%s\\n' \"$L\" >&2"},
		Env: []string{"L=" + line}, Logger: slog.New(h), StderrLogBurst: -1})
	p.Wait(context.Background())
	p.Close(context.Background())
	var got strings.Builder
	h.mu.Lock()
	for _, r := range h.recs {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "line" {
				if !utf8.ValidString(a.Value.String()) {
					t.Errorf("a record of %d bytes is not valid UTF-8", len(a.Value.String()))
				}
				got.WriteString(a.Value.String())
			}
			return true
		})
	}
	h.mu.Unlock()
	if got.String() != line {
		t.Fatalf("logged %d bytes of the line's %d", got.Len(), len(line))
	}
}
