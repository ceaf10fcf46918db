package value

import (
	"math"
	"math/big"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// This file reads JSON text (RFC 8259) into graph nodes, as Python's
// json.loads reads it, without building Go values on the way:
//
//	object          dict, keys in the text's order; a repeated key keeps
//	                its first place and its last value, as dict(...) does
//	array           list
//	string          str (a lone UTF-16 surrogate escape, which a Python str
//	                could hold but UTF-8 cannot, becomes U+FFFD)
//	integer         int (a big int past 64 bits; more than MaxIntStrDigits
//	                digits are refused, as json.loads refuses them)
//	fraction/exp    float (past float64's range: an infinity, as json.loads
//	                gives)
//	true/false/null True/False/None
//
// The text must be valid UTF-8 and exactly one JSON value with optional
// white space around it. Python's extensions (NaN, Infinity) are refused,
// as RFC 8259 and encoding/json refuse them. The reader is iterative: a
// deeply nested text needs no Go stack, and its work and memory are
// linear in the text's length. A graph holds about 30 bytes a value
// (24 a node, 4 an item), so dense text such as [0,0,0,...] becomes about
// 14 times its length, and reading allocates a few times that while the
// node slice grows: bound the text of untrusted clients before reading
// it.

// FromJSON appends the nodes of the JSON value in text to g and returns
// the id of its root (see the mapping above). On error g is left as it
// was and the error is a *ConversionError whose Reason gives the byte
// offset and what was wrong there.
func FromJSON(g *Graph, text []byte) (NodeID, error) {
	start := len(g.Nodes)
	// A node takes at least two bytes of text (a digit and a comma), and
	// real text about eight: room for that many saves the doublings (up to
	// a million nodes: a long string is one node, whatever its length).
	if n := min(len(text)/8+1, 1<<20); cap(g.Nodes)-len(g.Nodes) < n {
		g.Nodes = slices.Grow(g.Nodes, n)
	}
	r := jsonReader{g: g, s: text}
	id, err := r.read()
	if err != nil {
		g.Truncate(start)
		return 0, err
	}
	return id, nil
}

type jsonReader struct {
	g   *Graph
	s   []byte
	i   int
	ids []NodeID // items of the open containers, outermost first
	// open containers: where each one's items start in ids, and whether
	// it is an object
	open []jsonOpen
	keys map[string]int // scratch for repeated keys
	// names interns keys: records repeat theirs
	names map[string]string
	slab  []NodeID // where containers' items are copied to
}

// refs returns a copy of items, carved from a shared slab.
func (r *jsonReader) refs(items []NodeID) []NodeID {
	if len(items) > cap(r.slab)-len(r.slab) {
		if len(items) >= 1024 {
			return slices.Clone(items)
		}
		r.slab = make([]NodeID, 0, 4096)
	}
	n := len(r.slab)
	r.slab = append(r.slab, items...)
	return r.slab[n:len(r.slab):len(r.slab)]
}

// name returns s as a string, the same string for the same key.
func (r *jsonReader) name(b []byte) string {
	if s, ok := r.names[string(b)]; ok {
		return s
	}
	if r.names == nil {
		r.names = make(map[string]string)
	}
	s := string(b)
	if len(r.names) < 4096 {
		r.names[s] = s
	}
	return s
}

type jsonOpen struct {
	start  int
	object bool
}

func (r *jsonReader) fail(what string) error {
	return &ConversionError{GoType: jsonType, FromGo: true, Reason: "invalid JSON at byte " + strconv.Itoa(r.i) + ": " + what}
}

// unexpected describes the byte at r.i.
func (r *jsonReader) unexpected() error {
	if r.i >= len(r.s) {
		return r.fail("unexpected end of input")
	}
	return r.fail("unexpected " + strconv.QuoteRuneToASCII(rune(r.s[r.i])))
}

func (r *jsonReader) space() {
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *jsonReader) read() (NodeID, error) {
	for {
		// A value, or the end of an empty container.
		r.space()
		if r.i >= len(r.s) {
			return 0, r.unexpected()
		}
		c := r.s[r.i]
		var id NodeID
		switch {
		case c == '[' || c == '{':
			r.i++
			r.open = append(r.open, jsonOpen{start: len(r.ids), object: c == '{'})
			r.space()
			if r.i < len(r.s) && r.s[r.i] == c+2 { // ']' or '}'
				r.i++
				id = r.closeContainer()
				break
			}
			if c == '{' {
				if err := r.key(); err != nil {
					return 0, err
				}
			}
			continue
		default:
			var err error
			if id, err = r.scalar(); err != nil {
				return 0, err
			}
		}
		// After a value: a separator, or the end of containers.
		for {
			if len(r.open) == 0 {
				r.space()
				if r.i < len(r.s) {
					return 0, r.fail("data after the JSON value")
				}
				return id, nil
			}
			r.ids = append(r.ids, id)
			o := r.open[len(r.open)-1]
			r.space()
			if r.i >= len(r.s) {
				return 0, r.unexpected()
			}
			switch c := r.s[r.i]; {
			case c == ',':
				r.i++
				if o.object {
					if err := r.key(); err != nil {
						return 0, err
					}
				}
			case (c == ']' && !o.object) || (c == '}' && o.object):
				r.i++
				id = r.closeContainer()
				continue
			default:
				return 0, r.unexpected()
			}
			break
		}
	}
}

// key reads an object's key and its colon, and adds the key's node.
func (r *jsonReader) key() error {
	r.space()
	if r.i >= len(r.s) || r.s[r.i] != '"' {
		return r.unexpected()
	}
	s, err := r.strBytes()
	if err != nil {
		return err
	}
	r.ids = append(r.ids, r.g.Add(Str(r.name(s))))
	r.space()
	if r.i >= len(r.s) || r.s[r.i] != ':' {
		return r.unexpected()
	}
	r.i++
	return nil
}

// closeContainer adds the node of the innermost open container.
func (r *jsonReader) closeContainer() NodeID {
	o := r.open[len(r.open)-1]
	r.open = r.open[:len(r.open)-1]
	items := r.ids[o.start:]
	r.ids = r.ids[:o.start]
	if !o.object {
		return r.g.Add(Node{Kind: KindList}.WithRefs(r.refs(items)))
	}
	return r.g.Add(Node{Kind: KindDict}.WithRefs(r.dedupe(items)))
}

// dedupe returns an object's key/value ids with each repeated key kept at
// its first place with its last value, as a Python dict built from the
// pairs in order would hold them.
func (r *jsonReader) dedupe(pairs []NodeID) []NodeID {
	out := r.refs(pairs)
	if len(out) <= 2 {
		return out
	}
	text := func(k NodeID) string { return r.g.Nodes[k].Text() }
	n := 0 // pairs kept, times 2
	if len(out) <= 16 {
	small:
		for i := 0; i < len(out); i += 2 {
			for j := 0; j < n; j += 2 {
				if text(out[j]) == text(out[i]) {
					out[j+1] = out[i+1]
					continue small
				}
			}
			out[n], out[n+1] = out[i], out[i+1]
			n += 2
		}
		return out[:n]
	}
	if r.keys == nil {
		r.keys = make(map[string]int, len(out)/2)
	}
	clear(r.keys)
	for i := 0; i < len(out); i += 2 {
		if j, ok := r.keys[text(out[i])]; ok {
			out[j+1] = out[i+1]
			continue
		}
		r.keys[text(out[i])] = n
		out[n], out[n+1] = out[i], out[i+1]
		n += 2
	}
	return out[:n]
}

// scalar reads a string, number or literal and adds its node.
func (r *jsonReader) scalar() (NodeID, error) {
	switch c := r.s[r.i]; {
	case c == '"':
		s, err := r.str()
		if err != nil {
			return 0, err
		}
		return r.g.Add(Str(s)), nil
	case c == '-' || (c >= '0' && c <= '9'):
		return r.number()
	}
	for _, lit := range [...]struct {
		text string
		node Node
	}{{"true", Bool(true)}, {"false", Bool(false)}, {"null", None()}} {
		if len(r.s)-r.i >= len(lit.text) && string(r.s[r.i:r.i+len(lit.text)]) == lit.text {
			r.i += len(lit.text)
			return r.g.Add(lit.node), nil
		}
	}
	return 0, r.unexpected()
}

// number reads a number: an int when it has neither fraction nor
// exponent, else a float.
func (r *jsonReader) number() (NodeID, error) {
	start := r.i
	end, intStart, isFloat, leadingZero := scanNumber(r.s, r.i)
	r.i = end
	switch {
	case leadingZero:
		return 0, r.fail("a number with a leading zero")
	case end < 0:
		r.i = -end - 1
		return 0, r.unexpected()
	}
	// A view of the token, not a copy: strconv and big.Int keep no
	// reference to it (strconv's errors copy their input).
	text := unsafe.String(&r.s[start], r.i-start)
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !math.IsInf(f, 0) {
			return 0, r.fail("a number out of range")
		}
		return r.g.Add(Float(f)), nil // past the range: ±inf, as json.loads
	}
	if v, err := strconv.ParseInt(text, 10, 64); err == nil {
		return r.g.Add(Int(v)), nil
	}
	if nd := end - intStart; nd > MaxIntStrDigits {
		r.i = start
		return 0, &ConversionError{GoType: jsonType, FromGo: true, Kind: KindBigInt,
			Reason: "invalid JSON at byte " + strconv.Itoa(start) + ": an int of " + strconv.Itoa(nd) + " digits",
			Err:    &IntStrDigitsError{Limit: MaxIntStrDigits, Bits: int(float64(nd) / log10of2)}}
	}
	b, _ := new(big.Int).SetString(text, 10)
	return r.g.Add(BigIntNode(b)), nil
}

