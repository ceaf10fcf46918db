package value

import (
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/gomonty/monty/internal/valuecheck"
)

// MaxDiagnosticLen bounds the text of a validation error. A longer text is
// replaced by a fixed one, so a huge bogus name from a peer is never copied
// into an error a second time.
const MaxDiagnosticLen = 512

// ErrDiagnosticTooLong is the text that replaces an over-long diagnostic.
const diagTooLong = "invalid wire value (error message exceeds 512 bytes)"

// InvalidError reports a value that breaks a rule of the protocol. Its text
// is the protocol's own diagnostic, for example
// `invalid value for Date.month: 13 is outside the range 1..=12` or
// `unknown exception type "X"`.
//
// It is not modified after it is returned; it is safe to read concurrently.
type InvalidError struct {
	msg string
}

func (e *InvalidError) Error() string { return e.msg }

func invalid(format string, args ...any) *InvalidError {
	// Bound the work: a string argument longer than the whole diagnostic
	// may be is never formatted, so a megabyte-long bogus name from a peer
	// costs nothing more here.
	for _, a := range args {
		if s, ok := a.(string); ok && len(s) > MaxDiagnosticLen {
			return &InvalidError{msg: diagTooLong}
		}
	}
	m := fmt.Sprintf(format, args...)
	if len(m) > MaxDiagnosticLen {
		m = diagTooLong
	}
	return &InvalidError{msg: m}
}

// Quote renders s the way the Rust worker's diagnostics quote a name
// (Rust's Debug for str): double quotes, with \\, \", \n, \r, \t, \0
// escaped and every other character that is not printable, or that extends
// a grapheme (a combining mark, a variation selector), as \u{hex}, by the
// Unicode edition of the worker's Rust library (rustPlain, read from the
// worker).
func Quote(s string) string {
	return quote(s)
}

// quoteBounded quotes s unless it is too long for a diagnostic anyway, in
// which case it returns s itself (which invalid then refuses to format).
func quoteBounded(s string) string {
	if len(s) > MaxDiagnosticLen {
		return s
	}
	return quote(s)
}

func quote(s string) string {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for _, r := range s {
		switch r {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case 0:
			b = append(b, '\\', '0')
		default:
			if unicode.Is(rustPlain, r) && r != utf8.RuneError {
				b = utf8.AppendRune(b, r)
			} else {
				b = append(b, '\\', 'u', '{')
				b = strconv.AppendUint(b, uint64(r), 16)
				b = append(b, '}')
			}
		}
	}
	return string(append(b, '"'))
}

// invalidValue returns the error `invalid value for {field}: {reason}`.
func invalidValue(field, reason string) error {
	return invalid("invalid value for %s: %s", field, reason)
}

// missingField returns the error `missing required field {field}`.
func missingField(field string) error { return invalid("missing required field %s", field) }

// UnknownExceptionType returns the error `unknown exception type "{name}"`.
func UnknownExceptionType(name string) error {
	return invalid("unknown exception type %s", quoteBounded(name))
}

// InvalidFileMode returns the error `invalid file mode "{mode}"`.
func InvalidFileMode(mode string) error { return invalid("invalid file mode %s", quoteBounded(mode)) }

func rangeErr(field string, v int64, lo, hi int64) error {
	return invalid("invalid value for %s: %d is outside the range %d..=%d", field, v, lo, hi)
}

// DaysInMonth returns the number of days of month m (1..12) in year y of the
// proleptic Gregorian calendar.
func DaysInMonth(y int32, m uint32) uint32 {
	switch m {
	case 1, 3, 5, 7, 8, 10, 12:
		return 31
	case 4, 6, 9, 11:
		return 30
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	}
	return 0
}

func checkDate(msg string, y int32, m, d uint32) error {
	if y < 1 || y > 9999 {
		return rangeErr(msg+".year", int64(y), 1, 9999)
	}
	if m < 1 || m > 12 {
		return rangeErr(msg+".month", int64(m), 1, 12)
	}
	if max := DaysInMonth(y, m); d < 1 || d > max {
		return rangeErr(msg+".day", int64(d), 1, int64(max))
	}
	return nil
}

