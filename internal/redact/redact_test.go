package redact

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"wss://host.example/ws", "wss://host.example/ws"},
		{"ws://alice:s3cret@host:8000/ws", "ws://alice:xxxxx@host:8000/ws"},
		{"ws://alice@host/ws", "ws://alice@host/ws"},
		{"wss://host/ws?token=abc&region=eu", "wss://host/ws?token=xxxxx&region=xxxxx"},
		{"wss://host/ws?flag&token=", "wss://host/ws?flag&token=xxxxx"},
		{"wss://host/ws#frag", "wss://host/ws"},
		{"ws://a:p%40ss@[::1/?token=T", "ws://xxxxx@[::1/"},
		{"ws://bob:pw@host:port/a?token=T", "ws://xxxxx@host:port/a"},
	} {
		if got := URL(c.in); got != c.want {
			t.Errorf("URL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestText(t *testing.T) {
	raw := "ws://bob:Pa55word!x@127.0.0.1:1/ws?token=TOPSECRET&x=1"
	msgs := []string{
		// coder/websocket quoting net/http's error, whose URL has the
		// password starred and the scheme changed
		`failed to WebSocket dial: failed to send handshake request: Get "http://bob:***@127.0.0.1:1/ws?token=TOPSECRET&x=1": dial tcp 127.0.0.1:1: connect: connection refused`,
		`parse "` + raw + `": bad`,
		"the password alone: Pa55word!x",
		"escaped: bob:Pa55word%21x@127.0.0.1",
	}
	for _, m := range msgs {
		got := Text(m, raw)
		for _, secret := range []string{"TOPSECRET", "Pa55word"} {
			if strings.Contains(got, secret) {
				t.Errorf("Text(%q) = %q still holds %q", m, got, secret)
			}
		}
	}
	// Text that holds no secret is unchanged, short passwords do not
	// mangle ordinary text.
	if got := Text("dial tcp 127.0.0.1:1: refused", "ws://u:1@127.0.0.1:1/"); got != "dial tcp 127.0.0.1:1: refused" {
		t.Errorf("Text changed harmless text: %q", got)
	}
}

// TestUnparsedPasswordWithDelimiter: a password holding '/', '?' or '#'
// unescaped (base64 tokens hold '/') makes url.Parse read the authority
// as ending inside the password and fail (an invalid port). URL leaked
// the password then, in full or up to the delimiter, and Text leaked the
// part url.Parse's error quotes as the port.
func TestUnparsedPasswordWithDelimiter(t *testing.T) {
	for _, c := range []struct{ raw, pw, want string }{
		{"wss://user:AbC/dEf+==@host/ws", "AbC/dEf+==", "wss://xxxxx@host/ws"},
		// A '?' or '#' before the '@': it may be in the query, so may
		// what follows it.
		{"wss://user:ab?cd@host/ws?token=T", "ab?cd", "wss://xxxxx"},
		{"wss://user:ab#cd@host/ws", "ab#cd", "wss://xxxxx"},
		{"wss://h:port/ws?email=a@b.example&token=T", "port/ws?email=a", "wss://xxxxx"},
		{"ws://u:q/y@z@host/", "q/y@z", "ws://xxxxx@host/"},
	} {
		if _, err := url.Parse(c.raw); err == nil {
			t.Fatalf("%q parses", c.raw)
		}
		if got := URL(c.raw); got != c.want {
			t.Errorf("URL(%q) = %q, want %q", c.raw, got, c.want)
		}
		_, err := url.Parse(c.raw)
		got := Text("dial: "+err.Error(), c.raw)
		for _, piece := range strings.FieldsFunc(c.pw, func(r rune) bool { return strings.ContainsRune("/?#@", r) }) {
			if strings.Contains(got, ":"+piece) || strings.Contains(got, piece+"@") {
				t.Errorf("Text(%q) = %q still holds %q of the password", err, got, piece)
			}
		}
	}
}

// TestMisreadPassword: a password url.Parse does not read as one because
// it parses otherwise, with no error: a numeric first piece before a '/'
// reads as a host and port (ws://user:123/xyz@host: host "user", port
// 123, path "/xyz@host"), and text without "//" reads as a scheme and an
// opaque part (user:pass@host). URL and Text showed such a password.
func TestMisreadPassword(t *testing.T) {
	for _, c := range []struct{ raw, pw, want string }{
		{"ws://user:123/xyz@host/ws?token=T", "123/xyz", "ws://xxxxx@host/ws"},
		{"wss://user:8080/AbCdEf==@host.example/", "8080/AbCdEf==", "wss://xxxxx@host.example/"},
		{"ws://user:a@b/cdefgh@host/", "a@b/cdefgh", "ws://xxxxx@host/"},
		{"user:123/xyz@host", "123/xyz", "xxxxx@host"},
		{"user:s3cretpass@host:8000", "s3cretpass", "xxxxx@host:8000"},
		{"ws:user:s3cretpass@host/ws", "user:s3cretpass", "xxxxx@host/ws"},
	} {
		if _, err := url.Parse(c.raw); err != nil {
			t.Fatalf("%q does not parse: %v", c.raw, err)
		}
		got := URL(c.raw)
		if got != c.want {
			t.Errorf("URL(%q) = %q, want %q", c.raw, got, c.want)
		}
		for _, m := range []string{
			Text(`Get "`+c.raw+`": refused`, c.raw),
			Text(`Get "http`+strings.TrimPrefix(strings.TrimPrefix(c.raw, "ws"), "s")+`": refused`, c.raw),
			Text("the password alone: "+c.pw, c.raw),
		} {
			for _, piece := range append([]string{c.pw}, strings.FieldsFunc(c.pw, func(r rune) bool { return strings.ContainsRune("/?#@:", r) })...) {
				if strings.Contains(m, ":"+piece) || (len(piece) >= 8 && strings.Contains(m, piece)) {
					t.Errorf("Text of %q = %q still holds %q of the password", c.raw, m, piece)
				}
			}
			if strings.Contains(m, "token=T") {
				t.Errorf("Text of %q = %q still holds the token", c.raw, m)
			}
		}
	}
	// URL-like text that holds no password keeps its shape, but a port
	// and then an '@' may as well be user:password.
	for _, c := range []struct{ in, want string }{
		{"wss://host/ws?t=10:30&email=a@b.example", "wss://host/ws?t=xxxxx&email=xxxxx"},
		{"wss://host:443/ws?email=a@b.example", "wss://xxxxx"},
		{"wss://host:443/a@b/ws", "wss://xxxxx@b/ws"},
		{"wss://host/ws?email=a@b.example", "wss://host/ws?email=xxxxx"},
		{"host:8000", "host:8000"},
	} {
		if got := URL(c.in); got != c.want {
			t.Errorf("URL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzPasswordNeverShown: whatever the password of an endpoint URL, when
// url.Parse finds it (or fails, as an unescaped '/', '?' or '#' in it
// makes it), neither URL nor Text over url.Parse's own error shows it,
// and neither shows the query's token.
func FuzzPasswordNeverShown(f *testing.F) {
	for _, pw := range []string{"s3cretpassword", "AbC/dEf+==xyzw", "123/xyzabcdef", "8080/token=ab?c", "ab?cdefghij", "ab#cdefghij", "p%40ssword!!", "x@y@zzzzzzzz", "Pa55:word:xx", `0000"0000`} {
		f.Add(pw, `TOKEN"VAL\UE`)
	}
	f.Fuzz(func(t *testing.T, pw, tok string) {
		if len(tok) < 8 || strings.ContainsAny(tok, "&#") || strings.Contains("wss://user:@host.example/ws?token="+pw, tok) {
			tok = "TOKENVALUE"
		}
		if len(pw) < 8 || strings.Contains("wss://user:@host.example/ws?token="+tok, pw) || strings.Contains(pw, tok) {
			return // short passwords may survive in ordinary text
		}
		raws := []string{"wss://user:" + pw + "@host.example/ws?token=" + tok}
		if !strings.HasPrefix(pw, "//") {
			// No scheme (user://x@host is a scheme and a user name).
			raws = append(raws, "user:"+pw+"@host.example/ws?token="+tok)
		}
		var msgs []string
		for _, raw := range raws {
			msgs = append(msgs, URL(raw))
			if _, perr := url.Parse(raw); perr != nil {
				msgs = append(msgs, Text(perr.Error(), raw), Text("dial: "+perr.Error(), raw))
			} else {
				msgs = append(msgs, Text(`Get "`+raw+`": refused`, raw))
			}
		}
		for _, m := range msgs {
			if strings.Contains(m, pw) {
				t.Fatalf("%q shows the password %q", m, pw)
			}
			if strings.Contains(m, tok) {
				t.Fatalf("%q shows the token", m)
			}
		}
	})
}

// TestTextQuotedURL: url.Error and net/http quote the URL with %q, so a
// URL holding a '"' or a '\' (or bytes %q escapes) appears in an error in
// another spelling, which Text did not find: its password and query values
// were shown.
func TestTextQuotedURL(t *testing.T) {
	for _, c := range []struct{ raw, msg string }{
		// url.Parse refuses the '"' in the user information.
		{`wss://user:0000"0000@host/ws?token=TOPSECRET`, ""},
		// A '"' and a '\' in the query parse, and net/http quotes them.
		{`wss://user:Pa55word!x@host/ws?token=TOP"SECRET\x`, `Get %q: refused`},
	} {
		msg := fmt.Sprintf(c.msg, c.raw)
		if _, err := url.Parse(c.raw); err != nil {
			msg = err.Error()
		}
		got := Text(msg, c.raw)
		for _, secret := range []string{"TOP", "Pa55word", `0000\"0000`, `0000"0000`} {
			if strings.Contains(got, secret) {
				t.Errorf("Text(%q) = %q still holds %q", msg, got, secret)
			}
		}
	}
}
