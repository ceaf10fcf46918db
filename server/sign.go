package server

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
)

// MinKeyLen is the shortest dump key accepted.
const MinKeyLen = 16

// envelopeMagic opens every signed dump; the byte after it is the envelope
// version.
const envelopeMagic = "MONTYSIG"

const (
	envelopeVersion = 1
	macLen          = sha256.Size
	headerLen       = len(envelopeMagic) + 1 + macLen
)

// ErrUnsigned reports a Load whose state is not a signed envelope (for
// example a raw dump, which begins "MONTY\x00").
var ErrUnsigned = errors.New("dump is not signed by this server")

// ErrBadSignature reports an envelope whose MAC matches neither the
// current nor the previous dump key.
var ErrBadSignature = errors.New("dump signature does not match this server's keys")

// Signer signs the dumps a server hands out and opens the ones clients
// send back. The envelope is
//
//	"MONTYSIG" | 0x01 | HMAC-SHA256(key, "MONTYSIG" | 0x01 | dump) | dump
//
// (8 + 1 + 32 bytes of header, then the raw dump). Open accepts a MAC made
// with the current key or, during a key rotation, the previous one.
//
// A Signer is immutable and safe for concurrent use.
type Signer struct {
	keys [][]byte
}

// NewSigner returns a Signer for key (at least MinKeyLen bytes) and an
// optional previous key (nil or at least MinKeyLen bytes).
func NewSigner(key, previous []byte) (*Signer, error) {
	if len(key) < MinKeyLen {
		return nil, fmt.Errorf("server: dump key has %d bytes, want at least %d", len(key), MinKeyLen)
	}
	s := &Signer{keys: [][]byte{bytes.Clone(key)}}
	if previous != nil {
		if len(previous) < MinKeyLen {
			return nil, fmt.Errorf("server: previous dump key has %d bytes, want at least %d", len(previous), MinKeyLen)
		}
		s.keys = append(s.keys, bytes.Clone(previous))
	}
	return s, nil
}

func mac(key, dump []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(envelopeMagic))
	m.Write([]byte{envelopeVersion})
	m.Write(dump)
	return m.Sum(nil)
}

// Sign returns the envelope of dump, signed with the current key.
func (s *Signer) Sign(dump []byte) []byte {
	out := make([]byte, 0, headerLen+len(dump))
	out = append(out, envelopeMagic...)
	out = append(out, envelopeVersion)
	out = append(out, mac(s.keys[0], dump)...)
	return append(out, dump...)
}

// Open checks an envelope and returns the raw dump inside it (a subslice
// of env). It fails with ErrUnsigned or ErrBadSignature.
func (s *Signer) Open(env []byte) ([]byte, error) {
	if len(env) < headerLen || string(env[:len(envelopeMagic)]) != envelopeMagic || env[len(envelopeMagic)] != envelopeVersion {
		return nil, ErrUnsigned
	}
	got := env[len(envelopeMagic)+1 : headerLen]
	dump := env[headerLen:]
	ok := false
	for _, k := range s.keys {
		// Check every key, so timing does not tell which one matched.
		if hmac.Equal(got, mac(k, dump)) {
			ok = true
		}
	}
	if !ok {
		return nil, ErrBadSignature
	}
	return dump, nil
}
