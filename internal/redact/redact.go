// Package redact renders addresses for errors and logs without the
// secrets they may carry.
//
// A WebSocket endpoint's URL may hold credentials: a password in its
// user information (ws://user:pass@host/) or a token in its query
// (wss://host/ws?token=...), which proxies and hosted servers commonly
// accept. Errors and log lines name the endpoint, so they render it
// through URL, and scrub the text of errors from lower layers (net/http
// quotes the address it dialled, query included) with Text.
package redact

import (
	"net/url"
	"strconv"
	"strings"
)

// mask replaces a secret.
const mask = "xxxxx"

// URL returns raw with its password and every query value replaced by
// "xxxxx" and any fragment dropped; the scheme, user name, host, path and
// query keys stay, so the endpoint remains recognisable. Text that does
// not parse as a URL, or that url.Parse misreads (a ':' and then an '@'
// past the end of the authority it reads: ws://user:123/xyz@host parses
// as host "user", port 123; user:pass@host without a "//" as a scheme and
// an opaque part), loses everything after its scheme's "//" (from its
// start when there is none) up to the last '@' (a password may hold an
// unescaped '/', '?' or '#', which is what made it fail to parse), and
// everything from the first '?' or '#' after that; when a '?' or '#'
// comes before that '@', which may then be in the query, it loses
// everything after the "//". A URL with a port and an '@' further on
// (wss://host:443/ws?email=a@b) is masked so too: it reads as well as
// user:password.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || misread(raw) {
		return scrubUnparsed(raw)
	}
	return render(u)
}

// misread reports whether raw, which url.Parse may accept, holds user
// information with a password that url.Parse does not read as one: a
// ':' and then an '@' after the "//", the authority ending before that
// '@' (ws://user:123/xyz@host parses as host "user", port 123 and path
// "/xyz@host"), or no "//" at all (user:pass@host parses as scheme "user"
// and an opaque part). A ':' after a '?' or '#' is not one: the '@' is
// then in the query or the fragment (?t=10:30&email=a@b.example).
func misread(raw string) bool {
	i, at := unparsedUserinfo(raw)
	if at < 0 {
		return false
	}
	ui := raw[i:at]
	colon := strings.IndexByte(ui, ':')
	if colon < 0 {
		return false
	}
	if d := strings.IndexAny(ui, "?#"); d >= 0 && d < colon {
		return false
	}
	return i == 0 || strings.ContainsAny(ui, "/?#")
}

func render(u *url.URL) string {
	c := *u
	if c.User != nil {
		if _, ok := c.User.Password(); ok {
			c.User = url.UserPassword(c.User.Username(), mask)
		}
	}
	if c.RawQuery != "" {
		c.RawQuery = maskQuery(c.RawQuery)
	}
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

// maskQuery keeps the keys of a raw query, in order, and masks each value.
func maskQuery(q string) string {
	var b strings.Builder
	for i, kv := range strings.Split(q, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		k, _, ok := strings.Cut(kv, "=")
		b.WriteString(k)
		if ok {
			b.WriteString("=" + mask)
		}
	}
	return b.String()
}

// scrubUnparsed is URL's fallback for text url.Parse refuses.
func scrubUnparsed(raw string) string {
	if i, at := unparsedUserinfo(raw); at >= 0 {
		if strings.ContainsAny(raw[i:at], "?#") {
			// The '@' may as well be in the query or the fragment (an
			// e-mail address as a value), and what follows it too.
			return raw[:i] + mask
		}
		raw = raw[:i] + mask + raw[at:]
	}
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i]
	}
	return raw
}

// unparsedUserinfo locates what may be user information in text url.Parse
// refuses or misreads: raw[i:at] runs from after the "//" that starts an
// authority (from the start of raw when none does) to the last '@' (at is
// -1 when there is none). The last '@', not the first '/', '?' or '#'
// after the "//", ends it: url.Parse fails on (or misreads) an unescaped
// '/', '?' or '#' in a password precisely because it ends the authority
// there.
func unparsedUserinfo(raw string) (i, at int) {
	i = authority(raw)
	at = strings.LastIndexByte(raw[i:], '@')
	if at < 0 {
		return 0, -1
	}
	return i, i + at
}

