package session

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/internal/redact"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/worker"
)

// versionCache remembers, per worker binary, the protocol version a
// negotiation settled on, so later sessions start with it. The key
// includes the file's size and modification time: a replaced binary is
// negotiated afresh.
var versionCache sync.Map // cacheKey → uint32

type cacheKey struct {
	path  string
	size  int64
	mtime int64
}

func keyFor(bin string) (cacheKey, bool) {
	fi, err := os.Stat(bin)
	if err != nil {
		return cacheKey{}, false
	}
	return cacheKey{path: bin, size: fi.Size(), mtime: fi.ModTime().UnixNano()}, true
}

// ourRange is the range spanned by the linked-in codecs.
func ourRange() (protocol.VersionRange, bool) {
	vs := codec.Versions()
	if len(vs) == 0 {
		return protocol.VersionRange{}, false
	}
	return protocol.VersionRange{Min: vs[len(vs)-1], Max: vs[0]}, true
}

// Start starts a worker with l's launcher and configures a session on it
// with cfg. A launcher with a Binary() string method (ProcessLauncher has
// one) names the executable, which keys the version cache and is reported
// by Session.Binary.
//
// Unless l.ProtocolVersion pins one, the protocol version is negotiated:
// the first worker is configured with the version cached for this binary
// (for a RemoteLauncher: for its URL), else the highest version this module has a
// codec for. A worker that refuses it with a FatalError naming its own
// range (and exits, status 4) is replaced by a second one configured with
// the highest common version, which is then cached. No common version
// gives a *VersionMismatchError. A remote start that resumed on another
// replica during its Configure (see below) negotiates with that replica:
// its refusal is followed by a dial to its URL, with its options, and the
// version is cached under its URL.
//
// ctx bounds the start; cancelling it later has no effect on the session.
// A start ctx ends fails with an error matching ctx's error. Other
// failures: an *UnknownVersionError for a pinned version this module has
// no codec for (nothing is launched); a *worker.BinaryNotFoundError for a
// ProcessLauncher with no usable binary; a *StartTimeoutError for a worker that does not answer
// Configure within Config.StartTimeout, or a remote dial that does not
// complete in it; a *ws.DialError or *ws.HeaderError for a remote dial
// that fails; a *ProtocolError for a worker that refuses the Configure or
// answers it wrongly; and the worker's loss (*worker.CrashError,
// *worker.MemoryLimitError, a remote *DisconnectedError or
// *RemoteCrashError). A remote start whose Configure a draining server
// answers with a ShutdownDump resumes on the replica RemoteLauncher.Pick
// names, as a later request does (see RemoteLauncher); with NoResume, or
// when that resume fails, Start fails with the *ShutdownError.
func Start(ctx context.Context, l Launch, cfg Config) (*Session, error) {
	cfg = cfg.withDefaults()
	launcher := l.Launcher
	if launcher == nil {
		launcher = ProcessLauncher{}
	}
	var bin string
	if pl, ok := launcher.(ProcessLauncher); ok {
		b, err := worker.ResolveBinary(pl.Worker.Binary)
		if err != nil {
			return nil, err
		}
		pl.Worker.Binary = b
		if pl.Worker.Logger == nil {
			pl.Worker.Logger = cfg.Logger
		}
		launcher = pl
	}
	if b, ok := launcher.(interface{ Binary() string }); ok {
		bin = b.Binary()
	}
	// The logs name the worker by its binary, a remote one by its
	// endpoint (masked): a remote launcher has no binary.
	who := slog.String("worker", bin)
	if rl, ok := launcher.(RemoteLauncher); ok {
		who = slog.String("endpoint", redact.URL(rl.URL))
	}
	ours, ok := ourRange()
	if !ok {
		return nil, errors.New("monty session: no protocol codec is linked in")
	}
	key, keyed := versionKeyOf(launcher, bin)
	var neg Negotiation
	var v uint32
	switch cached, hit := versionCache.Load(key); {
	case l.ProtocolVersion != 0:
		if _, ok := codec.ForVersion(l.ProtocolVersion); !ok {
			return nil, unknownVersion(l.ProtocolVersion)
		}
		v, neg.Pinned = l.ProtocolVersion, true
	case keyed && hit:
		v, neg.FromCache = cached.(uint32), true
	default:
		c, _ := codec.Highest(ours)
		v = c.Version()
	}
	// next is whom the next attempt asks: the launcher, or after a remote
	// start that resumed on another replica during its Configure, that
	// replica (the worker that answered last), with its own options.
	next := launcher
	for {
		neg.Attempts++
		var (
			s     *Session
			err   error
			where remoteAt
		)
		if neg.Attempts == 1 {
			s, where, err = open(ctx, cfg, bin, v, next)
		} else {
			s, err = redialDowngrade(ctx, next, func(l Launcher) (s *Session, err error) {
				s, where, err = open(ctx, cfg, bin, v, l)
				return s, err
			})
		}
		if rl, ok := launcher.(RemoteLauncher); ok && where.url != "" {
			// The version learned is that replica's: cache it under
			// its URL, and negotiate again with it (never with the
			// launcher's URL, which may be the server that drained).
			rl.URL, rl.Dial = where.url, where.dial
			next = rl
			key, keyed = rl.versionKey()
			who = slog.String("endpoint", redact.URL(rl.URL))
		}
		if err == nil {
			neg.Version = v
			s.neg = neg
			if keyed && !neg.Pinned {
				versionCache.Store(key, v)
			}
			lvl := slog.LevelInfo
			if neg.FromCache || neg.Pinned {
				lvl = slog.LevelDebug
			}
			cfg.Logger.Log(ctx, lvl, "monty protocol negotiated", who,
				slog.Uint64("version", uint64(v)), slog.Int("attempts", neg.Attempts),
				slog.Bool("pinned", neg.Pinned), slog.Bool("cached", neg.FromCache))
			return s, nil
		}
		refusal, ok := versionRefusal(err)
		if !ok {
			if u, ok := unusableRefusal(err); ok {
				// No version can succeed: report it, never respawn.
				mismatch := &VersionMismatchError{Binary: bin, Ours: ours, Worker: u.Range, Refusal: u.Message, Unusable: u}
				if neg.Pinned {
					mismatch.Ours = protocol.VersionRange{Min: v, Max: v}
				}
				return nil, mismatch
			}
			return nil, err
		}
		neg.Worker = refusal.Supported
		mismatch := &VersionMismatchError{Binary: bin, Ours: ours, Worker: refusal.Supported, Refusal: refusal.Error()}
		if neg.Pinned {
			mismatch.Ours = protocol.VersionRange{Min: v, Max: v}
			return nil, mismatch
		}
		if keyed {
			versionCache.Delete(key)
		}
		common, ok := ours.Intersect(refusal.Supported)
		if !ok {
			return nil, mismatch
		}
		c, ok := codec.Highest(common)
		if !ok || c.Version() == v || neg.Attempts >= 3 {
			return nil, mismatch
		}
		cfg.Logger.Debug("monty worker does not speak this protocol version; using the highest one both sides speak",
			who, slog.Uint64("refused", uint64(v)),
			slog.Uint64("version", uint64(c.Version())), slog.String("worker_range", refusal.Supported.String()))
		v = c.Version()
	}
}

