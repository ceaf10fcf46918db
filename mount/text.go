package mount

import (
	"fmt"
	"strings"

	"github.com/gomonty/monty/message"
)

// decodeText decodes file contents the way Path.read_text() and text-mode
// f.read() do by default: strict UTF-8, then universal newlines ("\r\n"
// and "\r" become "\n"). Invalid UTF-8 gives CPython's UnicodeDecodeError,
// with its structured data when the file is small enough to carry.
func decodeText(b []byte) (string, *pyError) {
	if start, end, reason, bad := firstUTF8Error(b); bad {
		var msg string
		if end-start == 1 {
			msg = fmt.Sprintf("'utf-8' codec can't decode byte 0x%02x in position %d: %s", b[start], start, reason)
		} else {
			msg = fmt.Sprintf("'utf-8' codec can't decode bytes in position %d-%d: %s", start, end-1, reason)
		}
		e := &pyError{typ: "UnicodeDecodeError", msg: msg}
		if len(b) <= message.MaxExcDataLen {
			e.data = &message.UnicodeErrorData{Encoding: "utf-8", ObjectBytes: append([]byte(nil), b...),
				Start: uint64(start), End: uint64(end), Reason: reason}
		}
		return "", e
	}
	s := string(b)
	if strings.IndexByte(s, '\r') >= 0 {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
	}
	return s, nil
}

// firstUTF8Error finds the first undecodable sequence in b and classifies
// it as CPython's UTF-8 decoder does: the byte range [start, end) and the
// reason ("invalid start byte", "invalid continuation byte" or
// "unexpected end of data").
func firstUTF8Error(b []byte) (start, end int, reason string, bad bool) {
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			i++
			continue
		}
		var need int
		lo, hi := byte(0x80), byte(0xbf) // allowed range of the second byte
		switch {
		case c >= 0xc2 && c <= 0xdf:
			need = 1
		case c >= 0xe0 && c <= 0xef:
			need = 2
			if c == 0xe0 {
				lo = 0xa0
			} else if c == 0xed {
				hi = 0x9f
			}
		case c >= 0xf0 && c <= 0xf4:
			need = 3
			if c == 0xf0 {
				lo = 0x90
			} else if c == 0xf4 {
				hi = 0x8f
			}
		default:
			return i, i + 1, "invalid start byte", true
		}
		for k := 1; k <= need; k++ {
			if i+k >= len(b) {
				return i, len(b), "unexpected end of data", true
			}
			x := b[i+k]
			okRange := x >= 0x80 && x <= 0xbf
			if k == 1 {
				okRange = x >= lo && x <= hi
			}
			if !okRange {
				return i, i + k, "invalid continuation byte", true
			}
		}
		i += need + 1
	}
	return 0, 0, "", false
}
