package relay

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/gomonty/monty/internal/testenv"
)

// TestV5NamedZonesEmbedded shows the relay carrying its own tz database
// (time/tzdata): a named timezone in the OS policy resolves from it on a
// host without /usr/share/zoneinfo and without a Go installation's
// zoneinfo.zip, where it was refused on Configure as "not in the child's
// tz database" (upstream's children embed theirs). The host's database,
// when present, is still preferred, so the test reads the build graph.
func TestV5NamedZonesEmbedded(t *testing.T) {
	gobin := testenv.Tool(t, "go")
	out, err := exec.Command(gobin, "list", "-deps", "github.com/gomonty/monty/child/relay").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "time/tzdata" {
			return
		}
	}
	t.Fatal("child/relay does not link time/tzdata: a named timezone fails on a host without a tz database")
}
