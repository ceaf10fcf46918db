package value

import (
	"errors"
	"log/slog"
	"math/big"
	"net/netip"
	"reflect"
	"testing"
	"time"
)

// ptrText marshals through its pointer only, as big.Float does.
type ptrText struct{ n int }

func (p *ptrText) MarshalText() ([]byte, error) { return []byte{byte('0' + p.n)}, nil }

// failText fails both ways.
type failText struct{ X int }

var errFailText = errors.New("failText refuses")

func (failText) MarshalText() ([]byte, error)  { return nil, errFailText }
func (*failText) UnmarshalText(b []byte) error { return errFailText }

type badUTF8Text struct{}

func (badUTF8Text) MarshalText() ([]byte, error) { return []byte("a\xffb"), nil }

type withAddr struct {
	Addr  netip.Addr
	Level slog.Level
	Addrs []netip.Addr
	Ptr   *netip.Addr
}

// TestTextMarshalers: a Go type with no conversion of its own that
// implements encoding.TextMarshaler becomes a str of its text, as
// encoding/json writes it (netip.Addr became {}, its fields being
// unexported, and slog.Level an int); ToGo reads a str back through
// encoding.TextUnmarshaler. The dedicated conversions come first.
func TestTextMarshalers(t *testing.T) {
	addr := netip.MustParseAddr("10.0.0.1")
	cases := []struct {
		v    any
		want string // Repr
	}{
		{addr, "'10.0.0.1'"},
		{&addr, "'10.0.0.1'"},
		{(*netip.Addr)(nil), "None"},
		{slog.LevelWarn, "'WARN'"},
		{ptrText{3}, "'3'"},
		{[]netip.Addr{addr, addr}, "['10.0.0.1', '10.0.0.1']"},
		{map[string]netip.Prefix{"p": netip.MustParsePrefix("10.0.0.0/8")}, "{'p': '10.0.0.0/8'}"},
		{withAddr{Addr: addr, Level: slog.LevelError, Addrs: []netip.Addr{addr}, Ptr: &addr},
			"{'Addr': '10.0.0.1', 'Level': 'ERROR', 'Addrs': ['10.0.0.1'], 'Ptr': '10.0.0.1'}"},
		// Dedicated conversions first.
		{time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), "datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)"},
		{big.NewInt(7), "7"},
		{UUID{1}, "'01000000-0000-0000-0000-000000000000'"},
	}
	for _, slow := range []bool{false, true} {
		for _, c := range cases {
			g, id, err := encodeWith(slow, c.v)
			if err != nil {
				t.Errorf("slow %v: FromGo(%T): %v", slow, c.v, err)
				continue
			}
			if got := g.Repr(id); got != c.want {
				t.Errorf("slow %v: FromGo(%T) = %s, want %s", slow, c.v, got, c.want)
			}
		}
		var g Graph
		if id, err := FromGo(&g, cases[7].v); err != nil || g.Repr(id) != cases[7].want {
			t.Errorf("FromGo(withAddr) = %v", err)
		}
	}
	for _, v := range []any{failText{}, badUTF8Text{}, big.NewFloat(1), *big.NewFloat(1)} {
		var g Graph
		_, err := FromGo(&g, v)
		var ce *ConversionError
		if !errors.As(err, &ce) || !ce.FromGo {
			t.Errorf("FromGo(%T) = %v, want a *ConversionError", v, err)
		}
	}
	var g Graph
	if _, err := FromGo(&g, failText{}); !errors.Is(err, errFailText) {
		t.Errorf("FromGo(failText) = %v, want its MarshalText error", err)
	}

	// Back: a str through UnmarshalText.
	var back withAddr
	g = Graph{}
	id, err := FromGo(&g, withAddr{Addr: addr, Level: slog.LevelError, Addrs: []netip.Addr{addr}, Ptr: &addr})
	if err != nil {
		t.Fatal(err)
	}
	for _, slow := range []bool{false, true} {
		got, err := decodeWith(slow, &g, id, reflect.TypeFor[withAddr]())
		if err != nil {
			t.Fatalf("slow %v: ToGo: %v", slow, err)
		}
		back = got.Interface().(withAddr)
		if back.Addr != addr || back.Level != slog.LevelError || len(back.Addrs) != 1 || back.Addrs[0] != addr || back.Ptr == nil || *back.Ptr != addr {
			t.Errorf("slow %v: ToGo = %+v", slow, back)
		}
	}
	// An int still decodes into a TextUnmarshaler of integer kind.
	g = Graph{}
	id = g.Add(Int(4))
	var lv slog.Level
	if err := ToGo(&g, id, &lv); err != nil || lv != slog.LevelWarn {
		t.Errorf("ToGo(4, slog.Level) = %v, %v", lv, err)
	}
	s := g.Add(Str("not an address"))
	var a netip.Addr
	var ce *ConversionError
	if err := ToGo(&g, s, &a); !errors.As(err, &ce) {
		t.Errorf("ToGo(bad address) = %v, want a *ConversionError", err)
	}
	var f failText
	if err := ToGo(&g, s, &f); !errors.Is(err, errFailText) {
		t.Errorf("ToGo(failText) = %v, want its UnmarshalText error", err)
	}
}

// TestTextMarshalerMapKeys: map keys of a TextMarshaler type become str
// keys, as encoding/json writes them, sorted by that text among the
// other str keys (a netip.Addr key was refused, and a slog.Level key,
// now a str, sorted as its number).
func TestTextMarshalerMapKeys(t *testing.T) {
	a, b := netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.10")
	cases := []struct {
		v    any
		want string
	}{
		{map[netip.Addr]int{a: 2, b: 10}, "{'10.0.0.10': 10, '10.0.0.2': 2}"},
		{map[slog.Level]int{slog.LevelWarn: 1, slog.LevelError: 2, slog.LevelInfo: 3}, "{'ERROR': 2, 'INFO': 3, 'WARN': 1}"},
		{map[any]int{slog.LevelInfo: 1, "B": 2, "J": 3, 5: 4}, "{5: 4, 'B': 2, 'INFO': 1, 'J': 3}"},
	}
	for range 10 {
		for _, c := range cases {
			var g Graph
			id, err := FromGo(&g, c.v)
			if err != nil {
				t.Fatalf("FromGo(%v): %v", c.v, err)
			}
			if got := g.Repr(id); got != c.want {
				t.Fatalf("FromGo(%v) = %s, want %s", c.v, got, c.want)
			}
		}
	}
	var back map[netip.Addr]int
	var g Graph
	id, err := FromGo(&g, cases[0].v)
	if err == nil {
		err = ToGo(&g, id, &back)
	}
	if err != nil || len(back) != 2 || back[a] != 2 || back[b] != 10 {
		t.Errorf("ToGo into map[netip.Addr]int: %v, %v", back, err)
	}
	if _, err := FromGo(&g, map[failText]int{{}: 1}); !errors.Is(err, errFailText) {
		t.Errorf("a key whose MarshalText fails: %v", err)
	}
}

// TestTextMarshalerPromoted pins the documented encoding/json rule: a
// struct embedding a TextMarshaler is one.
func TestTextMarshalerPromoted(t *testing.T) {
	type embeds struct {
		netip.Addr
		Name string
	}
	var g Graph
	id, err := FromGo(&g, embeds{netip.MustParseAddr("::1"), "n"})
	if err != nil || g.Repr(id) != "'::1'" {
		t.Errorf("FromGo(embeds) = %s, %v", g.Repr(id), err)
	}
}
