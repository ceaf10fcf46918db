package server

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestConfigErrorsAreTyped: New and NewSigner refuse a bad Config with a
// *ConfigError naming the field (it was an untyped string).
func TestConfigErrorsAreTyped(t *testing.T) {
	key := []byte("0123456789abcdef")
	for _, c := range []struct {
		name  string
		err   func() error
		field string
	}{
		{"short key", func() error { _, err := New(context.Background(), Config{DumpKey: []byte("short")}); return err }, "DumpKey"},
		{"no key", func() error { _, err := New(context.Background(), Config{}); return err }, "DumpKey"},
		{"short previous", func() error { _, err := NewSigner(key, []byte("old")); return err }, "DumpKeyPrevious"},
		{"signer short key", func() error { _, err := NewSigner(nil, nil); return err }, "DumpKey"},
		{"TLS without certificate", func() error {
			_, err := New(context.Background(), Config{DumpKey: key, TLS: &tls.Config{}})
			return err
		}, "TLS"},
		{"TLS verifying against the system roots", func() error {
			_, err := New(context.Background(), Config{DumpKey: key, TLS: &tls.Config{
				Certificates: []tls.Certificate{{}}, ClientAuth: tls.RequireAndVerifyClientCert}})
			return err
		}, "TLS"},
		{"negative restart window", func() error {
			_, err := New(context.Background(), Config{DumpKey: key, RestartWindow: -time.Second})
			return err
		}, "RestartWindow"},
	} {
		err := c.err()
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%s: %v (%T) is not a *ConfigError", c.name, err, err)
			continue
		}
		if ce.Field != c.field || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: field %q, error %q; want field %q", c.name, ce.Field, err, c.field)
		}
	}
}
