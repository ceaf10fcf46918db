package server

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// maxTokensFile bounds a tokens file.
const maxTokensFile = 1 << 20

// MinTokenLen is the shortest bearer token ParseTokens accepts, in bytes
// (a random token of 16 printable bytes has about 100 bits).
const MinTokenLen = 16

// ErrShortToken reports a token under MinTokenLen bytes in a tokens file
// (the error names its line, never the token).
var ErrShortToken = fmt.Errorf("token shorter than %d bytes", MinTokenLen)

// ErrWeakToken reports a token in a tokens file whose characters are too
// repetitive to be random (see ParseTokens; the error names its line,
// never the token).
var ErrWeakToken = errors.New("token too repetitive to be random (one character or a short pattern repeated)")

// Tokens is a set of bearer tokens, each naming a client. Lookups compare
// a hash of the presented token with every entry in constant time.
//
// A Tokens value is immutable and safe for concurrent use.
type Tokens struct {
	names  []string
	hashes [][sha256.Size]byte
}

// TokensError reports a tokens file that ParseTokens refuses. It never
// holds a token.
type TokensError struct {
	// Line is the 1-based line at fault, or 0 for the file as a whole.
	Line int
	// Reason says what is wrong; empty when Err says it.
	Reason string
	// Err is ErrShortToken or ErrWeakToken for a token refused as such,
	// or the read error behind a file that could not be read; else nil.
	Err error
}

// Error renders "server: tokens line N: reason" for a line, "server:
// tokens file reason" for the file.
func (e *TokensError) Error() string {
	msg := e.Reason
	if e.Err != nil {
		if msg != "" {
			msg += ": "
		}
		msg += e.Err.Error()
	}
	if e.Line > 0 {
		return fmt.Sprintf("server: tokens line %d: %s", e.Line, msg)
	}
	return "server: tokens file " + msg
}

// Unwrap returns Err.
func (e *TokensError) Unwrap() error { return e.Err }

// ParseTokens reads lines "NAME:TOKEN" (blank lines and lines starting
// with '#' are skipped). NAME is the client identity used for per-client
// caps, logs and metrics. Names and tokens are UTF-8 and hold only
// printable characters other than spaces (Go's unicode.IsPrint: letters,
// marks, numbers, punctuation and symbols of any script): whitespace and
// control characters (an HTTP header cannot carry them), format
// characters such as a zero-width space or a bidirectional override,
// private-use and unassigned code points are refused, since a name
// holding them would show in logs and metrics as another name. A token
// may appear only once, and has at least MinTokenLen bytes (a shorter one
// fails with an error matching ErrShortToken). A token must also not be
// plainly repetitive: one with under 4 distinct characters, or whose
// length times the Shannon entropy of its character frequencies is under
// 24 bits ("aaaa…", "abab…", "aaaaaaaaaaaaaaab"), fails with an error
// matching ErrWeakToken. That floor only catches tokens nobody generated
// at random (a random token of 16 digits passes with overwhelming
// probability); it does not make a guessable token safe. A UTF-8 byte
// order mark that starts the file (as some editors write one) is skipped;
// one anywhere else is refused, as an invisible part of a name or a
// token. A file it refuses is reported by a *TokensError; an error
// reading r is returned as it is.
func ParseTokens(r io.Reader) (*Tokens, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxTokensFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxTokensFile {
		return nil, &TokensError{Reason: fmt.Sprintf("is larger than %d bytes", maxTokensFile)}
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	t := &Tokens{}
	seen := map[[sha256.Size]byte]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxTokensFile)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, tok, ok := strings.Cut(line, ":")
		if !ok || name == "" || tok == "" || !presentable(name) || !presentable(tok) {
			return nil, &TokensError{Line: n, Reason: "want NAME:TOKEN"}
		}
		if len(tok) < MinTokenLen {
			return nil, &TokensError{Line: n, Err: ErrShortToken}
		}
		if weakToken(tok) {
			return nil, &TokensError{Line: n, Err: ErrWeakToken}
		}
		h := sha256.Sum256([]byte(tok))
		if seen[h] {
			return nil, &TokensError{Line: n, Reason: "token already given to another name"}
		}
		seen[h] = true
		t.names = append(t.names, name)
		t.hashes = append(t.hashes, h)
	}
	if err := sc.Err(); err != nil {
		return nil, &TokensError{Reason: "cannot be read", Err: err}
	}
	if len(t.names) == 0 {
		return nil, &TokensError{Reason: "has no NAME:TOKEN line"}
	}
	return t, nil
}

// presentable reports whether s is UTF-8 made of printable characters
// other than spaces (see ParseTokens): a byte order mark, a zero-width
// space, a bidirectional override or a control character is not.
func presentable(s string) bool { return printable(s) && !strings.Contains(s, " ") }

// printable reports whether s is UTF-8 made of printable characters
// (unicode.IsPrint: no control, format, private-use or unassigned code
// point, and no space but the ASCII one).
func printable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) })
}

// weakToken reports a token too repetitive to have been generated at
// random: under 4 distinct characters, or under 24 bits by the Shannon
// entropy of its character frequencies times its length.
func weakToken(tok string) bool {
	counts := map[rune]int{}
	n := 0
	for _, r := range tok {
		counts[r]++
		n++
	}
	if len(counts) < 4 {
		return true
	}
	bits := 0.0
	for _, c := range counts {
		p := float64(c) / float64(n)
		bits -= float64(c) * math.Log2(p)
	}
	return bits < 24
}

// ErrNotRegular reports a tokens file that is not a regular file (a FIFO,
// a device, a directory): reading one could block without end, or never
// end, and it could not be read again on a reload.
var ErrNotRegular = errors.New("not a regular file")

// LoadTokens reads a tokens file (see ParseTokens). The file must be a
// regular one (a symbolic link to one is fine): anything else fails at
// once with an error matching ErrNotRegular, without waiting for a FIFO's
// writer.
func LoadTokens(path string) (*Tokens, error) {
	// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
	// writer; a regular file reads as usual with it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("server: %s: %w", path, ErrNotRegular)
	}
	t, err := ParseTokens(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Len returns the number of tokens.
func (t *Tokens) Len() int { return len(t.names) }

// Lookup returns the name of token. Every entry is compared, whatever
// matches, so the time taken does not depend on which entry (if any) did.
func (t *Tokens) Lookup(token string) (name string, ok bool) {
	h := sha256.Sum256([]byte(token))
	idx := -1
	for i := range t.hashes {
		if subtle.ConstantTimeCompare(h[:], t.hashes[i][:]) == 1 {
			idx = i
		}
	}
	if idx < 0 {
		return "", false
	}
	return t.names[idx], true
}

// bearer extracts the token of an "Authorization: Bearer TOKEN" header.
// A request with more than one Authorization header has no token: which
// one counts would depend on who reads them (a proxy in front may check
// another than this server would).
func bearer(r *http.Request) (string, bool) {
	vals := r.Header.Values("Authorization")
	if len(vals) != 1 {
		return "", false
	}
	h := vals[0]
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", false
	}
	return strings.TrimSpace(h[len(prefix):]), true
}