func checkClock(msg string, h, mi, s, us uint32) error {
	if h > 23 {
		return rangeErr(msg+".hour", int64(h), 0, 23)
	}
	if mi > 59 {
		return rangeErr(msg+".minute", int64(mi), 0, 59)
	}
	if s > 59 {
		return rangeErr(msg+".second", int64(s), 0, 59)
	}
	if us > 999999 {
		return invalid("invalid value for %s.microsecond: %d exceeds maximum 999999", msg, us)
	}
	return nil
}

func checkOffset(field string, off *int32) error {
	if off != nil && (*off < -86399 || *off > 86399) {
		return rangeErr(field, int64(*off), -86399, 86399)
	}
	return nil
}

// checkZoneName is the first check of a DateTime or a Time, before its
// ranges (the released worker's order): a timezone name needs an offset.
func checkZoneName(off *int32, name *string, nameField string) error {
	if name != nil && off == nil {
		return invalidValue(nameField, "timezone_name requires offset_seconds")
	}
	return nil
}

// Check validates a Date.
func (d *Date) Check() error { return checkDate("Date", d.Year, d.Month, d.Day) }

// Check validates a DateTime.
func (d *DateTime) Check() error {
	if err := checkZoneName(d.Offset, d.TZName, "DateTime.timezone_name"); err != nil {
		return err
	}
	if err := checkDate("DateTime", d.Year, d.Month, d.Day); err != nil {
		return err
	}
	if err := checkClock("DateTime", d.Hour, d.Minute, d.Second, d.Microsecond); err != nil {
		return err
	}
	return checkOffset("DateTime.offset_seconds", d.Offset)
}

// Check validates a Time.
func (t *Time) Check() error {
	if err := checkZoneName(t.Offset, t.TZName, "Time.timezone_name"); err != nil {
		return err
	}
	if err := checkClock("Time", t.Hour, t.Minute, t.Second, t.Microsecond); err != nil {
		return err
	}
	if err := checkOffset("Time.offset_seconds", t.Offset); err != nil {
		return err
	}
	if t.Fold > 1 {
		return rangeErr("Time.fold", int64(t.Fold), 0, 1)
	}
	return nil
}

// Check validates a TimeDelta's normalization.
func (d *TimeDelta) Check() error {
	if d.Seconds < 0 || d.Seconds >= 86400 {
		return invalid("invalid value for TimeDelta.seconds: %d is outside the normalized range 0..86400", d.Seconds)
	}
	if d.Microseconds < 0 || d.Microseconds >= 1000000 {
		return invalid("invalid value for TimeDelta.microseconds: %d is outside the normalized range 0..1000000", d.Microseconds)
	}
	return nil
}

// Check validates a TimeZone.
func (z *TimeZone) Check() error {
	if z.Offset < -86399 || z.Offset > 86399 {
		return rangeErr("TimeZone.offset_seconds", int64(z.Offset), -86399, 86399)
	}
	return nil
}

// Check validates an exception value.
func (e *Exception) Check() error {
	if !KnownExceptionType(e.Type) {
		return UnknownExceptionType(e.Type)
	}
	return nil
}

// Check validates a type node payload. hasID and hasAttrs say whether the
// fields were present on the wire (a builtin type must carry neither, not
// even present-but-empty attrs).
func (t *Type) check(hasID, hasAttrs bool) error {
	switch t.Origin {
	case OriginUnspecified:
		return invalidValue("Type", "origin must be specified")
	case OriginBuiltin:
		if hasID {
			return invalidValue("Type", "a builtin type must not carry an id")
		}
		if hasAttrs {
			return invalidValue("Type", "a builtin type must not carry attrs")
		}
		if !KnownBuiltinType(t.Name) {
			return invalid("unknown type name %s", quoteBounded(t.Name))
		}
	case OriginSandbox, OriginHost:
		if !hasID {
			return invalidValue("Type", "a class type must carry an id")
		}
	default:
		return invalidValue("Type.origin", "unknown origin "+strconv.Itoa(int(t.Origin)))
	}
	return nil
}

