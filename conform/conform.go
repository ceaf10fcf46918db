//go:build unix

// Package conform is the Monty worker protocol's conformance kit: a catalog
// of named rules, each a check of one behaviour the child's contract
// requires, and a runner that plays them against any worker.
//
// A worker under test is a [Target]: a local executable spawned as
// `BIN subprocess` (one fresh process per session a rule opens) or a
// WebSocket endpoint (one fresh connection per session). The checks speak
// raw frames through the codecs (codec/codecv4, codec/codecv2), not through package
// session, so they can send what a parent normally never would: malformed
// frames, requests out of state, wrong call ids, torn prefixes.
//
// Each [Rule] has a stable id (for example "configure.version-zero-rejected"
// or "resume.call-id-mismatch"), the protocol versions it applies to and
// what the transport must offer (a byte stream for torn frames, a visible
// process for exit statuses). [Run] plays the selected rules in parallel
// with a bound and returns a [Report]: pass, fail (with what was expected
// and what came) or skip (with the reason) per rule.
//
// The parent side of the kit (judging a parent program against the hostile
// child catalog) lives in [RunParent].
package conform

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gomonty/monty/codec"
	_ "github.com/gomonty/monty/codec/codecv2" // registers protocol 2
	_ "github.com/gomonty/monty/codec/codecv4" // registers protocol 4
	_ "github.com/gomonty/monty/codec/codecv5" // registers protocol 5
)

// Status is a rule's verdict.
type Status string

// The verdicts.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Needs lists what a rule requires of the target beyond exchanging frames.
type Needs uint8

// The requirements.
const (
	// NeedStream: the rule writes raw bytes (torn or oversize frames) or
	// closes the worker's input, so it needs a byte-stream transport.
	NeedStream Needs = 1 << iota
	// NeedProcess: the rule checks an exit status, so the worker must be a
	// local process.
	NeedProcess
)

// Rule is one named check of the child's contract.
//
// Rules are plain data plus a check function; the catalog ([Rules]) is
// fixed at init and safe for concurrent use.
type Rule struct {
	// ID is stable: reports, --run filters and documentation refer to it.
	ID string
	// Title says in one line what the rule requires.
	Title string
	// Versions lists the protocol versions the rule applies to.
	Versions []uint32
	// Needs says what the transport must offer.
	Needs Needs
	// Spec names the contract section the rule comes from.
	Spec string

	check func(t *rt)
}

// AppliesTo reports whether the rule is defined at protocol v.
func (r Rule) AppliesTo(v uint32) bool { return slices.Contains(r.Versions, v) }

// Result is one rule's outcome. It is plain data.
type Result struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status Status `json:"status"`
	// Detail says what was expected and what came (fail) or why the rule
	// did not run (skip); empty on pass.
	Detail string `json:"detail"`
}

// Summary counts the verdicts. It is plain data.
type Summary struct {
	Pass int `json:"pass"`
	Fail int `json:"fail"`
	Skip int `json:"skip"`
}

// Report is the outcome of a run, in the kit's JSON form. It is plain data,
// not safe for concurrent mutation.
type Report struct {
	Target   string   `json:"target"`
	Protocol uint32   `json:"protocol"`
	Rules    []Result `json:"rules"`
	Summary  Summary  `json:"summary"`
}

// Failed returns the ids of the failed rules, sorted.
func (r *Report) Failed() []string {
	var out []string
	for _, res := range r.Rules {
		if res.Status == Fail {
			out = append(out, res.ID)
		}
	}
	sort.Strings(out)
	return out
}

func (r *Report) count() {
	r.Summary = Summary{}
	for _, res := range r.Rules {
		switch res.Status {
		case Pass:
			r.Summary.Pass++
		case Fail:
			r.Summary.Fail++
		case Skip:
			r.Summary.Skip++
		}
	}
}

// Options configure [Run]. The zero value runs every rule at protocol 4.
// Options are plain data, safe to share.
type Options struct {
	// Protocol is the version to test; 0 means 4.
	Protocol uint32
	// Match selects rules by id; nil runs them all.
	Match *regexp.Regexp
	// Parallel bounds how many rules run at once; 0 means
	// max(4, 2 × GOMAXPROCS).
	Parallel int
	// RuleTimeout bounds one rule; 0 means 30 s. A rule that overruns is
	// failed and its workers are killed.
	RuleTimeout time.Duration
	// Limits bound the decoding of the worker's frames.
	Limits codec.Limits
}