// authority is where raw's authority starts as url.Parse reads it: after
// the "//" that begins raw or follows its scheme; 0 when no "//" does (a
// "//" further on is in a path, a query or a password).
func authority(raw string) int {
	rest := raw
	if j := strings.IndexByte(raw, ':'); j > 0 && isScheme(raw[:j]) {
		rest = raw[j+1:]
	}
	if strings.HasPrefix(rest, "//") {
		return len(raw) - len(rest) + 2
	}
	return 0
}

// isScheme reports whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, '+', '-' and '.').
func isScheme(s string) bool {
	for k := 0; k < len(s); k++ {
		c := s[k]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case k > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// scrubUnparsedPassword masks in s the password of raw, text url.Parse
// refuses, as its error quotes it: url.Parse reads the authority as ending
// at the password's first '/', '?' or '#' and reports the password's
// first piece as an invalid port (":piece"). Each piece of the password
// between such delimiters is masked after a ':', and anywhere when it is
// long enough not to match ordinary text.
func scrubUnparsedPassword(s, raw string) string {
	i, at := unparsedUserinfo(raw)
	if at < 0 {
		return s
	}
	_, pw, ok := strings.Cut(raw[i:at], ":")
	if !ok || pw == "" {
		return s
	}
	pieces := strings.FieldsFunc(pw, func(r rune) bool { return r == '/' || r == '?' || r == '#' || r == '@' })
	for _, p := range append([]string{pw}, pieces...) {
		s = replaceQuoted(s, ":"+p, ":"+mask)
		if len(p) >= 8 {
			s = replaceQuoted(s, p, mask)
		}
	}
	return s
}

// replaceQuoted replaces old (not empty) with new in s, both as they are
// and as %q spells them inside its quotes: url.Error and net/http quote
// the URL they name that way, so a '"', a '\' or a byte %q escapes makes
// the URL appear in an error in another spelling than raw's.
func replaceQuoted(s, old, new string) string {
	s = strings.ReplaceAll(s, old, new)
	if q := quotedInner(old); q != old {
		s = strings.ReplaceAll(s, q, quotedInner(new))
	}
	return s
}

// quotedInner is strconv.Quote(x) without its quotes.
func quotedInner(x string) string {
	q := strconv.Quote(x)
	return q[1 : len(q)-1]
}

// Text returns s with the secrets of the URL raw masked wherever they
// appear: its raw query (as net/http's errors quote it), its password
// (raw or percent-encoded) and the whole of raw itself, each also as %q
// spells it (url.Error and net/http quote the URL). When raw does not
// parse, or url.Parse misreads its password (see URL), each piece of its password between '/', '?', '#' and '@' is
// masked after a ':' (url.Parse reports the first as an invalid port). It
// is meant for the text of an error that arose while using raw.
func Text(s, raw string) string {
	if raw == "" || s == "" {
		return s
	}
	s = replaceQuoted(s, raw, URL(raw))
	u, err := url.Parse(raw)
	if err != nil {
		return scrubUnparsedPassword(s, raw)
	}
	if misread(raw) {
		s = scrubUnparsedPassword(s, raw)
	}
	if u.RawQuery != "" {
		s = replaceQuoted(s, "?"+u.RawQuery, "?"+maskQuery(u.RawQuery))
	}
	if u.Fragment != "" {
		s = replaceQuoted(s, "#"+u.EscapedFragment(), "")
	}
	if u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			// user:secret@ in its raw and its escaped spelling; the
			// password alone only when it is long enough not to match
			// ordinary text.
			escaped := strings.TrimPrefix(url.UserPassword("", pw).String(), ":")
			for _, p := range uniq(pw, escaped) {
				s = replaceQuoted(s, ":"+p+"@", ":"+mask+"@")
				if len(p) >= 8 {
					s = replaceQuoted(s, p, mask)
				}
			}
		}
	}
	return s
}

func uniq(a, b string) []string {
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}
