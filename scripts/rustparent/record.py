#!/usr/bin/env python3
"""Turns the Rust parent's verdicts on event frames into the replay file of
codec/codecv2 (testdata/rustparent/verdicts.jsonl).

    record.py OUT RUST.jsonl [RUST.jsonl ...]

Each RUST.jsonl line is what driver.cjs printed for one frame file:
{"file": F, "turn": {...}}. A verdict is one of
  decode   the parent failed to decode the frame; text is its error, which
           ours must equal
  refused  the parent decoded the frame and refused what it holds (a
           conversion check); ours must fail too, in its own words
  accepted the parent took the event (or refused it only as unexpected in
           its state); ours must decode it. For a Print (followed by a
           Complete), text is the stream the parent printed to
Frames the parent timed out on say nothing and are left out. Of the decode
verdicts at most PER_TEXT frames per distinct error text are kept (every
probe frame is kept); of the others, at most MAX_OTHER per
class but the probes (spread over the input), so the file stays small.
"""
import json
import sys

PREFIX = 'monty worker protocol error: invalid payload from worker: '
MAX_OTHER = 150
PER_TEXT = 3


def verdict(turn):
    kind = turn.get('kind')
    msg = turn.get('message', '')
    if kind == 'protocol':
        if msg.startswith(PREFIX + 'failed to decode Protobuf message'):
            return 'decode', msg[len(PREFIX):]
        if msg.endswith('unexpected event') or 'expected a turn event' in msg:
            return 'accepted', ''  # decoded, then refused for its state
        return 'refused', msg
    if kind == 'crashed' and turn.get('timedOut'):
        return None, None
    prints = turn.get('prints') or []
    if len(prints) == 1:
        return 'accepted', prints[0][0]  # the stream a Print went to
    return 'accepted', ''


def main():
    out, inputs = sys.argv[1], sys.argv[2:]
    recs = {'decode': [], 'refused': [], 'accepted': []}
    for path in inputs:
        for line in open(path):
            line = line.strip()
            if not line.startswith('{'):
                continue
            r = json.loads(line)
            if 'turn' not in r:
                print('no turn for', r['file'], r.get('error'), file=sys.stderr)
                continue
            v, text = verdict(r['turn'])
            if v is None:
                continue
            frame = open(r['file'], 'rb').read()
            name = r['file'].rsplit('/', 2)
            recs[v].append({'name': name[-2] + '/' + name[-1], 'frame': frame.hex(), 'verdict': v, 'text': text})
    seen = {}
    kept = []
    for r in recs['decode']:
        n = seen.get(r['text'], 0)
        if n < PER_TEXT or r['name'].startswith(('probes/', 'bases/')):
            kept.append(r)
            seen[r['text']] = n + 1
    recs['decode'] = kept
    with open(out, 'w') as f:
        for v, rs in recs.items():
            if v != 'decode':
                probes = [r for r in rs if r['name'].startswith(('probes/', 'bases/'))]
                rs = [r for r in rs if not r['name'].startswith(('probes/', 'bases/'))]
                if len(rs) > MAX_OTHER:
                    step = len(rs) / MAX_OTHER
                    rs = [rs[int(i * step)] for i in range(MAX_OTHER)]
                rs += probes
            for r in rs:
                f.write(json.dumps(r, ensure_ascii=False) + '\n')


if __name__ == '__main__':
    main()