// Run plays the selected rules against target and returns the report. It
// returns an error only for unusable options (an unknown protocol
// version); a worker that cannot even be started fails the rules instead.
func Run(ctx context.Context, target Target, opts Options) (*Report, error) {
	v := opts.Protocol
	if v == 0 {
		v = 4
	}
	cd, ok := codec.ForVersion(v)
	if !ok {
		return nil, fmt.Errorf("conform: no codec for protocol %d (have %v)", v, codec.Versions())
	}
	par := opts.Parallel
	if par <= 0 {
		par = max(4, 2*runtime.GOMAXPROCS(0))
	}
	timeout := opts.RuleTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	rep := &Report{Target: target.Name(), Protocol: v}
	var selected []Rule
	for _, r := range catalog {
		if opts.Match != nil && !opts.Match.MatchString(r.ID) {
			continue
		}
		selected = append(selected, r)
	}
	rep.Rules = make([]Result, len(selected))
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i, r := range selected {
		rep.Rules[i] = Result{ID: r.ID, Title: r.Title}
		if why := skipReason(r, v, target); why != "" {
			rep.Rules[i].Status, rep.Rules[i].Detail = Skip, why
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := acquire(ctx, sem); err != nil {
				rep.Rules[i].Status, rep.Rules[i].Detail = Fail, "not run: "+err.Error()
				return
			}
			defer func() { <-sem }()
			st, detail := runOne(ctx, r, target, v, cd, opts.Limits, timeout)
			rep.Rules[i].Status, rep.Rules[i].Detail = st, detail
		}()
	}
	wg.Wait()
	rep.count()
	return rep, nil
}

func skipReason(r Rule, v uint32, target Target) string {
	if !r.AppliesTo(v) {
		return fmt.Sprintf("not defined at protocol %d (only %s)", v, versionList(r.Versions))
	}
	if r.Needs&NeedStream != 0 && !target.stream() {
		return "needs a byte-stream transport (raw or torn frames, closing the input); the target is message-based"
	}
	if r.Needs&NeedProcess != 0 && !target.process() {
		return "needs a local worker process to observe its exit status"
	}
	return ""
}

func versionList(vs []uint32) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, ", ")
}

// runOne plays one rule on its own goroutine so that a failing check can
// end it with runtime.Goexit, and kills the rule's workers when it
// overruns or the run is canceled.
func runOne(runCtx context.Context, r Rule, target Target, v uint32, cd codec.Codec, lim codec.Limits, timeout time.Duration) (Status, string) {
	ctx, cancel := context.WithTimeout(runCtx, timeout)
	defer cancel()
	t := &rt{ctx: ctx, target: target, Version: v, cd: cd, lim: lim, status: Pass}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer t.closeAll()
		defer func() {
			if p := recover(); p != nil {
				t.setResult(Fail, fmt.Sprintf("check panicked: %v", p))
			}
		}()
		r.check(t)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		select {
		case <-done: // the check ended as the time ran out: its verdict stands
		default:
			if err := runCtx.Err(); err != nil {
				t.setResult(Fail, fmt.Sprintf("not finished: %v (%s)", err, t.lastStep()))
			} else {
				t.setResult(Fail, fmt.Sprintf("no verdict within %v (%s)", timeout, t.lastStep()))
			}
			t.killAll()
			<-done
		}
	}
	st, detail := t.result()
	return st, detail
}

// Rules returns the catalog, in a fixed order. The slice is a copy.
func Rules() []Rule { return slices.Clone(catalog) }

// Lookup returns the rule with the given id.
func Lookup(id string) (Rule, bool) {
	for _, r := range catalog {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

var catalog []Rule

// The versions a rule is defined at. Most rules hold at every version the
// kit speaks (protocol 5 changed the limits, the OS calls and the stamps,
// not the state machine or the framing); upTo4 marks a rule on what
// protocol 5 changed (the per-session max_duration it removed, the dump
// bytes it leaves to the remote), from4 one on what protocol 2 lacks (the
// value arena, print segments, eager await).
var (
	every = []uint32{2, 4, 5}
	upTo4 = []uint32{2, 4}
	from4 = []uint32{4, 5}
	only2 = []uint32{2}
	only5 = []uint32{5}
)

// rule adds a rule to the catalog; ids must be unique.
func rule(id, spec string, versions []uint32, needs Needs, title string, check func(t *rt)) {
	for _, r := range catalog {
		if r.ID == id {
			panic("conform: duplicate rule id " + id)
		}
	}
	catalog = append(catalog, Rule{ID: id, Title: title, Versions: versions, Needs: needs, Spec: spec, check: check})
}

// acquire takes a slot of sem for one rule, or returns the context's error
// when it ended first (while waiting, or as the slot came free): the rule
// is then reported as not run.
func acquire(ctx context.Context, sem chan struct{}) error {
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		<-sem
		return err
	}
	return nil
}
