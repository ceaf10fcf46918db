package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/remoteclient"
	"github.com/gomonty/monty/message"
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
	c, err := remoteclient.Dial(ctx, p.url, 4, ws.DialOptions{TLSConfig: clientTLS})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, req := range []message.Request{&message.Configure{ProtocolVersion: 4}, &message.Feed{Code: "6 * 7"}} {
		if _, err := c.Do(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
}

func TestServeDumpKeyRotation(t *testing.T) {
	oldKey := writeFile(t, "old", "the-old-key-0123456789")
	newKey := writeFile(t, "new", "the-new-key-0123456789")
	a := startServe(t, nil, "--dump-key", oldKey) // the last --dump-key wins
	b := startServe(t, nil, "--dump-key", newKey, "--dump-key-previous", oldKey)
	c := startServe(t, nil, "--dump-key", newKey)
	src := serveSession(t, a.url, nil)
	feed(t, src, "x = 41")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	turn, err := src.Do(ctx, &message.Dump{})
	if err != nil {
		t.Fatal(err)
	}
	dump := turn.Event.Body.(*message.DumpResult).State
	load := func(url string) message.Event {
		dst := serveSession(t, url, nil)
		turn, err := dst.Do(ctx, &message.Load{State: dump})
		if err != nil {
			t.Fatal(err)
		}
		return turn.Event.Body
	}
	if ev := load(b.url); ev.EventKind() != message.KindOk {
		t.Fatalf("the previous key's dump on b: %v", ev.EventKind())
	}
	if e, ok := load(c.url).(*message.Error); !ok || !strings.Contains(e.Exception.Msg(), "Load refused") {
		t.Fatal("a replica without the previous key loaded the old dump")
	}
}
