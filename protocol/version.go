package protocol

import (
	"strconv"
	"strings"
)

// VersionRange is an inclusive range of protocol versions, Min to Max.
// A range with Min > Max is empty.
type VersionRange struct {
	Min, Max uint32
}

// Supported returns the range of versions the v4 codec accepts,
// MinVersion to Version.
func Supported() VersionRange {
	return VersionRange{Min: MinVersion, Max: Version}
}

// Contains reports whether Min <= v <= Max. It is a plain range test:
// CheckVersion additionally refuses 0 whatever the range.
func (r VersionRange) Contains(v uint32) bool {
	return r.Min <= v && v <= r.Max
}

// Empty reports whether the range holds no version (Min > Max).
func (r VersionRange) Empty() bool {
	return r.Min > r.Max
}

// String renders the range as "4" when Min == Max and as "2 to 4"
// otherwise.
func (r VersionRange) String() string {
	if r.Min == r.Max {
		return strconv.FormatUint(uint64(r.Min), 10)
	}
	return strconv.FormatUint(uint64(r.Min), 10) + " to " + strconv.FormatUint(uint64(r.Max), 10)
}

// Intersect returns the versions both r and o contain. The boolean is false
// when they share none, in which case the returned range is empty. The
// highest common version, the one two peers should speak, is the Max of
// the result.
func (r VersionRange) Intersect(o VersionRange) (VersionRange, bool) {
	out := VersionRange{Min: max(r.Min, o.Min), Max: min(r.Max, o.Max)}
	return out, !out.Empty()
}

// Texts used in the refusal message. They are part of the wire contract:
// parents parse them to learn the worker's supported range.
const (
	refusalPrefix   = "unsupported protocol version "
	supportsOne     = "server supports protocol version "
	supportsMany    = "server supports protocol versions "
	tipTooOld       = "try updating to a newer client version"
	tipWrongVersion = "make sure you are using the correct client version"
)

// UnsupportedVersionError reports that a peer declared a protocol version
// outside the supported range. Its Error text is the exact FatalError
// message a worker sends, which ParseUnsupportedVersion reads back.
type UnsupportedVersionError struct {
	// Requested is the version the peer declared (0 if it declared none).
	Requested uint32
	// Supported is the range the refusing side accepts.
	Supported VersionRange
}

// Error renders
//
//	unsupported protocol version {v} ({supported}, {tip})
//
// where supported reads "server supports protocol version N" for a
// single-version range and "server supports protocol versions A to B"
// otherwise, and tip advises a newer client when the requested version is
// below the range (0 included) and the correct client otherwise.
func (e *UnsupportedVersionError) Error() string {
	var b strings.Builder
	b.WriteString(refusalPrefix)
	b.WriteString(strconv.FormatUint(uint64(e.Requested), 10))
	b.WriteString(" (")
	if e.Supported.Min == e.Supported.Max {
		b.WriteString(supportsOne)
	} else {
		b.WriteString(supportsMany)
	}
	b.WriteString(e.Supported.String())
	b.WriteString(", ")
	b.WriteString(e.tip())
	b.WriteString(")")
	return b.String()
}

func (e *UnsupportedVersionError) tip() string {
	if e.Requested == 0 || e.Requested < e.Supported.Min {
		return tipTooOld
	}
	return tipWrongVersion
}

// CheckVersion accepts v if supported contains it and v is not 0, and
// otherwise returns an *UnsupportedVersionError. Zero is refused even when
// the range includes it, because it means the peer declared nothing.
func CheckVersion(v uint32, supported VersionRange) error {
	if v != 0 && supported.Contains(v) {
		return nil
	}
	return &UnsupportedVersionError{Requested: v, Supported: supported}
}

