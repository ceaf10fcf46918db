package session

import (
	"net/http/httptest"
	"testing"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/internal/wsrelay"
	"github.com/gomonty/monty/worker"
)

// realLaunch is how realSession starts its workers: local processes,
// unless TestRealSuiteOverWebSocket points it at a WebSocket relay.
var realLaunch Launch

// TestRealSuiteOverWebSocket runs the real-worker feature cases (host
// functions, futures, lookups, objects, OS calls, dump/load, limits,
// prints) again over a loopback WebSocket: every session dials a relay
// that bridges the connection to a fresh real worker. Cases that need a
// local process (Reset reuse, pids, exit codes, negotiation caching) are
// not in the list.
func TestRealSuiteOverWebSocket(t *testing.T) {
	r := &wsrelay.Relay{Worker: worker.Config{Binary: testenv.Worker(t)}}
	srv := httptest.NewServer(r)
	defer func() { srv.Close(); r.Wait() }()
	realLaunch = Launch{Launcher: RemoteLauncher{URL: "ws" + srv.URL[len("http"):] + "/"}}
	defer func() { realLaunch = Launch{} }()
	for _, c := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"GlobalsPersistAndInputs", TestRealGlobalsPersistAndInputs},
		{"PrintStreamingInOrder", TestRealPrintStreamingInOrder},
		{"HostFunctions", TestRealHostFunctions},
		{"AsyncGatherRunsConcurrently", TestRealAsyncGatherRunsConcurrently},
		{"AsyncErrorsAndUnawaitedFutures", TestRealAsyncErrorsAndUnawaitedFutures},
		{"OSCalls", TestRealOSCalls},
		{"DumpLoadIdleAndSuspended", TestRealDumpLoadIdleAndSuspended},
		{"SuspensionLimit", TestRealSuspensionLimit},
		{"ContextEndsWhileSuspendedAbortsFeed", TestRealContextEndsWhileSuspendedAbortsFeed},
		{"MaxDuration", TestRealMaxDuration},
		{"TypeCheck", TestRealTypeCheck},
		{"HostMethodCallMutatesGoState", TestRealHostMethodCallMutatesGoState},
		{"HostLazyAttributes", TestRealHostLazyAttributes},
		{"HostConstruction", TestRealHostConstruction},
		{"HostInstancePassedBack", TestRealHostInstancePassedBack},
		{"HostObjectErrorsKeepSession", TestRealHostObjectErrorsKeepSession},
	} {
		t.Run(c.name, c.f)
	}
}
