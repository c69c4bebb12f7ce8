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
	key, path := keyAndPath(rec)
	return Request{At: rec.Time(), Key: string(key), Tier: string(rec.Tier), Method: string(rec.Method), Path: string(path)}
}

// keyAndPath is rec's key (nil for none or "-") and its path without the
// query string, as the replay takes them.
func keyAndPath(rec *accesslog.Record) (key, path []byte) {
	key, path = rec.Key, rec.Path
	if len(key) == 1 && key[0] == '-' {
		key = nil
	}
	if i := bytes.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	return key, path
}

// AddRecord replays a parsed log line (FromRecord); it fits
// measure.Options.Each, so one pass over a log measures and replays it.
func (x *Replayer) AddRecord(rec *accesslog.Record) { x.Add(FromRecord(rec)) }