// The codecs reach the wire-level checks through internal/valuecheck.
func init() {
	valuecheck.Register(missingField, invalidValue, func(n Node) error { return checkLeaf(&n) }, (*Type).check, badText)
}

// NormalizeFileMode returns the canonical spelling of a file mode (r, rb,
// w, wb, a, ab) or an error for anything else, including every '+' mode.
func NormalizeFileMode(mode string) (string, error) {
	switch mode {
	case "r", "rt", "tr":
		return "r", nil
	case "rb", "br":
		return "rb", nil
	case "w", "wt", "tw":
		return "w", nil
	case "wb", "bw":
		return "wb", nil
	case "a", "at", "ta":
		return "a", nil
	case "ab", "ba":
		return "ab", nil
	}
	return "", InvalidFileMode(mode)
}

// Check validates a file handle's mode.
func (f *FileHandle) Check() error {
	_, err := NormalizeFileMode(f.Mode)
	return err
}

// checkLeaf validates the payload of one node on its own (ranges, names,
// modes), without looking at its children. Codecs call it (through
// internal/valuecheck) as each node is decoded; [Graph.Check] calls it for
// graphs built in Go.
func checkLeaf(n *Node) error {
	switch n.Kind {
	case KindBool:
		if n.Num > 1 {
			return invalidValue("MontyNode.boolean", "not 0 or 1")
		}
	case KindBigInt:
		if n.BigInt() == nil {
			return missingField("BigInt")
		}
	case KindBytes:
		if n.Bytes() == nil {
			return missingField("MontyNode.bytes")
		}
	case KindNamedTuple:
		if _, ok := n.Ext().(*NamedTuple); !ok {
			return missingField("NamedTupleNode")
		}
	case KindDate:
		d, ok := n.Ext().(*Date)
		if !ok {
			return missingField("Date")
		}
		return d.Check()
	case KindTime:
		t, ok := n.Ext().(*Time)
		if !ok {
			return missingField("Time")
		}
		return t.Check()
	case KindDateTime:
		d, ok := n.Ext().(*DateTime)
		if !ok {
			return missingField("DateTime")
		}
		return d.Check()
	case KindTimeDelta:
		d, ok := n.Ext().(*TimeDelta)
		if !ok {
			return missingField("TimeDelta")
		}
		return d.Check()
	case KindTimeZone:
		z, ok := n.Ext().(*TimeZone)
		if !ok {
			return missingField("TimeZone")
		}
		return z.Check()
	case KindException:
		e, ok := n.Ext().(*Exception)
		if !ok {
			return missingField("Exception")
		}
		return e.Check()
	case KindType:
		t, ok := n.Ext().(*Type)
		if !ok {
			return missingField("Type")
		}
		return t.check(!t.ID.IsZero(), len(t.Attrs) > 0)
	case KindClassInstance:
		if _, ok := n.Ext().(*ClassInstance); !ok {
			return missingField("ClassInstanceNode")
		}
	case KindFunction:
		if _, ok := n.Ext().(*Function); !ok {
			return missingField("Function")
		}
	case KindFileHandle:
		f, ok := n.Ext().(*FileHandle)
		if !ok {
			return missingField("FileHandle")
		}
		return f.Check()
	case KindBuiltinFunction:
		if !KnownBuiltinFunction(n.Text()) {
			return invalid("unknown builtin function %s", quoteBounded(n.Text()))
		}
	case KindEllipsis, KindNone, KindNotImplemented, KindInt, KindFloat, KindStr,
		KindList, KindTuple, KindSet, KindFrozenSet, KindPath, KindRepr, KindCycle:
	case KindDict:
		if len(n.Refs())%2 != 0 {
			return invalidValue("NodePairs", "odd number of dict references")
		}
	default:
		return missingField("MontyNode.kind")
	}
	return nil
}

