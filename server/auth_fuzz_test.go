package server

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// FuzzParseTokens reads a tokens file of arbitrary bytes: it is refused
// with a *TokensError, or every NAME:TOKEN line it holds is a token that
// Lookup names, also as presented in a bearer header, and a token it does
// not hold is unknown.
func FuzzParseTokens(f *testing.F) {
	f.Add([]byte("alice:0123456789abcdef\n# comment\n\nbob:fedcba9876543210xyz\n"))
	f.Add([]byte("\ufeffcarol:k7Q!z9#Lm2@xP4$w\r\n"))
	f.Add([]byte("dave:aaaaaaaaaaaaaaaaaaaa\n"))
	f.Add([]byte("eve:short\n"))
	f.Add([]byte("x:0123456789abcdef\ny:0123456789abcdef\n"))
	f.Add([]byte("ünï:コード0123456789abcdef\n"))
	f.Add([]byte("bad line\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		toks, err := ParseTokens(bytes.NewReader(b))
		if err != nil {
			var te *TokensError
			if !errors.As(err, &te) || !strings.HasPrefix(err.Error(), "server: tokens ") {
				t.Fatalf("error %T %q, want a *TokensError", err, err)
			}
			return
		}
		n := 0
		for _, line := range strings.Split(string(bytes.TrimPrefix(b, []byte("\ufeff"))), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			n++
			name, tok, _ := strings.Cut(line, ":")
			if got, ok := toks.Lookup(tok); !ok || got != name {
				t.Fatalf("Lookup of line %q: %q %v", line, got, ok)
			}
			r := &http.Request{Header: http.Header{"Authorization": {"Bearer " + tok}}}
			if got, ok := bearer(r); !ok || got != tok {
				t.Fatalf("bearer of %q: %q %v", tok, got, ok)
			}
			if got, ok := toks.Lookup(tok + "\x00"); ok {
				t.Fatalf("a token no line holds names %q", got)
			}
		}
		if toks.Len() != n {
			t.Fatalf("%d tokens from %d lines", toks.Len(), n)
		}
	})
}

// FuzzSignerOpen opens arbitrary envelopes: each is refused with
// ErrUnsigned or ErrBadSignature, or it is exactly what Sign makes of the
// dump and limits Open returns. And whatever is signed opens to itself.
func FuzzSignerOpen(f *testing.F) {
	key, prev := bytes.Repeat([]byte("k"), MinKeyLen), bytes.Repeat([]byte("p"), MinKeyLen)
	s, err := NewSigner(key, prev)
	if err != nil {
		f.Fatal(err)
	}
	old, err := NewSigner(prev, nil)
	if err != nil {
		f.Fatal(err)
	}
	lim := DumpLimits{MaxDurationMicros: 1e6, MaxMemoryBytes: 1 << 20, MaxRecursionDepth: 100}
	f.Add(s.Sign([]byte("dump"), lim), []byte("x"), uint64(1), uint64(2), uint64(3))
	f.Add(old.Sign(nil, DumpLimits{}), []byte{}, uint64(0), uint64(0), uint64(0))
	f.Add([]byte("MONTYSIG\x01"), []byte("MONTYSIG"), uint64(0), uint64(1<<63), uint64(0))
	f.Fuzz(func(t *testing.T, env, dump []byte, d, m, r uint64) {
		got, l, err := s.Open(env)
		switch {
		case errors.Is(err, ErrUnsigned), errors.Is(err, ErrBadSignature):
		case err != nil:
			t.Fatalf("Open: %v", err)
		default:
			if again := s.Sign(got, l); !bytes.Equal(again, env) {
				if again2 := old.Sign(got, l); !bytes.Equal(again2, env) {
					t.Fatalf("an envelope that opens is not what Sign makes of its contents")
				}
			}
		}
		l = DumpLimits{MaxDurationMicros: d, MaxMemoryBytes: m, MaxRecursionDepth: r}
		for _, signer := range []*Signer{s, old} {
			got, gotLim, err := s.Open(signer.Sign(dump, l))
			if err != nil || !bytes.Equal(got, dump) || gotLim != l {
				t.Fatalf("signed envelope opens to %q %+v %v", got, gotLim, err)
			}
		}
	})
}

// TestTokensErrorsAreTyped: every refusal of a tokens file is a
// *TokensError, the line's own refusals still matching their sentinels,
// including a file of one line as long as the file may be (the line
// scanner's buffer is full before it sees the end: it used to return
// bufio.ErrTooLong bare).
func TestTokensErrorsAreTyped(t *testing.T) {
	for _, c := range []struct {
		file, text string
		is         error
	}{
		{"ab", "server: tokens line 1: want NAME:TOKEN", nil},
		{"\n\na:0123456789abcde", "server: tokens line 3: token shorter than 16 bytes", ErrShortToken},
		{"a:abababababababababab", "server: tokens line 1: token too repetitive to be random (one character or a short pattern repeated)", ErrWeakToken},
		{"a:0123456789abcdef\nb:0123456789abcdef", "server: tokens line 2: token already given to another name", nil},
		{"# none", "server: tokens file has no NAME:TOKEN line", nil},
		{strings.Repeat("x", maxTokensFile+1), "server: tokens file is larger than 1048576 bytes", nil},
		{"a:" + strings.Repeat("0123456789abcdef", maxTokensFile/16)[2:], "server: tokens file cannot be read: bufio.Scanner: token too long", nil},
	} {
		_, err := ParseTokens(strings.NewReader(c.file))
		var te *TokensError
		if !errors.As(err, &te) || err.Error() != c.text || (c.is != nil && !errors.Is(err, c.is)) {
			t.Errorf("%.20q: %T %v, want a *TokensError %q", c.file, err, err, c.text)
		}
	}
}
