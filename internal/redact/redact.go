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
	"strings"
)

// mask replaces a secret.
const mask = "xxxxx"

// URL returns raw with its password and every query value replaced by
// "xxxxx" and any fragment dropped; the scheme, user name, host, path and
// query keys stay, so the endpoint remains recognisable. Text that does
// not parse as a URL loses everything after its scheme's "//" up to the
// host, and everything from the first '?' or '#'.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return scrubUnparsed(raw)
	}
	return render(u)
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
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i]
	}
	if i := strings.Index(raw, "//"); i >= 0 {
		rest := raw[i+2:]
		end := strings.IndexByte(rest, '/')
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
			raw = raw[:i+2] + mask + "@" + rest[at+1:]
		}
	}
	return raw
}

// Text returns s with the secrets of the URL raw masked wherever they
// appear: its raw query (as net/http's errors quote it), its password
// (raw or percent-encoded) and the whole of raw itself. It is meant for
// the text of an error that arose while using raw.
func Text(s, raw string) string {
	if raw == "" || s == "" {
		return s
	}
	s = strings.ReplaceAll(s, raw, URL(raw))
	u, err := url.Parse(raw)
	if err != nil {
		return s
	}
	if u.RawQuery != "" {
		s = strings.ReplaceAll(s, "?"+u.RawQuery, "?"+maskQuery(u.RawQuery))
	}
	if u.Fragment != "" {
		s = strings.ReplaceAll(s, "#"+u.EscapedFragment(), "")
	}
	if u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			// user:secret@ in its raw and its escaped spelling; the
			// password alone only when it is long enough not to match
			// ordinary text.
			escaped := strings.TrimPrefix(url.UserPassword("", pw).String(), ":")
			for _, p := range uniq(pw, escaped) {
				s = strings.ReplaceAll(s, ":"+p+"@", ":"+mask+"@")
				if len(p) >= 8 {
					s = strings.ReplaceAll(s, p, mask)
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