// ParseUnsupportedVersion reads a refusal text produced by CheckVersion
// (by this package or by a worker) back into its parts. Both the singular
// ("protocol version 2") and plural ("protocol versions 2 to 4") forms are
// accepted.
//
// Only the exact canonical format is accepted: no surrounding text or
// whitespace, decimal numbers without sign or leading zeros, and a tip that
// matches the requested version. The text is also refused when it could
// not have come from CheckVersion: a supported range that is empty or
// starts at 0, a plural form naming a single version, or a requested
// version the range actually accepts. On success, calling Error on the
// result reproduces msg exactly.
func ParseUnsupportedVersion(msg string) (*UnsupportedVersionError, bool) {
	v, r, plural, rest, ok := cutRefusal(msg)
	if !ok || (plural && r.Min >= r.Max) || r.Min == 0 {
		return nil, false
	}
	e := &UnsupportedVersionError{Requested: v, Supported: r}
	if CheckVersion(v, r) == nil {
		return nil, false
	}
	if rest != ", "+e.tip()+")" {
		return nil, false
	}
	return e, true
}

// cutRefusal reads the front of a refusal text, up to and excluding the
// tip: the requested version, the advertised range (plural reports the
// "versions A to B" form) and the rest of the text.
func cutRefusal(msg string) (v uint32, r VersionRange, plural bool, rest string, ok bool) {
	rest, ok = strings.CutPrefix(msg, refusalPrefix)
	if !ok {
		return
	}
	if v, rest, ok = cutNumber(rest); !ok {
		return
	}
	if rest, ok = strings.CutPrefix(rest, " ("); !ok {
		return
	}
	if after, many := strings.CutPrefix(rest, supportsMany); many {
		plural = true
		if r.Min, rest, ok = cutNumber(after); !ok {
			return
		}
		if rest, ok = strings.CutPrefix(rest, " to "); !ok {
			return
		}
		r.Max, rest, ok = cutNumber(rest)
		return
	}
	after, one := strings.CutPrefix(rest, supportsOne)
	if !one {
		return v, r, false, rest, false
	}
	r.Min, rest, ok = cutNumber(after)
	r.Max = r.Min
	return
}

// Usable reports whether the range holds a version a peer could speak:
// it is not empty and does not consist of 0 alone (0 means "undeclared"
// and is never valid).
func (r VersionRange) Usable() bool {
	return !r.Empty() && r.Max != 0
}

// UnusableRangeError reports a version refusal whose advertised range can
// hold no valid version: empty (Min > Max, "versions 9 to 3") or 0 alone
// ("versions 0 to 0"). No retry with another version can succeed. It is
// plain data, safe for concurrent use.
type UnusableRangeError struct {
	// Requested is the version the refused peer declared.
	Requested uint32
	// Range is the range the refusal advertises.
	Range VersionRange
	// Message is the refusal text itself.
	Message string
}

// Error says why the range is unusable.
func (e *UnusableRangeError) Error() string {
	why := "it is empty"
	if !e.Range.Empty() {
		why = "version 0 means undeclared"
	}
	return "protocol: refusal of version " + strconv.FormatUint(uint64(e.Requested), 10) +
		" advertises the unusable version range " + strconv.FormatUint(uint64(e.Range.Min), 10) +
		" to " + strconv.FormatUint(uint64(e.Range.Max), 10) + " (" + why + ")"
}

// ParseUnusableRange reads a refusal that has the form of CheckVersion's
// text but advertises an unusable range (see [VersionRange.Usable]), which
// [ParseUnsupportedVersion] refuses: "versions A to B" with A > B, or a
// range of 0 alone. Numbers must be canonical and the text must end with
// one of the two tips. It reports false for anything else, including
// every text ParseUnsupportedVersion accepts.
func ParseUnusableRange(msg string) (*UnusableRangeError, bool) {
	v, r, _, rest, ok := cutRefusal(msg)
	if !ok || r.Usable() {
		return nil, false
	}
	if rest != ", "+tipTooOld+")" && rest != ", "+tipWrongVersion+")" {
		return nil, false
	}
	return &UnusableRangeError{Requested: v, Range: r, Message: msg}, true
}

// cutNumber consumes a canonical decimal uint32 (no sign, no leading
// zeros) from the front of s.
func cutNumber(s string) (uint32, string, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || (i > 1 && s[0] == '0') {
		return 0, s, false
	}
	n, err := strconv.ParseUint(s[:i], 10, 32)
	if err != nil {
		return 0, s, false
	}
	return uint32(n), s[i:], true
}
