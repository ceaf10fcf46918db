//go:build unix

package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
)

// pemPKI writes a CA, a server certificate for 127.0.0.1 and a client
// certificate as PEM files, and returns their paths and the client's TLS
// configuration.
func pemPKI(t *testing.T) (caFile, certFile, keyFile string, client *tls.Config) {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(cn string, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey) {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, k
	}
	caFile = write("ca.pem", "CERTIFICATE", caDER)
	sDER, sKey := leaf("127.0.0.1", x509.ExtKeyUsageServerAuth)
	certFile = write("server.pem", "CERTIFICATE", sDER)
	kb, _ := x509.MarshalECPrivateKey(sKey)
	keyFile = write("server.key", "EC PRIVATE KEY", kb)
	cDER, cKey := leaf("alice", x509.ExtKeyUsageClientAuth)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	client = &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{{Certificate: [][]byte{cDER}, PrivateKey: cKey}}}
	return caFile, certFile, keyFile, client
}

func TestServeMutualTLSFiles(t *testing.T) {
	caFile, certFile, keyFile, clientTLS := pemPKI(t)
	p := startServe(t, nil, "--tls-cert", certFile, "--tls-key", keyFile, "--client-ca", caFile)
	if !strings.HasPrefix(p.url, "wss://127.0.0.1:") {
		t.Fatalf("URL line %q", p.url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	noCert := clientTLS.Clone()
	noCert.Certificates = nil
	if _, err := ws.Dial(ctx, p.url, ws.DialOptions{TLSConfig: noCert}); err == nil {
		t.Fatal("a client without a certificate was accepted")
	}
	l := session.RemoteLauncher{URL: p.url, Dial: ws.DialOptions{TLSConfig: clientTLS}}
	s, err := session.Start(ctx, session.Launch{Launcher: l, ProtocolVersion: 4}, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r, err := s.Run(ctx, "6 * 7"); err != nil || r.Repr() != "42" {
		t.Fatalf("over TLS: %v %v", r, err)
	}
}

func TestServeDumpKeyRotation(t *testing.T) {
	oldKey := writeFile(t, "old", "the-old-key-0123456789")
	newKey := writeFile(t, "new", "the-new-key-0123456789")
	a := startServe(t, nil, "--dump-key", oldKey) // replaces startServe's --dump-key
	b := startServe(t, nil, "--dump-key", newKey, "--dump-key-previous", oldKey)
	c := startServe(t, nil, "--dump-key", newKey)
	src := serveSession(t, a.url, nil)
	if _, err := feed(t, src, "x = 41"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dump, err := src.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	load := func(url string) (*message.ChildEvent, error) {
		return serveSession(t, url, nil).Load(ctx, dump)
	}
	if ev, err := load(b.url); err != nil || ev.Body.EventKind() != message.KindOk {
		t.Fatalf("the previous key's dump on b: %v %v", ev, err)
	}
	var pe *session.PythonError
	if _, err := load(c.url); !errors.As(err, &pe) || !strings.Contains(pe.Exception.Msg(), "Load refused") {
		t.Fatalf("a replica without the previous key loaded the old dump: %v", err)
	}
}

// TestServeMutualTLSIsAuthentication: with --client-ca every client must
// show a certificate the CA signed (its common name is the identity), so
// a non-loopback listen address needs neither --tokens nor
// --insecure-no-auth, as the server itself (and its Host check) treats
// verified client certificates as authentication.
func TestServeMutualTLSIsAuthentication(t *testing.T) {
	caFile, certFile, keyFile, _ := pemPKI(t)
	p := startServe(t, nil, "--listen", "0.0.0.0:0", "--tls-cert", certFile, "--tls-key", keyFile, "--client-ca", caFile)
	if !strings.HasPrefix(p.url, "wss://") {
		t.Fatalf("URL line %q", p.url)
	}
	// TLS alone authenticates nobody.
	key := writeFile(t, "key", "0123456789abcdef0123")
	_, stderr, code := runCLI(t, "", "serve", "--listen", "0.0.0.0:0", "--dump-key", key, "--tls-cert", certFile, "--tls-key", keyFile)
	if code != 2 || !strings.Contains(stderr, "without --tokens") {
		t.Fatalf("TLS without client certificates: exit %d, %s", code, stderr)
	}
}

// TestServeSIGHUPReloadsTLSFiles: a certificate renewed in place (a
// mounted Secret, certbot) is served after SIGHUP, as the tokens are; it
// was read once at start, so a long-running server kept serving the old
// one until it expired. A broken file keeps the previous certificate.
func TestServeSIGHUPReloadsTLSFiles(t *testing.T) {
	caA, certA, keyA, clientA := pemPKI(t)
	caB, certB, keyB, clientB := pemPKI(t)
	p := startServe(t, nil, "--tls-cert", certA, "--tls-key", keyA, "--client-ca", caA)
	handshake := func(c *tls.Config) error {
		conn, err := tls.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(p.url, "wss://"), "/"), c)
		if err != nil {
			return err
		}
		defer conn.Close()
		// TLS 1.3 reports a refused client certificate after the
		// handshake: a request shows it.
		conn.SetDeadline(time.Now().Add(30 * time.Second))
		if _, err := conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")); err != nil {
			return err
		}
		line, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			return err
		}
		if !strings.HasPrefix(line, "HTTP/1.1 200") {
			return errors.New(line)
		}
		return nil
	}
	if err := handshake(clientA); err != nil {
		t.Fatalf("first certificate: %v", err)
	}
	// A key that does not match the certificate: the reload fails and
	// the previous pair stays.
	copyFile(t, certB, certA)
	p.cmd.Process.Signal(syscall.SIGHUP)
	waitLog(t, p, "TLS files not reloaded")
	if err := handshake(clientA); err != nil {
		t.Fatalf("after a failed reload: %v", err)
	}
	copyFile(t, keyB, keyA)
	copyFile(t, caB, caA)
	p.cmd.Process.Signal(syscall.SIGHUP)
	waitLog(t, p, "TLS files reloaded")
	if err := handshake(clientB); err != nil {
		t.Fatalf("renewed certificate and CA: %v", err)
	}
	if err := handshake(clientA); err == nil {
		t.Fatal("the old certificate is still served")
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// waitLog waits (within a generous bound) for msg in p's logs.
func waitLog(t *testing.T, p *serveProc, msg string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(p.stderr.String(), msg); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the logs\n%s", msg, p.stderr.String())
		}
	}
}
