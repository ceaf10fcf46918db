package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/worker"
)

// /info tells a client the limits it meets before it connects: the
// connection caps, the header cap and its timeout, the drain grace and the
// max_suspensions ceiling (they were missing), under fixed names, with a
// cap that is off reported as -1 (as max_sessions is).
func TestInfoReportsConnectionLimits(t *testing.T) {
	ts := startServer(t, func(c *Config) {
		c.MaxConnections = 300
		c.MaxConnectionsPerClient = -1
		c.MaxHeaderBytes = 8 << 10
		c.ReadHeaderTimeout = 3 * time.Second
		c.DrainGrace = 45 * time.Second
		c.MaxSuspensions = 12
		c.MaxAuthFailures = 4
	})
	code, body := get(t, ts.HTTP+"/info")
	var in Info
	if err := json.Unmarshal([]byte(body), &in); err != nil || code != 200 {
		t.Fatalf("/info: %d %v %s", code, err, body)
	}
	if in.MaxConnections != 300 || in.MaxConnectionsPerClient != -1 || in.MaxHeaderBytes != 8<<10 ||
		in.ReadHeaderTimeoutSeconds != 3 || in.DrainGraceSeconds != 45 || in.Ceilings.MaxSuspensions != 12 ||
		in.MaxAuthFailures != 4 {
		t.Fatalf("/info: %+v", in)
	}
	// The names are the documented ones.
	var raw map[string]any
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"max_connections", "max_connections_per_client", "max_header_bytes",
		"read_header_timeout_seconds", "drain_grace_seconds", "max_auth_failures"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("/info has no %q: %s", k, body)
		}
	}
	if c, _ := raw["ceilings"].(map[string]any); c == nil || c["max_suspensions"] != float64(12) {
		t.Errorf("/info ceilings without max_suspensions 12: %s", body)
	}
}

func TestHTTPEndpoints(t *testing.T) {
	ts := startServer(t, func(c *Config) {
		c.Version = "v9.9.9-test"
		c.MaxSessions = 7
		c.MaxDuration = 1500 * time.Millisecond
	})
	if code, body := get(t, ts.HTTP+"/healthz"); code != 200 || body != "ok\n" {
		t.Fatalf("/healthz: %d %q", code, body)
	}
	if code, _ := get(t, ts.HTTP+"/readyz"); code != 200 {
		t.Fatalf("/readyz: %d", code)
	}
	code, body := get(t, ts.HTTP+"/info")
	var in Info
	if err := json.Unmarshal([]byte(body), &in); err != nil || code != 200 {
		t.Fatalf("/info: %d %v %s", code, err, body)
	}
	if in.Version != "v9.9.9-test" || in.MaxSessions != 7 || in.Ceilings.MaxDurationSeconds != 1.5 ||
		in.Ceilings.MaxMemoryBytes != DefaultMaxMemory || in.Ceilings.MaxRecursionDepth != DefaultMaxRecursionDepth ||
		len(in.ProtocolVersions) != 2 || in.WorkerProtocol == 0 || in.Auth != "none" || in.Draining {
		t.Fatalf("/info: %+v", in)
	}
	if code, body := get(t, ts.HTTP+"/"); code != 200 || !strings.Contains(body, `"protocol_versions"`) {
		t.Fatalf("GET / without an upgrade: %d %s", code, body)
	}
	if code, _ := get(t, ts.HTTP+"/nope"); code != 404 {
		t.Fatalf("/nope: %d", code)
	}
	c := dialConfigured(t, ts.URL, 4)
	repr(t, c, "1 + 1")
	waitMetric(t, ts, "monty_server_sessions_active 1")
	// Waited for, not read once: a frame is counted once its write has
	// returned, which can be after the client has read it.
	for _, want := range []string{
		`monty_server_frames_total{direction="in"} 2`,
		`monty_server_frames_total{direction="out"} 2`,
		`monty_server_turn_seconds_count 1`,
		`monty_server_workers_busy 1`,
		`monty_server_refusals_total{reason="capacity"} 0`,
		`monty_server_sessions_ended_total{outcome="drained"} 0`,
	} {
		waitMetric(t, ts, want)
	}
}

// testPKI is a CA with a server certificate for 127.0.0.1 and a client
// certificate for "alice".
type testPKI struct {
	pool   *x509.CertPool
	server tls.Certificate
	client tls.Certificate
}

