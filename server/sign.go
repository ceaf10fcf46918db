package server

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// MinKeyLen is the shortest dump key accepted.
const MinKeyLen = 16

// envelopeMagic opens every signed dump; the byte after it is the envelope
// version.
const envelopeMagic = "MONTYSIG"

const (
	envelopeVersion = 2
	limitsLen       = 3 * 8
	macLen          = sha256.Size
	headerLen       = len(envelopeMagic) + 1 + limitsLen + macLen
)

// ErrUnsigned reports a Load whose state is not a signed envelope (for
// example a raw dump, which begins "MONTY\x00", or an envelope of an
// older version, which carries no limits).
var ErrUnsigned = errors.New("dump is not signed by this server")

// ErrBadSignature reports an envelope whose MAC matches neither the
// current nor the previous dump key.
var ErrBadSignature = errors.New("dump signature does not match this server's keys")

// ErrAboveCeilings reports a signed dump whose limits exceed the server's
// ceilings (it was signed where the ceilings were higher): loading it
// would lift the session above them, since a dump restores its limits.
var ErrAboveCeilings = errors.New("dump's limits exceed this server's ceilings")

// DumpLimits are the limits a dumped session runs with, which a Load
// restores from the dump. The envelope carries them, under the MAC, so a
// server can refuse a dump that would lift a session above its ceilings.
// Zero means no limit, as on the wire.
type DumpLimits struct {
	MaxDurationMicros uint64
	MaxMemoryBytes    uint64
	MaxRecursionDepth uint64
}

// Within reports whether every limit of l is set and at most the same
// limit of ceilings.
func (l DumpLimits) Within(ceilings DumpLimits) bool {
	in := func(v, c uint64) bool { return v != 0 && v <= c }
	return in(l.MaxDurationMicros, ceilings.MaxDurationMicros) &&
		in(l.MaxMemoryBytes, ceilings.MaxMemoryBytes) &&
		in(l.MaxRecursionDepth, ceilings.MaxRecursionDepth)
}

func (l DumpLimits) appendTo(b []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, l.MaxDurationMicros)
	b = binary.BigEndian.AppendUint64(b, l.MaxMemoryBytes)
	return binary.BigEndian.AppendUint64(b, l.MaxRecursionDepth)
}

func limitsFrom(b []byte) DumpLimits {
	return DumpLimits{
		MaxDurationMicros: binary.BigEndian.Uint64(b),
		MaxMemoryBytes:    binary.BigEndian.Uint64(b[8:]),
		MaxRecursionDepth: binary.BigEndian.Uint64(b[16:]),
	}
}

// Signer signs the dumps a server hands out and opens the ones clients
// send back. The envelope is
//
//	"MONTYSIG" | 0x02 | limits | HMAC-SHA256(key, "MONTYSIG" | 0x02 | limits | dump) | dump
//
// where limits is the session's DumpLimits as three big-endian uint64
// (duration µs, memory bytes, recursion depth): 8 + 1 + 24 + 32 bytes of
// header, then the raw dump. Open accepts a MAC made with the current key
// or, during a key rotation, the previous one.
//
// A Signer is immutable and safe for concurrent use.
type Signer struct {
	keys [][]byte
}

// NewSigner returns a Signer for key (at least MinKeyLen bytes) and an
// optional previous key (nil or at least MinKeyLen bytes). A key it
// refuses is reported by a *ConfigError whose Field is "DumpKey" or
// "DumpKeyPrevious" (the Config fields New passes here).
func NewSigner(key, previous []byte) (*Signer, error) {
	if len(key) < MinKeyLen {
		return nil, &ConfigError{Field: "DumpKey", Reason: fmt.Sprintf("%d bytes, want at least %d: "+
			"the secret key that signs the dumps the server hands out and checks the ones it loads (HMAC-SHA256), "+
			"the same on every replica that shares dumps; make one of 32 random bytes with crypto/rand "+
			"(montygo serve reads it from the file that --dump-key or $MONTY_SERVER_DUMP_KEY names: head -c 32 /dev/urandom > key)",
			len(key), MinKeyLen)}
	}
	s := &Signer{keys: [][]byte{bytes.Clone(key)}}
	if previous != nil {
		if len(previous) < MinKeyLen {
			return nil, &ConfigError{Field: "DumpKeyPrevious", Reason: fmt.Sprintf("%d bytes, want at least %d: "+
				"the key that signed the dumps before a key rotation, still accepted on Load: the old DumpKey "+
				"(random bytes from crypto/rand, as that was; montygo serve reads it from the file that "+
				"--dump-key-previous or $MONTY_SERVER_DUMP_KEY_PREVIOUS names), or nil for none",
				len(previous), MinKeyLen)}
		}
		s.keys = append(s.keys, bytes.Clone(previous))
	}
	return s, nil
}

// mac authenticates head (magic, version and limits) and dump.
func mac(key, head, dump []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(head)
	m.Write(dump)
	return m.Sum(nil)
}

// Sign returns the envelope of dump, a session running with limits,
// signed with the current key.
func (s *Signer) Sign(dump []byte, limits DumpLimits) []byte {
	out := make([]byte, 0, headerLen+len(dump))
	out = append(out, envelopeMagic...)
	out = append(out, envelopeVersion)
	out = limits.appendTo(out)
	out = append(out, mac(s.keys[0], out, dump)...)
	return append(out, dump...)
}

// Open checks an envelope and returns the raw dump inside it (a subslice
// of env) and the limits it was signed with. It fails with ErrUnsigned or
// ErrBadSignature.
func (s *Signer) Open(env []byte) ([]byte, DumpLimits, error) {
	if len(env) < headerLen || string(env[:len(envelopeMagic)]) != envelopeMagic || env[len(envelopeMagic)] != envelopeVersion {
		return nil, DumpLimits{}, ErrUnsigned
	}
	head := env[:headerLen-macLen]
	got := env[headerLen-macLen : headerLen]
	dump := env[headerLen:]
	ok := false
	for _, k := range s.keys {
		// Check every key, so timing does not tell which one matched.
		if hmac.Equal(got, mac(k, head, dump)) {
			ok = true
		}
	}
	if !ok {
		return nil, DumpLimits{}, ErrBadSignature
	}
	return dump, limitsFrom(head[len(envelopeMagic)+1:]), nil
}