// ArenaError reports a graph that breaks the arena's structural rules. Its
// text is `invalid value for Arena: {reason}`.
//
// It is not modified after it is returned; it is safe to read concurrently.
type ArenaError struct {
	Reason string
}

func (e *ArenaError) Error() string { return "invalid value for Arena: " + e.Reason }

// CheckStructure verifies the arena rules: every child id is strictly lower
// than its parent's, a class instance points at a sandbox or host class
// type, and every root is in range. Leaf payloads are not rechecked (see
// [Graph.Check]).
func (g *Graph) CheckStructure(roots ...NodeID) error {
	for i := range g.Nodes {
		n := &g.Nodes[i]
		id := NodeID(i)
		for _, r := range n.Refs() {
			if r >= id {
				return &ArenaError{fmt.Sprintf("value node %d references node %d, which is not below it", id, r)}
			}
		}
		switch n.pk {
		case pkType:
			x := (*Type)(n.p)
			for _, p := range x.Attrs {
				if p.Key >= id || p.Value >= id {
					bad := p.Key
					if p.Key < id {
						bad = p.Value
					}
					return &ArenaError{fmt.Sprintf("value node %d references node %d, which is not below it", id, bad)}
				}
			}
		case pkClassInstance:
			x := (*ClassInstance)(n.p)
			if x.Class >= id {
				return &ArenaError{fmt.Sprintf("value node %d references node %d, which is not below it", id, x.Class)}
			}
			for _, p := range x.Attrs {
				if p.Key >= id || p.Value >= id {
					bad := p.Key
					if p.Key < id {
						bad = p.Value
					}
					return &ArenaError{fmt.Sprintf("value node %d references node %d, which is not below it", id, bad)}
				}
			}
			c := &g.Nodes[x.Class]
			t, ok := c.Ext().(*Type)
			if c.Kind != KindType || !ok || (t.Origin != OriginSandbox && t.Origin != OriginHost) {
				return &ArenaError{fmt.Sprintf("class instance node %d does not point at a class type", id)}
			}
		}
	}
	for _, r := range roots {
		if int(r) >= len(g.Nodes) {
			return &ArenaError{fmt.Sprintf("value root %d is out of range for an arena of %d nodes", r, len(g.Nodes))}
		}
	}
	return nil
}

// Check validates a graph built in Go before it is sent: every leaf
// payload, then the structure and roots.
func (g *Graph) Check(roots ...NodeID) error {
	for i := range g.Nodes {
		if err := checkLeaf(&g.Nodes[i]); err != nil {
			return err
		}
	}
	return g.CheckStructure(roots...)
}

// InputError reports a value the worker would refuse as an input (a repr or
// cycle leaf, or a sandbox class type that the host cannot rebuild).
//
// It is not modified after it is returned; it is safe to read concurrently.
type InputError struct {
	Node NodeID
	Kind Kind
}

func (e *InputError) Error() string {
	return fmt.Sprintf("node %d: %s is not a valid input value", e.Node, e.Kind)
}

// CheckInput reports whether every node of g may be sent to the worker as
// an input: it returns an *InputError for the first node, in index order,
// whose kind the worker does not take back (Kind.OutputOnly). It looks at
// all of g's nodes, not only those reachable from roots: at protocols 4
// and 5 the whole graph is the message's arena, so a node no root reaches
// is on the wire too. roots is not read; it is there so that a call reads
// as one of Check does. Within this module only tests call it; package
// session makes the same check over the nodes one host answer added.
func (g *Graph) CheckInput(roots ...NodeID) error {
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Kind.OutputOnly() {
			return &InputError{Node: NodeID(i), Kind: n.Kind}
		}
	}
	return nil
}