func newPKI(t *testing.T) *testPKI {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(cn string, usage x509.ExtKeyUsage, ip bool) tls.Certificate {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}
		if ip {
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}
	}
	p := &testPKI{pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	p.server = leaf("127.0.0.1", x509.ExtKeyUsageServerAuth, true)
	p.client = leaf("alice", x509.ExtKeyUsageClientAuth, false)
	return p
}

func TestTLSAndMutualTLS(t *testing.T) {
	pki := newPKI(t)
	plain := startServer(t, func(c *Config) {
		c.TLS = &tls.Config{Certificates: []tls.Certificate{pki.server}, MinVersion: tls.VersionTLS12}
	})
	c := dial(t, plain.URL, 4, ws.DialOptions{TLSConfig: &tls.Config{RootCAs: pki.pool}})
	configure(t, c, 4, nil)
	if got := repr(t, c, "'over tls'"); got != "'over tls'" {
		t.Fatal(got)
	}
	// An untrusting client fails the handshake.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := ws.Dial(ctx, plain.URL, ws.DialOptions{}); err == nil {
		t.Fatal("dial without the CA succeeded")
	}

	mtls := startServer(t, func(c *Config) {
		c.TLS = &tls.Config{Certificates: []tls.Certificate{pki.server}, MinVersion: tls.VersionTLS12,
			ClientCAs: pki.pool, ClientAuth: tls.RequireAndVerifyClientCert}
		c.MaxSessionsPerClient = 1
	})
	if _, err := ws.Dial(ctx, mtls.URL, ws.DialOptions{TLSConfig: &tls.Config{RootCAs: pki.pool}}); err == nil {
		t.Fatal("dial without a client certificate succeeded")
	}
	clientTLS := &tls.Config{RootCAs: pki.pool, Certificates: []tls.Certificate{pki.client}}
	c = dial(t, mtls.URL, 2, ws.DialOptions{TLSConfig: clientTLS})
	configure(t, c, 2, nil)
	if got := repr(t, c, "6 * 7"); got != "42" {
		t.Fatal(got)
	}
	// The certificate's name is the client identity: alice's quota is 1.
	_, err := ws.Dial(ctx, mtls.URL, ws.DialOptions{TLSConfig: clientTLS})
	var de *ws.DialError
	if !errors.As(err, &de) || de.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("second alice session: %v, want 429", err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS}}
	resp, err := client.Get(mtls.HTTP + "/info")
	if err != nil {
		t.Fatal(err)
	}
	var in Info
	json.NewDecoder(resp.Body).Decode(&in)
	resp.Body.Close()
	if in.Auth != "mtls" {
		t.Fatalf("/info auth %q", in.Auth)
	}
}

// A TLS configuration the server cannot use, or one that would take any
// certificate a public CA issued for a client identity, is refused by New
// (before any worker starts) rather than failing every handshake, or
// authenticating strangers, once serving.
func TestNewRefusesUnusableTLS(t *testing.T) {
	pki := newPKI(t)
	for _, tc := range []struct {
		name string
		tls  *tls.Config
		want string
	}{
		{"no certificate", &tls.Config{}, "no certificate"},
		{"client certs against the system roots", &tls.Config{Certificates: []tls.Certificate{pki.server},
			ClientAuth: tls.RequireAndVerifyClientCert}, "ClientCAs"},
		{"optional client certs against the system roots", &tls.Config{Certificates: []tls.Certificate{pki.server},
			ClientAuth: tls.VerifyClientCertIfGiven}, "ClientCAs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := New(context.Background(), Config{DumpKey: testKey, TLS: tc.tls,
				Worker: worker.Config{Binary: "/nonexistent/monty"}})
			if err == nil {
				srv.Close()
				t.Fatal("New accepted the TLS configuration")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// TestCertificateIdentity: a verified client certificate names its client
// by its common name, or, when that is empty (as in SPIFFE and many
// modern PKIs, which name the subject in its SANs), by its first SAN or
// else its fingerprint. Before, every certificate without a common name
// was the one client "cn:", sharing one per-client quota.
func TestCertificateIdentity(t *testing.T) {
	s := &Server{}
	id := func(c *x509.Certificate) string {
		t.Helper()
		r := httptest.NewRequest("GET", "https://127.0.0.1/", nil)
		r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{c}}}
		got, ok := s.identity(r)
		if !ok {
			t.Fatal("identity refused a verified certificate")
		}
		return got
	}
	spiffe, _ := url.Parse("spiffe://example.org/ns/prod/sa/runner")
	for _, tc := range []struct {
		cert *x509.Certificate
		want string
	}{
		{&x509.Certificate{Subject: pkix.Name{CommonName: "alice"}, DNSNames: []string{"ignored.example"}}, "cn:alice"},
		{&x509.Certificate{URIs: []*url.URL{spiffe}, DNSNames: []string{"b.example"}}, "uri:spiffe://example.org/ns/prod/sa/runner"},
		{&x509.Certificate{DNSNames: []string{"b.example", "c.example"}}, "dns:b.example"},
		{&x509.Certificate{EmailAddresses: []string{"bob@example.org"}}, "email:bob@example.org"},
		{&x509.Certificate{IPAddresses: []net.IP{net.IPv4(192, 0, 2, 7)}}, "ip:192.0.2.7"},
		{&x509.Certificate{Raw: []byte("one")}, "sha256:7692c3ad3540bb803c020b3aee66cd8887123234ea0c6e7143c0add73ff431ed"},
	} {
		if got := id(tc.cert); got != tc.want {
			t.Errorf("identity %q, want %q", got, tc.want)
		}
	}
	if a, b := id(&x509.Certificate{Raw: []byte("one")}), id(&x509.Certificate{Raw: []byte("two")}); a == b {
		t.Errorf("two certificates without names share the identity %q", a)
	}
}

