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

// FuzzPasswordNeverShown: whatever the password of an endpoint URL, when
// url.Parse finds it (or fails, as an unescaped '/', '?' or '#' in it
// makes it), neither URL nor Text over url.Parse's own error shows it,
// and neither shows the query's token.
func FuzzPasswordNeverShown(f *testing.F) {
	for _, pw := range []string{"s3cretpassword", "AbC/dEf+==xyzw", "ab?cdefghij", "ab#cdefghij", "p%40ssword!!", "x@y@zzzzzzzz", "Pa55:word:xx", `0000"0000`} {
		f.Add(pw, `TOKEN"VAL\UE`)
	}
	f.Fuzz(func(t *testing.T, pw, tok string) {
		if len(tok) < 8 || strings.ContainsAny(tok, "&#") || strings.Contains("wss://user:@host.example/ws?token="+pw, tok) {
			tok = "TOKENVALUE"
		}
		raw := "wss://user:" + pw + "@host.example/ws?token=" + tok
		u, perr := url.Parse(raw)
		if perr == nil {
			if got, ok := u.User.Password(); u.User == nil || !ok || got != pw {
				return // the password is not where the parser looks
			}
		}
		if len(pw) < 8 || strings.Contains("wss://user:@host.example/ws?token="+tok, pw) || strings.Contains(pw, tok) {
			return // short passwords may survive in ordinary text
		}
		msgs := []string{URL(raw)}
		if perr != nil {
			msgs = append(msgs, Text(perr.Error(), raw), Text("dial: "+perr.Error(), raw))
		} else {
			msgs = append(msgs, Text(`Get "`+raw+`": refused`, raw))
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
