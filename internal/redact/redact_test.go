package redact

import (
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