// TestCertificateIdentityUnpresentable: a certificate name holding what a
// tokens file refuses in a name (a zero-width space, a bidirectional
// override, a control character, bytes not UTF-8) does not become the
// client's identity, which logs show and per-client caps count by: such a
// certificate is named by its fingerprint, as one without a name is, so
// that "cn:alice\u200b" does not show in logs as "cn:alice". The
// certificates are made and parsed by crypto/x509, as a handshake's are.
// A plain space (common in a common name: "Build Agent 1") stays.
func TestCertificateIdentityUnpresentable(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	mint := func(tmpl *x509.Certificate) *x509.Certificate {
		t.Helper()
		tmpl.SerialNumber = big.NewInt(1)
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	s := &Server{}
	id := func(c *x509.Certificate) string {
		t.Helper()
		r := httptest.NewRequest("GET", "https://127.0.0.1/", nil)
		r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{c}}}
		got, ok := s.identity(r)
		if !ok {
			t.Fatal("identity refused a verified certificate")
		}
		return got
	}
	for _, tc := range []struct {
		name string
		tmpl *x509.Certificate
	}{
		{"zero-width space in CN", &x509.Certificate{Subject: pkix.Name{CommonName: "alice\u200b"}}},
		{"bidi override in CN", &x509.Certificate{Subject: pkix.Name{CommonName: "\u202eecila"}}},
		{"newline in CN", &x509.Certificate{Subject: pkix.Name{CommonName: "alice\nclient=root"}}},
		{"escape in CN", &x509.Certificate{Subject: pkix.Name{CommonName: "alice\x1b[2K"}}},
		{"BOM in CN", &x509.Certificate{Subject: pkix.Name{CommonName: "\ufeffalice"}}},
		{"trailing space in CN", &x509.Certificate{Subject: pkix.Name{CommonName: "alice "}}},
		{"control in DNS SAN", &x509.Certificate{DNSNames: []string{"a\x7f.example"}}},
		{"control in email SAN", &x509.Certificate{EmailAddresses: []string{"bob\r@example.org"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mint(tc.tmpl)
			sum := sha256.Sum256(c.Raw)
			if got, want := id(c), "sha256:"+hex.EncodeToString(sum[:]); got != want {
				t.Errorf("identity %q, want the fingerprint %q", got, want)
			}
		})
	}
	if got := id(mint(&x509.Certificate{Subject: pkix.Name{CommonName: "Build Agent 1"}})); got != "cn:Build Agent 1" {
		t.Errorf("identity %q, want %q", got, "cn:Build Agent 1")
	}
	if got := id(mint(&x509.Certificate{Subject: pkix.Name{CommonName: "Zoë"}})); got != "cn:Zoë" {
		t.Errorf("identity %q, want %q", got, "cn:Zoë")
	}
}
