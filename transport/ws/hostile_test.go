package ws

import (
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// A wss:// server whose certificate does not verify (self-signed, or for
// another name) fails the dial with a *DialError wrapping the
// certificate's *tls.CertificateVerificationError, unless the caller's
// TLSConfig trusts it: the certificate is checked as Go's TLS client
// checks it, never skipped by default.
func TestUntrustedCertificateFailsTheDial(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := websocket.Accept(w, r, nil); err == nil {
			c.CloseNow()
		}
	}))
	defer srv.Close()
	u := "wss" + strings.TrimPrefix(srv.URL, "https")
	trusted := srv.Client().Transport.(*http.Transport).TLSClientConfig
	otherName := trusted.Clone()
	otherName.ServerName = "elsewhere.example" // the certificate names example.com
	for _, tc := range []struct {
		name string
		cfg  *tls.Config
	}{
		{"no config", nil},
		{"empty config", &tls.Config{}},
		{"wrong name", otherName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Dial(ctx10(t), u, DialOptions{TLSConfig: tc.cfg})
			if c != nil {
				c.Close()
			}
			var de *DialError
			var cv *tls.CertificateVerificationError
			if !errors.As(err, &de) || !errors.As(err, &cv) {
				t.Fatalf("Dial = %v, want a *DialError wrapping a *tls.CertificateVerificationError", err)
			}
		})
	}
	c, err := Dial(ctx10(t), u, DialOptions{TLSConfig: trusted})
	if err != nil {
		t.Fatalf("Dial trusting the server's certificate: %v", err)
	}
	c.Close()
}
