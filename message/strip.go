package message

import "unicode/utf8"

// The worker's CLI writes its report through a stream that, when standard
// error is not a terminal, drops what a terminal would not print: C0
// control characters other than tab, newline, form feed and carriage
// return, DEL, and whole escape sequences (CSI, OSC, DCS, SOS/PM/APC and
// plain ESC sequences), read by the DEC parser's state machine. A
// traceback rendered here is the CLI's text, so it is cleaned the same
// way (stripTerminal).

// vtState is a state of the DEC parser.
type vtState uint8

const (
	vtGround vtState = iota
	vtEscape
	vtEscInter
	vtCsiEntry
	vtCsiParam
	vtCsiInter
	vtCsiIgnore
	vtDcsEntry
	vtDcsParam
	vtDcsInter
	vtDcsPass
	vtDcsIgnore
	vtOsc
	vtSosPmApc
)

// needsStrip reports whether s holds a byte stripTerminal would drop or
// treat specially: a C0 control other than \t, \n, \f, \r, or DEL.
func needsStrip(s []byte) bool {
	for _, c := range s {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\f' && c != '\r' || c == 0x7f {
			return true
		}
	}
	return false
}

// isC0Exec reports whether c is a C0 control the parser executes (all of
// them but CAN, SUB and ESC, which act in every state).
func isC0Exec(c byte) bool { return c < 0x20 && c != 0x18 && c != 0x1a && c != 0x1b }

// asciiSpace is Rust's u8::is_ascii_whitespace: an executed control among
// these is kept.
func asciiSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// stripTerminal removes from b, in place, what the worker CLI's output
// stream drops (see above), and returns the shortened slice.
func stripTerminal(b []byte) []byte {
	if !needsStrip(b) {
		return b
	}
	out := b[:0]
	st := vtGround
	for i := 0; i < len(b); {
		c := b[i]
		// Transitions from every state.
		switch c {
		case 0x18, 0x1a:
			st = vtGround
			i++
			continue
		case 0x1b:
			st = vtEscape
			i++
			continue
		}
		if c >= 0x80 {
			if st == vtGround {
				_, n := utf8.DecodeRune(b[i:])
				out = append(out, b[i:i+n]...)
				i += n
				continue
			}
			i++ // consumed by the sequence
			continue
		}
		i++
		switch st {
		case vtGround:
			if c >= 0x20 && c != 0x7f || asciiSpace(c) {
				out = append(out, c)
			}
		case vtEscape, vtEscInter, vtCsiEntry, vtCsiParam, vtCsiInter, vtCsiIgnore:
			if isC0Exec(c) {
				// A kept control ends the sequence: the stream prints it
				// and reads on from the ground state.
				if asciiSpace(c) {
					out = append(out, c)
					st = vtGround
				}
				continue
			}
			st = escNext(st, c)
		case vtDcsEntry, vtDcsParam, vtDcsInter:
			if c < 0x20 || c == 0x7f {
				continue
			}
			st = dcsNext(st, c)
		case vtDcsPass, vtDcsIgnore, vtSosPmApc:
			// Everything up to the next ESC, CAN or SUB.
		case vtOsc:
			if c == 0x07 {
				st = vtGround
			}
		}
	}
	return out
}

// escNext is the next state after c (0x20..0x7f) in an escape or CSI
// sequence.
func escNext(st vtState, c byte) vtState {
	if c == 0x7f {
		return st
	}
	switch st {
	case vtEscape:
		switch {
		case c <= 0x2f:
			return vtEscInter
		case c == 'P':
			return vtDcsEntry
		case c == 'X', c == '^', c == '_':
			return vtSosPmApc
		case c == '[':
			return vtCsiEntry
		case c == ']':
			return vtOsc
		}
		return vtGround
	case vtEscInter:
		if c <= 0x2f {
			return vtEscInter
		}
		return vtGround
	case vtCsiEntry, vtCsiParam:
		switch {
		case c <= 0x2f:
			return vtCsiInter
		case c >= '0' && c <= '9', c == ';':
			return vtCsiParam
		case c == ':':
			if st == vtCsiEntry {
				return vtCsiIgnore
			}
			return vtCsiParam
		case c >= 0x3c && c <= 0x3f:
			if st == vtCsiEntry {
				return vtCsiParam
			}
			return vtCsiIgnore
		}
		return vtGround
	case vtCsiInter:
		switch {
		case c <= 0x2f:
			return vtCsiInter
		case c <= 0x3f:
			return vtCsiIgnore
		}
		return vtGround
	case vtCsiIgnore:
		if c <= 0x3f {
			return vtCsiIgnore
		}
		return vtGround
	}
	return st
}

// dcsNext is the next state after c (0x20..0x7e) in a DCS sequence's
// header.
func dcsNext(st vtState, c byte) vtState {
	switch st {
	case vtDcsEntry, vtDcsParam:
		switch {
		case c <= 0x2f:
			return vtDcsInter
		case c >= '0' && c <= '9', c == ';':
			return vtDcsParam
		case c == ':':
			return vtDcsIgnore
		case c >= 0x3c && c <= 0x3f:
			if st == vtDcsEntry {
				return vtDcsParam
			}
			return vtDcsIgnore
		}
		return vtDcsPass
	case vtDcsInter:
		switch {
		case c <= 0x2f:
			return vtDcsInter
		case c <= 0x3f:
			return vtDcsIgnore
		}
		return vtDcsPass
	}
	return st
}