// versionRefusal extracts the worker's supported range from the crash of
// a worker that refused our protocol version.
func versionRefusal(err error) (*protocol.UnsupportedVersionError, bool) {
	var ce *worker.CrashError
	if !errors.As(err, &ce) || ce.Reason != worker.Announced {
		return nil, false
	}
	return protocol.ParseUnsupportedVersion(ce.Message)
}

// unusableRefusal recognizes the crash of a worker whose refusal
// advertised a range that can hold no version.
func unusableRefusal(err error) (*protocol.UnusableRangeError, bool) {
	var ce *worker.CrashError
	if !errors.As(err, &ce) || ce.Reason != worker.Announced {
		return nil, false
	}
	return protocol.ParseUnusableRange(ce.Message)
}

// versionKeyOf is the negotiation cache's key for l's workers: its
// binary's (path, size and modification time), a RemoteLauncher's URL.
func versionKeyOf(l Launcher, bin string) (cacheKey, bool) {
	if vk, ok := l.(interface{ versionKey() (cacheKey, bool) }); ok {
		return vk.versionKey()
	}
	return keyFor(bin)
}

// remoteAt is where a remote start's Configure was last answered (or
// failed): the URL of the connection and the options it was dialled
// with. A start that a draining server answered with a ShutdownDump
// resumes on another replica, which is then the one that accepts or
// refuses the version. url is "" when nothing was dialled (or the
// launcher is not remote).
type remoteAt struct {
	url  string
	dial ws.DialOptions
}

// open launches one worker and configures it with version v. For a
// remote launcher it also returns where the Configure ended up: the
// connection the session runs on, or whose refusal (or loss) failed it.
func open(ctx context.Context, cfg Config, bin string, v uint32, l Launcher) (*Session, remoteAt, error) {
	c, ok := codec.ForVersion(v)
	if !ok {
		return nil, remoteAt{}, unknownVersion(v)
	}
	p, err := launch(ctx, cfg, l)
	if err != nil {
		return nil, remoteAt{}, err
	}
	s, err := configureOn(ctx, cfg, bin, p, c)
	var where remoteAt
	if rp, ok := p.(*remotePeer); ok {
		where.url, where.dial = rp.at()
	}
	return s, where, err
}

// launch starts one worker with l. A remote launcher's dial (TCP, TLS,
// the upgrade) is bounded by cfg.StartTimeout, as the Configure handshake
// after it is: an endpoint that never answers the upgrade would otherwise
// hold the start for as long as ctx allows.
func launch(ctx context.Context, cfg Config, l Launcher) (Peer, error) {
	if _, ok := l.(RemoteLauncher); !ok {
		return l.Launch(ctx)
	}
	tctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	p, err := l.Launch(tctx)
	if err != nil && tctx.Err() != nil && ctx.Err() == nil {
		return nil, &StartTimeoutError{Timeout: cfg.StartTimeout, Err: err}
	}
	return p, err
}