// scanNumber scans the JSON number token at s[i:] by RFC 8259's grammar
// (an optional minus, an integer without leading zeros, an optional
// fraction and exponent). It returns the token's end, where its integer
// digits start and whether it has a fraction or exponent; end is -1-j for
// a token that breaks off at byte j, and leadingZero reports a zero
// followed by more digits (end is then just past the zero).
func scanNumber[T ~string | ~[]byte](s T, i int) (end, intStart int, isFloat, leadingZero bool) {
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	intStart = i
	switch n := digits(); {
	case n == 0:
		return -1 - i, intStart, false, false
	case n > 1 && s[intStart] == '0':
		return intStart + 1, intStart, false, true
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return -1 - i, intStart, false, false
		}
		isFloat = true
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return -1 - i, intStart, false, false
		}
		isFloat = true
	}
	return i, intStart, isFloat, false
}

// isJSONNumber reports whether s is one JSON number token and nothing
// else.
func isJSONNumber(s string) bool {
	end, _, _, leadingZero := scanNumber(s, 0)
	return !leadingZero && end == len(s)
}

// str reads a string token (r.s[r.i] is its opening quote).
func (r *jsonReader) str() (string, error) {
	b, err := r.strBytes()
	return string(b), err
}

// strBytes is str's text, in r.s itself when the token has no escape.
func (r *jsonReader) strBytes() ([]byte, error) {
	r.i++
	start := r.i
	// The common case: no escape, ASCII or valid UTF-8, no control
	// character.
	for r.i < len(r.s) {
		c := r.s[r.i]
		if c == '"' {
			s := r.s[start:r.i]
			r.i++
			return s, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		if c < utf8.RuneSelf {
			r.i++
			continue
		}
		ru, size := utf8.DecodeRune(r.s[r.i:])
		if ru == utf8.RuneError && size == 1 {
			return nil, r.fail("invalid UTF-8")
		}
		r.i += size
	}
	buf := append([]byte(nil), r.s[start:r.i]...)
	for r.i < len(r.s) {
		c := r.s[r.i]
		switch {
		case c == '"':
			r.i++
			return buf, nil
		case c < 0x20:
			return nil, r.fail("a control character in a string")
		case c == '\\':
			if r.i+1 >= len(r.s) {
				r.i++
				return nil, r.unexpected()
			}
			e := r.s[r.i+1]
			r.i += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				ru, ok := r.hex4()
				if !ok {
					return nil, r.fail("a bad \\u escape")
				}
				if utf16.IsSurrogate(ru) {
					lo, ok := rune(-1), false
					if r.i+1 < len(r.s) && r.s[r.i] == '\\' && r.s[r.i+1] == 'u' {
						save := r.i
						r.i += 2
						if lo, ok = r.hex4(); !ok {
							return nil, r.fail("a bad \\u escape")
						}
						if utf16.DecodeRune(ru, lo) == utf8.RuneError {
							r.i = save // not a pair: the second escape stands alone
							lo = -1
						}
					}
					ru = utf16.DecodeRune(ru, lo) // U+FFFD when lone
				}
				buf = utf8.AppendRune(buf, ru)
			default:
				r.i--
				return nil, r.fail("a bad escape")
			}
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			r.i++
		default:
			ru, size := utf8.DecodeRune(r.s[r.i:])
			if ru == utf8.RuneError && size == 1 {
				return nil, r.fail("invalid UTF-8")
			}
			buf = append(buf, r.s[r.i:r.i+size]...)
			r.i += size
		}
	}
	return nil, r.unexpected()
}

// hex4 reads the four hex digits of a \u escape.
func (r *jsonReader) hex4() (rune, bool) {
	if len(r.s)-r.i < 4 {
		return 0, false
	}
	var v rune
	for _, c := range r.s[r.i : r.i+4] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	r.i += 4
	return v, true
}
