package shadow

import (
	"bytes"

	"github.com/ratelab/ratelab/accesslog"
)

// FromRecord is a parsed log line as a request to replay: its time, its
// key ("" when the line had none or "-"), its tier (when the log carries
// it), its method and its path without the query string. The record's
// bytes are copied.
func FromRecord(rec *accesslog.Record) Request {
	key := rec.Key
	if len(key) == 1 && key[0] == '-' {
		key = nil
	}
	path := rec.Path
	if i := bytes.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	return Request{At: rec.Time(), Key: string(key), Tier: string(rec.Tier), Method: string(rec.Method), Path: string(path)}
}

// AddRecord replays a parsed log line (FromRecord); it fits
// measure.Options.Each, so one pass over a log measures and replays it.
func (x *Replayer) AddRecord(rec *accesslog.Record) { x.Add(FromRecord(rec)) }
